//! `pm health` tracker checks: settings, directories, settings values,
//! storage, locks, integrity and history drift, in pm's order and detail keys. Each check returns
//! its findings; advisory findings leave the check `ok`, gate-failing ones make it `warn`.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Map, Value, json};

mod codec;
mod facts;
mod hierarchy;
mod listing;
mod locks;
mod memo;

pub use facts::{FileSig, ListedSources};
pub use locks::DEBRIS_FIX;
pub(crate) use locks::{abandoned_debris, lock_entry};
pub use memo::{MemoStats, OnListed, memo_path};

use facts::{DriftKind, ItemFacts, StreamState};
use hierarchy::{HierarchyFacts, RELATION_SAMPLE};
use memo::Facts;

use super::view::TrackerView;
use crate::clock::EpochMs;
use crate::error::Result;
use crate::history::WORKSPACE_STREAM_ID;
use crate::history::verify::StreamStatus;

/// Id lists in storage details keep at most this many entries (`truncated` says when cut).
pub const ID_LIST_LIMIT: usize = 100;

/// One health check: `{name, status, ok, details}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HealthCheck {
    /// pm's check name.
    pub name: &'static str,
    /// `ok` or `warn`.
    pub status: &'static str,
    /// Whether the status is `ok`.
    pub ok: bool,
    /// What the check found, in pm's key order.
    pub details: Map<String, Value>,
}

/// A warning with its severity (pm's `findings`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HealthFinding {
    /// The warning token (`<code>:<subject>`).
    pub warning: String,
    /// The code (the token before its first `:`).
    pub code: String,
    /// The check that raised it.
    pub check: &'static str,
    /// `advisory` or `gate_failing`.
    pub severity: &'static str,
    /// How to fix it, when there is one command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation: Option<String>,
    /// What was found, in one sentence (lock findings name the lock, owner, pid and host).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl HealthFinding {
    /// Returns a finding of `check`.
    pub fn new(
        check: &'static str,
        warning: String,
        gate_failing: bool,
        remediation: Option<String>,
    ) -> HealthFinding {
        let code = warning.split(':').next().unwrap_or("").to_string();
        HealthFinding {
            warning,
            code,
            check,
            severity: if gate_failing {
                "gate_failing"
            } else {
                "advisory"
            },
            remediation,
            message: None,
        }
    }

    /// Returns the finding with `message` attached.
    pub fn with_message(mut self, message: String) -> HealthFinding {
        self.message = Some(message);
        self
    }
}

/// Builds a check from its details and findings.
pub fn health_check(name: &'static str, details: Value, findings: &[HealthFinding]) -> HealthCheck {
    let failing = findings.iter().any(|f| f.severity == "gate_failing");
    HealthCheck {
        name,
        status: if failing { "warn" } else { "ok" },
        ok: !failing,
        details: match details {
            Value::Object(map) => map,
            _ => Map::new(),
        },
    }
}

/// Runs pm's tracker checks; `now_ms` (the command's clock) is the instant each lock's own ttl
/// is measured against.
///
/// The per-file facts come from the verification memo (`runtime/health/memo`, a cache) when
/// their files did not change; see [`tracker_health_with_stats`].
///
/// # Errors
/// `io_error` when item folders or the history directory cannot be listed.
pub fn tracker_health(
    view: &TrackerView,
    now_ms: EpochMs,
) -> Result<(Vec<HealthCheck>, Vec<HealthFinding>)> {
    tracker_health_with_stats(view, now_ms).map(|(checks, findings, _)| (checks, findings))
}

/// [`tracker_health`], also returning what it did with the memo (how many ids it reused and
/// computed, whether it rewrote the memo): a diagnostic for tests, never part of the output.
///
/// # Errors
/// `io_error` when item folders or the history directory cannot be listed.
pub fn tracker_health_with_stats(
    view: &TrackerView,
    now_ms: EpochMs,
) -> Result<(Vec<HealthCheck>, Vec<HealthFinding>, MemoStats)> {
    tracker_health_listed(view, now_ms, None)
}

