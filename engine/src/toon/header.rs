//! Recognizes TOON array headers: `key[N]:`, `key[N]: v1,v2`, `key[N]{f1,g{c1,c2}}:` and the
//! keyed form `key[N:]{…}:`, with an optional `|` or tab delimiter marker inside the brackets.
//! A line that is not a header is `NotHeader`; a malformed one is an error in strict mode.

use super::token::{
    find_closing_quote, find_unquoted, find_unquoted_either, js_trim_end, js_trim_start,
    parse_string_literal, trim_spaces,
};

/// Deepest nesting of field groups accepted in a header (guards the recursion).
const MAX_FIELD_NESTING: usize = 64;

/// One column of a tabular header; a nested group has children.
#[derive(Debug, PartialEq)]
pub(crate) struct Field {
    pub name: String,
    pub children: Option<Vec<Field>>,
}

/// A parsed array header.
#[derive(Debug)]
pub(crate) struct Header<'a> {
    /// The key before the brackets, if any.
    pub key: Option<String>,
    /// The declared length (saturated on overflow).
    pub length: usize,
    /// The active delimiter.
    pub delimiter: u8,
    /// The field list, if the header has one.
    pub fields: Option<Vec<Field>>,
    /// Whether the header is keyed (`[N:]`).
    pub keyed: bool,
    /// The values after the colon of an inline primitive array.
    pub inline: Option<&'a str>,
}

/// Outcome of [`parse_header`].
pub(crate) enum HeaderParse<'a> {
    NotHeader,
    Header(Header<'a>),
    Invalid(String),
}

/// Parses `content` as an array header, following `@toon-format/toon` 4.1.1 strict mode.
pub(crate) fn parse_header(content: &str) -> HeaderParse<'_> {
    use HeaderParse::{Invalid, NotHeader};
    let trimmed = js_trim_start(content);
    let bracket_start = if trimmed.starts_with('"') {
        let Some(close) = find_closing_quote(trimmed, 0) else {
            return NotHeader;
        };
        if !trimmed[close + 1..].starts_with('[') {
            return NotHeader;
        }
        let key_end = content.len() - trimmed.len() + close + 1;
        content[key_end..].find('[').map(|i| i + key_end)
    } else {
        // A colon before any bracket makes a plain `key: value` line: stop there instead of
        // scanning a long value for a bracket (same outcome as 4.1.1's two searches).
        find_unquoted_either(content, b'[', b':', 0).filter(|i| content.as_bytes()[*i] == b'[')
    };
    let Some(bracket_start) = bracket_start else {
        return NotHeader;
    };
    if find_unquoted(content, b':', 0).is_some_and(|c| c < bracket_start) {
        return NotHeader;
    }
    let Some(bracket_end) = find_unquoted(content, b']', bracket_start) else {
        return NotHeader;
    };
    let mut brace_end = bracket_end + 1;
    let brace_start = find_unquoted(content, b'{', bracket_end);
    if let Some(bs) = brace_start
        && find_unquoted(content, b':', bracket_end).is_some_and(|c| bs < c)
    {
        let gap = &content[bracket_end + 1..bs];
        if !gap.is_empty() {
            return Invalid(gap_message(gap, "field list"));
        }
        if let Some(be) = find_matching_brace(content, bs) {
            brace_end = be + 1;
        }
    }
    let Some(colon) = find_unquoted(content, b':', bracket_end.max(brace_end)) else {
        return NotHeader;
    };
    let gap = &content[(bracket_end + 1).max(brace_end)..colon];
    if !gap.is_empty() {
        return Invalid(gap_message(gap, "colon"));
    }
    let mut key = None;
    if bracket_start > 0 {
        let raw_key = &content[..bracket_start];
        if js_trim_end(raw_key).len() != raw_key.len() {
            return Invalid("Unexpected whitespace between key and bracket segment".to_string());
        }
        key = Some(if raw_key.starts_with('"') {
            match parse_string_literal(raw_key) {
                Ok(k) => k,
                Err(e) => return Invalid(e),
            }
        } else {
            raw_key.to_string()
        });
    }
    let after_colon = trim_spaces(&content[colon + 1..]);
    let (length, delimiter, keyed) = match parse_bracket(&content[bracket_start + 1..bracket_end]) {
        Ok(parts) => parts,
        Err(e) => return Invalid(e),
    };
    let mut fields = None;
    if let Some(bs) = brace_start.filter(|bs| *bs < colon)
        && let Some(be) = find_matching_brace(content, bs).filter(|be| *be < colon)
    {
        let inner = &content[bs + 1..be];
        for candidate in [b',', b'\t', b'|'] {
            if candidate != delimiter && find_unquoted(inner, candidate, 0).is_some() {
                return Invalid(format!(
                    "Header delimiter mismatch: bracket declares \"{}\" but field list contains unquoted \"{}\"",
                    show_delimiter(delimiter),
                    show_delimiter(candidate)
                ));
            }
        }
        match parse_fields(inner, delimiter, 0) {
            Ok(f) => fields = Some(f),
            Err(e) => return Invalid(e),
        }
    }
    // 4.1.1 tests the duplicate name for truthiness, so a repeated empty name (and any
    // duplicate found after it) goes unreported; the row object then keeps the last value.
    let duplicate = fields
        .as_deref()
        .and_then(find_duplicate)
        .filter(|name| !name.is_empty());
    if keyed && fields.is_none() {
        return Invalid("Keyed header requires a field list".to_string());
    }
    if fields.is_some() && !after_colon.is_empty() {
        return Invalid(match duplicate {
            Some(name) => format!("Duplicate field name \"{name}\" in field list"),
            None => "Unexpected content after fields-bearing header colon".to_string(),
        });
    }
    if let Some(name) = duplicate {
        // 4.1.1 reports this only in strict mode, which is the only mode pm uses.
        return Invalid(format!("Duplicate field name \"{name}\" in field list"));
    }
    HeaderParse::Header(Header {
        key,
        length,
        delimiter,
        fields,
        keyed,
        inline: (!after_colon.is_empty()).then_some(after_colon),
    })
}

