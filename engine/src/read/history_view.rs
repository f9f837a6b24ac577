//! `pm history <id>`: an item's stream as compact rows or raw entries,
//! optionally limited to the latest entries, and `--verify`: the chain replayed entry by entry,
//! the torn tail and the current item file checked against the last `after_hash`.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use super::provenance::{ProvenanceFilter, ProvenanceRow, ProvenanceSummary};
use super::receipt::{FieldGroup, OmissionReceipt};
use super::view::TrackerView;
use crate::collate::locale_compare;
use crate::error::{Error, Result};
use crate::hash::{EMPTY_DOC_HASH, HashEpoch, item_hash};
use crate::history::diff::wrap_state;
use crate::history::patch::{CopyBudget, apply_lenient_within};
use crate::history::{HistoryEntry, StreamRead, verify_chain};
use crate::tracker::ItemFileRef;

/// Which rows `history` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistoryMode {
    /// One summary row per entry (`compact_history`).
    Compact,
    /// Who recorded each entry (`provenance_history`).
    Provenance,
    /// The raw entries (`history`).
    Full,
}

impl HistoryMode {
    /// The `projection.mode` name.
    pub fn name(self) -> &'static str {
        match self {
            HistoryMode::Compact => "compact",
            HistoryMode::Provenance => "provenance",
            HistoryMode::Full => "full",
        }
    }

    /// The key holding the rows.
    pub fn row_key(self) -> &'static str {
        match self {
            HistoryMode::Compact => "compact_history",
            HistoryMode::Provenance => "provenance_history",
            HistoryMode::Full => "history",
        }
    }

    /// What the rows leave out: compact rows the raw entries, provenance rows the patches
    /// and hashes (both restored with `--full`).
    fn receipt(self) -> OmissionReceipt {
        match self {
            HistoryMode::Compact => {
                OmissionReceipt::omitted(vec![FieldGroup::new("raw_history", "--full")])
            }
            HistoryMode::Provenance => {
                OmissionReceipt::omitted(vec![FieldGroup::new("patch_and_hashes", "--full")])
            }
            HistoryMode::Full => OmissionReceipt::complete(),
        }
    }
}

/// The options of `history`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryOptions {
    /// Row shape.
    pub mode: HistoryMode,
    /// Only the latest `n` entries (counted after the `field` filter).
    pub limit: Option<usize>,
    /// Replay and verify the whole stream.
    pub verify: bool,
    /// Add the per-entry field changes (`diff`), replayed from the empty document.
    pub diff: bool,
    /// Only entries that change this field (a `changed_fields` name: `status`, `body`, …);
    /// with `diff`, only this field's change is shown.
    pub field: Option<String>,
    /// Only entries recorded by these harnesses / agent instances.
    pub provenance: ProvenanceFilter,
    /// Add `provenance_summary` over the returned entries.
    pub provenance_summary: bool,
}

/// One compact row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CompactRow {
    /// 1-based position in the whole stream.
    pub index: usize,
    /// Entry timestamp.
    pub ts: String,
    /// Operation.
    pub op: String,
    /// Author.
    pub author: String,
    /// Number of patch operations.
    pub patch_ops: usize,
    /// Fields touched by the patch, `localeCompare` sorted (`body` for the body).
    pub changed_fields: Vec<String>,
}

/// `projection{mode, row_key}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HistoryProjection {
    /// `compact`, `provenance` or `full`.
    pub mode: &'static str,
    /// The key holding the rows.
    pub row_key: &'static str,
}

/// The result of `--verify`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// True when every entry verified, no tail is torn and the item file matches the stream.
    pub ok: bool,
    /// Entries read (a torn tail is not an entry).
    pub entries: usize,
    /// Problems: `patch_apply_failed:entry_N`, `before_hash_mismatch:entry_N`,
    /// `after_hash_mismatch:entry_N`, `torn_tail:line_N`,
    /// `verify_failed:current_item_hash_mismatch`, `verify_failed:current_item_unreadable`.
    pub errors: Vec<String>,
    /// The last entry's `after_hash`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest_after_hash: Option<String>,
    /// The item hash of the current file (absent for a deleted item).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_item_hash: Option<String>,
    /// Whether the file hash equals the last `after_hash` (absent for a deleted item).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_matches_latest: Option<bool>,
    /// The unterminated, unparseable last line that readers skip.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torn_tail: Option<TornTailRow>,
}

