//! `pm validate` (read-output spec §3.9): the checks this implementation has so far (history
//! drift, storage spec §8.4), in pm's envelope: checks with details, sorted warning codes, the
//! diagnostic-row projection (`--counts`) and its omission receipt.

use serde::Serialize;

use super::receipt::{FieldGroup, OmissionReceipt};
use super::view::TrackerView;
use crate::collate::locale_compare;
use crate::error::Result;
use crate::history::verify::{DriftStatus, HistorySummary, StreamStatus};
use crate::history::workspace::DisagreementKind;
use crate::history::{TrackerHistoryReport, WORKSPACE_STREAM_ID, verify_tracker_history};

/// Per-item diagnostic lists keep at most this many entries (`*_truncated` says when more).
pub const DIAGNOSTIC_ROW_LIMIT: usize = 100;

/// pm's check names, in its run order; only `history_drift` is implemented here.
pub const PM_CHECKS: [&str; 9] = [
    "metadata",
    "resolution",
    "lifecycle",
    "dependency_references",
    "files",
    "command_references",
    "history_drift",
    "format_version",
    "storage_integrity",
];

/// A check this implementation can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckName {
    /// Every stream's chain and every item file against its stream (`--check-history-drift`).
    HistoryDrift,
}

impl CheckName {
    /// Every implemented check, in run order.
    pub const ALL: [CheckName; 1] = [CheckName::HistoryDrift];

    /// Returns pm's name of the check.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckName::HistoryDrift => "history_drift",
        }
    }
}

/// What `validate` runs and how it reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidateOptions {
    /// The checks asked for; empty means every check (pm: no `--check-*` flag runs all).
    pub checks: Vec<CheckName>,
    /// `--counts`: keep counts and drop the per-item diagnostic lists.
    pub counts: bool,
    /// The `generated_at` timestamp (from the invocation clock).
    pub generated_at: String,
}

/// The `validate` envelope.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ValidateReport {
    /// False when a check has status `error`.
    pub ok: bool,
    /// Whether any warning was raised.
    pub has_warnings: bool,
    /// The checks that ran, in pm's order.
    pub checks: Vec<ValidateCheck>,
    /// Warning codes `<code>:<count>`, deduplicated and `localeCompare` sorted.
    pub warnings: Vec<String>,
    /// pm checks that were asked for (no check flag means all) but do not exist here yet.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checks_not_implemented: Vec<&'static str>,
    /// When the report was made.
    pub generated_at: String,
    /// The diagnostic-row projection.
    pub projection: ValidateProjection,
    /// `diagnostic_rows` when `--counts` dropped them.
    pub omission_receipt: OmissionReceipt,
}

impl ValidateReport {
    /// Returns true when `--strict-exit` must fail: a warning or a failed check.
    pub fn fails_strict(&self) -> bool {
        !self.ok || self.has_warnings
    }
}

/// `projection{mode, declared_field_groups, included_field_groups}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ValidateProjection {
    /// `full` or `counts`.
    pub mode: &'static str,
    /// The groups a full report has (`diagnostic_rows`).
    pub declared_field_groups: Vec<FieldGroup>,
    /// The groups this report has.
    pub included_field_groups: Vec<&'static str>,
}

/// One check: `{name, status, ok, details}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ValidateCheck {
    /// pm's check name.
    pub name: &'static str,
    /// `ok`, `warn` or `error`.
    pub status: &'static str,
    /// Whether the status is `ok`.
    pub ok: bool,
    /// What was checked and found.
    pub details: HistoryDriftDetails,
}

/// The details of `history_drift` (pm's keys first, then ours).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HistoryDriftDetails {
    /// Item files parsed and compared with their streams.
    pub checked_items: usize,
    /// Ids with any problem (`_workspace` for the workspace stream).
    pub drifted_items_count: usize,
    /// Those ids, `localeCompare` sorted (dropped by `--counts`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drifted_items: Option<Vec<String>>,
    /// Whether `drifted_items` was cut at [`DIAGNOSTIC_ROW_LIMIT`].
    pub drifted_items_truncated: bool,
    /// Ids per class.
    pub counts: DriftCounts,
    /// Workspace documents that differ from the workspace stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace_state_mismatches: Option<Vec<String>>,
    /// Workspace documents recorded in the stream but absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace_state_missing: Option<Vec<String>>,
    /// Workspace documents that cannot be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace_state_unreadable: Option<Vec<String>>,
    /// Non-empty streams checked, deleted items' streams and the workspace stream included.
    pub streams_checked: usize,
    /// One row per problem: id, class and detail (entry numbers, lines, hashes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift_rows: Option<Vec<DriftRow>>,
    /// Whether `drift_rows` was cut at [`DIAGNOSTIC_ROW_LIMIT`].
    pub drift_rows_truncated: bool,
}

