//! Patch generation: a port of `fast-json-patch` 3.1.1 `compare`, pm's post-pass that turns a
//! `replace` of an absent path into `add`, and the `{metadata, body}` wrapping pm diffs.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::entry::{PatchOp, PatchOpKind};
use super::patch::{apply_op, number_equal, pointer_exists};
use crate::item::ItemDoc;
use crate::item::canon::{canonicalize_for_hash, order_metadata};
use crate::item::keys::DEPENDENCY_KEY_ORDER;
use crate::json::js_key_order;

/// Returns the RFC 6902 patch `fast-json-patch`'s `compare(before, after)` generates.
///
/// Old keys are walked in reverse (array indices high → low). A key on both sides whose values
/// are both objects or both arrays is recursed into; otherwise differing values give `replace`
/// and keys missing on the new side give `remove`. Only if something was removed or the key
/// counts differ are the new keys walked forward, giving `add` for keys the old side lacks.
pub fn compare(before: &Value, after: &Value) -> Vec<PatchOp> {
    let mut patches = Vec::new();
    generate(before, after, &mut patches, "", &|_| None);
    patches
}

/// Returns [`compare`] followed by pm's post-pass (see [`post_pass`]).
pub fn compare_for_history(before: &Value, after: &Value) -> Vec<PatchOp> {
    let mut ops = compare(before, after);
    post_pass(before, &mut ops);
    ops
}

/// pm's post-pass over a generated patch: the ops are replayed on a copy of `before` and every
/// `replace` whose path is absent at that point becomes `add`.
pub fn post_pass(before: &Value, ops: &mut [PatchOp]) {
    let mut state = before.clone();
    for op in ops {
        if op.op == PatchOpKind::Replace && !pointer_exists(&state, &op.path) {
            op.op = PatchOpKind::Add;
        }
        // The post-pass only tracks the state; an op that cannot apply is left as generated.
        let _ = apply_op(&mut state, op);
    }
}

/// Returns the patch pm records for a mutation from `before` to `after`: each side
/// wrapped by [`history_state`], then [`state_patch`].
pub fn item_patch(before: &ItemDoc, after: &ItemDoc) -> Vec<PatchOp> {
    state_patch(&history_state(before), &history_state(after))
}

/// Returns the patch between two `{metadata, body}` states built by [`history_state`]:
/// `compare` with pm's in-memory record shapes (see [`record_template`]), then [`post_pass`].
pub fn state_patch(before: &Value, after: &Value) -> Vec<PatchOp> {
    let mut ops = Vec::new();
    generate(before, after, &mut ops, "", &record_template);
    post_pass(before, &mut ops);
    ops
}

/// Key order of a rebuilt `files` or `docs` entry.
const LINKED_PATH_KEY_ORDER: &[&str] = &["path", "scope", "note"];

/// Returns the keys pm's canonical record at `path` carries in memory.
///
/// pm rebuilds `dependencies`, `tests`, `files` and `docs` entries as object literals with
/// every key of their key order, leaving absent fields `undefined`. JSON never shows those
/// keys, but `compare` walks them: a field that gains a value is a `replace` at its key-order
/// position (turned into `add` by the post-pass), and the key counts of two such records are
/// always equal. `path` is the pointer of the record (`/metadata/<field>/<index>`).
pub fn record_template(path: &str) -> Option<&'static [&'static str]> {
    let (field, index) = path.strip_prefix("/metadata/")?.split_once('/')?;
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match field {
        "dependencies" => Some(DEPENDENCY_KEY_ORDER),
        "files" | "docs" => Some(LINKED_PATH_KEY_ORDER),
        _ => None,
    }
}

type Templates<'t> = dyn Fn(&str) -> Option<&'static [&'static str]> + 't;

/// A container as `_objectKeys` and property reads see it: ordered own keys, `None` for a key
/// that is present but `undefined`.
struct JsObject<'a> {
    value: &'a Value,
    template: Option<&'static [&'static str]>,
}

