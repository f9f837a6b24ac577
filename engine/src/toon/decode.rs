//! The TOON decoder: text to `serde_json::Value`, with the behaviour of `@toon-format/toon`
//! 4.1.1 `decode(text)` under default options (indent 2, strict). It never panics; every
//! problem is a [`ToonError`] carrying the 1-based line.

use super::ToonError;
use super::arrays::decode_array_from_header;
use super::header::{Header, HeaderParse, parse_header};
use super::scan::{Line, Reader};
use super::token::{
    find_closing_quote, find_unquoted, parse_primitive_token, trim_spaces, unescape,
};
use crate::json::is_array_index;
use serde_json::map::{Entry, VacantEntry};
use serde_json::{Map, Value};

/// Deepest indentation level the decoder descends into. 4.1.1 is bounded only by the
/// JavaScript stack; a fixed bound keeps hostile input from exhausting ours.
const MAX_DEPTH: usize = 256;

/// Decodes TOON text into a JSON value exactly as `@toon-format/toon` 4.1.1 `decode` does.
///
/// Objects come back in JavaScript property order (array-index keys first), as `decode`
/// builds JavaScript objects. Integral numbers within ±(2^53−1) are stored as integers.
///
/// # Errors
/// Returns a [`ToonError`] for anything strict decoding rejects: bad indentation or tabs,
/// wrong `[N]` counts or row widths, blank lines inside arrays, bad escapes or quotes,
/// duplicate sibling keys, malformed headers, and stray lines.
pub fn decode(text: &str) -> Result<Value, ToonError> {
    let mut r = Reader::new(text);
    let Some(first) = r.peek()? else {
        return Ok(Value::Object(Map::new()));
    };
    if trim_spaces(first.content) == "[]" {
        r.advance();
        assert_fully_consumed(&r)?;
        return Ok(Value::Array(Vec::new()));
    }
    if is_array_header_content(first.content)
        && let Some(header) = resolve_header(first)?
    {
        r.advance();
        let value = decode_array_from_header(&mut r, header, 0, first)?;
        assert_fully_consumed(&r)?;
        return Ok(value);
    }
    r.advance();
    let following = r.peek()?;
    let first_is_key_value = is_key_value_line(first.content);
    match following {
        None if !first_is_key_value => {
            return parse_primitive_token(first.content).map_err(|e| first.error(e));
        }
        Some(next) if !first_is_key_value && next.depth == 0 => {
            return Err(
                first.error("Top-level document must start with a key-value or array-header line")
            );
        }
        _ => {}
    }
    let mut map = Map::with_capacity(1 + r.count_siblings(0));
    decode_key_value(&mut r, first, 0, &mut map)?;
    while let Some(line) = r.peek()? {
        if line.depth != 0 {
            return Err(over_indented(line, 0));
        }
        r.advance();
        decode_key_value(&mut r, line, 0, &mut map)?;
    }
    Ok(Value::Object(finish_object(map)))
}

fn assert_fully_consumed(r: &Reader<'_>) -> Result<(), ToonError> {
    match r.peek()? {
        Some(line) => Err(line.error("Unexpected content after the document root")),
        None => Ok(()),
    }
}

pub(super) fn over_indented(line: Line<'_>, expected: usize) -> ToonError {
    line.error(format!(
        "Over-indented line: expected depth {expected}, but found {}",
        line.depth
    ))
}

/// `content.trim().startsWith("[")` with an unquoted colon somewhere.
pub(super) fn is_array_header_content(content: &str) -> bool {
    super::token::js_trim_start(content).starts_with('[')
        && find_unquoted(content, b':', 0).is_some()
}

/// The root-level key-value test of 4.1.1 (a plain `includes(":")`, not quote-aware).
fn is_key_value_line(content: &str) -> bool {
    if content.starts_with('"') {
        match find_closing_quote(content, 0) {
            Some(close) => content[close + 1..].contains(':'),
            None => false,
        }
    } else {
        content.contains(':')
    }
}

