//! The replay state of one stream: the `{metadata, body}` document that patches apply to, with
//! its per-field hash input kept in step, and the per-epoch hash cache of the current state.

use serde_json::{Map, Value};

use super::entry::{HistoryEntry, PatchOp, PatchOpKind};
use super::hash_parts::{HashParts, item_hash_once};
use super::patch::{CopyBudget, PatchError, apply_op_within, apply_strict_within};
use super::replay::ChainIssue;
use crate::hash::{EMPTY_DOC_HASH, HashEpoch, replay_hash};
use crate::item::ItemDoc;

/// The replay state `{metadata, body}` as a JSON value, so that patches apply to it directly.
pub(super) struct State {
    root: Value,
    /// Cached per-field hash input of `root`, kept in step by [`State::apply`].
    parts: HashParts,
    /// Whether this state is hashed again after the next change; when not (the last entry of
    /// a stream), hashes skip filling `parts`.
    pub(super) rehashed: bool,
    /// What the `copy` operations of the rest of the stream may still create.
    copies: CopyBudget,
}

impl State {
    pub(super) fn empty() -> State {
        let mut root = Map::new();
        root.insert("metadata".into(), Value::Object(Map::new()));
        root.insert("body".into(), Value::String(String::new()));
        State {
            root: Value::Object(root),
            parts: HashParts::default(),
            rehashed: true,
            copies: CopyBudget::default(),
        }
    }

    /// Applies an entry's patch; the state must keep the `{metadata: object, body: string}`
    /// shape.
    pub(super) fn apply(
        &mut self,
        entry_number: usize,
        entry: &HistoryEntry,
    ) -> Result<(), ChainIssue> {
        if entry.patch.is_empty() {
            return Ok(());
        }
        // A failed patch may have changed part of the state before failing.
        self.parts.invalidate(&entry.patch);
        apply_strict_within(&mut self.root, &entry.patch, &mut self.copies)
            .map_err(|err| ChainIssue::patch_failed(entry_number, err.to_string()))?;
        self.check_shape(entry_number)
    }

    /// [`State::apply`] that moves the values out of `entry`'s patch (leaving `None`) instead
    /// of cloning them, and applies the common operations directly.
    pub(super) fn apply_taking(
        &mut self,
        entry_number: usize,
        entry: &mut HistoryEntry,
    ) -> Result<(), ChainIssue> {
        if entry.patch.is_empty() {
            return Ok(());
        }
        self.parts.invalidate(&entry.patch);
        for (index, op) in entry.patch.iter_mut().enumerate() {
            if self.apply_direct(op) {
                continue;
            }
            // What `apply_strict` reports for the operation that fails.
            apply_op_within(&mut self.root, op, &mut self.copies).map_err(|kind| {
                let err = PatchError {
                    index,
                    op: op.op.as_str().to_string(),
                    path: op.path.clone(),
                    kind,
                };
                ChainIssue::patch_failed(entry_number, err.to_string())
            })?;
        }
        self.check_shape(entry_number)
    }

    /// Applies an `add` or `replace` of `/body` or of a top-level metadata key without
    /// escapes, moving its value, when the operation cannot fail; returns false with nothing
    /// changed otherwise (the caller applies it the general way). The result is what
    /// `apply_op` gives: the value was parsed from a history line, so it nests at most 128
    /// levels (serde_json's limit), well within `MAX_NESTING` at depth 2.
    pub(super) fn apply_direct(&mut self, op: &mut PatchOp) -> bool {
        let add = match op.op {
            PatchOpKind::Add => true,
            PatchOpKind::Replace => false,
            _ => return false,
        };
        let Value::Object(root) = &mut self.root else {
            return false;
        };
        let slot = if op.path == "/body" {
            // `add` at an existing key replaces in place, as `replace` does.
            root.get_mut("body")
        } else {
            let Some(key) = op.path.strip_prefix("/metadata/") else {
                return false;
            };
            if key.contains(['/', '~']) {
                return false;
            }
            let Some(Value::Object(metadata)) = root.get_mut("metadata") else {
                return false;
            };
            match (metadata.get_mut(key), add) {
                (Some(slot), _) => Some(slot),
                (None, true) => {
                    let Some(value) = op.value.take() else {
                        return false;
                    };
                    metadata.insert(key.to_string(), value);
                    return true;
                }
                (None, false) => None,
            }
        };
        match (slot, op.value.take()) {
            (Some(slot), Some(value)) => {
                *slot = value;
                true
            }
            (_, value) => {
                op.value = value;
                false
            }
        }
    }

