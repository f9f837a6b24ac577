//! `pm health`: pm's health envelope (read-output §3.8). For now it runs the `index` check;
//! each check is one function in `CHECKS`, so later checks slot in without touching the rest.

use pm_engine::Result;
use pm_engine::schema::{Loaded, load};
use pm_engine::tracker::Tracker;
use pm_index::Index;
use serde::Serialize;
use serde_json::Value;

use crate::ctx::Ctx;
use crate::progress::index_options;

/// Report the health of the tracker: currently the state of the derived index
///
/// Exit code is 0 even when a check warns; read `ok` and `checks[].status`.
#[derive(Debug, clap::Args)]
pub struct HealthArgs {}

/// One health check.
#[derive(Debug, Serialize)]
pub struct HealthCheck {
    /// The check name.
    pub name: &'static str,
    /// `ok` or `warn`.
    pub status: &'static str,
    /// Whether the check passed.
    pub ok: bool,
    /// What the check found.
    pub details: Value,
}

/// A warning with its remediation (pm's `findings`).
#[derive(Debug, Serialize)]
pub struct Finding {
    /// The warning token.
    pub warning: String,
    /// The code (same as the token).
    pub code: String,
    /// The check that raised it.
    pub check: &'static str,
    /// `advisory` or `gate_failing`.
    pub severity: &'static str,
    /// How to fix it.
    pub remediation: String,
}

/// pm's omission receipt (nothing is omitted without a projection flag).
#[derive(Debug, Serialize)]
pub struct OmissionReceipt {
    /// Always false here.
    pub has_omissions: bool,
    /// Always 0 here.
    pub omitted_field_group_count: usize,
    /// Always empty here.
    pub omitted_field_groups: Vec<String>,
}

/// The `pm health` envelope.
#[derive(Debug, Serialize)]
pub struct HealthOutput {
    /// Every check passed.
    pub ok: bool,
    /// The checks, in order.
    pub checks: Vec<HealthCheck>,
    /// Warning tokens.
    pub warnings: Vec<String>,
    /// Warnings with remediation.
    pub findings: Vec<Finding>,
    /// Checks that failed a gate.
    pub failed_because: Vec<String>,
    /// When the report was made.
    pub generated_at: String,
    /// Number of warnings.
    pub warning_count: usize,
    /// At most this many warnings are listed.
    pub warning_limit: usize,
    /// Whether warnings were cut.
    pub warnings_truncated: bool,
    /// What was omitted.
    pub omission_receipt: OmissionReceipt,
}

/// What every check may look at.
struct CheckContext<'a> {
    ctx: &'a Ctx,
    tracker: &'a Tracker,
    loaded: &'a Loaded,
}

/// A check: its findings are the `(token, remediation)` pairs it warns with.
type CheckFn = fn(&CheckContext<'_>) -> (HealthCheck, Vec<(String, String)>);

/// The checks `pm health` runs, in output order.
const CHECKS: &[CheckFn] = &[index_check];

fn index_check(c: &CheckContext<'_>) -> (HealthCheck, Vec<(String, String)>) {
    let index = Index::open(c.tracker, &c.loaded.schema, index_options(c.ctx));
    let health = index.health();
    let details = serde_json::to_value(&health).unwrap_or(Value::Null);
    let state = details["state"].as_str().unwrap_or("unknown").to_string();
    let findings = if health.ok {
        Vec::new()
    } else {
        vec![(
            format!("index_{state}"),
            "reads answer from a scan until the next writer rebuilds it; run `pm reindex` (or `pm gc --scope index`)".to_string(),
        )]
    };
    (
        HealthCheck {
            name: "index",
            status: if health.ok { "ok" } else { "warn" },
            ok: health.ok,
            details,
        },
        findings,
    )
}

/// Runs every health check.
///
/// # Errors
/// `not_in_project`; settings read failures.
pub fn cmd_health(ctx: &Ctx, _args: &HealthArgs) -> Result<HealthOutput> {
    let tracker = ctx.tracker()?;
    let loaded = load(&tracker, &ctx.settings_env())?;
    let check_ctx = CheckContext {
        ctx,
        tracker: &tracker,
        loaded: &loaded,
    };
    let mut checks = Vec::new();
    let mut findings = Vec::new();
    for check in CHECKS {
        let (result, warned) = check(&check_ctx);
        for (token, remediation) in warned {
            findings.push(Finding {
                warning: token.clone(),
                code: token,
                check: result.name,
                severity: "advisory",
                remediation,
            });
        }
        checks.push(result);
    }
    let warnings: Vec<String> = findings.iter().map(|f| f.warning.clone()).collect();
    Ok(HealthOutput {
        ok: checks.iter().all(|c| c.ok),
        checks,
        warning_count: warnings.len(),
        warnings,
        findings,
        failed_because: Vec::new(),
        generated_at: ctx.clock.now_iso(),
        warning_limit: 100,
        warnings_truncated: false,
        omission_receipt: OmissionReceipt {
            has_omissions: false,
            omitted_field_group_count: 0,
            omitted_field_groups: Vec::new(),
        },
    })
}