/// A torn last line as reported.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TornTailRow {
    /// 1-based line number.
    pub line: usize,
    /// Byte offset of the line.
    pub offset: u64,
    /// Byte length of the line.
    pub bytes: usize,
}

/// The `history` envelope: `id, compact_history | provenance_history | history, compact,
/// projection, omission_receipt, count, limit, [field], [provenance_summary], [diff],
/// [verification]`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HistoryView {
    /// The item id.
    pub id: String,
    /// Compact rows (compact mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compact_history: Option<Vec<CompactRow>>,
    /// Provenance rows (provenance mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance_history: Option<Vec<ProvenanceRow>>,
    /// Raw entries (full mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<Value>>,
    /// Whether the rows are compact.
    pub compact: bool,
    /// The row shape.
    pub projection: HistoryProjection,
    /// Compact rows omit the raw entries (`raw_history`, restored with `--full`).
    pub omission_receipt: OmissionReceipt,
    /// Rows returned.
    pub count: usize,
    /// The `--limit`, or `null`.
    pub limit: Option<usize>,
    /// The `--field` filter, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Who recorded the returned entries (`--provenance-summary`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance_summary: Option<ProvenanceSummary>,
    /// The `--diff` rows, one per returned entry, in the same order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<Vec<DiffRow>>,
    /// The `--verify` result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
}

/// Reads the history of an item, or of a deleted item whose stream remains.
///
/// # Errors
/// `item_not_found` when neither an item file nor a stream exists; `invalid_item_id`,
/// `duplicate_item_id`; the read errors of the stream (an invalid line before the last).
pub fn history_view(
    view: &TrackerView,
    raw_id: &str,
    options: &HistoryOptions,
) -> Result<HistoryView> {
    let (id, file) = match view.locate(raw_id) {
        Ok(file) => (file.stem.clone(), Some(file)),
        Err(Error::ItemNotFound { .. }) => match view.stream_id_without_file(raw_id) {
            Some(id) => (id, None),
            None => return Err(view.not_found(raw_id)),
        },
        Err(err) => return Err(err),
    };
    let stream = view.stream(&id)?;
    let field = options.field.as_deref();
    // 0-based positions of the entries that pass the field filter, then the latest `limit`.
    let selected: Vec<usize> = stream
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| field.is_none_or(|f| entry_fields(e).contains(f)))
        .filter(|(_, e)| options.provenance.matches(e))
        .map(|(i, _)| i)
        .collect();
    let start = options
        .limit
        .map_or(0, |n| selected.len().saturating_sub(n));
    let window = &selected[start..];
    let mode = options.mode;
    let verification = options.verify.then(|| verify(view, file.as_ref(), &stream));
    let diff = options
        .diff
        .then(|| diff_rows(&stream.entries, window, field));
    let rows = |wanted: HistoryMode| mode == wanted;
    Ok(HistoryView {
        id,
        compact_history: rows(HistoryMode::Compact).then(|| {
            window
                .iter()
                .map(|&i| compact_row(i + 1, &stream.entries[i]))
                .collect()
        }),
        provenance_history: rows(HistoryMode::Provenance).then(|| {
            window
                .iter()
                .map(|&i| ProvenanceRow::of(i + 1, &stream.entries[i]))
                .collect()
        }),
        history: rows(HistoryMode::Full).then(|| {
            window
                .iter()
                .map(|&i| stream.entries[i].to_value())
                .collect()
        }),
        compact: mode == HistoryMode::Compact,
        projection: HistoryProjection {
            mode: mode.name(),
            row_key: mode.row_key(),
        },
        omission_receipt: mode.receipt(),
        count: window.len(),
        limit: options.limit,
        field: options.field.clone(),
        provenance_summary: options
            .provenance_summary
            .then(|| ProvenanceSummary::of(window.iter().map(|&i| &stream.entries[i]))),
        diff,
        verification,
    })
}

