//! Re-anchor markers: a `history_repair` entry whose `context.reanchor` acknowledges a chain
//! break (`from_entry` through the entry before the marker) and whose patch replaces the whole
//! document with the item's on-disk state. A stream with a marker verifies without rewriting
//! its earlier lines: replay accepts the acknowledged issues, and the marker sets the state that
//! every later entry chains from.

use serde_json::{Value, json};

use super::entry::{HistoryEntry, PatchOp};
use crate::item::ItemDoc;

/// The `op` of every repair entry.
pub const REPAIR_OP: &str = "history_repair";

/// The `op` of `pm merge reconcile` entries; a re-anchor marker may be one too.
pub const MERGE_RECONCILE_OP: &str = "merge_reconcile";

/// A break acknowledged by a marker: 1-based entry numbers, `from..=marker`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Anchor {
    /// The first entry whose issues are acknowledged.
    pub from: usize,
    /// The marker's own entry number (its `before_hash` check is acknowledged too).
    pub marker: usize,
}

/// Returns the markers of `entries`, in order. A marker counts only where it stands: its
/// `through_entry` must be the entry right before it, and `from_entry` at most that.
pub fn anchors<'e>(entries: impl IntoIterator<Item = &'e HistoryEntry>) -> Vec<Anchor> {
    entries
        .into_iter()
        .enumerate()
        .filter(|(_, e)| e.op == REPAIR_OP || e.op == MERGE_RECONCILE_OP)
        .filter_map(|(index, entry)| {
            let reanchor = entry.context.as_ref()?.get("reanchor")?;
            let from = usize::try_from(reanchor.get("from_entry")?.as_u64()?).ok()?;
            let through = usize::try_from(reanchor.get("through_entry")?.as_u64()?).ok()?;
            let marker = index + 1;
            (from >= 1 && from <= through && through + 1 == marker)
                .then_some(Anchor { from, marker })
        })
        .collect()
}

/// Returns the anchor whose range holds entry `number`, if any.
pub fn covering(anchors: &[Anchor], number: usize) -> Option<Anchor> {
    anchors
        .iter()
        .copied()
        .find(|a| a.from <= number && number <= a.marker)
}

/// Returns the marker patch that sets the whole document to `doc` from any well-shaped state:
/// a `replace` of `/metadata` and of `/body`.
pub fn replace_all(doc: &ItemDoc) -> Vec<PatchOp> {
    vec![
        PatchOp::replace("/metadata", Value::Object(doc.metadata.clone())),
        PatchOp::replace("/body", Value::String(doc.body.clone())),
    ]
}

/// Returns the `context` of a marker acknowledging entries `from..=through` and the issue codes
/// found there.
pub fn marker_context(from: usize, through: usize, issues: &[String]) -> Value {
    json!({"reanchor": {
        "from_entry": from,
        "through_entry": through,
        "issue_count": issues.len(),
        "issues": issues.iter().take(20).collect::<Vec<_>>(),
    }})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(op: &str, context: Option<Value>) -> HistoryEntry {
        let mut e = HistoryEntry::new("t", "a", op, Vec::new(), "h0", "h1");
        e.context = context;
        e
    }

    #[test]
    fn markers_count_only_where_they_stand() {
        let ctx = |from: u64, through: u64| {
            Some(json!({"reanchor": {"from_entry": from, "through_entry": through}}))
        };
        let entries = vec![
            entry("create", None),
            entry("update", None),
            entry(REPAIR_OP, ctx(2, 2)),
            entry("update", None),
            entry(REPAIR_OP, ctx(1, 2)), // does not stand after entry 2: ignored
            entry(REPAIR_OP, ctx(0, 5)), // from 0: ignored
            entry(REPAIR_OP, None),      // a plain repair entry
        ];
        let found = anchors(&entries);
        assert_eq!(found, vec![Anchor { from: 2, marker: 3 }]);
        assert_eq!(covering(&found, 2), Some(Anchor { from: 2, marker: 3 }));
        assert_eq!(covering(&found, 3), Some(Anchor { from: 2, marker: 3 }));
        assert_eq!(covering(&found, 1), None);
        assert_eq!(covering(&found, 4), None);
    }
}
