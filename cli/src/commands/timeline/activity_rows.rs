//! The rows of one `pm activity` page: the per-item digest of the window's events, or the
//! compact, provenance or full row of each event, read from its history stream.

use std::collections::BTreeMap;

use pm_engine::history::HistoryEntry;
use pm_engine::read::history_view::compact_row;
use pm_engine::read::{ProvenanceRow, TrackerView};
use pm_index::EventRow;
use serde_json::{Map, Value};

use super::activity::Mode;
use super::activity_result::{ActivityRows, DigestEntry, EventBody, EventEntry, UnparsedEvent};

/// One item's aggregate over the window.
pub(super) struct DigestRow {
    pub(super) id: String,
    event_count: usize,
    first_ts: String,
    last_ts: String,
    ops: BTreeMap<String, usize>,
}

/// Groups `events` (newest first) by item; rows ordered by last activity, newest first, then id.
pub(super) fn digest(events: &[EventRow]) -> Vec<DigestRow> {
    let mut by_id: BTreeMap<&str, DigestRow> = BTreeMap::new();
    for e in events {
        let row = by_id.entry(e.stream.as_str()).or_insert_with(|| DigestRow {
            id: e.stream.clone(),
            event_count: 0,
            first_ts: e.ts.clone(),
            last_ts: e.ts.clone(),
            ops: BTreeMap::new(),
        });
        row.event_count += 1;
        if e.ts < row.first_ts {
            row.first_ts.clone_from(&e.ts);
        }
        if e.ts > row.last_ts {
            row.last_ts.clone_from(&e.ts);
        }
        *row.ops.entry(e.op.clone()).or_default() += 1;
    }
    let mut rows: Vec<DigestRow> = by_id.into_values().collect();
    rows.sort_by(|a, b| b.last_ts.cmp(&a.last_ts).then_with(|| a.id.cmp(&b.id)));
    rows
}

/// Returns `op:count` for the four most frequent operations (count desc, then name), then
/// `+N` for the N further operation kinds, joined by `, `.
fn operations(ops: &BTreeMap<String, usize>) -> String {
    let mut pairs: Vec<(&String, &usize)> = ops.iter().collect();
    pairs.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let mut parts: Vec<String> = pairs
        .iter()
        .take(4)
        .map(|(op, n)| format!("{op}:{n}"))
        .collect();
    if pairs.len() > 4 {
        parts.push(format!("+{}", pairs.len() - 4));
    }
    parts.join(", ")
}

/// Returns a digest row with the item's current type, status and title (`null` for a deleted
/// item or the workspace stream).
pub(super) fn digest_entry(view: &TrackerView, row: &DigestRow) -> DigestEntry {
    let doc = view.locate(&row.id).and_then(|file| view.load(&file)).ok();
    let meta = |key: &str| {
        doc.as_ref()
            .and_then(|d| d.metadata.get(key))
            .cloned()
            .unwrap_or(Value::Null)
    };
    DigestEntry {
        id: row.id.clone(),
        item_type: meta("type"),
        status: meta("status"),
        title: meta("title"),
        event_count: row.event_count,
        first_ts: row.first_ts.clone(),
        last_ts: row.last_ts.clone(),
        operations: operations(&row.ops),
    }
}

/// The cursor key of an event row.
pub(super) fn event_key(row: &EventRow) -> String {
    format!("{}|{}|{}", row.ts, row.stream, row.position)
}

/// Returns the history entry of an event row, read from its stream (the window query leaves
/// the entries out; only the page's rows need them); `null` when the stream no longer holds it.
fn entry_of(view: &TrackerView, row: &EventRow) -> Value {
    let position = usize::try_from(row.position).unwrap_or(usize::MAX);
    view.stream(&row.stream)
        .ok()
        .and_then(|s| s.entries.get(position).map(HistoryEntry::to_value))
        .unwrap_or(Value::Null)
}

/// Returns the event rows of `events` in `mode` (compact, provenance or full).
pub(super) fn event_rows(mode: Mode, view: &TrackerView, events: &[EventRow]) -> ActivityRows {
    let rows = events
        .iter()
        .map(|row| EventEntry {
            id: row.stream.clone(),
            row: event_body(mode, row, entry_of(view, row)),
        })
        .collect();
    match mode {
        Mode::Full => ActivityRows::Full(rows),
        Mode::Provenance => ActivityRows::Provenance(rows),
        Mode::Compact | Mode::Digest => ActivityRows::Compact(rows),
    }
}

/// Returns the keys after an event row's id in `mode` from its `raw` entry; an entry that
/// does not parse keeps what the event projection knows of it.
fn event_body(mode: Mode, row: &EventRow, raw: Value) -> EventBody {
    let index = usize::try_from(row.position).unwrap_or(0) + 1;
    if mode == Mode::Full {
        let entry = match raw {
            Value::Object(entry) => entry,
            _ => Map::new(),
        };
        return EventBody::Full { index, entry };
    }
    match HistoryEntry::from_value(raw) {
        Ok(entry) if mode == Mode::Provenance => {
            EventBody::Provenance(ProvenanceRow::of(index, &entry))
        }
        Ok(entry) => EventBody::Compact(compact_row(index, &entry)),
        Err(_) => EventBody::Unparsed(UnparsedEvent {
            index,
            ts: row.ts.clone(),
            op: row.op.clone(),
            author: row.author.clone(),
            patch_ops: (mode != Mode::Provenance).then_some(row.patch_count),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_keep_four_kinds_then_count_the_rest() {
        let ops: BTreeMap<String, usize> = [
            ("update", 5),
            ("create", 1),
            ("close", 2),
            ("comment", 2),
            ("claim", 1),
            ("release", 1),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        assert_eq!(
            operations(&ops),
            "update:5, close:2, comment:2, claim:1, +2"
        );
    }
}