/// [`tracker_health_with_stats`], handing the listing of item files and streams (with their
/// stat signatures) to `on_listed` as soon as it is complete, before the checks run.
///
/// # Errors
/// `io_error` when item folders or the history directory cannot be listed.
pub fn tracker_health_listed(
    view: &TrackerView,
    now_ms: EpochMs,
    on_listed: Option<&OnListed<'_>>,
) -> Result<(Vec<HealthCheck>, Vec<HealthFinding>, MemoStats)> {
    let (facts, mut stats, mut pending) = memo::gather(view, on_listed)?;
    let items = sorted_items(&facts);
    let hierarchy = memo::hierarchy(&mut pending, &items, &mut stats);
    let mut checks = Vec::new();
    let mut findings = Vec::new();
    let mut push = |name: &'static str, (details, found): (Value, Vec<HealthFinding>)| {
        checks.push(health_check(name, details, &found));
        findings.extend(found);
    };
    push("settings", settings(view));
    push("directories", directories(view));
    push("settings_values", (json!({"warnings": []}), Vec::new()));
    push("storage", storage(&facts, items.len()));
    push("locks", locks::locks(view, now_ms));
    push("integrity", integrity(view, &facts, &items, &hierarchy));
    push("history_drift", drift(&facts));
    drop(items);
    memo::finish(pending, &facts.groups, &hierarchy, &mut stats);
    // Freeing a hundred thousand entries takes a while: do it on the pool while the caller
    // renders the report.
    rayon::spawn(move || drop(facts));
    Ok((checks, findings, stats))
}

/// The parsed items in listing order, then sorted by id (`localeCompare`, stable), as
/// `pm validate` sorts them.
fn sorted_items(facts: &Facts) -> Vec<&ItemFacts> {
    use rayon::slice::ParallelSliceMut;
    let mut items: Vec<&ItemFacts> = (0..facts.places.len())
        .filter_map(|index| facts.file(index).parse.as_ref().ok())
        .collect();
    items.par_sort_by(|a, b| crate::collate::locale_compare(&a.id, &b.id));
    items
}

/// Returns the number of streams that are not missing, the workspace stream included.
fn present_streams(facts: &Facts) -> usize {
    facts
        .groups
        .iter()
        .filter(|g| g.stream.state != StreamState::Missing)
        .count()
        + usize::from(facts.workspace.stream != StreamStatus::Missing)
}

/// The settings check: every value of settings.json outside its domain is a gate-failing
/// finding naming the key (writes refuse it); other read notices (schema files) stay advisory.
fn settings(view: &TrackerView) -> (Value, Vec<HealthFinding>) {
    let settings = view.settings();
    let mut findings: Vec<HealthFinding> = settings
        .issues()
        .iter()
        .map(|issue| {
            let fix = issue.to_error().hint().unwrap_or_default();
            HealthFinding::new("settings", issue.token(), true, Some(fix))
                .with_message(issue.message())
        })
        .collect();
    findings.extend(
        view.notices()
            .iter()
            .filter(|n| {
                !matches!(
                    n.code.as_str(),
                    "settings_invalid" | "settings_read_invalid_json"
                )
            })
            .map(|n| HealthFinding::new("settings", n.code.clone(), false, None)),
    );
    let warnings: Vec<String> = findings.iter().map(|f| f.warning.clone()).collect();
    let details = json!({
        "path": view.tracker().settings_path().display().to_string(),
        "version": settings.effective().get("version").cloned().unwrap_or(json!(1)),
        "id_prefix": settings.id_prefix(),
        "locks_ttl_seconds": settings.lock_ttl_seconds(),
        "warnings": warnings,
    });
    (details, findings)
}

fn directories(view: &TrackerView) -> (Value, Vec<HealthFinding>) {
    let root = view.tracker().root();
    let required = ["history", "schema"];
    let mut optional: BTreeSet<String> = ["events", "extensions", "locks", "search"]
        .map(String::from)
        .into();
    for (folder, _) in view.schema().types.folders() {
        optional.insert(folder.to_string());
    }
    let missing = |names: Vec<String>| -> Vec<String> {
        names
            .into_iter()
            .filter(|n| !root.join(n).is_dir())
            .collect()
    };
    let missing_required = missing(required.map(String::from).to_vec());
    let missing_optional = missing(optional.iter().cloned().collect());
    let findings = missing_required
        .iter()
        .map(|d| {
            HealthFinding::new(
                "directories",
                format!("directory_missing:{d}"),
                true,
                Some("pm init".into()),
            )
        })
        .collect();
    let details = json!({
        "required": required,
        "optional": optional,
        "missing_required": missing_required,
        "missing_optional": missing_optional,
        "missing": missing_required,
        "strict_directories": false,
    });
    (details, findings)
}