    /// Checks that the state kept the `{metadata: object, body: string}` shape.
    pub(super) fn check_shape(&self, entry_number: usize) -> Result<(), ChainIssue> {
        let shaped = self.root.as_object().is_some_and(|root| {
            root.get("metadata").is_some_and(Value::is_object)
                && root.get("body").is_some_and(Value::is_string)
        });
        if shaped {
            Ok(())
        } else {
            Err(ChainIssue::patch_failed(
                entry_number,
                "result is not {metadata: object, body: string}".into(),
            ))
        }
    }

    /// Returns the replay hash of the state at `epoch` and whether both epochs agree on it,
    /// rehashing only the fields changed since the last call where possible.
    pub(super) fn hash(&mut self, epoch: HashEpoch) -> (String, bool) {
        if self.is_empty_doc() {
            // The state before a create (and after a delete): a constant in both epochs.
            return (EMPTY_DOC_HASH.to_string(), true);
        }
        let doc = self.take_doc();
        let same = epochs_agree(&doc);
        let hash = if self.rehashed {
            self.parts.item_hash(&doc, epoch)
        } else {
            item_hash_once(&doc, epoch)
        }
        .unwrap_or_else(|| replay_hash(&doc, epoch));
        self.put_doc(doc);
        (hash, same)
    }

    /// Whether the state is `{metadata: {}, body: ""}`.
    pub(super) fn is_empty_doc(&self) -> bool {
        let root = self.root.as_object();
        root.and_then(|r| r.get("metadata"))
            .and_then(Value::as_object)
            .is_some_and(Map::is_empty)
            && root.and_then(|r| r.get("body")).and_then(Value::as_str) == Some("")
    }

    /// Moves the document out of the state, leaving the state's `metadata` and `body` empty.
    ///
    /// Only a state that kept its shape is hashed, but a patch that failed (the replay stops
    /// there) may have left anything, even a root that is not an object (`{"op":"replace",
    /// "path":"","value":5}`): what is not `{metadata: object, body: string}` reads as empty.
    pub(super) fn take_doc(&mut self) -> ItemDoc {
        let Value::Object(root) = &mut self.root else {
            return ItemDoc::empty();
        };
        let metadata = match root.get_mut("metadata") {
            Some(Value::Object(map)) => std::mem::take(map),
            _ => Map::new(),
        };
        let body = match root.get_mut("body") {
            Some(Value::String(body)) => std::mem::take(body),
            _ => String::new(),
        };
        ItemDoc { metadata, body }
    }

    /// Puts a document taken with [`State::take_doc`] back (a root that is not an object
    /// becomes one).
    pub(super) fn put_doc(&mut self, doc: ItemDoc) {
        if !self.root.is_object() {
            self.root = Value::Object(Map::new());
        }
        if let Value::Object(root) = &mut self.root {
            root.insert("metadata".into(), Value::Object(doc.metadata));
            root.insert("body".into(), Value::String(doc.body));
        }
    }

    /// Returns the document (see [`State::take_doc`] for a state a failed patch left).
    pub(super) fn into_doc(mut self) -> ItemDoc {
        self.take_doc()
    }
}

/// Hashes of the current state per epoch, computed on demand.
#[derive(Default)]
pub(super) struct HashCache {
    v1: Option<String>,
    v2: Option<String>,
}

impl HashCache {
    pub(super) fn peek(&self, epoch: HashEpoch) -> Option<&String> {
        match epoch {
            HashEpoch::V1 => self.v1.as_ref(),
            HashEpoch::V2 => self.v2.as_ref(),
        }
    }

    pub(super) fn get(&mut self, state: &mut State, epoch: HashEpoch) -> String {
        let slot = match epoch {
            HashEpoch::V1 => &self.v1,
            HashEpoch::V2 => &self.v2,
        };
        if let Some(hash) = slot {
            return hash.clone();
        }
        let (hash, same_for_both) = state.hash(epoch);
        if same_for_both {
            self.v1 = Some(hash.clone());
            self.v2 = Some(hash.clone());
        } else {
            match epoch {
                HashEpoch::V1 => self.v1 = Some(hash.clone()),
                HashEpoch::V2 => self.v2 = Some(hash.clone()),
            }
        }
        hash
    }
}

