//! The `json` and `relationship` drivers' merges. JSON documents merge key by key (objects
//! recurse; arrays of scalars are sets; any other value is a scalar the preferred side wins
//! when both changed it). Append-only JSONL stores merge as the ancestor's lines, then every
//! line either side appended, each once, in order.

use super::item::Side;
use serde_json::{Map, Value};

/// The outcome of a JSON document merge.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonMerge {
    /// The merged document.
    pub value: Value,
    /// Dotted paths of values both sides changed differently (the preferred side kept).
    pub conflicts: Vec<String>,
}

/// Merges two JSON documents against their ancestor (`Value::Null` when new on both sides).
pub fn merge_json(base: &Value, ours: &Value, theirs: &Value, prefer: Side) -> JsonMerge {
    let mut conflicts = Vec::new();
    let value = merge_value(
        "",
        Some(base),
        Some(ours),
        Some(theirs),
        prefer,
        &mut conflicts,
    )
    .unwrap_or(Value::Null);
    JsonMerge { value, conflicts }
}

fn merge_value(
    path: &str,
    b: Option<&Value>,
    o: Option<&Value>,
    t: Option<&Value>,
    prefer: Side,
    conflicts: &mut Vec<String>,
) -> Option<Value> {
    if o == t || t == b {
        return o.cloned();
    }
    if o == b {
        return t.cloned();
    }
    match (o, t) {
        (Some(Value::Object(om)), Some(Value::Object(tm))) => {
            let empty = Map::new();
            let bm = b.and_then(Value::as_object).unwrap_or(&empty);
            Some(Value::Object(merge_objects(
                path, bm, om, tm, prefer, conflicts,
            )))
        }
        (Some(Value::Array(oa)), Some(Value::Array(ta)))
            if [oa, ta].iter().all(|a| a.iter().all(is_scalar)) =>
        {
            let empty = Vec::new();
            let ba = b.and_then(Value::as_array).unwrap_or(&empty);
            Some(Value::Array(merge_scalar_set(ba, oa, ta)))
        }
        _ => {
            conflicts.push(if path.is_empty() {
                "$".into()
            } else {
                path.into()
            });
            match prefer {
                Side::Ours => o.cloned(),
                Side::Theirs => t.cloned(),
            }
        }
    }
}

fn merge_objects(
    path: &str,
    b: &Map<String, Value>,
    o: &Map<String, Value>,
    t: &Map<String, Value>,
    prefer: Side,
    conflicts: &mut Vec<String>,
) -> Map<String, Value> {
    let mut keys: Vec<&String> = o.keys().collect();
    for key in t.keys().chain(b.keys()) {
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let mut out = Map::new();
    for key in keys {
        let child = if path.is_empty() {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        if let Some(v) = merge_value(
            &child,
            b.get(key),
            o.get(key),
            t.get(key),
            prefer,
            conflicts,
        ) {
            out.insert(key.clone(), v);
        }
    }
    out
}

fn is_scalar(v: &Value) -> bool {
    !v.is_array() && !v.is_object()
}

/// Ours' entries that theirs did not remove, then theirs' additions.
fn merge_scalar_set(b: &[Value], o: &[Value], t: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = o
        .iter()
        .filter(|v| !b.contains(v) || t.contains(v))
        .cloned()
        .collect();
    for v in t {
        if !b.contains(v) && !out.contains(v) {
            out.push(v.clone());
        }
    }
    out
}

/// Merges append-only JSONL text: the lines of ours, then theirs' lines ours lacks, each line
/// once (a line both sides appended is kept once). Blank lines are dropped; the result ends
/// with a newline unless it is empty.
pub fn merge_jsonl(ours: &str, theirs: &str) -> String {
    let mut lines: Vec<&str> = Vec::new();
    for line in ours.lines().chain(theirs.lines()) {
        if !line.trim().is_empty() && !lines.contains(&line) {
            lines.push(line);
        }
    }
    let mut out = lines.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_merge_independently_and_conflicts_prefer_a_side() {
        let base = json!({"a": 1, "b": {"x": 1, "y": 1}, "list": ["p"]});
        let ours = json!({"a": 2, "b": {"x": 2, "y": 1}, "list": ["p", "q"]});
        let theirs = json!({"a": 3, "b": {"x": 1, "y": 2}, "list": ["r"], "new": true});
        let m = merge_json(&base, &ours, &theirs, Side::Ours);
        assert_eq!(
            m.value,
            json!({"a": 2, "b": {"x": 2, "y": 2}, "list": ["q", "r"], "new": true})
        );
        assert_eq!(m.conflicts, ["a"]);
        assert_eq!(
            merge_json(&base, &ours, &theirs, Side::Theirs).value["a"],
            json!(3)
        );
    }

    #[test]
    fn jsonl_keeps_each_line_once() {
        assert_eq!(merge_jsonl("a\nb\n", "a\nc\nb\n"), "a\nb\nc\n");
        assert_eq!(merge_jsonl("", ""), "");
    }
}
