//! SHA-256 over pm's `stableStringify` text: the primitive behind item hashes and history chains.

use serde_json::Value;
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

/// Returns the lowercase hex SHA-256 of `stableStringify(value)`.
pub fn stable_hash(value: &Value) -> String {
    sha256_hex(crate::json::to_stable(value).as_bytes())
}

/// Returns the lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
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
    }
}