/// Parses `line` as an array header; a malformed header is an error (strict mode).
pub(super) fn resolve_header(line: Line<'_>) -> Result<Option<Header<'_>>, ToonError> {
    match parse_header(line.content) {
        HeaderParse::NotHeader => Ok(None),
        HeaderParse::Invalid(reason) => Err(line.error(reason)),
        HeaderParse::Header(h) => Ok(Some(h)),
    }
}

pub(super) fn check_depth(line: Line<'_>, depth: usize) -> Result<(), ToonError> {
    if depth > MAX_DEPTH {
        return Err(line.error(format!(
            "Nesting deeper than {MAX_DEPTH} levels is not supported"
        )));
    }
    Ok(())
}

/// Returns the vacant slot for `key`; strict mode forbids duplicate sibling keys.
pub(super) fn vacant<'m>(
    map: &'m mut Map<String, Value>,
    key: String,
    line: Line<'_>,
) -> Result<VacantEntry<'m>, ToonError> {
    match map.entry(key) {
        Entry::Vacant(slot) => Ok(slot),
        Entry::Occupied(taken) => {
            Err(line.error(format!("Duplicate sibling key \"{}\"", taken.key())))
        }
    }
}

/// Decodes one `key: …` or `key[N]…:` line (and its nested lines) into `map`.
pub(super) fn decode_key_value<'a>(
    r: &mut Reader<'a>,
    line: Line<'a>,
    base_depth: usize,
    map: &mut Map<String, Value>,
) -> Result<(), ToonError> {
    check_depth(line, base_depth)?;
    let (key, end) = if let Some(colon) = bare_key_colon(line.content) {
        (line.content[..colon].to_string(), colon + 1)
    } else {
        if let Some(mut header) = resolve_header(line)? {
            let Some(key) = header.key.take() else {
                return Err(line.error(if header.keyed {
                    "Keyless keyed header is only valid at the document root"
                } else {
                    "Keyless array header is only valid at the document root or as a list item"
                }));
            };
            let slot = vacant(map, key, line)?;
            let value = decode_array_from_header(r, header, base_depth, line)?;
            slot.insert(value);
            return Ok(());
        }
        parse_key_token(line.content).map_err(|e| line.error(e))?
    };
    let rest = trim_spaces(&line.content[end..]);
    let slot = vacant(map, key, line)?;
    let value = if rest.is_empty() {
        match r.peek()? {
            Some(next) if next.depth > base_depth => {
                if next.depth > base_depth + 1 {
                    return Err(next.error(format!(
                        "Indentation depth jump: expected depth {}, but found {}",
                        base_depth + 1,
                        next.depth
                    )));
                }
                Value::Object(decode_object_fields(r, base_depth + 1)?)
            }
            _ => Value::Object(Map::new()),
        }
    } else if rest == "[]" {
        Value::Array(Vec::new())
    } else {
        parse_primitive_token(rest).map_err(|e| line.error(e))?
    };
    slot.insert(value);
    Ok(())
}

/// The common line `name: …` with a bare key (`[A-Za-z_][A-Za-z0-9_.]*`) right before the
/// colon: returns the colon's index. Such a line is never an array header (its first colon
/// comes before any bracket), and [`parse_key_token`] reads exactly that key from it.
fn bare_key_colon(content: &str) -> Option<usize> {
    let b = content.as_bytes();
    if !b
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
    {
        return None;
    }
    let end = b
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.'))?;
    (b[end] == b':').then_some(end)
}

/// Parses the key at the start of `content`; returns it and the index after its colon.
pub(super) fn parse_key_token(content: &str) -> Result<(String, usize), String> {
    if content.starts_with('"') {
        let close = find_closing_quote(content, 0).ok_or("Unterminated quoted key")?;
        let key = unescape(&content[1..close])?;
        if content.as_bytes().get(close + 1) != Some(&b':') {
            return Err("Missing colon after key".to_string());
        }
        return Ok((key, close + 2));
    }
    let colon = find_unquoted(content, b':', 0).ok_or("Missing colon after key")?;
    Ok((trim_spaces(&content[..colon]).to_string(), colon + 1))
}

/// Decodes the fields of a nested object whose lines sit at `base_depth`.
fn decode_object_fields(
    r: &mut Reader<'_>,
    base_depth: usize,
) -> Result<Map<String, Value>, ToonError> {
    let mut map = Map::with_capacity(r.count_siblings(base_depth));
    let mut computed: Option<usize> = None;
    while let Some(line) = r.peek()? {
        if line.depth < base_depth {
            break;
        }
        let depth = *computed.get_or_insert(line.depth);
        if line.depth == depth {
            r.advance();
            decode_key_value(r, line, depth, &mut map)?;
        } else if line.depth > depth {
            return Err(over_indented(line, depth));
        } else {
            break;
        }
    }
    Ok(finish_object(map))
}