/// The number of ids in each drift class.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DriftCounts {
    /// Item files without history entries.
    pub missing_streams: usize,
    /// Streams with an unparseable line (a torn last line included) or conflict markers.
    pub unreadable_streams: usize,
    /// Item files whose hash differs from their stream's last `after_hash`.
    pub hash_mismatches: usize,
    /// Streams whose replay does not verify.
    pub chain_mismatches: usize,
    /// Workspace documents that differ from the workspace stream.
    pub workspace_state_mismatches: usize,
    /// Workspace documents that are missing.
    pub workspace_state_missing: usize,
    /// Workspace documents that cannot be read.
    pub workspace_state_unreadable: usize,
    /// Item files that cannot be parsed (so cannot be compared).
    pub unreadable_items: usize,
}

/// One diagnostic row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DriftRow {
    /// The item id (`_workspace` for the workspace stream).
    pub id: String,
    /// `missing_stream`, `unreadable_stream`, `torn_tail`, `chain_mismatch`, `hash_mismatch`,
    /// `unreadable_item` or `workspace_state_<mismatch|missing|unreadable>`.
    pub problem: &'static str,
    /// Where and what: issue codes with entry numbers, line numbers, paths and hashes.
    pub detail: String,
}

/// Runs the requested checks over the tracker of `view`.
///
/// # Errors
/// `io_error` when the item folders or the history directory cannot be listed.
pub fn validate(view: &TrackerView, options: &ValidateOptions) -> Result<ValidateReport> {
    let run_all = options.checks.is_empty();
    let mut checks = Vec::new();
    let mut warnings = Vec::new();
    for check in CheckName::ALL {
        if !run_all && !options.checks.contains(&check) {
            continue;
        }
        match check {
            CheckName::HistoryDrift => {
                let (details, found) = history_drift(view, options.counts)?;
                let status = if found.is_empty() { "ok" } else { "warn" };
                checks.push(ValidateCheck {
                    name: check.as_str(),
                    status,
                    ok: found.is_empty(),
                    details,
                });
                warnings.extend(found);
            }
        }
    }
    warnings.sort_by(|a, b| locale_compare(a, b));
    warnings.dedup();
    let declared = vec![FieldGroup::new("diagnostic_rows", "--full")];
    let (mode, included, omitted) = if options.counts {
        ("counts", Vec::new(), declared.clone())
    } else {
        ("full", vec!["diagnostic_rows"], Vec::new())
    };
    Ok(ValidateReport {
        ok: !checks.iter().any(|c| c.status == "error"),
        has_warnings: !warnings.is_empty(),
        checks,
        warnings,
        checks_not_implemented: if run_all {
            PM_CHECKS
                .into_iter()
                .filter(|name| !CheckName::ALL.iter().any(|c| c.as_str() == *name))
                .collect()
        } else {
            Vec::new()
        },
        generated_at: options.generated_at.clone(),
        projection: ValidateProjection {
            mode,
            declared_field_groups: declared,
            included_field_groups: included,
        },
        omission_receipt: OmissionReceipt::omitted(omitted),
    })
}

