//! Lexical helpers of the TOON decoder: quote-aware searches, space trimming, string-literal
//! unescaping and the typing of unquoted tokens. All positions are byte offsets; every
//! character the searches look for is ASCII, so they never split a UTF-8 sequence.

use crate::json::number_from_f64;
use serde_json::Value;

/// Returns the first index at or after `i` whose byte satisfies `special` (or `b.len()`).
///
/// Scans 16-byte blocks with a branch-free test first, which the compiler vectorizes; long
/// plain runs (descriptions, bodies) are skipped at memory speed.
#[inline(always)]
pub(crate) fn skip_plain(b: &[u8], mut i: usize, special: impl Fn(u8) -> bool) -> usize {
    const BLOCK: usize = 16;
    while let Some(block) = b.get(i..i + BLOCK) {
        if block.iter().fold(false, |hit, &c| hit | special(c)) {
            break;
        }
        i += BLOCK;
    }
    while i < b.len() && !special(b[i]) {
        i += 1;
    }
    i
}

/// Returns the index of the first `ch` at or after `start` that is outside a quoted section.
///
/// A `"` toggles the quoted state; inside quotes a backslash skips the next byte.
pub(crate) fn find_unquoted(s: &str, ch: u8, start: usize) -> Option<usize> {
    find_unquoted_either(s, ch, ch, start)
}

/// Like [`find_unquoted`], for the first of two bytes.
pub(crate) fn find_unquoted_either(s: &str, x: u8, y: u8, start: usize) -> Option<usize> {
    let b = s.as_bytes();
    let mut in_quotes = false;
    let mut i = start;
    loop {
        i = if in_quotes {
            skip_plain(b, i, |c| (c == b'"') | (c == b'\\'))
        } else {
            skip_plain(b, i, |c| (c == b'"') | (c == x) | (c == y))
        };
        let c = *b.get(i)?;
        if c == b'\\' && in_quotes && i + 1 < b.len() {
            i += 2;
            continue;
        }
        if c == b'"' {
            in_quotes = !in_quotes;
        } else if (c == x || c == y) && !in_quotes {
            return Some(i);
        }
        i += 1;
    }
}

/// Returns the index of the quote closing the string literal that opens at `start`.
pub(crate) fn find_closing_quote(s: &str, start: usize) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = start + 1;
    loop {
        i = skip_plain(b, i, |c| c == b'"' || c == b'\\');
        let c = *b.get(i)?;
        if c == b'\\' && i + 1 < b.len() {
            i += 2;
            continue;
        }
        if c == b'"' {
            return Some(i);
        }
        i += 1;
    }
}

/// Trims ASCII spaces (U+0020 only) from both ends, as TOON token trimming does.
pub(crate) fn trim_spaces(s: &str) -> &str {
    let b = s.as_bytes();
    let start = b.iter().position(|c| *c != b' ').unwrap_or(b.len());
    let end = b.iter().rposition(|c| *c != b' ').map_or(start, |i| i + 1);
    // Both ends sit next to ASCII spaces (or at the string ends), so they are char boundaries.
    &s[start..end.max(start)]
}

/// Returns true for the characters JavaScript's `String.prototype.trim` removes.
pub(crate) fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// JavaScript's `trimStart`.
pub(crate) fn js_trim_start(s: &str) -> &str {
    s.trim_start_matches(is_js_whitespace)
}

/// JavaScript's `trimEnd`.
pub(crate) fn js_trim_end(s: &str) -> &str {
    s.trim_end_matches(is_js_whitespace)
}

