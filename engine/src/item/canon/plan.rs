//! Canonical forms of the plan collections: `plan_steps`, `plan_decisions`, `plan_discoveries`
//! and `plan_validation`. Invalid entries are dropped, strings trimmed.

use super::collections::normalize_path;
use super::{js, non_empty, object_entries};
use crate::item::keys::PLAN_STEP_STATUSES;
use serde_json::{Map, Value};
use std::cmp::Ordering;

/// `plan_steps`: steps need an id, a title, a known status, a finite order and both
/// timestamps; sorted by order.
pub(super) fn steps(value: Value) -> Option<Value> {
    let mut rows: Vec<(f64, Map<String, Value>)> =
        object_entries(value)?.filter_map(|s| step(&s)).collect();
    js::sort_by(&mut rows, |a, b| {
        a.0.partial_cmp(&b.0).unwrap_or(Ordering::Equal)
    });
    non_empty(rows.into_iter().map(|(_, s)| Value::Object(s)).collect())
}

fn step(r: &Map<String, Value>) -> Option<(f64, Map<String, Value>)> {
    let id = trimmed(r, "id")?;
    let title = trimmed(r, "title")?;
    let status = trimmed(r, "status").filter(|s| PLAN_STEP_STATUSES.contains(s))?;
    let order = match r.get("order") {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(Value::String(s)) if !js::trim(s).is_empty() => js::string_to_number(s),
        _ => f64::NAN,
    };
    let created_at = non_empty_str(r, "created_at")?;
    let updated_at = non_empty_str(r, "updated_at")?;
    if !order.is_finite() {
        return None;
    }
    let mut out = Map::new();
    out.insert("id".into(), id.into());
    out.insert("order".into(), js::to_value(order));
    out.insert("title".into(), title.into());
    out.insert("status".into(), status.into());
    out.insert("created_at".into(), created_at.into());
    out.insert("updated_at".into(), updated_at.into());
    for key in [
        "body",
        "owner",
        "evidence",
        "blocked_reason",
        "superseded_by",
    ] {
        if let Some(s) = trimmed(r, key) {
            out.insert(key.into(), s.into());
        }
    }
    if let Some(done) = non_empty_str(r, "completed_at") {
        out.insert("completed_at".into(), done.into());
    }
    let lists: [(&str, EntryRule); 4] = [
        ("linked_items", step_link),
        ("files", step_path),
        ("tests", step_test),
        ("docs", step_path),
    ];
    for (key, normalize) in lists {
        let entries = r
            .get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_object)
                    .filter_map(normalize)
                    .map(Value::Object)
                    .collect()
            })
            .and_then(non_empty);
        if let Some(v) = entries {
            out.insert(key.into(), v);
        }
    }
    Some((order, out))
}

/// Normalizes one entry of a step's sub-list; `None` drops it.
type EntryRule = fn(&Map<String, Value>) -> Option<Map<String, Value>>;

fn step_link(r: &Map<String, Value>) -> Option<Map<String, Value>> {
    let mut out = Map::new();
    out.insert("id".into(), trimmed(r, "id")?.into());
    out.insert("kind".into(), trimmed(r, "kind")?.into());
    if let Some(note) = trimmed(r, "note") {
        out.insert("note".into(), note.into());
    }
    if r.get("required_before_step") == Some(&Value::Bool(true)) {
        out.insert("required_before_step".into(), Value::Bool(true));
    }
    Some(out)
}

fn step_path(r: &Map<String, Value>) -> Option<Map<String, Value>> {
    let mut out = Map::new();
    out.insert(
        "path".into(),
        Value::String(normalize_path(trimmed(r, "path")?.to_string())),
    );
    if let Some(scope @ ("project" | "global")) = r.get("scope").and_then(Value::as_str) {
        out.insert("scope".into(), scope.into());
    }
    if let Some(note) = trimmed(r, "note") {
        out.insert("note".into(), note.into());
    }
    Some(out)
}

fn step_test(r: &Map<String, Value>) -> Option<Map<String, Value>> {
    let command = trimmed(r, "command");
    let path = trimmed(r, "path");
    if command.is_none() && path.is_none() {
        return None;
    }
    let mut out = Map::new();
    if let Some(c) = command {
        out.insert("command".into(), c.into());
    }
    if let Some(p) = path {
        out.insert("path".into(), Value::String(normalize_path(p.to_string())));
    }
    if let Some(note) = trimmed(r, "note") {
        out.insert("note".into(), note.into());
    }
    Some(out)
}