/// Builds the `history_drift` details and its warning codes.
fn history_drift(
    view: &TrackerView,
    counts_only: bool,
) -> Result<(HistoryDriftDetails, Vec<String>)> {
    let files = view.item_files()?.files;
    let report = verify_tracker_history(view.tracker(), &files, |file| view.load(file))?;
    let classes = classify(&report);
    let rows = drift_rows(view, &report);
    let mut drifted: Vec<String> = classes
        .summary
        .missing_streams
        .iter()
        .chain(&classes.summary.unreadable_streams)
        .chain(&classes.summary.hash_mismatch)
        .chain(&classes.summary.chain_mismatches)
        .chain(&classes.unreadable_items)
        .cloned()
        .collect();
    if !classes.workspace_mismatches.is_empty()
        || !classes.workspace_missing.is_empty()
        || !classes.workspace_unreadable.is_empty()
    {
        drifted.push(WORKSPACE_STREAM_ID.to_string());
    }
    drifted.sort_by(|a, b| locale_compare(a, b));
    drifted.dedup();
    let counts = DriftCounts {
        missing_streams: classes.summary.missing_streams.len(),
        unreadable_streams: classes.summary.unreadable_streams.len(),
        hash_mismatches: classes.summary.hash_mismatch.len(),
        chain_mismatches: classes.summary.chain_mismatches.len(),
        workspace_state_mismatches: classes.workspace_mismatches.len(),
        workspace_state_missing: classes.workspace_missing.len(),
        workspace_state_unreadable: classes.workspace_unreadable.len(),
        unreadable_items: classes.unreadable_items.len(),
    };
    let warnings = warning_codes(&counts);
    let list = |v: Vec<String>| (!counts_only).then(|| capped(v).0);
    let checked_files: usize = report.items.iter().map(|i| i.files.len()).sum();
    let details = HistoryDriftDetails {
        checked_items: checked_files - counts.unreadable_items,
        drifted_items_count: drifted.len(),
        drifted_items_truncated: !counts_only && drifted.len() > DIAGNOSTIC_ROW_LIMIT,
        drifted_items: list(drifted),
        counts,
        workspace_state_mismatches: list(classes.workspace_mismatches),
        workspace_state_missing: list(classes.workspace_missing),
        workspace_state_unreadable: list(classes.workspace_unreadable),
        streams_checked: report
            .items
            .iter()
            .map(|i| &i.stream)
            .chain([&report.workspace.stream])
            .filter(|s| **s != StreamStatus::Missing)
            .count(),
        drift_rows_truncated: !counts_only && rows.len() > DIAGNOSTIC_ROW_LIMIT,
        drift_rows: (!counts_only).then(|| capped(rows).0),
    };
    Ok((details, warnings))
}

/// The ids and paths of every drift class.
struct Classes {
    summary: HistorySummary,
    unreadable_items: Vec<String>,
    workspace_mismatches: Vec<String>,
    workspace_missing: Vec<String>,
    workspace_unreadable: Vec<String>,
}

fn classify(report: &TrackerHistoryReport) -> Classes {
    let mut summary = report.summary();
    // pm cannot parse a stream whose last line is torn: it counts as unreadable.
    summary.unreadable_streams.append(&mut summary.torn_tails);
    let workspace = &report.workspace;
    if matches!(workspace.stream, StreamStatus::Unreadable { .. }) || workspace.torn_tail.is_some()
    {
        summary.unreadable_streams.push(WORKSPACE_STREAM_ID.into());
    }
    if workspace.stream == StreamStatus::ChainMismatch {
        summary.chain_mismatches.push(WORKSPACE_STREAM_ID.into());
    }
    for ids in [
        &mut summary.unreadable_streams,
        &mut summary.chain_mismatches,
    ] {
        ids.sort_by(|a, b| locale_compare(a, b));
        ids.dedup();
    }
    let paths = |kind: DisagreementKind| -> Vec<String> {
        workspace
            .disagreements
            .iter()
            .filter(|d| d.kind == kind)
            .map(|d| d.path.clone())
            .collect()
    };
    Classes {
        summary,
        unreadable_items: report
            .items
            .iter()
            .filter(|i| {
                i.files
                    .iter()
                    .any(|f| matches!(f.drift, DriftStatus::ItemUnreadable { .. }))
            })
            .map(|i| i.id.clone())
            .collect(),
        workspace_mismatches: paths(DisagreementKind::Differs),
        workspace_missing: paths(DisagreementKind::Missing),
        workspace_unreadable: paths(DisagreementKind::Unreadable),
    }
}

