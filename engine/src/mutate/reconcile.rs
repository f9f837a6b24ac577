//! Keeping a chain whole across interrupted writes, hand edits and hand merges: before a
//! mutation appends its entry, the stream's last recorded state is compared with the item file
//! (files are the truth). When they differ, one `history_repair` entry goes first: a
//! roll-forward patch from the replayed state to the file when the chain itself verifies, or a
//! re-anchor marker (whole-document replace, acknowledging the break) when it does not.
//! `pm history-repair` records the same entry on its own.

use serde_json::Value;

use crate::hash::{EMPTY_DOC_HASH, HashEpoch, item_hash};
use crate::history::anchor::{marker_context, replace_all};
use crate::history::entry::PatchOp;
use crate::history::replay::epoch_of;
use crate::history::{HistoryEntry, item_patch, verify_chain};
use crate::item::ItemDoc;

/// Why a stream needs an entry before the next one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DriftKind {
    /// The file holds a state the stream never recorded (interrupted write, hand edit, merge).
    FileAhead,
    /// The file is gone but the stream's last state is a live item (interrupted delete).
    FileRemoved,
    /// The item has a file but no history at all.
    NoHistory,
    /// The chain does not verify (a hand merge of two tails, an edited line); re-anchored.
    ChainBroken,
}

impl DriftKind {
    /// Returns the kind's name (in notices and repair reports).
    pub fn as_str(self) -> &'static str {
        match self {
            DriftKind::FileAhead => "file_ahead_of_history",
            DriftKind::FileRemoved => "file_removed_without_history",
            DriftKind::NoHistory => "item_without_history",
            DriftKind::ChainBroken => "chain_broken",
        }
    }
}

/// The entry that brings a stream back in line with the item file.
#[derive(Clone, Debug, PartialEq)]
pub struct Reconcile {
    /// What was wrong.
    pub kind: DriftKind,
    /// The patch from the replayed (or, when broken, any) state to the file's state.
    pub patch: Vec<PatchOp>,
    /// The stream's last recorded `after_hash`.
    pub before_hash: String,
    /// The file's hash.
    pub after_hash: String,
    /// The re-anchor marker context (chain breaks only).
    pub context: Option<Value>,
    /// The state the stream replays to (empty when it does not replay).
    pub replayed: ItemDoc,
    /// The chain issues found (chain breaks only), as `kind:entry_N` codes.
    pub issues: Vec<String>,
}

impl Reconcile {
    /// Returns the history entry, in pm's layout for repair entries (no `author_source`;
    /// `message` before `item_hash_version`).
    pub fn entry(&self, ts: &str, author: &str, message: String) -> HistoryEntry {
        let mut entry = HistoryEntry::new(
            ts,
            author,
            crate::history::anchor::REPAIR_OP,
            self.patch.clone(),
            self.before_hash.clone(),
            self.after_hash.clone(),
        );
        // pm writes `item_hash_version` last on repair entries: keep it out of the typed slot
        // (which comes before `message`) and emit it after the known keys.
        entry.item_hash_version = None;
        entry.message = Some(message);
        entry.context = self.context.clone();
        entry
            .extra
            .insert("item_hash_version".into(), Value::from(2));
        entry
    }
}

/// Decides whether `entries` need a repair entry before the next one, given the item file's
/// canonical document and hash (`EMPTY_DOC_HASH` with an empty document when there is no file).
///
/// The common case costs one pass over the entries' hashes: when every `before_hash` equals
/// the previous `after_hash` and the last one equals the file's hash, nothing is replayed.
pub fn plan(entries: &[HistoryEntry], file_doc: &ItemDoc, file_hash: &str) -> Option<Reconcile> {
    let Some(last) = entries.last() else {
        return (!file_doc.is_empty()).then(|| Reconcile {
            kind: DriftKind::NoHistory,
            patch: item_patch(&ItemDoc::empty(), file_doc),
            before_hash: EMPTY_DOC_HASH.to_string(),
            after_hash: file_hash.to_string(),
            context: None,
            replayed: ItemDoc::empty(),
            issues: Vec::new(),
        });
    };
    let recorded = last.after_hash.as_str();
    let linked = entries
        .windows(2)
        .all(|pair| pair[1].before_hash == pair[0].after_hash);
    if linked && agrees(recorded, file_doc, file_hash, stream_epoch(entries)) {
        return None;
    }
    plan_verified(entries, file_doc, file_hash)
}

/// Like [`plan`] without the linkage shortcut: the stream is replayed, so an entry whose patch
/// cannot apply (though its hashes link) is re-anchored too. `history-repair` uses this; a
/// mutation's fast path does not pay for the replay.
pub fn plan_verified(
    entries: &[HistoryEntry],
    file_doc: &ItemDoc,
    file_hash: &str,
) -> Option<Reconcile> {
    let Some(last) = entries.last() else {
        return plan(entries, file_doc, file_hash);
    };
    let recorded = last.after_hash.as_str();
    let report = verify_chain(entries);
    if report.is_ok() {
        if agrees(recorded, file_doc, file_hash, Some(report.epoch)) {
            return None;
        }
        let kind = if file_doc.is_empty() {
            DriftKind::FileRemoved
        } else {
            DriftKind::FileAhead
        };
        return Some(Reconcile {
            kind,
            patch: item_patch(&report.doc, file_doc),
            before_hash: recorded.to_string(),
            after_hash: file_hash.to_string(),
            context: None,
            replayed: report.doc,
            issues: Vec::new(),
        });
    }
    let issues: Vec<String> = report.issues.iter().map(|i| i.code()).collect();
    let from = report.issues.iter().map(|i| i.entry).min().unwrap_or(1);
    let replayed = if report.applied == entries.len() {
        report.doc
    } else {
        ItemDoc::empty()
    };
    Some(Reconcile {
        kind: DriftKind::ChainBroken,
        patch: replace_all(file_doc),
        before_hash: recorded.to_string(),
        after_hash: file_hash.to_string(),
        context: Some(marker_context(from, entries.len(), &issues)),
        replayed,
        issues,
    })
}

