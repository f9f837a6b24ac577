//! String primitives shared by the settings and schema normalizers: JavaScript `trim`/`\s`
//! semantics, pm's status-token normalization and its trimmed, de-duplicated, sorted lists.

use std::cmp::Ordering;

/// Compares two strings the way pm's `localeCompare` sorts do.
///
/// TEMPORARY: byte order stands in for `crate::collate::locale_compare` (branch `codec`) until
/// that module is merged; swap the body for a call to it. Every collation in settings and schema
/// normalization goes through this one function so the swap is a one-line change.
pub(crate) fn locale_compare(a: &str, b: &str) -> Ordering {
    a.cmp(b)
}

/// Returns true for the characters JavaScript's `trim()` and the regex class `\s` treat as
/// whitespace (differs from `char::is_whitespace` on U+FEFF and U+0085).
pub fn is_js_whitespace(c: char) -> bool {
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

/// Returns `s.trim()` with JavaScript's definition of whitespace.
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// Returns pm's status token: trimmed, lowercased, each run of whitespace or `-` turned into `_`.
///
/// Used for status ids and aliases, field keys and workflow transitions.
pub fn normalize_status_token(value: &str) -> String {
    let lowered = js_trim(value).to_lowercase();
    let mut out = String::with_capacity(lowered.len());
    let mut in_run = false;
    for c in lowered.chars() {
        if c == '-' || is_js_whitespace(c) {
            if !in_run {
                out.push('_');
                in_run = true;
            }
        } else {
            out.push(c);
            in_run = false;
        }
    }
    out
}

/// Returns the strings trimmed, without empties and duplicates, sorted with `localeCompare`.
pub fn normalize_string_list<'a>(values: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for value in values {
        let trimmed = js_trim(value);
        if !trimmed.is_empty() && !out.iter().any(|seen| seen == trimmed) {
            out.push(trimmed.to_string());
        }
    }
    out.sort_by(|a, b| locale_compare(a, b));
    out
}

/// Returns the string elements of a JSON array value (non-strings skipped); empty for non-arrays.
pub fn json_strings(value: Option<&serde_json::Value>) -> Vec<&str> {
    match value {
        Some(serde_json::Value::Array(items)) => items.iter().filter_map(|v| v.as_str()).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_like_javascript() {
        assert_eq!(js_trim("\u{FEFF} a b\u{3000}\n"), "a b");
        assert_eq!(js_trim("\u{85}x"), "\u{85}x");
    }

    #[test]
    fn status_tokens_collapse_runs() {
        assert_eq!(normalize_status_token("  In-Progress "), "in_progress");
        assert_eq!(normalize_status_token("on  -- hold"), "on_hold");
        assert_eq!(normalize_status_token("a_b"), "a_b");
        assert_eq!(normalize_status_token(""), "");
    }

    #[test]
    fn string_lists_are_trimmed_unique_sorted() {
        assert_eq!(
            normalize_string_list([" b", "a", "", "b ", "  "]),
            vec!["a".to_string(), "b".to_string()]
        );
    }
}