fn gap_message(gap: &str, what: &str) -> String {
    let trimmed = gap.trim_matches(super::token::is_js_whitespace);
    if trimmed.is_empty() {
        format!("Unexpected whitespace between bracket segment and {what}")
    } else {
        format!("Unexpected content \"{trimmed}\" between bracket segment and {what}")
    }
}

fn show_delimiter(d: u8) -> &'static str {
    match d {
        b'\t' => "\\t",
        b'|' => "|",
        _ => ",",
    }
}

/// Parses the bracket segment `N`, `N:`, `N|`, `N:|`, `N\t` …
fn parse_bracket(seg: &str) -> Result<(usize, u8, bool), String> {
    let mut content = seg;
    let mut delimiter = b',';
    if let Some(rest) = content.strip_suffix('\t') {
        delimiter = b'\t';
        content = rest;
    } else if let Some(rest) = content.strip_suffix('|') {
        delimiter = b'|';
        content = rest;
    }
    let keyed = if let Some(rest) = content.strip_suffix(':') {
        content = rest;
        true
    } else {
        false
    };
    let b = content.as_bytes();
    let valid = !b.is_empty() && b.iter().all(u8::is_ascii_digit) && (b.len() == 1 || b[0] != b'0');
    if !valid {
        return Err(format!(
            "Invalid array length: \"{seg}\" (expected non-negative integer with no leading zeros)"
        ));
    }
    let length = content.parse::<usize>().unwrap_or(usize::MAX);
    Ok((length, delimiter, keyed))
}

/// Parses a field list, descending into nested groups `name{a,b}`.
fn parse_fields(content: &str, delimiter: u8, nesting: usize) -> Result<Vec<Field>, String> {
    if nesting > MAX_FIELD_NESTING {
        return Err("Field groups are nested too deeply".to_string());
    }
    let mut fields = Vec::new();
    for entry in split_field_entries(content, delimiter) {
        let entry = trim_spaces(entry);
        if entry.is_empty() {
            return Err("Empty field name in field list".to_string());
        }
        let Some(group_start) = find_unquoted(entry, b'{', 0) else {
            fields.push(Field {
                name: parse_string_literal(entry)?,
                children: None,
            });
            continue;
        };
        let name = trim_spaces(&entry[..group_start]);
        if name.is_empty() {
            return Err("Missing field name before nested field group".to_string());
        }
        let Some(group_end) = find_matching_brace(entry, group_start) else {
            return Err("Unmatched brace in field list".to_string());
        };
        if group_end != entry.len() - 1 {
            return Err("Unexpected content after nested field group".to_string());
        }
        let children = parse_fields(&entry[group_start + 1..group_end], delimiter, nesting + 1)?;
        fields.push(Field {
            name: parse_string_literal(name)?,
            children: Some(children),
        });
    }
    Ok(fields)
}

