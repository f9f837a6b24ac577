//! Compact JSON text written by `pm_engine::json::to_compact`, re-indented without parsing.
//!
//! The index keeps an item's heavy collections as compact text of pm's own JSON writer. Pretty
//! printing is only whitespace on top of that text — a newline and two spaces per level after
//! every opening bracket and comma, a space after every colon, empty containers kept as `[]`
//! and `{}` — so a large listing can print stored collections without building values first.
//! Any other text (foreign whitespace, a different writer) is outside this module's contract.

/// Appends `compact` to `out` as pretty JSON whose outermost value starts at nesting `depth`
/// (the caller has already written the indentation before it).
pub fn reindent(out: &mut String, compact: &str, depth: usize) {
    let bytes = compact.as_bytes();
    let mut depth = depth;
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = string_end(bytes, i);
                continue;
            }
            open @ (b'{' | b'[') => {
                out.push_str(&compact[copied..=i]);
                let close = if open == b'{' { b'}' } else { b']' };
                if bytes.get(i + 1) == Some(&close) {
                    out.push(char::from(close));
                    i += 2;
                } else {
                    depth += 1;
                    newline(out, depth);
                    i += 1;
                }
                copied = i;
                continue;
            }
            b'}' | b']' => {
                out.push_str(&compact[copied..i]);
                depth = depth.saturating_sub(1);
                newline(out, depth);
                copied = i;
            }
            b',' => {
                out.push_str(&compact[copied..=i]);
                newline(out, depth);
                copied = i + 1;
            }
            b':' => {
                out.push_str(&compact[copied..=i]);
                out.push(' ');
                copied = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push_str(&compact[copied..]);
}

/// Returns the members of a compact JSON object as `(key text, value text)`: the key as it is
/// written between its quotes (escapes kept), the value's compact text. Anything but an object
/// gives no members.
pub fn members(compact: &str) -> Vec<(&str, &str)> {
    member_spans(compact)
        .into_iter()
        .map(|span| span.of(compact))
        .collect()
}

/// Where one member of a compact JSON object sits in its text (see [`members`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberSpan {
    key: std::ops::Range<usize>,
    value: std::ops::Range<usize>,
}

impl MemberSpan {
    /// The member's `(key text, value text)` in `compact`, the text it was found in.
    pub fn of<'a>(&self, compact: &'a str) -> (&'a str, &'a str) {
        (&compact[self.key.clone()], &compact[self.value.clone()])
    }
}

/// The members of a compact JSON object as spans, for a caller that reads them more than once.
pub fn member_spans(compact: &str) -> Vec<MemberSpan> {
    let bytes = compact.as_bytes();
    let mut out = Vec::new();
    if bytes.first() != Some(&b'{') {
        return out;
    }
    let mut i = 1;
    while i < bytes.len() && bytes[i] == b'"' {
        let key_end = string_end(bytes, i);
        let start = key_end + 1;
        if key_end < i + 2 || start > bytes.len() {
            break;
        }
        let end = value_end(bytes, start);
        out.push(MemberSpan {
            key: i + 1..key_end - 1,
            value: start..end,
        });
        i = end + 1;
    }
    out
}

/// The index just past the string opening at `start`.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while let Some(at) = bytes
        .get(i..)
        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
    {
        i += at;
        if bytes[i] == b'"' {
            return i + 1;
        }
        i += 2;
    }
    bytes.len()
}

/// The index just past the value starting at `start` (at a top-level `,` or the closing `}`).
fn value_end(bytes: &[u8], start: usize) -> usize {
    let mut nesting = 0usize;
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = string_end(bytes, i);
                continue;
            }
            b'{' | b'[' => nesting += 1,
            b'}' | b']' if nesting == 0 => return i,
            b'}' | b']' => nesting -= 1,
            b',' if nesting == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

fn newline(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    /// The pretty text of `value` nested at `depth`, as the JSON renderer prints it there.
    fn pretty_at(value: &Value, depth: usize) -> String {
        let text = pm_engine::json::to_pretty(value);
        text.replace('\n', &format!("\n{}", "  ".repeat(depth)))
    }

    fn reindented(value: &Value, depth: usize) -> String {
        let mut out = String::new();
        reindent(&mut out, &pm_engine::json::to_compact(value), depth);
        out
    }

    #[test]
    fn reindenting_matches_the_pretty_writer() {
        let value = json!({
            "a": [], "b": {}, "c": [1, -2.5, 1e21, true, null],
            "d": {"e": "x,y:{z}[\"q\\\"]", "f": [{"g": []}, {}]},
            "\"k,\"": "\u{2028}\u{7f}é", "7": "index keys first"
        });
        for depth in [0, 1, 3] {
            assert_eq!(reindented(&value, depth), pretty_at(&value, depth));
        }
        assert_eq!(reindented(&json!("a,b"), 2), "\"a,b\"");
        assert_eq!(reindented(&json!([]), 2), "[]");
    }

    #[test]
    fn members_split_the_top_level_object() {
        let value = json!({"comments": [{"a": "},{"}], "n": 1, "k\"ey": {"x": [1, 2]}});
        let compact = pm_engine::json::to_compact(&value);
        let found = members(&compact);
        assert_eq!(
            found,
            [
                ("comments", r#"[{"a":"},{"}]"#),
                ("n", "1"),
                (r#"k\"ey"#, r#"{"x":[1,2]}"#)
            ]
        );
        assert!(members("{}").is_empty());
        assert!(members("[1]").is_empty());
    }

    #[test]
    fn truncated_objects_give_the_members_before_the_cut_and_never_panic() {
        assert!(members("{\"").is_empty());
        assert!(members("{\"a\"").is_empty());
        assert_eq!(members("{\"a\":1,\""), [("a", "1")]);
        assert_eq!(members("{\"a\":[1,"), [("a", "[1,")]);
        proptest::proptest!(|(text in "\\{[\"a:,\\[\\]{}\\\\1]{0,12}")| {
            let spans = member_spans(&text);
            prop_assert_eq!(spans.len(), members(&text).len());
        });
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "[\\PC\"\\\\,:{}\\[\\]]{0,12}".prop_map(Value::from),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec(("[a-z0-9\",:{}]{0,6}", inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_value_reindents_to_its_pretty_text(v in value(), depth in 0usize..4) {
            prop_assert_eq!(reindented(&v, depth), pretty_at(&v, depth));
        }

        #[test]
        fn members_rebuild_the_object(v in value()) {
            if let Value::Object(map) = &v {
                let compact = pm_engine::json::to_compact(&v);
                let found = members(&compact);
                prop_assert_eq!(found.len(), map.len());
                for (key, text) in found {
                    let key: String = serde_json::from_str(&format!("\"{key}\"")).unwrap_or_default();
                    let written = map.get(&key).map(pm_engine::json::to_compact);
                    prop_assert_eq!(written.as_deref(), Some(text));
                }
            }
        }
    }
}
