//! Cursor encoding shared by output cursors (§4.8.1) and query cursors (§4.8.2): unpadded
//! base64url of compact JSON, and SHA-256 fingerprints over pm's `stableStringify` text.

use serde_json::Value;
use sha2::{Digest, Sha256};

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Returns `bytes` as unpadded base64url.
pub fn base64url_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let sextets = [n >> 18, n >> 12, n >> 6, n];
        for s in &sextets[..=chunk.len()] {
            out.push(char::from(ALPHABET[(s & 63) as usize]));
        }
    }
    out
}

fn sextet(c: u8) -> Option<u32> {
    let v = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'-' | b'+' => 62,
        b'_' | b'/' => 63,
        _ => return None,
    };
    Some(u32::from(v))
}

/// Decodes base64url the way Node's `Buffer.from(s, "base64url")` does: characters outside
/// both base64 alphabets (padding included) are skipped, and a dangling sextet is dropped.
pub fn base64url_decode_lenient(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0u32;
    for s in text.bytes().filter_map(sextet) {
        acc = (acc << 6) | s;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
        }
    }
    out
}

/// Returns whether `text` is non-empty and uses only base64url characters.
pub fn is_strict_base64url(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
}

/// Returns the compact JSON of `value` as a base64url cursor.
pub fn encode_json(value: &Value) -> String {
    base64url_encode(pm_engine::json::to_compact(value).as_bytes())
}

/// Decodes a base64url cursor into JSON (invalid UTF-8 is replaced, as Node does), or `None`
/// when the text is not JSON.
pub fn decode_json(text: &str) -> Option<Value> {
    let bytes = base64url_decode_lenient(text);
    serde_json::from_str(&String::from_utf8_lossy(&bytes)).ok()
}

/// Returns the SHA-256 digest of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Returns the first 16 characters of base64url(SHA-256(stableStringify(value))): the content
/// fingerprint of an output cursor.
pub fn content_fingerprint(value: &Value) -> String {
    let digest = sha256(pm_engine::json::to_stable(value).as_bytes());
    let mut text = base64url_encode(&digest);
    text.truncate(16);
    text
}

/// Returns a JSON number as a JavaScript safe integer ≥ 0 (integral floats included).
pub fn safe_non_negative(value: &Value) -> Option<u64> {
    const MAX_SAFE: u64 = 9_007_199_254_740_991;
    let n = value.as_number()?;
    if let Some(u) = n.as_u64() {
        return (u <= MAX_SAFE).then_some(u);
    }
    if n.as_i64().is_some() {
        return None;
    }
    let f = n.as_f64()?;
    // `0 <= f <= MAX_SAFE` and integral, so the cast is exact.
    (f >= 0.0 && f.fract() == 0.0 && f <= MAX_SAFE as f64).then_some(f as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trip_and_known_vectors() {
        for (raw, encoded) in [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("\u{ff}\u{fe}", "w7_Dvg"),
        ] {
            assert_eq!(base64url_encode(raw.as_bytes()), encoded, "{raw:?}");
            assert_eq!(base64url_decode_lenient(encoded), raw.as_bytes());
        }
        // Node skips foreign characters and padding.
        assert_eq!(base64url_decode_lenient("Zm9v$Yg=="), b"foob");
        assert_eq!(base64url_decode_lenient("Zm9vY"), b"foo");
        assert!(is_strict_base64url("ab-_9"));
        assert!(!is_strict_base64url("ab="));
        assert!(!is_strict_base64url(""));
    }

    /// pm-cli's own cursor from the self-tracker `list --json` golden decodes to its payload.
    #[test]
    fn decodes_pm_cli_cursor() {
        let cursor = "eyJ2IjoxLCJjIjoibGlzdCIsInAiOiJpdGVtcyIsIm8iOjc2LCJuIjozMDUsImYiOiJRSmlKcmZfMFQyTVAtdmFxIn0";
        let value = decode_json(cursor);
        assert_eq!(
            value,
            Some(
                json!({"v": 1, "c": "list", "p": "items", "o": 76, "n": 305, "f": "QJiJrf_0T2MP-vaq"})
            )
        );
        assert_eq!(value.map(|v| encode_json(&v)).as_deref(), Some(cursor));
    }

    #[test]
    fn safe_integers() {
        assert_eq!(safe_non_negative(&json!(5)), Some(5));
        assert_eq!(safe_non_negative(&json!(5.0)), Some(5));
        assert_eq!(safe_non_negative(&json!(5.5)), None);
        assert_eq!(safe_non_negative(&json!(-1)), None);
        assert_eq!(safe_non_negative(&json!(9_007_199_254_740_992_u64)), None);
        assert_eq!(safe_non_negative(&json!("5")), None);
    }
}