/// Reorders a decoded object into JavaScript enumeration order (array-index keys first,
/// ascending), which is the order 4.1.1's decoded objects have.
pub(super) fn finish_object(map: Map<String, Value>) -> Map<String, Value> {
    if !map.keys().any(|k| is_array_index(k)) {
        return map;
    }
    let mut entries: Vec<(String, Value)> = map.into_iter().collect();
    // Stable: non-index keys keep their insertion order.
    entries.sort_by_key(|(k, _)| {
        if is_array_index(k) {
            (0, k.parse::<u64>().unwrap_or(u64::MAX))
        } else {
            (1, 0)
        }
    });
    entries.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(text: &str) -> Value {
        decode(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    fn err(text: &str) -> String {
        match decode(text) {
            Ok(v) => panic!("{text:?} decoded to {v}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn root_forms() {
        assert_eq!(ok(""), json!({}));
        assert_eq!(ok("\n\n"), json!({}));
        assert_eq!(ok("[]"), json!([]));
        assert_eq!(ok("hello world"), json!("hello world"));
        assert_eq!(ok("\"a: b\""), json!("a: b"));
        assert_eq!(ok("42"), json!(42));
        assert_eq!(ok("[2]: a,1"), json!(["a", 1]));
        assert_eq!(ok("[2]{a}:\n  1\n  2"), json!([{"a": 1}, {"a": 2}]));
        assert_eq!(ok("[2]:\n  - x: 1\n  - y"), json!([{"x": 1}, "y"]));
        assert_eq!(
            ok("[2:]{a}:\n  k: 1\n  j: 2"),
            json!({"k": {"a": 1}, "j": {"a": 2}})
        );
        assert_eq!(
            err("a\nb"),
            "Line 1: Top-level document must start with a key-value or array-header line"
        );
        assert_eq!(
            err("[]\na: 1"),
            "Line 2: Unexpected content after the document root"
        );
    }

    #[test]
    fn line_handling() {
        assert_eq!(ok("\u{feff}a: 1\r\nb: 2\r"), json!({"a": 1, "b": 2}));
        assert_eq!(
            ok("# comment\na:\n  # indented comment\n  b: 1\n#x"),
            json!({"a": {"b": 1}})
        );
        assert_eq!(ok("a: 1   \n\n\nb: 2"), json!({"a": 1, "b": 2}));
        assert_eq!(
            err("a:\n\tb: 1"),
            "Line 2: Tabs are not allowed in indentation in strict mode"
        );
        assert_eq!(
            err("a:\n   b: 1"),
            "Line 2: Indentation must be exact multiple of 2, but found 3 spaces"
        );
        assert_eq!(
            err("a:\n    b: 1"),
            "Line 2: Indentation depth jump: expected depth 1, but found 2"
        );
        assert_eq!(
            err("a: 1\n  b: 2"),
            "Line 2: Over-indented line: expected depth 0, but found 1"
        );
    }

    #[test]
    fn primitives_and_strings() {
        let v = ok(
            "a: -0\nb: 1.0\nc: 1e3\nd: 05\ne: \"\"\nf: null\ng: 9007199254740993\nh:  spaced  \ni: \"q\\\"\\u00e9\"",
        );
        assert_eq!(
            v,
            json!({"a": 0, "b": 1, "c": 1000, "d": "05", "e": "", "f": null, "g": 9007199254740992.0, "h": "spaced", "i": "q\"é"})
        );
        assert!(v["a"].is_i64() && v["g"].is_f64());
        assert_eq!(err("a: \"x\\b\""), "Line 1: Invalid escape sequence: \\b");
        assert!(err("a: \"\\ud800\"").contains("lone surrogate"));
        assert_eq!(
            err("a: \"x\" y"),
            "Line 1: Unexpected characters after closing quote"
        );
        assert_eq!(ok("a:\nb: []"), json!({"a": {}, "b": []}));
    }

    #[test]
    fn arrays_and_counts() {
        assert_eq!(ok("t[3]: a, \"b,c\" ,"), json!({"t": ["a", "b,c", ""]}));
        assert_eq!(ok("t[0]:"), json!({"t": []}));
        assert_eq!(ok("t[2|]: a,b|c"), json!({"t": ["a,b", "c"]}));
        assert_eq!(
            err("t[2]: a"),
            "Line 1: Expected 2 inline-form values, but got 1"
        );
        assert_eq!(
            err("t[2]{a,b}:\n  1,2"),
            "Line 2: Expected 2 tabular rows, but got 1"
        );
        assert_eq!(
            err("t[1]{a,b}:\n  1"),
            "Line 2: Expected 2 tabular row values, but got 1"
        );
        assert_eq!(
            err("t[1]{a}:\n  1\n  2"),
            "Line 3: Expected 1 tabular rows, but found more"
        );
        assert_eq!(
            err("t[2]{a}:\n  1\n\n  2"),
            "Line 3: Blank lines inside tabular array are not allowed in strict mode"
        );
        assert_eq!(
            err("t[1]:\n  - 1\n  - 2"),
            "Line 3: Expected 1 list-form items, but found more"
        );
        assert_eq!(err("a: 1\na: 2"), "Line 2: Duplicate sibling key \"a\"");
        assert_eq!(
            err("[1]:\n  - [1]{a}:"),
            "Line 2: Keyless header with a field list is only valid at the document root"
        );
        // A huge declared length is just a count mismatch.
        assert!(err("t[99999999999999999999]: a").contains("inline-form values"));
    }

    #[test]
    fn tables_groups_and_list_items() {
        let text = "d[2]{id,data{t,n},k}:\n  a,x,1,null\n  b,y,2,z";
        assert_eq!(
            ok(text),
            json!({"d": [{"id": "a", "data": {"t": "x", "n": 1}, "k": null}, {"id": "b", "data": {"t": "y", "n": 2}, "k": "z"}]})
        );
        let list = "d[3]:\n  - id: a\n    kind: p\n  - rows[1]{x}:\n      1\n    z: 2\n  -";
        assert_eq!(
            ok(list),
            json!({"d": [{"id": "a", "kind": "p"}, {"rows": [{"x": 1}], "z": 2}, {}]})
        );
        assert_eq!(
            ok("m[2]:\n  - [2]: 1,a\n  - [0]:"),
            json!({"m": [[1, "a"], []]})
        );
        assert_eq!(
            ok("m[1]:\n  - k:\n      n: 1\n    j: 2"),
            json!({"m": [{"k": {"n": 1}, "j": 2}]})
        );
        assert_eq!(
            ok("o[2:]{a}:\n  \"x y\": 1\n  z: 2"),
            json!({"o": {"x y": {"a": 1}, "z": {"a": 2}}})
        );
    }

    #[test]
    fn bare_key_lines_read_as_the_general_path_reads_them() {
        for content in [
            "id: x",
            "a.b_c9:",
            "_k: \"v\"",
            "k:1",
            "t[2]: a,b",
            "\"k\": 1",
            "k : 1",
        ] {
            let general = match resolve_header(Line {
                content,
                depth: 0,
                number: 1,
            }) {
                Ok(Some(_)) => None,
                _ => parse_key_token(content).ok(),
            };
            let fast = bare_key_colon(content).map(|c| (content[..c].to_string(), c + 1));
            if fast.is_some() {
                assert_eq!(fast, general, "{content:?}");
            }
        }
        assert_eq!(bare_key_colon("id: x"), Some(2));
        assert_eq!(bare_key_colon("t[2]: a"), None);
        assert_eq!(bare_key_colon("k : 1"), None);
    }

    #[test]
    fn javascript_object_semantics() {
        // Array-index keys enumerate first, as in a JavaScript object.
        let v = ok("b: 1\n\"10\": 2\n\"2\": 3");
        assert_eq!(
            v.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()),
            Some(vec!["2".into(), "10".into(), "b".into()])
        );
        // 4.1.1 does not report duplicate empty field names: the last cell wins, first position kept.
        let v = ok("t[1]{\"\",a,\"\"}:\n  1,2,3");
        assert_eq!(v, json!({"t": [{"": 3, "a": 2}]}));
        assert_eq!(
            v["t"][0]
                .as_object()
                .map(|m| m.keys().cloned().collect::<Vec<_>>()),
            Some(vec!["".into(), "a".into()])
        );
        assert_eq!(
            err("t[1]{a,a}:\n  1,2"),
            "Line 1: Duplicate field name \"a\" in field list"
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let mut text = String::new();
        for depth in 0..400 {
            text.push_str(&"  ".repeat(depth));
            text.push_str("k:\n");
        }
        assert!(err(&text).contains("Nesting deeper than"));
        let groups = format!("t[1]{}:\n  1", "{a".repeat(100) + &"}".repeat(100));
        assert!(err(&groups).contains("nested too deeply"));
    }
}