impl<'a> JsObject<'a> {
    fn new(value: &'a Value, template: Option<&'static [&'static str]>) -> JsObject<'a> {
        let template = template.filter(|_| value.is_object());
        JsObject { value, template }
    }

    /// The own keys in enumeration order: array indices; template keys then the others.
    fn keys(&self) -> Vec<Cow<'a, str>> {
        match self.value {
            Value::Array(items) => (0..items.len())
                .map(|i| Cow::Owned(i.to_string()))
                .collect(),
            Value::Object(map) => {
                let Some(template) = self.template else {
                    return js_key_order(map, false)
                        .into_iter()
                        .map(|k| Cow::Borrowed(k.as_str()))
                        .collect();
                };
                let mut keys: Vec<Cow<'a, str>> =
                    template.iter().map(|k| Cow::Borrowed(*k)).collect();
                keys.extend(
                    js_key_order(map, false)
                        .into_iter()
                        .filter(|k| !template.contains(&k.as_str()))
                        .map(|k| Cow::Borrowed(k.as_str())),
                );
                keys
            }
            _ => Vec::new(),
        }
    }

    /// `hasOwnProperty` and the value: `None` = no own key, `Some(None)` = `undefined`.
    fn own(&self, key: &str) -> Option<Option<&'a Value>> {
        match self.value {
            Value::Array(items) => key
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i))
                .map(Some),
            Value::Object(map) => match map.get(key) {
                Some(value) => Some(Some(value)),
                None => self.template.filter(|t| t.contains(&key)).map(|_| None),
            },
            _ => None,
        }
    }
}

fn is_container(value: &Value) -> bool {
    matches!(value, Value::Object(_) | Value::Array(_))
}

/// JavaScript `!==` for two values that are not both containers of the same kind: containers
/// are distinct references, primitives compare by value, `undefined` only equals itself.
fn differs(old: Option<&Value>, new: Option<&Value>) -> bool {
    match (old, new) {
        (None, None) | (Some(Value::Null), Some(Value::Null)) => false,
        (Some(Value::Bool(a)), Some(Value::Bool(b))) => a != b,
        (Some(Value::Number(a)), Some(Value::Number(b))) => !number_equal(a, b),
        (Some(Value::String(a)), Some(Value::String(b))) => a != b,
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

/// `_generate(mirror, obj, patches, path)`; `templates` gives the in-memory record shape of
/// the objects at a path.
fn generate(
    mirror: &Value,
    obj: &Value,
    patches: &mut Vec<PatchOp>,
    path: &str,
    templates: &Templates<'_>,
) {
    let template = templates(path);
    let old = JsObject::new(mirror, template);
    let new = JsObject::new(obj, template);
    let old_keys = old.keys();
    let new_keys = new.keys();
    let mut deleted = false;
    for key in old_keys.iter().rev() {
        let old_val = old.own(key).expect("key listed from the old side");
        let key_path = || format!("{path}/{}", escape_path_component(key));
        match new.own(key) {
            Some(new_val) if !(new_val.is_none() && old_val.is_some() && !obj.is_array()) => {
                match (old_val, new_val) {
                    (Some(o), Some(n))
                        if is_container(o) && is_container(n) && o.is_array() == n.is_array() =>
                    {
                        generate(o, n, patches, &key_path(), templates);
                    }
                    (o, n) => {
                        if let Some(n) = n.filter(|n| differs(o, Some(n))) {
                            patches.push(PatchOp::replace(key_path(), n.clone()));
                        }
                    }
                }
            }
            _ if mirror.is_array() == obj.is_array() => {
                patches.push(PatchOp::remove(key_path()));
                deleted = true;
            }
            _ => patches.push(PatchOp::replace(path.to_string(), obj.clone())),
        }
    }
    if !deleted && new_keys.len() == old_keys.len() {
        return;
    }
    for key in &new_keys {
        if old.own(key).is_none()
            && let Some(Some(value)) = new.own(key)
        {
            patches.push(PatchOp::add(
                format!("{path}/{}", escape_path_component(key)),
                value.clone(),
            ));
        }
    }
}

/// Returns the `{metadata, body}` value pm diffs for a document: the canonical metadata in
/// `ITEM_METADATA_KEY_ORDER` and the canonical body, or `{metadata: {}, body}` for the empty
/// state (before create, after delete).
pub fn history_state(doc: &ItemDoc) -> Value {
    if doc.metadata.is_empty() {
        return wrap_state(Map::new(), doc.body.clone());
    }
    let canonical = canonicalize_for_hash(doc);
    wrap_state(order_metadata(&canonical.metadata), canonical.body)
}

/// Wraps a metadata map and body as the `{metadata, body}` value pm diffs and patches.
pub fn wrap_state(metadata: Map<String, Value>, body: String) -> Value {
    let mut map = Map::new();
    map.insert("metadata".into(), Value::Object(metadata));
    map.insert("body".into(), Value::String(body));
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