/// A capped id list: `{count, ids, truncated}`.
fn id_list(mut ids: Vec<String>) -> Value {
    ids.sort_by(|a, b| crate::collate::locale_compare(a, b));
    let count = ids.len();
    ids.truncate(ID_LIST_LIMIT);
    json!({"count": count, "ids": ids, "truncated": count > ID_LIST_LIMIT})
}

fn storage(facts: &Facts, parsed: usize) -> (Value, Vec<HealthFinding>) {
    let streams = present_streams(facts);
    let without_file = facts
        .groups
        .iter()
        .filter(|g| g.files.is_empty() && g.stream.state != StreamState::Missing);
    let (tombstones, orphaned): (Vec<_>, Vec<_>) = without_file.partition(|g| g.stream.deleted);
    let orphaned: Vec<String> = orphaned.into_iter().map(|i| i.id.clone()).collect();
    let findings = orphaned
        .iter()
        .map(|id| {
            HealthFinding::new(
                "storage",
                format!("storage_orphaned_history:{id}"),
                false,
                None,
            )
        })
        .collect();
    let mut tombstone_list = id_list(tombstones.into_iter().map(|i| i.id.clone()).collect());
    if let Some(map) = tombstone_list.as_object_mut() {
        let mut with_policy = Map::new();
        with_policy.insert("retention_policy".into(), json!("retain_append_only"));
        with_policy.insert("gc_enabled".into(), json!(false));
        with_policy.extend(std::mem::take(map));
        *map = with_policy;
    }
    let details = json!({
        "items": parsed,
        "history_streams": streams,
        "tombstones": tombstone_list,
        "orphaned_history_streams": id_list(orphaned),
    });
    (details, findings)
}

