//! Incremental item hashing for history replay: the canonical stable-JSON text of every
//! metadata field (and of the body) is cached with the SHA-256 state after each field, and a
//! patch invalidates only what it touches, so each entry re-serializes the changed fields and
//! re-hashes only from the first changed field on.

use std::collections::HashMap;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::entry::PatchOp;
use crate::hash::{HashEpoch, hex_digest};
use crate::item::ItemDoc;
use crate::item::canon::{canonical_field_for_hash, normalize_body, sort_tests_legacy};
use crate::json::{is_array_index, js_key_order, to_stable, write_string};

/// The cached hash input of one replay state.
#[derive(Clone, Debug, Default)]
pub(super) struct HashParts {
    /// Per metadata key: `"key":<stable JSON of the canonical value>` (`None`: dropped).
    fields: HashMap<String, Option<String>>,
    /// The epoch-1 piece of `tests` (the array sorted with the legacy comparator first).
    tests_v1: Option<Option<String>>,
    /// `{"body":<stable JSON of the normalized body>,"front_matter":{`.
    head: Option<String>,
    /// The metadata keys in hash order (the JavaScript key order of a sorted object).
    order: Option<Vec<String>>,
    /// SHA-256 states over the epoch-2 text: `[0]` after the head, `[i + 1]` after the key
    /// `order[i]`, each with whether a piece was fed yet (for the comma). The first `valid`
    /// states are current, so a change re-hashes only from the first changed key on.
    states: Vec<(Sha256, bool)>,
    valid: usize,
    /// Keys a patch touched since the states were taken.
    changed: Vec<String>,
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
            self.head = None;
            self.valid = 0;
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
        let key = if segment.contains('~') {
            segment.replace("~1", "/").replace("~0", "~")
        } else {
            segment.to_string()
        };
        if key == "tests" {
            self.tests_v1 = None;
        }
        self.fields.remove(&key);
        self.changed.push(key);
    }

    /// Returns the item hash of `doc` at `epoch` (what `hash::item_hash` returns), or `None`
    /// when the document takes a path this cache does not cover (empty metadata, or the legacy
    /// replay fallback for a non-array `tags`).
    pub(super) fn item_hash(&mut self, doc: &ItemDoc, epoch: HashEpoch) -> Option<String> {
        if doc.metadata.is_empty() || !doc.metadata.get("tags").is_some_and(Value::is_array) {
            return None;
        }
        let order = self.settle_order(doc);
        self.advance(doc, &order);
        let tests_at = (epoch == HashEpoch::V1)
            .then(|| order.iter().position(|k| k == "tests"))
            .flatten();
        let hash = match tests_at {
            None => {
                let mut hasher = self.states[order.len()].0.clone();
                hasher.update(b"}}");
                hex_digest(hasher)
            }
            Some(at) => {
                let (mut hasher, mut any) = self.states[at].clone();
                for (i, key) in order.iter().enumerate().skip(at) {
                    let piece = if i == at {
                        self.tests_v1
                            .get_or_insert_with(|| legacy_tests(&doc.metadata["tests"]))
                            .as_deref()
                    } else {
                        self.piece(key, &doc.metadata[key.as_str()])
                    };
                    feed(&mut hasher, &mut any, piece);
                }
                hasher.update(b"}}");
                hex_digest(hasher)
            }
        };
        self.order = Some(order);
        Some(hash)
    }

    /// Returns the current key order, recomputed when a patch added or removed a key, and
    /// marks the states from the first changed key on as stale.
    fn settle_order(&mut self, doc: &ItemDoc) -> Vec<String> {
        let mut order = self.order.take();
        let changed = std::mem::take(&mut self.changed);
        if let Some(keys) = &order {
            let same_set = keys.len() == doc.metadata.len()
                && changed
                    .iter()
                    .all(|k| doc.metadata.contains_key(k) == keys.contains(k));
            if same_set {
                for key in &changed {
                    if let Some(i) = keys.iter().position(|k| k == key) {
                        self.valid = self.valid.min(i + 1);
                    }
                }
            } else {
                order = None;
            }
        }
        order.unwrap_or_else(|| {
            self.valid = 0;
            js_key_order(&doc.metadata, true)
                .into_iter()
                .cloned()
                .collect()
        })
    }

    /// Brings every state up to date for `order`.
    fn advance(&mut self, doc: &ItemDoc, order: &[String]) {
        self.states
            .resize_with(order.len() + 1, || (Sha256::new(), false));
        if self.valid == 0 {
            let head = self.head.get_or_insert_with(|| {
                let mut head = String::from("{\"body\":");
                write_string(&mut head, &normalize_body(&doc.body));
                head.push_str(",\"front_matter\":{");
                head
            });
            self.states[0] = (Sha256::new_with_prefix(head.as_bytes()), false);
            self.valid = 1;
        }
        for (i, key) in order.iter().enumerate().skip(self.valid - 1) {
            let (mut hasher, mut any) = self.states[i].clone();
            let piece = self.piece(key, &doc.metadata[key.as_str()]);
            feed(&mut hasher, &mut any, piece);
            self.states[i + 1] = (hasher, any);
        }
        self.valid = order.len() + 1;
    }

    /// Returns the epoch-2 piece of one field, computing it on first use.
    fn piece(&mut self, key: &str, value: &Value) -> Option<&str> {
        if !self.fields.contains_key(key) {
            let piece = canonical_field_for_hash(key, value).map(|v| {
                let mut text = String::new();
                write_string(&mut text, key);
                text.push(':');
                text.push_str(&to_stable(&v));
                text
            });
            self.fields.insert(key.to_string(), piece);
        }
        self.fields.get(key).and_then(Option::as_deref)
    }
}