fn warning_codes(counts: &DriftCounts) -> Vec<String> {
    [
        ("missing_streams", counts.missing_streams),
        ("unreadable_streams", counts.unreadable_streams),
        ("hash_mismatches", counts.hash_mismatches),
        ("chain_mismatches", counts.chain_mismatches),
        (
            "workspace_state_mismatches",
            counts.workspace_state_mismatches,
        ),
        ("workspace_state_missing", counts.workspace_state_missing),
        (
            "workspace_state_unreadable",
            counts.workspace_state_unreadable,
        ),
        ("unreadable_items", counts.unreadable_items),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .map(|(class, n)| format!("validate_history_drift_{class}:{n}"))
    .collect()
}

/// One row per problem, sorted by id (the workspace stream last among equals).
fn drift_rows(view: &TrackerView, report: &TrackerHistoryReport) -> Vec<DriftRow> {
    let root = format!("{}/", view.tracker().root().display());
    let clean = |text: &str| text.replace(&root, "");
    let mut rows = Vec::new();
    let mut push = |id: &str, problem: &'static str, detail: String| {
        rows.push(DriftRow {
            id: id.to_string(),
            problem,
            detail,
        });
    };
    let streams = report
        .items
        .iter()
        .map(|i| (i.id.as_str(), &i.stream, &i.issues, &i.torn_tail))
        .chain([(
            WORKSPACE_STREAM_ID,
            &report.workspace.stream,
            &report.workspace.issues,
            &report.workspace.torn_tail,
        )]);
    for (id, stream, issues, torn) in streams {
        if let StreamStatus::Unreadable { code, message } = stream {
            push(
                id,
                "unreadable_stream",
                format!("{code}: {}", clean(message)),
            );
        }
        if let Some(tail) = torn {
            push(
                id,
                "torn_tail",
                format!(
                    "line {}: unterminated, unparseable last line ({} bytes at offset {}) skipped",
                    tail.line, tail.len, tail.offset
                ),
            );
        }
        if !issues.is_empty() {
            let codes: Vec<String> = issues.iter().map(|i| i.code()).collect();
            push(id, "chain_mismatch", codes.join(", "));
        }
    }
    for item in &report.items {
        if item.stream == StreamStatus::Missing {
            for file in &item.files {
                push(
                    &item.id,
                    "missing_stream",
                    format!("{} has no history entries", view.relative(&file.path)),
                );
            }
        }
        for file in &item.files {
            let path = view.relative(&file.path);
            match &file.drift {
                DriftStatus::HashMismatch(m) => push(
                    &item.id,
                    "hash_mismatch",
                    format!(
                        "{path} hashes to {}, the stream's last after_hash is {}",
                        m.found, m.expected
                    ),
                ),
                DriftStatus::ItemUnreadable { code, message } => push(
                    &item.id,
                    "unreadable_item",
                    format!("{path}: {code}: {}", clean(message)),
                ),
                DriftStatus::Ok | DriftStatus::NotChecked => {}
            }
        }
    }
    for d in &report.workspace.disagreements {
        let problem = match d.kind {
            DisagreementKind::Differs => "workspace_state_mismatch",
            DisagreementKind::Missing => "workspace_state_missing",
            DisagreementKind::Unreadable => "workspace_state_unreadable",
        };
        let detail = match &d.detail {
            Some(detail) => format!("{}: {detail}", d.path),
            None => d.path.clone(),
        };
        push(WORKSPACE_STREAM_ID, problem, detail);
    }
    rows.sort_by(|a, b| locale_compare(&a.id, &b.id));
    rows
}

/// Cuts `items` at [`DIAGNOSTIC_ROW_LIMIT`]; returns whether it did.
fn capped<T>(mut items: Vec<T>) -> (Vec<T>, bool) {
    let cut = items.len() > DIAGNOSTIC_ROW_LIMIT;
    items.truncate(DIAGNOSTIC_ROW_LIMIT);
    (items, cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warning_codes_list_nonzero_classes() {
        let counts = DriftCounts {
            chain_mismatches: 2,
            unreadable_items: 1,
            ..DriftCounts::default()
        };
        assert_eq!(
            warning_codes(&counts),
            [
                "validate_history_drift_chain_mismatches:2",
                "validate_history_drift_unreadable_items:1"
            ]
        );
    }

    #[test]
    fn capping_keeps_the_limit() {
        let (kept, cut) = capped((0..150).collect::<Vec<_>>());
        assert_eq!((kept.len(), cut), (DIAGNOSTIC_ROW_LIMIT, true));
        let (kept, cut) = capped(vec![1, 2]);
        assert_eq!((kept.len(), cut), (2, false));
    }
}