fn integrity(
    view: &TrackerView,
    facts: &Facts,
    items: &[&ItemFacts],
    hierarchy: &HierarchyFacts,
) -> (Value, Vec<HealthFinding>) {
    let mut unreadable = Vec::new();
    let mut conflicted_items = Vec::new();
    let mut parse_failures = Vec::new();
    let mut refused = Vec::new();
    for index in 0..facts.places.len() {
        if let Err(code) = &facts.file(index).parse {
            let path = view.relative(&facts.files[index].file.path);
            match code.as_str() {
                "io_error" => unreadable.push(path),
                "path_unsafe" => refused.push(path),
                code if code.contains("conflict") => conflicted_items.push(path),
                _ => parse_failures.push(path),
            }
        }
    }
    let outdated: Vec<String> = Vec::new();
    let ahead: Vec<String> = items
        .iter()
        .filter(|i| i.ahead)
        .map(|i| i.id.clone())
        .collect();
    let (mut history_unreadable, mut history_conflicts, mut history_invalid) =
        (Vec::new(), Vec::new(), Vec::new());
    let workspace_code = match &facts.workspace.stream {
        StreamStatus::Unreadable { code, .. } => Some(*code),
        _ => None,
    };
    let streams = facts
        .groups
        .iter()
        .map(|g| {
            let code = match &g.stream.state {
                StreamState::Unreadable(code) => Some(code.as_str()),
                _ => None,
            };
            (g.id.as_str(), code)
        })
        .chain([(WORKSPACE_STREAM_ID, workspace_code)]);
    for (id, code) in streams {
        if let Some(code) = code {
            match code {
                "path_unsafe" => refused.push(format!("history/{id}.jsonl")),
                c if c.contains("conflict") => history_conflicts.push(id.to_string()),
                "history_invalid_json" => history_invalid.push(id.to_string()),
                _ => history_unreadable.push(id.to_string()),
            }
        }
    }
    let mut findings = Vec::new();
    let mut flag = |code: &str, subjects: &[String], gate: bool| {
        for s in subjects {
            findings.push(HealthFinding::new(
                "integrity",
                format!("{code}:{s}"),
                gate,
                None,
            ));
        }
    };
    let linked = crate::read::unsafe_paths::merge(
        crate::read::unsafe_paths::linked_folders_and_locks(view.tracker(), &view.schema().types),
        refused,
    );
    flag("integrity_path_unsafe", &linked, true);
    flag("integrity_item_unreadable", &unreadable, true);
    flag("integrity_item_conflict_markers", &conflicted_items, true);
    flag("integrity_item_parse_failure", &parse_failures, true);
    flag("integrity_item_ahead_format_version", &ahead, true);
    flag("integrity_history_unreadable", &history_unreadable, true);
    flag(
        "integrity_history_conflict_markers",
        &history_conflicts,
        true,
    );
    flag("integrity_history_invalid_json", &history_invalid, true);
    let (listing_details, listing) = listing::listing_findings(facts);
    findings.extend(listing);
    let child = |row: &str| row.split(':').next().unwrap_or("").to_string();
    for (prefix, rows) in [
        (
            "hierarchy_cycle",
            hierarchy
                .cycles
                .iter()
                .map(|(ids, legacy)| (ids.join(","), *legacy))
                .collect::<Vec<_>>(),
        ),
        ("hierarchy_cardinality", hierarchy.cardinality.clone()),
        ("hierarchy_divergence", hierarchy.divergence.clone()),
    ] {
        for (row, legacy) in rows {
            let code = if legacy {
                format!("integrity_legacy_{prefix}")
            } else {
                format!("integrity_{prefix}")
            };
            findings.push(HealthFinding::new(
                "integrity",
                format!("{code}:{}", child(&row)),
                !legacy,
                None,
            ));
        }
    }
    let cycles: Vec<Value> = hierarchy
        .cycles
        .iter()
        .map(|(ids, legacy)| json!({"item_ids": ids, "legacy_terminal": legacy}))
        .collect();
    let split = |row: &str| row.split(':').map(String::from).collect::<Vec<_>>();
    let cardinality: Vec<Value> = hierarchy
        .cardinality
        .iter()
        .map(|(row, legacy)| {
            let parts = split(row);
            let parents: Vec<&str> = parts.get(1).map_or(Vec::new(), |p| p.split(',').collect());
            json!({"child_id": parts[0], "parent_ids": parents, "legacy_terminal": legacy})
        })
        .collect();
    let divergences: Vec<Value> = hierarchy
        .divergence
        .iter()
        .map(|(row, legacy)| {
            let parts = split(row);
            let field = |i: usize, prefix: &str| {
                parts
                    .get(i)
                    .and_then(|p| p.strip_prefix(prefix))
                    .unwrap_or("")
                    .to_string()
            };
            let deps = field(2, "dependencies=");
            json!({
                "child_id": parts[0],
                "scalar_parent_id": field(1, "scalar="),
                "dependency_parent_ids": deps.split(',').collect::<Vec<_>>(),
                "legacy_terminal": legacy,
            })
        })
        .collect();
    let count = |v: &[String]| v.len();
    let mut details = json!({
        "checked_item_files": facts.places.len(),
        "checked_history_streams": present_streams(facts),
        "counts": {
            "item_unreadable": count(&unreadable),
            "item_conflict_markers": count(&conflicted_items),
            "item_parse_failures": count(&parse_failures),
            "history_unreadable": count(&history_unreadable),
            "history_conflict_markers": count(&history_conflicts),
            "history_invalid_json": count(&history_invalid),
            "item_outdated_format_version": count(&outdated),
            "item_ahead_format_version": count(&ahead),
            "hierarchy_cycles": hierarchy.cycles.len(),
            "hierarchy_cardinality_violations": hierarchy.cardinality.len(),
            "hierarchy_parent_divergences": hierarchy.divergence.len(),
            "tracked_runtime_cache_files": 0,
            "merge_driver_configuration": 0,
            "pending_merge_decisions": 0,
            "lossless_merge_receipts": 0,
        },
        "item_unreadable": unreadable,
        "item_conflict_markers": conflicted_items,
        "item_parse_failures": parse_failures,
        "item_outdated_format_version": outdated,
        "item_ahead_format_version": ahead,
        "hierarchy_integrity": {
            "relations": {
                "count": hierarchy.relations,
                "sample": hierarchy.sample,
                "truncated": hierarchy.relations > RELATION_SAMPLE,
            },
            "cycles": cycles,
            "cardinality_violations": cardinality,
            "divergences": divergences,
        },
        "history_unreadable": history_unreadable,
        "history_conflict_markers": history_conflicts,
        "history_invalid_json": history_invalid,
        "tracked_runtime_cache": {
            "tracker_relative_root": null,
            "tracked_paths": [],
            "tracked_path_count": 0,
            "remediation_command": null,
        },
        "merge_driver_configuration": null,
        "pending_merge_decision_items": [],
        "lossless_merge_receipt_items": [],
    });
    if let Value::Object(map) = &mut details {
        map.extend(listing_details);
    }
    (details, findings)
}