/// Returns the item hash of `doc` at `epoch` (what `hash::item_hash` returns) without caching
/// anything: for a state hashed once, such as the last entry of a stream, where filling the
/// cache costs more than it saves. `None` as for [`HashParts::item_hash`].
pub(super) fn item_hash_once(doc: &ItemDoc, epoch: HashEpoch) -> Option<String> {
    if doc.metadata.is_empty() || !doc.metadata.get("tags").is_some_and(Value::is_array) {
        return None;
    }
    let mut text = String::with_capacity(256);
    text.push_str("{\"body\":");
    write_string(&mut text, &normalize_body(&doc.body));
    text.push_str(",\"front_matter\":{");
    let mut hasher = Sha256::new_with_prefix(text.as_bytes());
    let mut any = false;
    for (key, value) in hash_order(&doc.metadata) {
        let canonical = if epoch == HashEpoch::V1 && key == "tests" {
            canonical_field_for_hash(key, value).map(|mut tests| {
                if let Value::Array(rows) = &mut tests {
                    sort_tests_legacy(rows);
                }
                tests
            })
        } else {
            canonical_field_for_hash(key, value)
        };
        let Some(canonical) = canonical else {
            continue;
        };
        text.clear();
        if any {
            text.push(',');
        }
        any = true;
        write_string(&mut text, key);
        text.push(':');
        text.push_str(&to_stable(&canonical));
        hasher.update(text.as_bytes());
    }
    hasher.update(b"}}");
    Some(hex_digest(hasher))
}

/// Returns the entries of `metadata` in hash order (what [`js_key_order`] gives with sorting),
/// comparing ASCII keys as bytes, which is their UTF-16 order too.
fn hash_order(metadata: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<(&String, &Value)> = metadata.iter().collect();
    if entries
        .iter()
        .all(|(k, _)| k.is_ascii() && !is_array_index(k))
    {
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        return entries;
    }
    js_key_order(metadata, true)
        .into_iter()
        .map(|k| (k, &metadata[k.as_str()]))
        .collect()
}

