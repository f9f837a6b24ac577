//! The `history_drift` check: every stream's chain replayed and verified, every item file against
//! its stream's last `after_hash`, and the workspace stream with its documents; pm's keys first,
//! then ours (`streams_checked`, `drift_rows`, `counts.unreadable_items`,
//! `counts.interrupted_deletes`).

use serde::Serialize;

use super::{CheckName, Outcome, Scope};
use crate::collate::locale_compare;
use crate::history::verify::{DriftStatus, HistorySummary, StreamStatus};
use crate::history::workspace::DisagreementKind;
use crate::history::{TrackerHistoryReport, WORKSPACE_STREAM_ID};

/// The details of `history_drift` (pm's keys first, then ours).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HistoryDriftDetails {
    /// Item files parsed and compared with their streams.
    pub checked_items: usize,
    /// Ids with any problem (`_workspace` for the workspace stream).
    pub drifted_items_count: usize,
    /// Those ids, `localeCompare` sorted (dropped by `--counts`).
    pub drifted_items: Vec<String>,
    /// Whether `drifted_items` was cut at the diagnostic limit.
    pub drifted_items_truncated: bool,
    /// Ids per class.
    pub counts: DriftCounts,
    /// Workspace documents that differ from the workspace stream.
    pub workspace_state_mismatches: Vec<String>,
    /// Workspace documents recorded in the stream but absent.
    pub workspace_state_missing: Vec<String>,
    /// Workspace documents that cannot be read.
    pub workspace_state_unreadable: Vec<String>,
    /// Non-empty streams checked, deleted items' streams and the workspace stream included.
    pub streams_checked: usize,
    /// One row per problem: id, class and detail (entry numbers, lines, hashes).
    pub drift_rows: Vec<DriftRow>,
    /// Whether `drift_rows` was cut at the diagnostic limit.
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
    /// Streams that end with a live item although no item file exists: a delete stopped
    /// between removing the file and recording it, or the file was removed by hand.
    pub interrupted_deletes: usize,
}

/// One diagnostic row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DriftRow {
    /// The item id (`_workspace` for the workspace stream).
    pub id: String,
    /// `missing_stream`, `unreadable_stream`, `torn_tail`, `chain_mismatch`, `hash_mismatch`,
    /// `unreadable_item`, `interrupted_delete` or `workspace_state_<mismatch|missing|unreadable>`.
    pub problem: &'static str,
    /// Where and what: issue codes with entry numbers, line numbers, paths and hashes.
    pub detail: String,
}

/// The `history_drift` check over an already verified tracker.
pub(crate) fn history_drift(scope: &Scope<'_>, report: &TrackerHistoryReport) -> Outcome {
    let view = scope.view;
    let limit = scope.limit;
    // While a type folder cannot be listed, a stream without a file may belong to an item in
    // it: only a complete listing can tell an interrupted delete.
    let complete = scope.folder_notices.is_empty();
    let classes = classify(report, complete);
    let rows = drift_rows(view, report, complete);
    let mut drifted: Vec<String> = classes
        .summary
        .missing_streams
        .iter()
        .chain(&classes.summary.unreadable_streams)
        .chain(&classes.summary.hash_mismatch)
        .chain(&classes.summary.chain_mismatches)
        .chain(&classes.unreadable_items)
        .chain(&classes.interrupted_deletes)
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
        interrupted_deletes: classes.interrupted_deletes.len(),
    };
    let warnings = warning_codes(&counts);
    let checked_files: usize = report.items.iter().map(|i| i.files.len()).sum();
    let details = HistoryDriftDetails {
        checked_items: checked_files - counts.unreadable_items,
        drifted_items_count: drifted.len(),
        drifted_items_truncated: cut_at(&drifted, limit),
        drifted_items: cut(drifted, limit),
        counts,
        workspace_state_mismatches: classes.workspace_mismatches,
        workspace_state_missing: classes.workspace_missing,
        workspace_state_unreadable: classes.workspace_unreadable,
        streams_checked: report
            .items
            .iter()
            .map(|i| &i.stream)
            .chain([&report.workspace.stream])
            .filter(|s| **s != StreamStatus::Missing)
            .count(),
        drift_rows_truncated: cut_at(&rows, limit),
        drift_rows: cut(rows, limit),
    };
    // A chain that does not replay (a forged or hand-edited `after_hash`, a patch that does not
    // apply) means the history can no longer be trusted: an error, where pm only warns. A
    // hand-edited item file, a torn tail or an interrupted delete stay warnings: the next write
    // (or `pm history-repair`) records them.
    let forged = details.counts.chain_mismatches > 0;
    let details = serde_json::to_value(&details).unwrap_or_default();
    Outcome::new(CheckName::HistoryDrift, forged, details, warnings)
}

/// The ids and paths of every drift class.
struct Classes {
    summary: HistorySummary,
    unreadable_items: Vec<String>,
    interrupted_deletes: Vec<String>,
    workspace_mismatches: Vec<String>,
    workspace_missing: Vec<String>,
    workspace_unreadable: Vec<String>,
}

fn classify(report: &TrackerHistoryReport, complete: bool) -> Classes {
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
        interrupted_deletes: report
            .items
            .iter()
            .filter(|i| complete && ends_without_file(i))
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
        ("interrupted_deletes", counts.interrupted_deletes),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .map(|(class, n)| format!("validate_history_drift_{class}:{n}"))
    .collect()
}

/// One row per problem, sorted by id (the workspace stream last among equals).
fn drift_rows(
    view: &crate::read::TrackerView,
    report: &TrackerHistoryReport,
    complete: bool,
) -> Vec<DriftRow> {
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
        if complete && ends_without_file(item) {
            push(
                &item.id,
                "interrupted_delete",
                format!(
                    "history/{id}.jsonl ends with the item live (last op {op}) but no item file \
                     exists: a delete stopped before recording itself, or the file was removed \
                     by hand; run `pm history-repair {id}` to record the removal, or \
                     `pm restore {id} {n}` to bring the item back",
                    id = item.id,
                    op = item.last_op.as_deref().unwrap_or("?"),
                    n = item.entries,
                ),
            );
        }
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

/// Whether the stream of an id without an item file still ends with a live item (a readable
/// stream only: an unreadable one is reported as such).
fn ends_without_file(item: &crate::history::verify::ItemHistoryReport) -> bool {
    item.files.is_empty()
        && item.ends_live
        && matches!(item.stream, StreamStatus::Ok | StreamStatus::ChainMismatch)
}

/// Returns whether `items` is longer than `limit`.
fn cut_at<T>(items: &[T], limit: Option<usize>) -> bool {
    limit.is_some_and(|l| items.len() > l)
}

/// Cuts `items` to `limit` entries.
fn cut<T>(mut items: Vec<T>, limit: Option<usize>) -> Vec<T> {
    items.truncate(limit.unwrap_or(usize::MAX));
    items
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
    fn cutting_keeps_the_limit() {
        assert!(cut_at(&[1, 2, 3], Some(2)));
        assert_eq!(cut(vec![1, 2, 3], Some(2)), [1, 2]);
        assert_eq!(cut(vec![1, 2, 3], None).len(), 3);
    }
}
