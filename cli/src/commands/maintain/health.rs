//! `pm health`: pm's tracker checks (`pm_engine::read::health`) plus the `index` check, in pm's
//! envelope with the 100-warning cap, the `--summary`/`--brief` projections
//! and `--strict-exit`; printed through the read-output layer.

use pm_engine::merge::clone_config::driver_configuration;
use pm_engine::read::TrackerView;
use pm_engine::read::health::{HealthCheck, HealthFinding, health_check, tracker_health_listed};
use pm_index::{Index, IndexHealth};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::clock_reads::ReadClock;
use crate::ctx::Ctx;
use crate::exit;
use crate::failure::Result;
use crate::progress::index_options;
use crate::read_output::{Finished, ReadMeta, Surface, finish_read};

/// At most this many warnings (and findings) are listed; `warning_count` has the total.
pub const WARNING_LIMIT: usize = 100;
/// Entries kept per detail list by `--brief`.
const BRIEF_DETAIL_LIMIT: usize = 5;

/// Report the health of the tracker: settings, directories, storage, locks, integrity, history
/// drift and the derived index
///
/// Exit code is 0 even when a check warns (read `ok` and `checks[].status`) unless
/// --strict-exit is given. --summary drops check details, --brief shortens them.
#[derive(Debug, clap::Args)]
pub struct HealthArgs {
    /// Drop every check's details (keep names, statuses and warnings)
    #[arg(long, conflicts_with_all = ["brief", "full"])]
    pub summary: bool,

    /// Keep check details but cut every list to 5 entries
    #[arg(long, conflicts_with = "full")]
    pub brief: bool,

    /// Keep full check details (the default; overrides the summary implied by --strict-exit)
    #[arg(long)]
    pub full: bool,

    /// Only check; nothing is refreshed (accepted for pm compatibility: health repairs and
    /// rebuilds nothing; it only keeps its verification cache, runtime/health/memo)
    #[arg(long)]
    pub check_only: bool,

    /// Exit 1 when `ok` is false (implies --summary unless --full); the report is still printed
    #[arg(long, visible_alias = "fail-on-warn")]
    pub strict_exit: bool,

    /// Treat absent clone-local merge drivers as a required health failure
    #[arg(long)]
    pub require_merge_drivers: bool,
}

/// The `health` result after the read-output layer.
pub type HealthOutput = Finished;

fn index_check(health: &IndexHealth) -> (HealthCheck, Vec<HealthFinding>) {
    let details = serde_json::to_value(health).unwrap_or(Value::Null);
    let state = details["state"].as_str().unwrap_or("unknown").to_string();
    let findings = if health.ok {
        Vec::new()
    } else {
        let fix = match health.state {
            pm_index::IndexState::WriterLockUnusable => "pm gc --scope index",
            _ => "pm reindex",
        };
        let mut finding =
            HealthFinding::new("index", format!("index_{state}"), true, Some(fix.into()));
        finding.message.clone_from(&health.detail);
        vec![finding]
    };
    (health_check("index", details, &findings), findings)
}

/// Cuts every array in `value` to `limit` entries, recursively.
fn shorten(value: &mut Value, limit: usize) {
    match value {
        Value::Array(items) => {
            items.truncate(limit);
            items.iter_mut().for_each(|v| shorten(v, limit));
        }
        Value::Object(map) => map.values_mut().for_each(|v| shorten(v, limit)),
        _ => {}
    }
}

/// The `health` document before the read-output layer, in pm's key order.
#[derive(Debug, Serialize)]
struct HealthResult<'a> {
    ok: bool,
    checks: Vec<Value>,
    warnings: Vec<&'a str>,
    findings: &'a [HealthFinding],
    failed_because: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    projection: Option<HealthProjection>,
    generated_at: String,
    warning_count: usize,
    warning_limit: usize,
    warnings_truncated: bool,
}

/// The `projection` echo of `--summary`/`--brief`.
#[derive(Debug, Serialize)]
struct HealthProjection {
    mode: &'static str,
    warning_count: usize,
    warnings_truncated: bool,
    detail_limit: usize,
    omitted_checks: Vec<&'static str>,
}

/// The projection `args` ask for: `summary` (also the `--strict-exit` default), `brief`, or
/// none.
fn projection_mode(args: &HealthArgs) -> Option<&'static str> {
    if args.summary || (args.strict_exit && !args.full && !args.brief) {
        Some("summary")
    } else if args.brief {
        Some("brief")
    } else {
        None
    }
}

/// The checks as printed: `summary` empties their details, `brief` shortens them.
fn check_values(checks: &[HealthCheck], mode: Option<&str>) -> Vec<Value> {
    let shape = |check: &HealthCheck| {
        let mut value = serde_json::to_value(check).unwrap_or(Value::Null);
        match mode {
            Some("summary") => value["details"] = Value::Object(Map::new()),
            Some(_) => shorten(&mut value["details"], BRIEF_DETAIL_LIMIT),
            None => {}
        }
        value
    };
    checks.iter().map(shape).collect()
}

/// The projection echo for `mode`.
fn projection_echo(
    mode: &'static str,
    checks: &[HealthCheck],
    warning_count: usize,
) -> HealthProjection {
    let summary = mode == "summary";
    HealthProjection {
        mode,
        warning_count,
        warnings_truncated: warning_count > WARNING_LIMIT,
        detail_limit: if summary { 0 } else { BRIEF_DETAIL_LIMIT },
        omitted_checks: match summary {
            true => checks.iter().map(|c| c.name).collect(),
            false => Vec::new(),
        },
    }
}