fn feed(hasher: &mut Sha256, any: &mut bool, piece: Option<&str>) {
    if let Some(piece) = piece {
        if *any {
            hasher.update(b",");
        }
        *any = true;
        hasher.update(piece.as_bytes());
    }
}

fn legacy_tests(value: &Value) -> Option<String> {
    let mut canonical = canonical_field_for_hash("tests", value)?;
    if let Value::Array(tests) = &mut canonical {
        sort_tests_legacy(tests);
    }
    Some(format!("\"tests\":{}", to_stable(&canonical)))
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

    /// Random edits (set, add and remove keys, the body, `tests`) checked against the full
    /// hash after every step, in both epochs.
    #[test]
    fn random_edit_sequences_match_the_full_hash() {
        let keys = [
            "title", "status", "zeta", "alpha", "tests", "10", "2", "comments", "notes",
        ];
        let mut d = doc(json!({"id": "pm-r", "tags": ["t"], "title": "x"}), "b");
        let mut parts = HashParts::default();
        let mut seed: u64 = 42;
        let mut next = move |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) % n
        };
        for step in 0..400 {
            let key = keys[next(keys.len() as u64) as usize];
            let path = match next(4) {
                0 => {
                    d.metadata.shift_remove(key);
                    format!("/metadata/{key}")
                }
                1 => {
                    d.body = format!("body {step}");
                    "/body".to_string()
                }
                2 => {
                    let tests = json!([{"command": format!("c{step}")}, {"command": "a"}]);
                    d.metadata.insert("tests".into(), tests);
                    "/metadata/tests/1".to_string()
                }
                _ => {
                    d.metadata.insert(key.into(), json!(format!("v{step}")));
                    format!("/metadata/{key}")
                }
            };
            parts.invalidate(&[op(&path)]);
            for epoch in [HashEpoch::V2, HashEpoch::V1] {
                assert_eq!(
                    parts.item_hash(&d, epoch),
                    Some(item_hash(&d, epoch)),
                    "step {step} {path}"
                );
            }
        }
    }

    #[test]
    fn the_uncached_hash_matches_the_full_hash() {
        let d = doc(
            json!({"id": "pm-a", "title": "  T  ", "type": "Task", "status": "open",
                "priority": 2, "tags": ["b", "a", "a"], "zeta": {"y": 1, "x": [2, 1]},
                "10": "index key", "assignee": "", "\u{e9}t\u{e9}": "x", "Zed": null,
                "tests": [{"command": "z"}, {"command": "a", "path": "p"}]}),
            "\n\nbody  \n",
        );
        for epoch in [HashEpoch::V1, HashEpoch::V2] {
            assert_eq!(item_hash_once(&d, epoch), Some(item_hash(&d, epoch)));
        }
        // Only ASCII keys and no index keys: ordered as bytes.
        let ascii = doc(
            json!({"id": "pm-a", "tags": [], "Zed": 1, "_x": 2, "a-b": 3, "a": 4,
                "tests": [{"command": "z"}, {"command": "a"}]}),
            "",
        );
        for epoch in [HashEpoch::V1, HashEpoch::V2] {
            assert_eq!(
                item_hash_once(&ascii, epoch),
                Some(item_hash(&ascii, epoch))
            );
        }
        assert_eq!(item_hash_once(&ItemDoc::empty(), HashEpoch::V2), None);
        let no_tags = doc(json!({"id": "pm-a", "tags": "x"}), "");
        assert_eq!(item_hash_once(&no_tags, HashEpoch::V1), None);
    }

    #[test]
    fn leaves_empty_and_fallback_documents_to_the_full_path() {
        let mut parts = HashParts::default();
        assert_eq!(parts.item_hash(&ItemDoc::empty(), HashEpoch::V2), None);
        let no_tags = doc(json!({"id": "pm-a", "tags": "x"}), "");
        assert_eq!(parts.item_hash(&no_tags, HashEpoch::V2), None);
    }
}