/// Resolves the escapes of a quoted string's inner text: `\\ \" \n \r \t \uXXXX` only, and
/// `\uXXXX` must not be a surrogate. Returns the error message otherwise.
pub(crate) fn unescape(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = String::new();
    let mut plain_start = 0;
    let mut i = 0;
    loop {
        i = skip_plain(b, i, |c| c == b'\\');
        if i >= b.len() {
            break;
        }
        if out.capacity() == 0 {
            out.reserve(s.len());
        }
        out.push_str(&s[plain_start..i]);
        let Some(&next) = b.get(i + 1) else {
            return Err("Invalid escape sequence: backslash at end of string".to_string());
        };
        let simple = match next {
            b'n' => Some('\n'),
            b't' => Some('\t'),
            b'r' => Some('\r'),
            b'\\' => Some('\\'),
            b'"' => Some('"'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            i += 2;
        } else if next == b'u' {
            // The four UTF-16 code units after `\u`, as 4.1.1 reads them.
            let mut window_end = i + 2;
            let mut units = 0;
            for c in s[i + 2..].chars() {
                if units >= 4 {
                    break;
                }
                units += c.len_utf16();
                window_end += c.len_utf8();
            }
            if units < 4 {
                let tail = &s[i..];
                return Err(format!(
                    "Invalid escape sequence: truncated \\u escape at \"{tail}\""
                ));
            }
            let window = &s[i + 2..window_end];
            if window.len() != 4 || !window.bytes().all(|h| h.is_ascii_hexdigit()) {
                return Err(format!(
                    "Invalid escape sequence: \\u must be followed by 4 hex digits, got \"{window}\""
                ));
            }
            let code = u32::from_str_radix(window, 16).unwrap_or(0xD800);
            let Some(c) = char::from_u32(code) else {
                return Err(format!(
                    "Invalid escape sequence: \\u{window} is a lone surrogate. Supplementary code points MUST appear as literal UTF-8"
                ));
            };
            out.push(c);
            i += 6;
        } else {
            let shown = s[i + 1..].chars().next().unwrap_or_default();
            return Err(format!("Invalid escape sequence: \\{shown}"));
        }
        plain_start = i;
    }
    if plain_start == 0 {
        return Ok(s.to_string());
    }
    out.push_str(&s[plain_start..]);
    Ok(out)
}

/// Parses a key or value token that may be a quoted string literal; unquoted tokens are
/// returned with spaces trimmed.
pub(crate) fn parse_string_literal(token: &str) -> Result<String, String> {
    let t = trim_spaces(token);
    if !t.starts_with('"') {
        return Ok(t.to_string());
    }
    match find_closing_quote(t, 0) {
        None => Err("Unterminated string: missing closing quote".to_string()),
        Some(end) if end != t.len() - 1 => {
            Err("Unexpected characters after closing quote".to_string())
        }
        Some(end) => unescape(&t[1..end]),
    }
}

/// Types one primitive token: `""` for an empty token, quoted strings, `true`/`false`/`null`,
/// numbers matching `^-?(0|[1-9]\d*)(\.\d+)?(e[+-]?\d+)?$` (case-insensitive `e`, finite
/// values only, `-0` → 0), and anything else as a string.
pub(crate) fn parse_primitive_token(token: &str) -> Result<Value, String> {
    let t = trim_spaces(token);
    if t.is_empty() {
        return Ok(Value::String(String::new()));
    }
    if t.starts_with('"') {
        return parse_string_literal(t).map(Value::String);
    }
    match t {
        "true" => return Ok(Value::Bool(true)),
        "false" => return Ok(Value::Bool(false)),
        "null" => return Ok(Value::Null),
        _ => {}
    }
    if is_numeric_literal(t)
        && let Ok(f) = t.parse::<f64>()
        && let Some(n) = number_from_f64(f)
    {
        return Ok(Value::Number(n));
    }
    Ok(Value::String(t.to_string()))
}

/// Matches `^-?(0|[1-9]\d*)(\.\d+)?(e[+-]?\d+)?$` with a case-insensitive `e`.
fn is_numeric_literal(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let int_start = i;
    i = skip_digits(b, i);
    let int_len = i - int_start;
    if int_len == 0 || (int_len > 1 && b[int_start] == b'0') {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        let frac_end = skip_digits(b, i + 1);
        if frac_end == i + 1 {
            return false;
        }
        i = frac_end;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_end = skip_digits(b, i);
        if exp_end == i {
            return false;
        }
        i = exp_end;
    }
    i == b.len()
}

fn skip_digits(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

/// Splits `input` on `delim` outside quoted sections into `values` (cleared first), trimming
/// spaces from each value. An empty input gives no values.
pub(crate) fn split_delimited<'a>(input: &'a str, delim: u8, values: &mut Vec<&'a str>) {
    let b = input.as_bytes();
    values.clear();
    let mut in_quotes = false;
    let mut start = 0;
    let mut i = 0;
    loop {
        i = if in_quotes {
            skip_plain(b, i, |c| c == b'"' || c == b'\\')
        } else {
            skip_plain(b, i, |c| c == b'"' || c == delim)
        };
        let Some(&c) = b.get(i) else { break };
        if c == b'\\' && in_quotes && i + 1 < b.len() {
            i += 2;
            continue;
        }
        if c == b'"' {
            in_quotes = !in_quotes;
        } else if c == delim && !in_quotes {
            values.push(trim_spaces(&input[start..i]));
            start = i + 1;
        }
        i += 1;
    }
    if start < b.len() || !values.is_empty() {
        values.push(trim_spaces(&input[start..]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn types_tokens() {
        let p = |t: &str| parse_primitive_token(t).unwrap();
        assert_eq!(p(""), json!(""));
        assert_eq!(p("  "), json!(""));
        assert_eq!(p("true"), json!(true));
        assert_eq!(p("null"), json!(null));
        assert_eq!(p("-0"), json!(0));
        assert_eq!(p("1.0"), json!(1));
        assert_eq!(p("1E3"), json!(1000));
        assert_eq!(p("1.5e-7"), json!(1.5e-7));
        assert_eq!(p("05"), json!("05"));
        assert_eq!(p("1."), json!("1."));
        assert_eq!(p(".5"), json!(".5"));
        assert_eq!(p("+1"), json!("+1"));
        assert_eq!(p("1e999"), json!("1e999"));
        assert_eq!(p("True"), json!("True"));
        assert_eq!(p(" a b "), json!("a b"));
        assert_eq!(p("\"a\\u00e9\\n\""), json!("aé\n"));
        assert!(parse_primitive_token("\"a\\b\"").is_err());
        assert!(parse_primitive_token("\"\\ud83d\\ude00\"").is_err());
        assert!(parse_primitive_token("\"a\"b").is_err());
        assert!(parse_primitive_token("\"abc").is_err());
        assert!(parse_primitive_token("\"\\u12\"").is_err());
    }

    #[test]
    fn splits_outside_quotes() {
        let split = |s: &'static str| {
            let mut v = Vec::new();
            split_delimited(s, b',', &mut v);
            v
        };
        assert_eq!(split("a, \"b,c\" ,d"), vec!["a", "\"b,c\"", "d"]);
        assert_eq!(split("a,,"), vec!["a", "", ""]);
        assert_eq!(split(""), Vec::<&str>::new());
        assert_eq!(split(" "), vec![""]);
        assert_eq!(split("\"x\\\",y\""), vec!["\"x\\\",y\""]);
    }

    #[test]
    fn quote_searches() {
        assert_eq!(find_unquoted("\"a:b\":c", b':', 0), Some(5));
        assert_eq!(find_closing_quote("\"a\\\"b\"x", 0), Some(5));
        assert_eq!(find_closing_quote("\"ab\\\"", 0), None);
        assert_eq!(js_trim_start("\u{feff}\u{a0} x"), "x");
    }
}