fn drift(facts: &Facts) -> (Value, Vec<HealthFinding>) {
    let mut summary = DriftSummary::default();
    for g in &facts.groups {
        let id = || g.id.clone();
        match g.stream.state {
            StreamState::Missing if !g.files.is_empty() => summary.missing_streams.push(id()),
            StreamState::Unreadable(_) => summary.unreadable_streams.push(id()),
            StreamState::ChainMismatch => summary.chain_mismatches.push(id()),
            StreamState::Ok | StreamState::Missing => {}
        }
        if g.files.iter().any(|f| f.drift == DriftKind::HashMismatch) {
            summary.hash_mismatch.push(id());
        }
        if g.stream.torn {
            summary.torn_tails.push(id());
        }
    }
    let mut unreadable = summary.unreadable_streams.clone();
    unreadable.extend(summary.torn_tails.iter().cloned());
    let unreadable = super::validate::items::sorted_unique(unreadable);
    let mut chain = summary.chain_mismatches.clone();
    if facts.workspace.stream == StreamStatus::ChainMismatch {
        chain.push(WORKSPACE_STREAM_ID.into());
    }
    let chain = super::validate::items::sorted_unique(chain);
    let drifted = super::validate::items::sorted_unique(
        summary
            .missing_streams
            .iter()
            .chain(&unreadable)
            .chain(&summary.hash_mismatch)
            .chain(&chain)
            .cloned()
            .collect(),
    );
    let mut findings = Vec::new();
    for (class, ids) in [
        ("missing_stream", &summary.missing_streams),
        ("unreadable_stream", &unreadable),
        ("hash_mismatch", &summary.hash_mismatch),
        ("chain_mismatch", &chain),
    ] {
        for id in ids {
            findings.push(HealthFinding::new(
                "history_drift",
                format!("history_drift_{class}:{id}"),
                true,
                Some(format!("pm history-repair {id}")),
            ));
        }
    }
    let disagreements = |kind| -> Vec<String> {
        facts
            .workspace
            .disagreements
            .iter()
            .filter(|d| d.kind == kind)
            .map(|d| d.path.clone())
            .collect()
    };
    use crate::history::workspace::DisagreementKind as K;
    let (differs, missing, unreadable_docs) = (
        disagreements(K::Differs),
        disagreements(K::Missing),
        disagreements(K::Unreadable),
    );
    let unparsed = (0..facts.places.len())
        .filter(|&index| facts.file(index).parse.is_err())
        .count();
    let checked = facts
        .groups
        .iter()
        .flat_map(|g| &g.files)
        .filter(|f| f.drift != DriftKind::ItemUnreadable)
        .count();
    let details = json!({
        "checked_items": checked.min(facts.places.len() - unparsed),
        "cache_hit_verification": "full",
        "drifted_items": drifted,
        "counts": {
            "drifted": drifted.len(),
            "missing_streams": summary.missing_streams.len(),
            "unreadable_streams": unreadable.len(),
            "hash_mismatches": summary.hash_mismatch.len(),
            "chain_mismatches": chain.len(),
            "workspace_state_mismatches": differs.len(),
            "workspace_state_missing": missing.len(),
            "workspace_state_unreadable": unreadable_docs.len(),
        },
        "missing_streams": summary.missing_streams,
        "unreadable_streams": unreadable,
        "hash_mismatches": summary.hash_mismatch,
        "chain_mismatches": chain,
        "workspace_state_mismatches": differs,
        "workspace_state_missing": missing,
        "workspace_state_unreadable": unreadable_docs,
    });
    (details, findings)
}

/// Ids per history class, in id order (what the history report's summary lists).
#[derive(Default)]
struct DriftSummary {
    missing_streams: Vec<String>,
    unreadable_streams: Vec<String>,
    chain_mismatches: Vec<String>,
    hash_mismatch: Vec<String>,
    torn_tails: Vec<String>,
}
