//! Patch generation: a port of `fast-json-patch` 3.1.1 `compare`, pm's post-pass that turns a
//! `replace` of an absent path into `add`, and the `{metadata, body}` wrapping pm diffs.

use serde_json::{Map, Value};

use super::entry::PatchOp;
use super::patch::{apply_op, number_equal, pointer_exists};
use crate::json::js_key_order;

/// Returns the RFC 6902 patch `fast-json-patch`'s `compare(before, after)` generates.
///
/// Old keys are walked in reverse (array indices high → low). A key on both sides whose values
/// are both objects or both arrays is recursed into; otherwise differing values give `replace`
/// and keys missing on the new side give `remove`. Only if something was removed or the key
/// counts differ are the new keys walked forward, giving `add` for keys the old side lacks.
pub fn compare(before: &Value, after: &Value) -> Vec<PatchOp> {
    let mut patches = Vec::new();
    generate(before, after, &mut patches, "");
    patches
}

/// Returns [`compare`] followed by pm's post-pass: the ops are replayed on a copy of `before`
/// and every `replace` whose path is absent at that point becomes `add`.
pub fn compare_for_history(before: &Value, after: &Value) -> Vec<PatchOp> {
    let mut ops = compare(before, after);
    let mut state = before.clone();
    for op in &mut ops {
        if op.op == super::entry::PatchOpKind::Replace && !pointer_exists(&state, &op.path) {
            op.op = super::entry::PatchOpKind::Add;
        }
        // The post-pass only tracks the state; an op that cannot apply is left as generated.
        let _ = apply_op(&mut state, op);
    }
    ops
}

/// The keys `_objectKeys` returns: array indices, or an object's keys in JavaScript
/// enumeration order (integer-like keys first, ascending).
fn object_keys(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => (0..items.len()).map(|i| i.to_string()).collect(),
        Value::Object(map) => js_key_order(map, false).into_iter().cloned().collect(),
        _ => Vec::new(),
    }
}

fn child<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value {
        Value::Object(map) => map.get(key),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    }
}

fn is_container(value: &Value) -> bool {
    matches!(value, Value::Object(_) | Value::Array(_))
}

/// JavaScript `!==` for two values that are not both containers of the same kind: containers
/// are distinct references, primitives compare by value.
fn differs(old: &Value, new: &Value) -> bool {
    match (old, new) {
        (Value::Null, Value::Null) => false,
        (Value::Bool(a), Value::Bool(b)) => a != b,
        (Value::Number(a), Value::Number(b)) => !number_equal(a, b),
        (Value::String(a), Value::String(b)) => a != b,
        _ => true,
    }
}

/// Escapes a key for a JSON Pointer (`~` → `~0`, `/` → `~1`).
pub fn escape_path_component(key: &str) -> String {
    if key.contains(['~', '/']) {
        key.replace('~', "~0").replace('/', "~1")
    } else {
        key.to_string()
    }
}

fn generate(mirror: &Value, obj: &Value, patches: &mut Vec<PatchOp>, path: &str) {
    let new_keys = object_keys(obj);
    let old_keys = object_keys(mirror);
    let mut deleted = false;
    for key in old_keys.iter().rev() {
        let old_val = child(mirror, key).expect("key listed from the old side");
        let key_path = || format!("{path}/{}", escape_path_component(key));
        match child(obj, key) {
            Some(new_val) => {
                let same_kind = is_container(old_val)
                    && is_container(new_val)
                    && old_val.is_array() == new_val.is_array();
                if same_kind {
                    generate(old_val, new_val, patches, &key_path());
                } else if differs(old_val, new_val) {
                    patches.push(PatchOp::replace(key_path(), new_val.clone()));
                }
            }
            None if mirror.is_array() == obj.is_array() => {
                patches.push(PatchOp::remove(key_path()));
                deleted = true;
            }
            None => {
                patches.push(PatchOp::replace(path.to_string(), obj.clone()));
            }
        }
    }
    if !deleted && new_keys.len() == old_keys.len() {
        return;
    }
    for key in &new_keys {
        if child(mirror, key).is_none() {
            let value = child(obj, key).expect("key listed from the new side");
            patches.push(PatchOp::add(
                format!("{path}/{}", escape_path_component(key)),
                value.clone(),
            ));
        }
    }
}

