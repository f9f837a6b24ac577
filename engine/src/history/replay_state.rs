//! The replay state of one stream: the `{metadata, body}` document that patches apply to, with
//! its per-field hash input kept in step, and the per-epoch hash cache of the current state.

use serde_json::{Map, Value};

use super::entry::{HistoryEntry, PatchOp, PatchOpKind};
use super::hash_parts::{HashParts, item_hash_once};
use super::patch::{PatchError, apply_op, apply_strict};
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
        apply_strict(&mut self.root, &entry.patch)
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
            apply_op(&mut self.root, op).map_err(|kind| {
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
    /// `apply_op` gives.
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

    pub(super) fn take_doc(&mut self) -> ItemDoc {
        let root = self.root.as_object_mut().expect("state is an object");
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

    pub(super) fn put_doc(&mut self, doc: ItemDoc) {
        let root = self.root.as_object_mut().expect("state is an object");
        root.insert("metadata".into(), Value::Object(doc.metadata));
        root.insert("body".into(), Value::String(doc.body));
    }

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
