//! SHA-256 over pm's `stableStringify` text: the primitive behind item hashes and history chains.

use crate::item::ItemDoc;
use crate::item::canon::{canonicalize_for_hash, sort_tests_legacy};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Hash of the empty document `{front_matter: {}, body: ""}`.
pub const EMPTY_DOC_HASH: &str = "3cc22dff72be7b14824654a7a64ea62b04799939b2fee54c1b5f52ca60bf6df0";

/// Item-hash epochs recorded as `item_hash_version` in history entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HashEpoch {
    /// Unversioned legacy entries: `tests` sorted with the legacy comparator before hashing.
    V1,
    /// Current epoch: stored order kept.
    V2,
}

/// Returns pm's item hash of `doc` at `epoch`: SHA-256 of
/// `stableStringify({front_matter, body})` over the registry-free canonical document.
///
/// Empty metadata (before create, after delete) hashes `{front_matter: {}, body}` with the body
/// as given. Epoch 1 also sorts `tests` with the legacy comparator. Callers pass documents that
/// were canonicalized with their schema, so runtime-field coercions are included.
pub fn item_hash(doc: &ItemDoc, epoch: HashEpoch) -> String {
    if doc.metadata.is_empty() {
        return stable_hash(&hash_input(Map::new(), doc.body.clone()));
    }
    let canonical = canonicalize_for_hash(doc);
    let mut metadata = canonical.metadata;
    if epoch == HashEpoch::V1
        && let Some(Value::Array(tests)) = metadata.get_mut("tests")
    {
        sort_tests_legacy(tests);
    }
    stable_hash(&hash_input(metadata, canonical.body))
}

/// Returns the hash history replay compares with a stream's hashes: the item
/// hash when the metadata is empty or `tags` is an array, otherwise the legacy fallback
/// `sha256(stableStringify({replay_fallback: true, metadata, body}))` over the raw document.
pub fn replay_hash(doc: &ItemDoc, epoch: HashEpoch) -> String {
    if doc.metadata.is_empty() || doc.metadata.get("tags").is_some_and(Value::is_array) {
        return item_hash(doc, epoch);
    }
    let mut fallback = Map::new();
    fallback.insert("replay_fallback".into(), Value::Bool(true));
    fallback.insert("metadata".into(), Value::Object(doc.metadata.clone()));
    fallback.insert("body".into(), Value::String(doc.body.clone()));
    stable_hash(&Value::Object(fallback))
}

fn hash_input(metadata: Map<String, Value>, body: String) -> Value {
    let mut h = Map::new();
    h.insert("front_matter".into(), Value::Object(metadata));
    h.insert("body".into(), Value::String(body));
    Value::Object(h)
}

/// Returns the lowercase hex SHA-256 of `stableStringify(value)`.
pub fn stable_hash(value: &Value) -> String {
    sha256_hex(crate::json::to_stable(value).as_bytes())
}

/// Returns the lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex_digest(Sha256::new_with_prefix(bytes))
}

/// Returns the lowercase hex digest of a SHA-256 state fed incrementally.
pub(crate) fn hex_digest(hasher: Sha256) -> String {
    let digest = hasher.finalize();
    let mut out = String::with_capacity(64);
    for b in digest.iter() {
        out.push(char::from_digit(u32::from(b >> 4), 16).expect("nibble < 16"));
        out.push(char::from_digit(u32::from(b & 0xf), 16).expect("nibble < 16"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_document_hash_matches_pm() {
        assert_eq!(
            stable_hash(&json!({"front_matter": {}, "body": ""})),
            EMPTY_DOC_HASH
        );
        assert_eq!(item_hash(&ItemDoc::empty(), HashEpoch::V2), EMPTY_DOC_HASH);
        assert_eq!(
            replay_hash(&ItemDoc::empty(), HashEpoch::V1),
            EMPTY_DOC_HASH
        );
    }

    fn doc(v: Value, body: &str) -> ItemDoc {
        ItemDoc {
            metadata: v.as_object().cloned().unwrap_or_default(),
            body: body.into(),
        }
    }

    /// `history/pm-t73k.jsonl` line 1 of pm's own tracker: the create of a real item.
    #[test]
    fn a_real_create_hash_matches_pm() {
        let d = doc(
            json!({
                "id": "pm-t73k",
                "title": "Fix inaccurate PR CI matrix description in CONTRIBUTING.md",
                "description": "CONTRIBUTING claimed PRs run a reduced free-tier matrix (ubuntu+macos Node 20), but ci.yml pull_request has no reduction: PRs run the full ubuntu 20/22/24 + macos 20 matrix. Corrected the doc to match the workflow. Found by docs/CI audit.",
                "type": "Chore", "status": "open", "priority": 3, "tags": ["area:ci", "area:docs"],
                "created_at": "2026-06-07T17:03:26.095Z", "updated_at": "2026-06-07T17:03:26.095Z",
                "author": "maintainer-agent", "parent": "pm-u9d0"
            }),
            "",
        );
        let expected = "99be25b86d5674620157d61d627e9ea76b835813b3de60f0b7a0bf4cc0082a08";
        assert_eq!(item_hash(&d, HashEpoch::V2), expected);
        assert_eq!(replay_hash(&d, HashEpoch::V1), expected);
    }

    #[test]
    fn hash_ignores_key_order_and_non_canonical_noise() {
        let a = doc(
            json!({"id": "x", "tags": ["B", "a"], "status": "open", "goal": " g "}),
            "b\n",
        );
        let b = doc(
            json!({"goal": "g", "status": "open", "tags": ["a", "b"], "id": "x"}),
            "\nb",
        );
        assert_eq!(item_hash(&a, HashEpoch::V2), item_hash(&b, HashEpoch::V2));
    }

    #[test]
    fn epoch_one_sorts_tests_epoch_two_keeps_order() {
        let d = doc(
            json!({"id": "x", "tags": [], "tests": [{"command": "b", "scope": "project"}, {"command": "a", "scope": "project"}]}),
            "",
        );
        let sorted = doc(
            json!({"id": "x", "tags": [], "tests": [{"command": "a", "scope": "project"}, {"command": "b", "scope": "project"}]}),
            "",
        );
        assert_ne!(
            item_hash(&d, HashEpoch::V2),
            item_hash(&sorted, HashEpoch::V2)
        );
        assert_eq!(
            item_hash(&d, HashEpoch::V1),
            item_hash(&sorted, HashEpoch::V2)
        );
    }

    #[test]
    fn replay_falls_back_without_a_tags_array() {
        let d = doc(json!({"id": "x", "title": " t "}), " b ");
        let expected = stable_hash(
            &json!({"replay_fallback": true, "metadata": {"id": "x", "title": " t "}, "body": " b "}),
        );
        assert_eq!(replay_hash(&d, HashEpoch::V2), expected);
    }
}