/// Adds the clone's merge-driver configuration to the `integrity` check (inside a git
/// repository only): `merge_driver_configuration_missing:5` is advisory unless `required`,
/// `merge_driver_configuration_drift:<n>` always fails the gate.
fn merge_drivers(
    view: &TrackerView,
    required: bool,
    checks: &mut [HealthCheck],
    findings: &mut Vec<HealthFinding>,
) {
    let Some(config) = driver_configuration(view.tracker().workspace_root()) else {
        return;
    };
    let Some(index) = checks.iter().position(|c| c.name == "integrity") else {
        return;
    };
    let mut details = std::mem::take(&mut checks[index].details);
    let mut entry = serde_json::to_value(&config).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut entry {
        map.insert("required".into(), Value::Bool(required));
    }
    let broken = config.missing_keys.len() + config.drifted_keys.len();
    if let Some(Value::Object(counts)) = details.get_mut("counts") {
        counts.insert("merge_driver_configuration".into(), Value::from(broken));
    }
    details.insert("merge_driver_configuration".into(), entry);
    if let Some(warning) = config.warning() {
        let gate = required || config.status == "drift";
        let fix = Some("pm merge install".to_string());
        findings.push(HealthFinding::new("integrity", warning, gate, fix));
    }
    let own: Vec<HealthFinding> = findings
        .iter()
        .filter(|f| f.check == "integrity")
        .cloned()
        .collect();
    checks[index] = health_check("integrity", Value::Object(details), &own);
}

/// Runs every health check.
///
/// # Errors
/// `not_in_project`; settings read failures; the read-output refusals.
pub fn cmd_health(ctx: &Ctx, args: &HealthArgs) -> Result<HealthOutput> {
    let view = TrackerView::open(ctx.tracker()?, &ctx.settings_env())?;
    // The index check runs beside the tracker checks, from their listing of every file (see
    // `Index::health_beside`).
    let now_ms = ReadClock::new(&ctx.clock).instant();
    let index = Index::open(view.tracker(), view.schema(), index_options(ctx));
    let (health, tracker) =
        index.health_beside(|on_listed| tracker_health_listed(&view, now_ms, Some(on_listed)));
    let (index, index_findings) = index_check(&health?);
    let (mut checks, mut findings) = tracker.map(|(checks, findings, _)| (checks, findings))?;
    merge_drivers(
        &view,
        args.require_merge_drivers,
        &mut checks,
        &mut findings,
    );
    checks.push(index);
    findings.extend(index_findings);
    let ok = findings.iter().all(|f| f.severity != "gate_failing");
    let failed_because: Vec<String> = findings
        .iter()
        .filter(|f| f.severity == "gate_failing")
        .map(|f| f.warning.clone())
        .take(WARNING_LIMIT)
        .collect();
    let warning_count = findings.len();
    findings.truncate(WARNING_LIMIT);
    let mode = projection_mode(args);
    let result = HealthResult {
        ok,
        checks: check_values(&checks, mode),
        warnings: findings.iter().map(|f| f.warning.as_str()).collect(),
        findings: &findings,
        failed_because,
        projection: mode.map(|m| projection_echo(m, &checks, warning_count)),
        generated_at: ReadClock::new(&ctx.clock).stamp(),
        warning_count,
        warning_limit: WARNING_LIMIT,
        warnings_truncated: warning_count > WARNING_LIMIT,
    };
    let value = serde_json::to_value(&result)
        .map_err(|e| pm_engine::Error::internal(format!("health result: {e}")))?;
    let format = ctx.read_output.resolve_format(ctx.format, None);
    let meta = ReadMeta::new(Surface::Health, "health");
    let mut finished = finish_read(value, &meta, &ctx.read_output, format)?;
    if args.strict_exit && !ok && finished.exit_code == exit::SUCCESS {
        finished.exit_code = exit::FAILURE;
    }
    Ok(finished)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn health_keys_keep_pm_order() {
        let result = HealthResult {
            ok: true,
            checks: Vec::new(),
            warnings: Vec::new(),
            findings: &[],
            failed_because: Vec::new(),
            projection: Some(projection_echo("brief", &[], 0)),
            generated_at: String::new(),
            warning_count: 0,
            warning_limit: WARNING_LIMIT,
            warnings_truncated: false,
        };
        let value = serde_json::to_value(&result).unwrap();
        let keys = |v: &Value| -> Vec<String> {
            v.as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default()
        };
        let order = [
            "ok",
            "checks",
            "warnings",
            "findings",
            "failed_because",
            "projection",
            "generated_at",
            "warning_count",
            "warning_limit",
            "warnings_truncated",
        ];
        assert_eq!(keys(&value), order);
        let projection = [
            "mode",
            "warning_count",
            "warnings_truncated",
            "detail_limit",
            "omitted_checks",
        ];
        assert_eq!(keys(&value["projection"]), projection);
        assert_eq!(value["projection"]["detail_limit"], BRIEF_DETAIL_LIMIT);
    }

    #[test]
    fn brief_shortens_every_list() {
        let mut v = json!({"a": [1, 2, 3, 4, 5, 6, 7], "b": {"c": [[1, 2, 3, 4, 5, 6]]}});
        shorten(&mut v, 5);
        assert_eq!(
            v,
            json!({"a": [1, 2, 3, 4, 5], "b": {"c": [[1, 2, 3, 4, 5]]}})
        );
    }
}
