//! JSON text exactly as JavaScript's `JSON.stringify` writes it (compact, pretty and key-sorted).
//! This is the only JSON writer for tracker bytes, hashes and command output; serde_json's own
//! printer is never used for them because it formats numbers and key order differently.

use serde_json::{Map, Number, Value};
use std::cmp::Ordering;

/// Largest integer a JavaScript number holds exactly (2^53 - 1).
const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// Returns `JSON.stringify(value)`: compact, keys in JavaScript property order.
pub fn to_compact(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, KeyOrder::Insertion, None, 0);
    out
}

/// Returns `JSON.stringify(value, null, 2)` (no trailing newline).
pub fn to_pretty(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, KeyOrder::Insertion, Some(2), 0);
    out
}

/// Returns pm's `stableStringify(value)`: compact, with every object's keys sorted by UTF-16
/// code units (then re-ordered the way a JavaScript object would enumerate them).
pub fn to_stable(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, KeyOrder::Utf16Sorted, None, 0);
    out
}

/// Formats a number the way JavaScript's `String(n)` does (`80`, `0.1`, `1e+21`, `-0` → `0`).
pub fn format_number(n: &Number) -> String {
    if let Some(u) = n.as_u64() {
        if u <= MAX_SAFE_INTEGER {
            return u.to_string();
        }
        return format_f64(u as f64);
    }
    if let Some(i) = n.as_i64() {
        if i.unsigned_abs() <= MAX_SAFE_INTEGER {
            return i.to_string();
        }
        return format_f64(i as f64);
    }
    format_f64(n.as_f64().unwrap_or(f64::NAN))
}

/// Formats an `f64` the way JavaScript's `String(n)` does; non-finite values give `null`
/// (what `JSON.stringify` prints for them).
pub fn format_f64(f: f64) -> String {
    if !f.is_finite() {
        return "null".to_string();
    }
    if f == 0.0 {
        return "0".to_string();
    }
    let mut buf = ryu_js::Buffer::new();
    buf.format_finite(f).to_string()
}

/// Builds a JSON number from an `f64`, keeping integral values in the safe range as integers
/// so that they print without a fraction. Returns `None` for non-finite input.
pub fn number_from_f64(f: f64) -> Option<Number> {
    if !f.is_finite() {
        return None;
    }
    if f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64 {
        // `-0.0` becomes 0 as well, as in JavaScript's output.
        return Some(Number::from(f as i64));
    }
    Number::from_f64(f)
}

/// Appends `s` as a JSON string literal with `JSON.stringify` escapes.
pub fn write_string(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    // Copy runs of characters that need no escape in one go; every escaped character is
    // ASCII, so the run boundaries are character boundaries.
    let bytes = s.as_bytes();
    let mut run = 0;
    let mut i = 0;
    while i < bytes.len() {
        // Skip eight bytes at a time while none of them needs an escape.
        if let Some(chunk) = bytes.get(i..i + 8) {
            let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
            if !needs_escape_in(word) {
                i += 8;
                continue;
            }
        }
        let byte = bytes[i];
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0C => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x00..=0x1F => "",
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(&s[run..i]);
        if escape.is_empty() {
            out.push_str(&format!("\\u{byte:04x}"));
        } else {
            out.push_str(escape);
        }
        i += 1;
        run = i;
    }
    out.push_str(&s[run..]);
    out.push('"');
}

/// Returns true if any byte of `word` is below 0x20, `"` or `\\` (SWAR "has byte less than" /
/// "has zero byte" tests; exact for the any-byte question).
fn needs_escape_in(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let zero_in = |x: u64| x.wrapping_sub(ONES) & !x;
    (below_space | zero_in(quote) | zero_in(backslash)) & HIGHS != 0
}

/// Returns `s` as a JSON string literal (`JSON.stringify(s)`).
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_string(&mut out, s);
    out
}