/// Wraps a metadata map and body as the `{metadata, body}` value pm diffs and patches.
pub fn wrap_state(metadata: Map<String, Value>, body: &str) -> Value {
    let mut map = Map::new();
    map.insert("metadata".into(), Value::Object(metadata));
    map.insert("body".into(), Value::String(body.to_string()));
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::patch::apply_strict;
    use serde_json::json;

    fn render(ops: &[PatchOp]) -> Vec<String> {
        ops.iter()
            .map(|op| crate::json::to_compact(&op.to_value()))
            .collect()
    }

    #[test]
    fn close_orders_like_pm() {
        let before = json!({"metadata": {"id": "pm-a", "status": "in_progress", "updated_at": "t1", "assignee": "x"}, "body": ""});
        let after = json!({"metadata": {"id": "pm-a", "status": "closed", "updated_at": "t2", "closed_at": "t2", "close_reason": "done"}, "body": ""});
        assert_eq!(
            render(&compare_for_history(&before, &after)),
            [
                r#"{"op":"remove","path":"/metadata/assignee"}"#,
                r#"{"op":"replace","path":"/metadata/updated_at","value":"t2"}"#,
                r#"{"op":"replace","path":"/metadata/status","value":"closed"}"#,
                r#"{"op":"add","path":"/metadata/closed_at","value":"t2"}"#,
                r#"{"op":"add","path":"/metadata/close_reason","value":"done"}"#,
            ]
        );
    }

    #[test]
    fn body_replace_comes_first_and_adds_follow_only_when_counts_differ() {
        let before = json!({"metadata": {"a": 1}, "body": ""});
        let after = json!({"metadata": {"b": 1}, "body": "x"});
        // Same key count, nothing removed at the metadata level? `a` is removed, so `b` is added.
        assert_eq!(
            render(&compare(&before, &after)),
            [
                r#"{"op":"replace","path":"/body","value":"x"}"#,
                r#"{"op":"remove","path":"/metadata/a"}"#,
                r#"{"op":"add","path":"/metadata/b","value":1}"#,
            ]
        );
        // A number equal under JavaScript semantics is unchanged.
        assert!(compare(&json!({"p": 1}), &json!({"p": 1.0})).is_empty());
    }

    #[test]
    fn arrays_grow_and_shrink_by_index() {
        let grow = compare(&json!({"t": ["a"]}), &json!({"t": ["b", "a", "c"]}));
        assert_eq!(
            render(&grow),
            [
                r#"{"op":"replace","path":"/t/0","value":"b"}"#,
                r#"{"op":"add","path":"/t/1","value":"a"}"#,
                r#"{"op":"add","path":"/t/2","value":"c"}"#,
            ]
        );
        let shrink = compare(&json!({"t": ["a", "b", "c"]}), &json!({"t": ["c"]}));
        assert_eq!(
            render(&shrink),
            [
                r#"{"op":"remove","path":"/t/2"}"#,
                r#"{"op":"remove","path":"/t/1"}"#,
                r#"{"op":"replace","path":"/t/0","value":"c"}"#,
            ]
        );
    }

    #[test]
    fn kind_changes_replace_whole_values_and_keys_are_escaped() {
        let ops = compare(
            &json!({"m": {"a/b": {"x": 1}, "c~d": [1], "e": null}}),
            &json!({"m": {"a/b": [1], "c~d": {"0": 1}, "e": {}}}),
        );
        assert_eq!(
            render(&ops),
            [
                r#"{"op":"replace","path":"/m/e","value":{}}"#,
                r#"{"op":"replace","path":"/m/c~0d","value":{"0":1}}"#,
                r#"{"op":"replace","path":"/m/a~1b","value":[1]}"#,
            ]
        );
    }

    #[test]
    fn integer_like_keys_enumerate_first() {
        let ops = compare(&json!({}), &json!({"b": 1, "10": 2, "2": 3}));
        assert_eq!(
            render(&ops),
            [
                r#"{"op":"add","path":"/2","value":3}"#,
                r#"{"op":"add","path":"/10","value":2}"#,
                r#"{"op":"add","path":"/b","value":1}"#,
            ]
        );
    }

    #[test]
    fn generated_patches_apply_strictly() -> Result<(), Box<dyn std::error::Error>> {
        let pairs = [
            (
                json!({"metadata": {}, "body": ""}),
                json!({"metadata": {"id": "x", "tags": ["a"]}, "body": "b"}),
            ),
            (
                json!({"metadata": {"c": [{"a": 1}, {"a": 2}, {"a": 3}]}, "body": ""}),
                json!({"metadata": {"c": [{"a": 2}, {"b": 1}]}, "body": ""}),
            ),
            (
                json!({"metadata": {"id": "x", "n": [1, [2, 3]]}, "body": "b"}),
                json!({"metadata": {}, "body": ""}),
            ),
        ];
        for (before, after) in pairs {
            let mut state = before.clone();
            apply_strict(&mut state, &compare_for_history(&before, &after))?;
            assert_eq!(state, after);
        }
        Ok(())
    }
}
