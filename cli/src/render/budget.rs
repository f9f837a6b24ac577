//! Token measurement of printed output: `ceil(utf8_bytes / 4)` of exactly the text the renderer
//! prints (indentation and final newline included). Fitting results to a budget is `read_output`'s.

use serde_json::Value;

use super::{Format, encode};

/// The estimator every receipt names.
pub const ESTIMATOR: &str = "ceil(utf8_bytes / 4)";

/// Returns the token estimate of `bytes` printed bytes: `ceil(bytes / 4)`.
pub fn tokens_for_bytes(bytes: usize) -> u64 {
    u64::try_from(bytes.div_ceil(4)).unwrap_or(u64::MAX)
}

/// Returns the token estimate of `value` as the renderer prints it in `format`.
pub fn measure(value: &Value, format: Format) -> u64 {
    tokens_for_bytes(encode(value, format).len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn estimate_counts_the_printed_bytes() {
        let value = json!({"a": "é"});
        // JSON: `{\n  "a": "é"\n}\n` = 16 bytes (é is two) → 4 tokens.
        assert_eq!(encode(&value, Format::Json).len(), 16);
        assert_eq!(measure(&value, Format::Json), 4);
        // TOON: `a: "é"\n` = 8 bytes → 2 tokens.
        assert_eq!(measure(&value, Format::Toon), 2);
        assert_eq!(tokens_for_bytes(0), 0);
        assert_eq!(tokens_for_bytes(5), 2);
    }
}