/// The epoch the stream's last explicit `item_hash_version` names; `None` when no entry names
/// one (legacy streams may hash in either epoch).
fn stream_epoch(entries: &[HistoryEntry]) -> Option<HashEpoch> {
    entries
        .iter()
        .rev()
        .find_map(|e| e.item_hash_version.map(epoch_of))
}

/// Whether the recorded hash is the file's hash in `epoch` (either epoch when unknown).
fn agrees(recorded: &str, file_doc: &ItemDoc, file_hash: &str, epoch: Option<HashEpoch>) -> bool {
    if recorded == file_hash {
        return true;
    }
    if file_doc.is_empty() {
        return false;
    }
    match epoch {
        Some(HashEpoch::V2) => false,
        Some(HashEpoch::V1) | None => item_hash(file_doc, HashEpoch::V1) == recorded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::entry::PatchOp;
    use serde_json::json;

    fn doc(title: &str) -> ItemDoc {
        let mut d = ItemDoc::empty();
        d.metadata.insert("id".into(), json!("pm-a"));
        d.metadata.insert("title".into(), json!(title));
        d.metadata.insert("tags".into(), json!([]));
        d
    }

    fn entry(before: &ItemDoc, after: &ItemDoc, op: &str) -> HistoryEntry {
        let hash = |d: &ItemDoc| {
            if d.is_empty() {
                EMPTY_DOC_HASH.to_string()
            } else {
                item_hash(d, HashEpoch::V2)
            }
        };
        HistoryEntry::new(
            "t",
            "a",
            op,
            item_patch(before, after),
            hash(before),
            hash(after),
        )
    }

    #[test]
    fn an_agreeing_stream_needs_nothing() {
        let (a, b) = (doc("one"), doc("two"));
        let entries = vec![
            entry(&ItemDoc::empty(), &a, "create"),
            entry(&a, &b, "update"),
        ];
        assert_eq!(plan(&entries, &b, &item_hash(&b, HashEpoch::V2)), None);
    }

    #[test]
    fn a_file_ahead_is_rolled_forward_from_the_replayed_state() {
        let (a, edited) = (doc("one"), doc("hand edit"));
        let entries = vec![entry(&ItemDoc::empty(), &a, "create")];
        let hash = item_hash(&edited, HashEpoch::V2);
        let plan = plan(&entries, &edited, &hash).expect("drift");
        assert_eq!(plan.kind, DriftKind::FileAhead);
        assert_eq!(plan.before_hash, entries[0].after_hash);
        assert_eq!(plan.after_hash, hash);
        assert_eq!(
            plan.patch,
            vec![PatchOp::replace("/metadata/title", json!("hand edit"))]
        );
        let mut fixed = entries.clone();
        fixed.push(plan.entry("t2", "me", "why".into()));
        assert!(verify_chain(&fixed).is_ok());
        let removed = super::plan(&entries, &ItemDoc::empty(), EMPTY_DOC_HASH).expect("drift");
        assert_eq!(removed.kind, DriftKind::FileRemoved);
    }

    #[test]
    fn a_broken_chain_is_re_anchored_without_rewriting_it() {
        let (a, b, c) = (doc("one"), doc("two"), doc("three"));
        // Two tails glued together: the second one chains from a state this stream never had.
        let mut entries = vec![
            entry(&ItemDoc::empty(), &a, "create"),
            entry(&a, &b, "update"),
        ];
        entries.push(entry(&doc("elsewhere"), &c, "update"));
        assert!(!verify_chain(&entries).is_ok());
        let hash = item_hash(&c, HashEpoch::V2);
        let plan = plan(&entries, &c, &hash).expect("broken");
        assert_eq!(plan.kind, DriftKind::ChainBroken);
        let mut fixed = entries.clone();
        fixed.push(plan.entry("t", "me", "why".into()));
        let report = verify_chain(&fixed);
        assert!(report.is_ok(), "{:?}", report.issues);
        assert!(!report.acknowledged.is_empty());
        assert_eq!(report.doc, c);
        // Later entries chain from the marker's state.
        fixed.push(entry(&c, &a, "update"));
        assert!(verify_chain(&fixed).is_ok());
        let line = fixed[3].to_line();
        assert!(line.ends_with(r#""item_hash_version":2}"#), "{line}");
        assert!(!line.contains("author_source"), "{line}");
    }

    #[test]
    fn an_item_without_history_gets_a_baseline() {
        let a = doc("one");
        let hash = item_hash(&a, HashEpoch::V2);
        let plan = plan(&[], &a, &hash).expect("no history");
        assert_eq!(plan.kind, DriftKind::NoHistory);
        let fixed = vec![plan.entry("t", "me", "why".into())];
        assert!(verify_chain(&fixed).is_ok());
        assert_eq!(super::plan(&[], &ItemDoc::empty(), EMPTY_DOC_HASH), None);
    }
}
