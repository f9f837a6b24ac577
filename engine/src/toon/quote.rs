//! How the encoder spells primitives and keys: 4.1.1's quoting rules for strings (comma
//! delimiter), bare or quoted keys, its escapes, and JavaScript number formatting.

use super::token::{Stops, skip_to};
use crate::json::format_number;
use serde_json::Value;

/// Writes a primitive (`null`, booleans, JavaScript-formatted numbers, TOON strings).
pub(super) fn write_primitive(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&format_number(n)),
        Value::String(s) => write_string(out, s),
        // Containers never reach here; 4.1.1 would not call the primitive path for them.
        Value::Array(_) | Value::Object(_) => out.push_str("null"),
    }
}

/// Writes a key bare when it matches `^[A-Za-z_][A-Za-z0-9_.]*$`, else quoted.
pub(super) fn write_key(out: &mut String, key: &str) {
    let b = key.as_bytes();
    let bare = b
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.');
    if bare {
        out.push_str(key);
    } else {
        write_quoted(out, key);
    }
}

/// Writes a string value bare when 4.1.1 considers it safe, else quoted and escaped.
fn write_string(out: &mut String, s: &str) {
    if is_safe_unquoted(s) {
        out.push_str(s);
    } else {
        write_quoted(out, s);
    }
}

/// The quoting test of 4.1.1 for the comma delimiter.
fn is_safe_unquoted(s: &str) -> bool {
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return false;
    };
    if matches!(first, b' ' | b'\t' | b'-' | b'#') || matches!(last, b' ' | b'\t') {
        return false;
    }
    if matches!(s, "true" | "false" | "null") || is_numeric_like(b) {
        return false;
    }
    // Branch-free over the whole string so that it vectorizes.
    !b.iter().fold(false, |hit, &c| hit | needs_quotes(c))
}

#[inline(always)]
fn needs_quotes(c: u8) -> bool {
    (c < 0x20)
        | (c == b':')
        | (c == b'"')
        | (c == b'\\')
        | (c == b'[')
        | (c == b']')
        | (c == b'{')
        | (c == b'}')
        | (c == b',')
}

/// Matches `^[+-]?\d+(\.\d+)?(e[+-]?\d+)?$` (case-insensitive).
fn is_numeric_like(b: &[u8]) -> bool {
    let digits = |mut i: usize| {
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > start).then_some(i)
    };
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let Some(end) = digits(i) else { return false };
    i = end;
    if b.get(i) == Some(&b'.') {
        let Some(end) = digits(i + 1) else {
            return false;
        };
        i = end;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let Some(end) = digits(i) else { return false };
        i = end;
    }
    i == b.len()
}

/// Writes `"…"` with the TOON escapes: `\\ \" \n \r \t`, other C0 controls as `\u00xx`.
fn write_quoted(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(s.len() + 2);
    out.push('"');
    let b = s.as_bytes();
    let mut plain = 0;
    loop {
        let i = skip_to(b, plain, Stops::bytes(b'"', b'\\', b'\\').and_below(0x20));
        out.push_str(&s[plain..i]);
        let Some(&c) = b.get(i) else { break };
        match c {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            _ => {
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(c >> 4)]));
                out.push(char::from(HEX[usize::from(c & 0xF)]));
            }
        }
        plain = i + 1;
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn encode_primitive(v: &Value) -> String {
        let mut out = String::new();
        write_primitive(&mut out, v);
        out
    }

    #[test]
    fn primitives_and_quoting() {
        let cases = [
            (json!("plain text"), "plain text"),
            (json!(""), "\"\""),
            (json!(" lead"), "\" lead\""),
            (json!("trail\t"), "\"trail\\t\""),
            (json!("true"), "\"true\""),
            (json!("1e5"), "\"1e5\""),
            (json!("05"), "\"05\""),
            (json!("+3.5"), "\"+3.5\""),
            (json!("1.5x"), "1.5x"),
            (json!("a:b"), "\"a:b\""),
            (json!("a,b"), "\"a,b\""),
            (json!("-x"), "\"-x\""),
            (json!("#x"), "\"#x\""),
            (json!("a#x"), "a#x"),
            (json!("q\"\\"), "\"q\\\"\\\\\""),
            (json!("\u{1}\u{1f}\u{7f}é"), "\"\\u0001\\u001f\u{7f}é\""),
            (json!(-0.0), "0"),
            (json!(1e21), "1e+21"),
            (json!(0.1), "0.1"),
            (json!(null), "null"),
            (json!(false), "false"),
        ];
        for (value, expected) in cases {
            assert_eq!(encode_primitive(&value), expected, "{value}");
        }
    }

    #[test]
    fn keys() {
        let key = |k: &str| {
            let mut out = String::new();
            write_key(&mut out, k);
            out
        };
        assert_eq!(key("a_b.c9"), "a_b.c9");
        assert_eq!(key("_x"), "_x");
        assert_eq!(key("9a"), "\"9a\"");
        assert_eq!(key("a-b"), "\"a-b\"");
        assert_eq!(key(""), "\"\"");
        assert_eq!(key("é"), "\"é\"");
    }
}