/// One `--diff` row: the entry's position and what it changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiffRow {
    /// 1-based position in the whole stream (the compact row's `index`).
    pub index: usize,
    /// Entry timestamp.
    pub ts: String,
    /// Operation.
    pub op: String,
    /// Author.
    pub author: String,
    /// One change per changed field, `localeCompare` sorted.
    pub changes: Vec<FieldChange>,
}

/// A field's value before and after one entry.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FieldChange {
    /// The field (`changed_fields` name).
    pub field: String,
    /// `added` (absent before), `removed` (absent after) or `changed`.
    pub change: &'static str,
    /// The value before the entry (`null` when absent).
    pub before: Value,
    /// The value after the entry (`null` when absent).
    pub after: Value,
}

/// Replays `entries` from the empty document (leniently: an op that does not apply is
/// skipped, as a tampered stream is `--verify`'s business) and returns the diff rows of the
/// entries at `positions` (0-based, ascending).
fn diff_rows(entries: &[HistoryEntry], positions: &[usize], field: Option<&str>) -> Vec<DiffRow> {
    let mut state = wrap_state(serde_json::Map::new(), String::new());
    let mut copies = CopyBudget::default();
    let mut rows = Vec::with_capacity(positions.len());
    let mut wanted = positions.iter().peekable();
    let last = positions.last().copied();
    for (i, entry) in entries.iter().enumerate() {
        if last.is_none_or(|l| i > l) {
            break;
        }
        if wanted.peek() != Some(&&i) {
            apply_lenient_within(&mut state, &entry.patch, &mut copies);
            continue;
        }
        wanted.next();
        let fields: Vec<String> = sorted_fields(entry)
            .into_iter()
            .filter(|f| field.is_none_or(|w| w == f))
            .collect();
        let before: Vec<Option<Value>> = fields.iter().map(|f| field_value(&state, f)).collect();
        apply_lenient_within(&mut state, &entry.patch, &mut copies);
        let changes = fields
            .into_iter()
            .zip(before)
            .map(|(name, before)| {
                let after = field_value(&state, &name);
                let change = match (&before, &after) {
                    (None, _) => "added",
                    (_, None) => "removed",
                    _ => "changed",
                };
                FieldChange {
                    field: name,
                    change,
                    before: before.unwrap_or(Value::Null),
                    after: after.unwrap_or(Value::Null),
                }
            })
            .collect();
        rows.push(DiffRow {
            index: i + 1,
            ts: entry.ts.clone(),
            op: entry.op.clone(),
            author: entry.author.clone(),
            changes,
        });
    }
    rows
}

/// Returns the value of a `changed_fields` name in a `{metadata, body}` state: `body`, a
/// metadata key, or (for patches outside both) a root key.
fn field_value(state: &Value, field: &str) -> Option<Value> {
    if field == "body" {
        return state.get("body").cloned();
    }
    if field == "metadata" {
        return state.get("metadata").cloned();
    }
    state
        .get("metadata")
        .and_then(|m| m.get(field))
        .or_else(|| state.get(field))
        .cloned()
}

/// Returns the set of fields an entry's patch touches.
fn entry_fields(entry: &HistoryEntry) -> BTreeSet<String> {
    let mut fields: BTreeSet<String> = BTreeSet::new();
    for op in &entry.patch {
        fields.insert(changed_field(&op.path));
        if let Some(from) = &op.from {
            fields.insert(changed_field(from));
        }
    }
    fields
}

/// Returns the fields an entry's patch touches, `localeCompare` sorted.
fn sorted_fields(entry: &HistoryEntry) -> Vec<String> {
    let mut fields: Vec<String> = entry_fields(entry).into_iter().collect();
    fields.sort_by(|a, b| locale_compare(a, b));
    fields
}

/// Returns the compact row of one entry.
pub fn compact_row(index: usize, entry: &HistoryEntry) -> CompactRow {
    let mut changed_fields: Vec<String> = entry_fields(entry).into_iter().collect();
    changed_fields.sort_by(|a, b| locale_compare(a, b));
    CompactRow {
        index,
        ts: entry.ts.clone(),
        op: entry.op.clone(),
        author: entry.author.clone(),
        patch_ops: entry.patch.len(),
        changed_fields,
    }
}