/// Compares two strings by UTF-16 code units, as JavaScript's default `sort()` does.
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    // For strings without supplementary-plane characters this equals byte order; only
    // surrogate pairs versus U+E000..U+FFFF differ, so take the slow path just then.
    if a.is_ascii() && b.is_ascii() {
        return a.cmp(b);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Returns true if `key` is a canonical array index ("0", "1", … below 2^32 - 1); JavaScript
/// objects enumerate such keys first, in numeric order.
pub fn is_array_index(key: &str) -> bool {
    let bytes = key.as_bytes();
    if bytes.is_empty() || bytes.len() > 10 || !bytes.iter().all(u8::is_ascii_digit) {
        return false;
    }
    if bytes.len() > 1 && bytes[0] == b'0' {
        return false;
    }
    key.parse::<u64>().is_ok_and(|n| n < 4_294_967_295)
}

/// Returns the keys of `map` in the order a JavaScript object built from it enumerates them:
/// array-index keys ascending, then the other keys in the given base order.
pub fn js_key_order(map: &Map<String, Value>, sorted_utf16: bool) -> Vec<&String> {
    let mut index_keys: Vec<&String> = Vec::new();
    let mut other: Vec<&String> = Vec::with_capacity(map.len());
    for key in map.keys() {
        if is_array_index(key) {
            index_keys.push(key);
        } else {
            other.push(key);
        }
    }
    if sorted_utf16 {
        other.sort_by(|a, b| cmp_utf16(a, b));
    }
    if index_keys.is_empty() {
        return other;
    }
    index_keys.sort_by_key(|k| k.parse::<u64>().unwrap_or(u64::MAX));
    index_keys.extend(other);
    index_keys
}

#[derive(Clone, Copy)]
enum KeyOrder {
    Insertion,
    Utf16Sorted,
}

fn write_value(
    out: &mut String,
    value: &Value,
    order: KeyOrder,
    indent: Option<usize>,
    depth: usize,
) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&format_number(n)),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, depth + 1);
                write_value(out, item, order, indent, depth + 1);
            }
            newline(out, indent, depth);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            let keys = js_key_order(map, matches!(order, KeyOrder::Utf16Sorted));
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, depth + 1);
                write_string(out, key);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                write_value(out, &map[key.as_str()], order, indent, depth + 1);
            }
            newline(out, indent, depth);
            out.push('}');
        }
    }
}

fn newline(out: &mut String, indent: Option<usize>, depth: usize) {
    if let Some(width) = indent {
        out.push('\n');
        for _ in 0..width * depth {
            out.push(' ');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_follow_javascript() {
        assert_eq!(format_f64(80.0), "80");
        assert_eq!(format_f64(-0.0), "0");
        assert_eq!(format_f64(0.1), "0.1");
        assert_eq!(format_f64(1e21), "1e+21");
        assert_eq!(format_f64(1.5e-7), "1.5e-7");
        assert_eq!(format_f64(123456789012345680000.0), "123456789012345680000");
        assert_eq!(format_f64(f64::NAN), "null");
        assert_eq!(
            format_number(&Number::from(18_014_398_509_481_984u64)),
            "18014398509481984"
        );
        assert_eq!(number_from_f64(1000.0), Some(Number::from(1000)));
    }

    #[test]
    fn long_strings_escape_at_every_offset() {
        for special in ['"', '\\', '\n', '\u{1}', '\u{1f}'] {
            for at in 0..20 {
                let mut text: String = "abcdefghijklmnopqrstuvwxyzé".chars().take(at).collect();
                text.push(special);
                text.push_str("0123456789 trailing text");
                let expected = format!(
                    "\"{}\"",
                    text.chars()
                        .map(|c| match c {
                            '"' => "\\\"".to_string(),
                            '\\' => "\\\\".to_string(),
                            '\n' => "\\n".to_string(),
                            c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32),
                            c => c.to_string(),
                        })
                        .collect::<String>()
                );
                assert_eq!(quote(&text), expected, "{text:?}");
            }
        }
        assert!(!needs_escape_in(u64::from_le_bytes(*b"ab cd~\x7f\xff")));
    }

    #[test]
    fn strings_escape_like_json_stringify() {
        assert_eq!(
            quote("a\"b\\c\n\u{1}\u{7f}é"),
            "\"a\\\"b\\\\c\\n\\u0001\u{7f}é\""
        );
        assert_eq!(quote("\u{8}\u{c}\t\r"), "\"\\b\\f\\t\\r\"");
    }

    #[test]
    fn pretty_matches_json_stringify_two_spaces() {
        let v = json!({"a": [], "b": {}, "c": [1, {"d": null}], "e": "x"});
        assert_eq!(
            to_pretty(&v),
            "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": null\n    }\n  ],\n  \"e\": \"x\"\n}"
        );
    }

    #[test]
    fn stable_sorts_by_utf16_and_puts_index_keys_first() {
        let v = json!({"b": 1, "a": {"z": true, "Z": false}, "10": 0, "9": 0, "\u{e000}": 1, "\u{1f600}": 2});
        assert_eq!(
            to_stable(&v),
            "{\"9\":0,\"10\":0,\"a\":{\"Z\":false,\"z\":true},\"b\":1,\"\u{1f600}\":2,\"\u{e000}\":1}"
        );
    }

    #[test]
    fn empty_document_hash_input() {
        let v = json!({"front_matter": {}, "body": ""});
        assert_eq!(to_stable(&v), "{\"body\":\"\",\"front_matter\":{}}");
    }
}
