//! Cursor encoding shared by output cursors (which resume a cut row collection) and query
//! cursors (the `--after` pages of `list`, `search` and `context`): unpadded base64url of
//! compact JSON, and SHA-256 fingerprints over pm's `stableStringify` text.

use base64::Engine;
use base64::alphabet::URL_SAFE;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Unpadded base64url; decoding also accepts what Node's decoder does at the end of the text
/// (nonzero trailing bits, padding or none).
const BASE64URL: GeneralPurpose = GeneralPurpose::new(
    &URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Returns `bytes` as unpadded base64url.
pub fn base64url_encode(bytes: &[u8]) -> String {
    BASE64URL.encode(bytes)
}

/// Decodes base64url the way Node's `Buffer.from(s, "base64url")` does: the standard
/// alphabet's `+` and `/` count as `-` and `_`, characters outside both alphabets (padding
/// included) are skipped, and a dangling sextet is dropped.
pub fn base64url_decode_lenient(text: &str) -> Vec<u8> {
    let mut sextets: Vec<u8> = text
        .bytes()
        .filter_map(|c| match c {
            b'+' => Some(b'-'),
            b'/' => Some(b'_'),
            c if c.is_ascii_alphanumeric() || c == b'-' || c == b'_' => Some(c),
            _ => None,
        })
        .collect();
    if sextets.len() % 4 == 1 {
        sextets.pop();
    }
    // Only alphabet characters remain and no length leaves a lone sextet, so this decodes.
    BASE64URL.decode(&sextets).unwrap_or_default()
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
        assert_eq!(
            base64url_decode_lenient("w7/Dvg"),
            "\u{ff}\u{fe}".as_bytes()
        );
        assert_eq!(base64url_decode_lenient("Zm9"), b"fo");
        assert_eq!(base64url_decode_lenient("Zm8="), b"fo");
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