/// Maps a patch path to the field it changes (pm's `patchPathToChangedField`): `/body…` is
/// `body`; `/metadata/<f>…` and `/front_matter/<f>…` are `<f>` (bare root: `metadata`); any
/// other path is its first segment (empty: `root`). Segments are JSON-pointer decoded.
pub fn changed_field(path: &str) -> String {
    if path == "/body" || path.starts_with("/body/") {
        return "body".into();
    }
    for root in ["/metadata", "/front_matter"] {
        if let Some(rest) = path.strip_prefix(root)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            let segment = rest.trim_start_matches('/').split('/').next().unwrap_or("");
            return if segment.is_empty() {
                "metadata".into()
            } else {
                decode_segment(segment)
            };
        }
    }
    let segment = path
        .strip_prefix('/')
        .unwrap_or(path)
        .split('/')
        .next()
        .unwrap_or("");
    if segment.is_empty() {
        "root".into()
    } else {
        decode_segment(segment)
    }
}

fn decode_segment(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

fn verify(view: &TrackerView, file: Option<&ItemFileRef>, stream: &StreamRead) -> Verification {
    let chain = verify_chain(&stream.entries);
    let mut errors: Vec<String> = chain.issues.iter().map(|i| i.code()).collect();
    if let Some(tail) = &stream.torn_tail {
        errors.push(format!("torn_tail:line_{}", tail.line));
    }
    let latest = stream.entries.last().map(|e| e.after_hash.clone());
    let (mut current_item_hash, mut current_matches_latest) = (None, None);
    if let Some(file) = file {
        match view.load(file) {
            Ok(doc) => {
                let hash = if stream.entries.is_empty() {
                    item_hash(&doc, HashEpoch::V2)
                } else {
                    item_hash(&doc, chain.epoch)
                };
                let matches = hash == latest.as_deref().unwrap_or(EMPTY_DOC_HASH);
                if !matches {
                    errors.push("verify_failed:current_item_hash_mismatch".into());
                }
                current_item_hash = Some(hash);
                current_matches_latest = Some(matches);
            }
            Err(_) => errors.push("verify_failed:current_item_unreadable".into()),
        }
    }
    Verification {
        ok: errors.is_empty(),
        entries: stream.entries.len(),
        errors,
        latest_after_hash: latest,
        current_item_hash,
        current_matches_latest,
        torn_tail: stream.torn_tail.as_ref().map(|t| TornTailRow {
            line: t.line,
            offset: t.offset,
            bytes: t.len,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::PatchOp;
    use serde_json::json;

    #[test]
    fn changed_field_names() {
        for (path, field) in [
            ("/body", "body"),
            ("/body/x", "body"),
            ("/metadata/status", "status"),
            ("/metadata/tags/0", "tags"),
            ("/front_matter/updated_at", "updated_at"),
            ("/metadata", "metadata"),
            ("/metadata/", "metadata"),
            ("/metadata/a~1b~0c", "a/b~c"),
            ("/", "root"),
            ("/other/x", "other"),
            ("/metadatax/y", "metadatax"),
        ] {
            assert_eq!(changed_field(path), field, "{path}");
        }
    }

    #[test]
    fn compact_rows_dedupe_and_sort_fields() {
        let patch = vec![
            PatchOp::replace("/metadata/updated_at", json!("t")),
            PatchOp::add("/metadata/tags/1", json!("b")),
            PatchOp::add("/metadata/tags/2", json!("c")),
            PatchOp::replace("/body", json!("x")),
            PatchOp::add("/metadata/Assignee", json!("x")),
        ];
        let entry = HistoryEntry::new("t", "a", "update", patch, "h0", "h1");
        let row = compact_row(3, &entry);
        assert_eq!(row.index, 3);
        assert_eq!(row.patch_ops, 5);
        assert_eq!(
            row.changed_fields,
            ["Assignee", "body", "tags", "updated_at"]
        );
    }
}