/// `plan_decisions`: `{ts, author, decision, rationale?, evidence?, step_id?}`; entries need
/// ts, author and decision. Order kept.
pub(super) fn decisions(value: Value) -> Option<Value> {
    logged(value, "decision", &["rationale", "evidence", "step_id"])
}

/// `plan_discoveries`: `{ts, author, text, step_id?}`; entries need ts, author and text.
pub(super) fn discoveries(value: Value) -> Option<Value> {
    logged(value, "text", &["step_id"])
}

fn logged(value: Value, text_key: &str, optional: &[&str]) -> Option<Value> {
    let rows = object_entries(value)?
        .filter_map(|r| {
            let r = &r;
            let ts = non_empty_str(r, "ts")?;
            let author = non_empty_str(r, "author")?;
            let text = trimmed(r, text_key)?;
            let mut out = Map::new();
            out.insert("ts".into(), ts.into());
            out.insert("author".into(), author.into());
            out.insert(text_key.into(), text.into());
            for key in optional {
                if let Some(s) = trimmed(r, key) {
                    out.insert((*key).into(), s.into());
                }
            }
            Some(Value::Object(out))
        })
        .collect();
    non_empty(rows)
}

/// `plan_validation`: `{text, command?, expected?}`; entries need text. Order kept.
pub(super) fn validation(value: Value) -> Option<Value> {
    let rows = object_entries(value)?
        .filter_map(|r| {
            let r = &r;
            let mut out = Map::new();
            out.insert("text".into(), trimmed(r, "text")?.into());
            for key in ["command", "expected"] {
                if let Some(s) = trimmed(r, key) {
                    out.insert(key.into(), s.into());
                }
            }
            Some(Value::Object(out))
        })
        .collect();
    non_empty(rows)
}

fn trimmed<'m>(r: &'m Map<String, Value>, key: &str) -> Option<&'m str> {
    r.get(key).and_then(js::trimmed_non_empty)
}

fn non_empty_str<'m>(r: &'m Map<String, Value>, key: &str) -> Option<&'m str> {
    r.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn steps_are_validated_rebuilt_and_sorted() {
        let v = json!([
            {"id": "s2", "order": "2", "title": " Two ", "status": "pending",
             "created_at": "c", "updated_at": "u", "evidence": " e ", "x": 1,
             "linked_items": [{"id": "pm-1", "kind": "implements", "required_before_step": false}, {"id": "pm-2"}],
             "files": [{"path": "a\\b", "scope": "other", "note": ""}]},
            {"id": "s1", "order": 1, "title": "One", "status": "completed", "created_at": "c",
             "updated_at": "u", "completed_at": "d"},
            {"id": "s3", "order": 3, "title": "Bad", "status": "done", "created_at": "c", "updated_at": "u"},
            {"id": "s4", "order": "x", "title": "Bad", "status": "pending", "created_at": "c", "updated_at": "u"}
        ]);
        assert_eq!(
            steps(v),
            Some(json!([
                {"id": "s1", "order": 1, "title": "One", "status": "completed", "created_at": "c",
                 "updated_at": "u", "completed_at": "d"},
                {"id": "s2", "order": 2, "title": "Two", "status": "pending", "created_at": "c",
                 "updated_at": "u", "evidence": "e",
                 "linked_items": [{"id": "pm-1", "kind": "implements"}],
                 "files": [{"path": "a/b"}]}
            ]))
        );
    }

    #[test]
    fn decisions_discoveries_validation() {
        let d = json!([{"ts": "t", "author": "a", "decision": " d ", "rationale": " ", "step_id": "s"},
                       {"ts": "", "author": "a", "decision": "d"}]);
        assert_eq!(
            decisions(d),
            Some(json!([{"ts": "t", "author": "a", "decision": "d", "step_id": "s"}]))
        );
        assert_eq!(
            discoveries(json!([{"ts": "t", "author": "a", "text": " "}])),
            None
        );
        assert_eq!(
            validation(json!([{"expected": "e", "text": "t"}, {"command": "c"}])),
            Some(json!([{"text": "t", "expected": "e"}]))
        );
    }
}
