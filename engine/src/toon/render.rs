//! pm's stdout TOON renderer: a compaction pre-pass, then a walk that
//! prints raw keys and JSON-quoted scalars, handing tabular arrays to [`super::encode`]. It is
//! not decodable TOON in general and is used only for command output, never for files.

use super::encode::{write_array_at, write_key_value_at};
use super::shape::entries;
use super::token::is_js_whitespace;
use crate::json::{format_number, write_string as write_json_string};
use serde_json::{Map, Value};

/// The one key whose empty array survives compaction.
const KEEP_EMPTY_KEY: &str = "omitted_field_groups";

/// Renders a command result as pm's TOON output, without the trailing newline.
///
/// Nulls, empty arrays and objects that become empty are dropped first (except an empty
/// `omitted_field_groups`); a result that compacts away entirely renders as `{}`.
pub fn render_output(value: &Value) -> String {
    let Some(compacted) = compact(value) else {
        return "{}".to_string();
    };
    let mut out = String::with_capacity(1024);
    render_value(&mut out, &compacted, 0);
    out
}

/// Removes nulls, null array entries, empty arrays and objects left empty.
fn compact(value: &Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::Array(items) => {
            let kept: Vec<Value> = items.iter().filter_map(compact).collect();
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        Value::Object(map) => {
            let mut kept = Map::new();
            for (key, entry) in entries(map) {
                if key == KEEP_EMPTY_KEY && matches!(entry, Value::Array(a) if a.is_empty()) {
                    kept.insert(key.clone(), Value::Array(Vec::new()));
                } else if let Some(c) = compact(entry) {
                    kept.insert(key.clone(), c);
                }
            }
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        scalar => Some(scalar.clone()),
    }
}

/// pm's own tabular test: a non-empty array of objects with one identical, non-empty key set
/// and only primitive values.
fn is_tabular(items: &[Value]) -> bool {
    let Some(Value::Object(first)) = items.first() else {
        return false;
    };
    if first.is_empty() {
        return false;
    }
    items.iter().all(|item| match item {
        Value::Object(row) => {
            row.len() == first.len()
                && first.keys().all(|k| row.contains_key(k))
                && row
                    .values()
                    .all(|v| !matches!(v, Value::Array(_) | Value::Object(_)))
        }
        _ => false,
    })
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn write_scalar(out: &mut String, value: &Value) {
    match value {
        Value::String(s) => write_json_string(out, s),
        Value::Number(n) => out.push_str(&format_number(n)),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        _ => out.push_str("null"),
    }
}

fn render_value(out: &mut String, value: &Value, depth: usize) {
    match value {
        Value::Array(items) => render_array(out, items, depth),
        Value::Object(map) => render_object(out, map, depth),
        scalar => {
            indent(out, depth);
            write_scalar(out, scalar);
        }
    }
}

fn render_array(out: &mut String, items: &[Value], depth: usize) {
    if items.is_empty() {
        out.push_str("[]");
        return;
    }
    if is_tabular(items) {
        write_array_at(out, items, depth);
        return;
    }
    for (i, entry) in items.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        indent(out, depth);
        out.push_str("- ");
        if matches!(entry, Value::Array(_) | Value::Object(_)) {
            // Render the child one level deeper, then strip its first line's leading whitespace.
            let start = out.len();
            render_value(out, entry, depth + 1);
            let first_line_end = out[start..].find('\n').map_or(out.len(), |i| start + i);
            let content = out[start..first_line_end].trim_start_matches(is_js_whitespace);
            let strip = first_line_end - start - content.len();
            out.drain(start..start + strip);
        } else {
            write_scalar(out, entry);
        }
    }
}

fn render_object(out: &mut String, map: &Map<String, Value>, depth: usize) {
    if map.is_empty() {
        out.push_str("{}");
        return;
    }
    for (i, (key, entry)) in entries(map).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match entry {
            Value::Array(items) if items.is_empty() => {
                indent(out, depth);
                out.push_str(key);
                out.push_str(": []");
            }
            Value::Object(inner) if inner.is_empty() => {
                indent(out, depth);
                out.push_str(key);
                out.push_str(": {}");
            }
            Value::Array(items) if is_tabular(items) => write_key_value_at(out, key, entry, depth),
            Value::Array(_) | Value::Object(_) => {
                indent(out, depth);
                out.push_str(key);
                out.push_str(":\n");
                render_value(out, entry, depth + 1);
            }
            scalar => {
                indent(out, depth);
                out.push_str(key);
                out.push_str(": ");
                write_scalar(out, scalar);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compacts_and_renders() {
        let v = json!({
            "items": [{"id": "pm-1", "status": "open"}, {"status": "done", "id": "pm-2"}],
            "count": 2,
            "next_cursor": null,
            "filters": {"runtime_filters": {}},
            "omission_receipt": {"omitted_field_groups": [], "x": [null]},
            "tags": ["a", "b:c"],
            "weird key": "v",
            "nested": [[1, 2], {"a": {"b": 1}}],
            "0": false
        });
        let expected = "0: false\nitems[2]{id,status}:\n  pm-1,open\n  pm-2,done\ncount: 2\nomission_receipt:\n  omitted_field_groups: []\ntags:\n  - \"a\"\n  - \"b:c\"\nweird key: \"v\"\nnested:\n  - - 1\n    - 2\n  - a:\n      b: 1";
        assert_eq!(render_output(&v), expected);
    }

    #[test]
    fn empty_and_scalar_roots() {
        assert_eq!(render_output(&json!({"a": null, "b": []})), "{}");
        assert_eq!(render_output(&json!(null)), "{}");
        assert_eq!(render_output(&json!("x")), "\"x\"");
        assert_eq!(
            render_output(&json!([{"a": 1}, {"a": 2}])),
            "[2]{a}:\n  1\n  2"
        );
    }

    #[test]
    fn rows_differing_after_compaction_are_not_tabular() {
        let v = json!({"items": [{"id": "a", "parent": null}, {"id": "b", "parent": "a"}]});
        assert_eq!(
            render_output(&v),
            "items:\n  - id: \"a\"\n  - id: \"b\"\n    parent: \"a\""
        );
    }

    #[test]
    fn tables_quote_keys_like_toon() {
        let v = json!({"odd-key": [{"x y": 1}, {"x y": 2}]});
        assert_eq!(render_output(&v), "\"odd-key\"[2]{\"x y\"}:\n  1\n  2");
    }
}