/// Returns true when both epochs hash `doc` identically: they differ only in how `tests` is
/// ordered, and the legacy fallback (no `tags` array) ignores the epoch.
fn epochs_agree(doc: &ItemDoc) -> bool {
    let tests_len = doc
        .metadata
        .get("tests")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    tests_len < 2 || !doc.metadata.get("tags").is_some_and(Value::is_array)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::item_hash;
    use crate::history::point::{ReplayError, replay_to};
    use crate::history::replay::{ChainReport, verify_chain, verify_chain_taking};
    use serde_json::json;

    fn doc(title: &str) -> ItemDoc {
        let metadata = json!({"id": "pm-a", "title": title, "tags": [], "status": "open"});
        ItemDoc {
            metadata: metadata.as_object().cloned().unwrap_or_default(),
            body: "text".into(),
        }
    }

    fn entry(patch: Vec<PatchOp>, before: &str, after: &str) -> HistoryEntry {
        HistoryEntry::new(
            "2026-01-01T00:00:00.000Z",
            "me",
            "update",
            patch,
            before,
            after,
        )
    }

    fn op(value: Value) -> Result<PatchOp, String> {
        PatchOp::from_value(value)
    }

    /// A create of `doc("a")`, then `second`.
    fn stream(second: Vec<PatchOp>) -> Vec<HistoryEntry> {
        let created = doc("a");
        let hash = item_hash(&created, HashEpoch::V2);
        let create = entry(
            vec![PatchOp::replace(
                "",
                json!({"metadata": created.metadata, "body": "text"}),
            )],
            EMPTY_DOC_HASH,
            &hash,
        );
        vec![create, entry(second, &hash, &hash)]
    }

    fn both(stream: &[HistoryEntry]) -> ChainReport {
        let shared = verify_chain(stream);
        let mut owned = stream.to_vec();
        assert_eq!(verify_chain_taking(&mut owned), shared);
        shared
    }

    /// The crafted line that made every history consumer panic: a root `replace` with a
    /// number leaves a state that is not an object.
    #[test]
    fn regression_root_replace_panic() -> Result<(), String> {
        let crafted = op(json!({"op": "replace", "path": "", "value": 5}))?;
        for entries in [
            stream(vec![crafted.clone()]),
            vec![entry(vec![crafted.clone()], EMPTY_DOC_HASH, EMPTY_DOC_HASH)],
        ] {
            let number = entries.len();
            let report = both(&entries);
            let codes: Vec<String> = report.issues.iter().map(|i| i.code()).collect();
            assert_eq!(codes, [format!("patch_apply_failed:entry_{number}")]);
            assert_eq!(report.applied, number - 1);
            assert!(report.doc.is_empty(), "{:?}", report.doc);
            let Err(ReplayError::Patch(issue)) = replay_to(&entries, number) else {
                return Err("replay_to must refuse the crafted entry".into());
            };
            assert_eq!(issue.code(), format!("patch_apply_failed:entry_{number}"));
        }
        Ok(())
    }

    /// Root operations that leave anything but `{metadata: object, body: string}`, also after
    /// earlier operations of the same patch applied, fail the entry and never panic.
    #[test]
    fn root_operations_that_break_the_shape_fail_the_entry() -> Result<(), String> {
        let values = [
            json!(null),
            json!(true),
            json!(-1.5),
            json!("s"),
            json!([]),
            json!({}),
            json!({"metadata": [], "body": ""}),
            json!({"metadata": {}, "body": 1}),
        ];
        let mut patches: Vec<Vec<PatchOp>> = Vec::new();
        for value in values {
            for kind in ["replace", "add"] {
                let root = op(json!({"op": kind, "path": "", "value": value}))?;
                patches.push(vec![root.clone()]);
                patches.push(vec![PatchOp::replace("/metadata/title", json!("b")), root]);
            }
        }
        patches.push(vec![PatchOp::remove("")]);
        patches.push(vec![op(
            json!({"op": "copy", "from": "/body", "path": ""}),
        )?]);
        patches.push(vec![op(
            json!({"op": "move", "from": "/metadata", "path": ""}),
        )?]);
        patches.push(vec![
            PatchOp::replace("", json!(5)),
            PatchOp::replace("/metadata/title", json!("b")),
        ]);
        for patch in patches {
            let report = both(&stream(patch.clone()));
            let codes: Vec<String> = report.issues.iter().map(|i| i.code()).collect();
            assert_eq!(codes, ["patch_apply_failed:entry_2"], "{patch:?}");
        }
        Ok(())
    }

    /// A root `replace` or `add` with a well-shaped value sets the whole state.
    #[test]
    fn a_shaped_root_value_sets_the_state() -> Result<(), String> {
        let before = doc("a");
        let after = doc("b");
        let value = json!({"metadata": after.metadata, "body": after.body});
        for kind in ["replace", "add"] {
            let mut entries = stream(Vec::new());
            entries[1] = entry(
                vec![op(json!({"op": kind, "path": "", "value": value}))?],
                &item_hash(&before, HashEpoch::V2),
                &item_hash(&after, HashEpoch::V2),
            );
            let report = both(&entries);
            assert!(report.is_ok(), "{kind}: {:?}", report.issues);
            assert_eq!(report.doc, after);
            let replayed = replay_to(&entries, 2).map_err(|e| format!("{e:?}"))?;
            assert_eq!(replayed.doc, after);
        }
        Ok(())
    }

    /// Operations that nest the value at `/metadata/nest` one level deeper per round, with
    /// constant-size operations (what a crafted stream can do to overflow the stack).
    fn nesting(rounds: usize) -> Vec<PatchOp> {
        let mut ops = vec![PatchOp::add("/metadata/nest", json!({}))];
        for _ in 0..rounds {
            ops.push(PatchOp::add("/metadata/n", json!({})));
            for (from, path) in [
                ("/metadata/nest", "/metadata/n/x"),
                ("/metadata/n", "/metadata/nest"),
            ] {
                let mut op = PatchOp::add(path, Value::Null);
                (op.op, op.from, op.value) = (PatchOpKind::Move, Some(from.into()), None);
                ops.push(op);
            }
        }
        ops
    }

    /// Replay nests values at most `MAX_NESTING` levels deep: the deepest state it allows is
    /// hashed and verified (no stack overflow), one level more fails the entry.
    #[test]
    fn nesting_is_bounded() -> Result<(), String> {
        use crate::history::patch::{MAX_NESTING, apply_strict};
        // `nest` sits at depth 2 and holds `rounds + 1` levels.
        let deepest = MAX_NESTING - 3;
        let mut state = json!({"metadata": doc("a").metadata, "body": "text"});
        let ops = nesting(deepest);
        apply_strict(&mut state, &ops).map_err(|e| e.to_string())?;
        let deep = ItemDoc {
            metadata: state["metadata"].as_object().cloned().unwrap_or_default(),
            body: "text".into(),
        };
        let mut entries = stream(ops);
        entries[1].after_hash = crate::hash::replay_hash(&deep, HashEpoch::V2);
        let report = both(&entries);
        assert!(report.is_ok(), "{:?}", report.issues);
        assert_eq!(report.doc, deep);

        let report = both(&stream(nesting(deepest + 1)));
        let issue = &report.issues[0];
        assert_eq!(issue.code(), "patch_apply_failed:entry_2");
        assert!(
            issue
                .detail
                .as_deref()
                .is_some_and(|d| d.contains("too_deep")),
            "{issue:?}"
        );
        Ok(())
    }

    /// Copying a value into itself doubles it; the copies of one stream are bounded.
    #[test]
    fn copies_are_bounded() -> Result<(), String> {
        let doubling = |count: usize| -> Result<Vec<PatchOp>, String> {
            let mut ops = vec![PatchOp::add("/metadata/a", json!([0]))];
            for _ in 0..count {
                ops.push(op(
                    json!({"op": "copy", "from": "/metadata/a", "path": "/metadata/a/-"}),
                )?);
            }
            Ok(ops)
        };
        // 2^15 values fit the budget; 2^16 more do not, whether in one entry or spread out.
        let report = both(&stream(doubling(15)?));
        assert_eq!(report.applied, 2, "{:?}", report.issues);
        let mut spread = stream(doubling(15)?);
        spread.push(entry(doubling(2)?, "", ""));
        for entries in [stream(doubling(40)?), spread] {
            let report = both(&entries);
            let issue = report.issues.last().ok_or("no issue")?;
            assert_eq!(issue.kind, crate::history::ChainIssueKind::PatchApplyFailed);
            assert!(
                issue
                    .detail
                    .as_deref()
                    .is_some_and(|d| d.contains("copy_too_large")),
                "{issue:?}"
            );
        }
        Ok(())
    }

    #[test]
    fn put_doc_restores_a_state_that_is_not_an_object() {
        let mut state = State::empty();
        state.root = json!(5);
        assert_eq!(state.take_doc(), ItemDoc::empty());
        state.put_doc(doc("a"));
        assert!(state.check_shape(1).is_ok());
        assert_eq!(state.into_doc(), doc("a"));
    }
}