/// Splits a field list on `delimiter` at brace depth zero, outside quotes.
fn split_field_entries(content: &str, delimiter: u8) -> Vec<&str> {
    let b = content.as_bytes();
    let mut entries = Vec::new();
    let (mut in_quotes, mut depth, mut start, mut i) = (false, 0i64, 0, 0);
    while i < b.len() {
        let c = b[i];
        if c == b'\\' && in_quotes && i + 1 < b.len() {
            i += 2;
            continue;
        }
        if c == b'"' {
            in_quotes = !in_quotes;
        } else if !in_quotes {
            match c {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                _ if c == delimiter && depth == 0 => {
                    entries.push(&content[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        i += 1;
    }
    entries.push(&content[start..]);
    entries
}

/// Returns the index of the `}` matching the `{` at `start`, ignoring quoted text.
fn find_matching_brace(content: &str, start: usize) -> Option<usize> {
    let b = content.as_bytes();
    let (mut in_quotes, mut depth, mut i) = (false, 0i64, start);
    while i < b.len() {
        let c = b[i];
        if c == b'\\' && in_quotes && i + 1 < b.len() {
            i += 2;
            continue;
        }
        if c == b'"' {
            in_quotes = !in_quotes;
        } else if !in_quotes {
            if c == b'{' {
                depth += 1;
            } else if c == b'}' {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
        }
        i += 1;
    }
    None
}

fn find_duplicate(fields: &[Field]) -> Option<&str> {
    for (i, f) in fields.iter().enumerate() {
        if fields[..i].iter().any(|g| g.name == f.name) {
            return Some(&f.name);
        }
        if let Some(dup) = f.children.as_deref().and_then(find_duplicate) {
            return Some(dup);
        }
    }
    None
}

/// Returns the number of cells a row carries (the leaves of the field tree).
pub(crate) fn count_leaves(fields: &[Field]) -> usize {
    fields
        .iter()
        .map(|f| f.children.as_deref().map_or(1, count_leaves))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(s: &str) -> Header<'_> {
        match parse_header(s) {
            HeaderParse::Header(h) => h,
            HeaderParse::NotHeader => panic!("{s:?}: not a header"),
            HeaderParse::Invalid(e) => panic!("{s:?}: {e}"),
        }
    }

    fn invalid(s: &str) -> String {
        match parse_header(s) {
            HeaderParse::Invalid(e) => e,
            _ => panic!("{s:?} should be invalid"),
        }
    }

    #[test]
    fn plain_inline_and_tabular() {
        let h = header("tags[2]: a,b");
        assert_eq!(
            (h.key.as_deref(), h.length, h.inline, h.keyed),
            (Some("tags"), 2, Some("a,b"), false)
        );
        let h = header("deps[1]{id,data{type,n},kind}:");
        let fields = h.fields.unwrap();
        assert_eq!(count_leaves(&fields), 4);
        assert_eq!(fields[1].name, "data");
        let h = header("\"odd key\"[3|]:");
        assert_eq!((h.key.as_deref(), h.delimiter), (Some("odd key"), b'|'));
        let h = header("[0]:");
        assert_eq!((h.key, h.length), (None, 0));
        let h = header("m[2:]{a,b}:");
        assert!(h.keyed);
    }

    #[test]
    fn not_headers() {
        for s in [
            "a: [1]",
            "title: \"x[1]: y\"",
            "a",
            "a[1]",
            "\"a\"b[1]:",
            "a]: x",
        ] {
            assert!(matches!(parse_header(s), HeaderParse::NotHeader), "{s}");
        }
    }

    #[test]
    fn invalid_headers() {
        assert!(invalid("a[01]: x").starts_with("Invalid array length"));
        assert!(invalid("a[x]: x").starts_with("Invalid array length"));
        assert_eq!(
            invalid("a [1]: x"),
            "Unexpected whitespace between key and bracket segment"
        );
        assert_eq!(
            invalid("a[1] : x"),
            "Unexpected whitespace between bracket segment and colon"
        );
        assert_eq!(
            invalid("a[1]{x}: y"),
            "Unexpected content after fields-bearing header colon"
        );
        assert_eq!(
            invalid("a[1]{x,x}:"),
            "Duplicate field name \"x\" in field list"
        );
        assert_eq!(invalid("a[1:]:"), "Keyed header requires a field list");
        assert_eq!(invalid("a[1]{x,}:"), "Empty field name in field list");
        assert!(invalid("a[1|]{x,y}:").starts_with("Header delimiter mismatch"));
    }
}
