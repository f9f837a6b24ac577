//! Incremental item hashing for history replay: the canonical stable-JSON text of every
//! metadata field (and of the body) is cached, and a patch invalidates only the fields it
//! touches, so each entry re-serializes what changed instead of the whole document.

use std::collections::HashMap;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::entry::PatchOp;
use crate::hash::{HashEpoch, hex_digest};
use crate::item::ItemDoc;
use crate::item::canon::{canonical_field_for_hash, normalize_body, sort_tests_legacy};
use crate::json::{js_key_order, to_stable, write_string};

/// The cached stable-JSON pieces of one replay state.
#[derive(Clone, Debug, Default)]
pub(super) struct HashParts {
    /// Per metadata key: the stable JSON of its canonical value (`None`: dropped).
    fields: HashMap<String, Option<String>>,
    /// The legacy (epoch 1) text of `tests`, which sorts the array first.
    tests_v1: Option<Option<String>>,
    /// The stable JSON of the normalized body.
    body: Option<String>,
}

impl HashParts {
    /// Forgets the pieces an applied patch may have changed.
    pub(super) fn invalidate(&mut self, patch: &[PatchOp]) {
        for op in patch {
            self.forget(&op.path);
            if let Some(from) = &op.from {
                self.forget(from);
            }
        }
    }

    fn forget(&mut self, pointer: &str) {
        if pointer == "/body" || pointer.starts_with("/body/") {
            self.body = None;
            return;
        }
        let Some(rest) = pointer.strip_prefix("/metadata/") else {
            // The root or the whole metadata object: nothing cached can be trusted.
            if pointer.is_empty() || pointer == "/metadata" {
                *self = HashParts::default();
            }
            return;
        };
        let segment = rest.split('/').next().unwrap_or(rest);
        let key = segment.replace("~1", "/").replace("~0", "~");
        if key == "tests" {
            self.tests_v1 = None;
        }
        self.fields.remove(&key);
    }

    /// Returns the item hash of `doc` at `epoch` (what `hash::item_hash` returns), or `None`
    /// when the document takes a path this cache does not cover (empty metadata, or the legacy
    /// replay fallback for a non-array `tags`).
    pub(super) fn item_hash(&mut self, doc: &ItemDoc, epoch: HashEpoch) -> Option<String> {
        if doc.metadata.is_empty() || !doc.metadata.get("tags").is_some_and(Value::is_array) {
            return None;
        }
        let mut hasher = Sha256::new();
        hasher.update(b"{\"body\":");
        let body = self
            .body
            .get_or_insert_with(|| stable_string(&normalize_body(&doc.body)));
        hasher.update(body.as_bytes());
        hasher.update(b",\"front_matter\":{");
        let mut first = true;
        let mut key_text = String::new();
        for key in js_key_order(&doc.metadata, true) {
            let value = &doc.metadata[key.as_str()];
            let piece = if epoch == HashEpoch::V1 && key == "tests" {
                self.tests_v1.get_or_insert_with(|| legacy_tests(value))
            } else {
                self.fields
                    .entry(key.clone())
                    .or_insert_with(|| canonical_field_for_hash(key, value).map(|v| to_stable(&v)))
            };
            let Some(piece) = piece else { continue };
            if !first {
                hasher.update(b",");
            }
            first = false;
            key_text.clear();
            write_string(&mut key_text, key);
            key_text.push(':');
            hasher.update(key_text.as_bytes());
            hasher.update(piece.as_bytes());
        }
        hasher.update(b"}}");
        Some(hex_digest(hasher))
    }
}

fn stable_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_string(&mut out, s);
    out
}

fn legacy_tests(value: &Value) -> Option<String> {
    let mut canonical = canonical_field_for_hash("tests", value)?;
    if let Value::Array(tests) = &mut canonical {
        sort_tests_legacy(tests);
    }
    Some(to_stable(&canonical))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::item_hash;
    use crate::history::PatchOpKind;
    use serde_json::json;

    fn doc(v: Value, body: &str) -> ItemDoc {
        ItemDoc {
            metadata: v.as_object().cloned().unwrap_or_default(),
            body: body.into(),
        }
    }

    fn op(path: &str) -> PatchOp {
        PatchOp {
            op: PatchOpKind::Replace,
            path: path.into(),
            from: None,
            value: None,
            original_path: None,
            original_from: None,
        }
    }

    #[test]
    fn matches_the_full_hash_and_follows_invalidation() {
        let mut d = doc(
            json!({"id": "pm-a", "title": "  T  ", "type": "Task", "status": "open",
                "priority": 2, "tags": ["b", "a", "a"], "zeta": {"y": 1, "x": [2, 1]},
                "10": "index key", "assignee": "",
                "tests": [{"command": "z"}, {"command": "a", "path": "p"}]}),
            "\n\nbody  \n",
        );
        let mut parts = HashParts::default();
        for epoch in [HashEpoch::V1, HashEpoch::V2] {
            assert_eq!(parts.item_hash(&d, epoch), Some(item_hash(&d, epoch)));
        }
        d.metadata.insert("title".into(), json!("New"));
        d.metadata
            .insert("tests".into(), json!([{"command": "b"}, {"command": "a"}]));
        d.body = "changed".into();
        parts.invalidate(&[op("/metadata/title"), op("/metadata/tests/0"), op("/body")]);
        for epoch in [HashEpoch::V1, HashEpoch::V2] {
            assert_eq!(parts.item_hash(&d, epoch), Some(item_hash(&d, epoch)));
        }
        d.metadata.shift_remove("zeta");
        parts.invalidate(&[op("/metadata")]);
        assert_eq!(
            parts.item_hash(&d, HashEpoch::V2),
            Some(item_hash(&d, HashEpoch::V2))
        );
    }

    #[test]
    fn leaves_empty_and_fallback_documents_to_the_full_path() {
        let mut parts = HashParts::default();
        assert_eq!(parts.item_hash(&ItemDoc::empty(), HashEpoch::V2), None);
        let no_tags = doc(json!({"id": "pm-a", "tags": "x"}), "");
        assert_eq!(parts.item_hash(&no_tags, HashEpoch::V2), None);
    }
}
