//! Canonical forms of the link collections: `dependencies`, `comments`/`notes`/`learnings`,
//! `files` and `docs`. Each returns `None` when the collection ends up empty.

use super::{js, non_empty, object_entries, pick, str_or_empty};
use crate::collate::locale_compare;
use crate::item::keys::DEPENDENCY_KEY_ORDER;
use crate::timestamp::compare_timestamp_strings;
use serde_json::{Map, Value};
use std::cmp::Ordering;

/// `dependencies`: each entry rebuilt in `DEPENDENCY_KEY_ORDER` (id trimmed and lowercased,
/// author and source_kind trimmed, `null` and empty values dropped, other keys dropped), then
/// sorted by created_at (timestamp), id, kind and source_kind.
pub(super) fn dependencies(value: Value) -> Option<Value> {
    let mut rows: Vec<Map<String, Value>> = object_entries(value)?.map(dependency).collect();
    js::sort_by(&mut rows, |a, b| {
        compare_timestamp_strings(str_or_empty(a, "created_at"), str_or_empty(b, "created_at"))
            .then_with(|| locale_compare(str_or_empty(a, "id"), str_or_empty(b, "id")))
            .then_with(|| locale_compare(str_or_empty(a, "kind"), str_or_empty(b, "kind")))
            .then_with(|| {
                locale_compare(
                    str_or_empty(a, "source_kind"),
                    str_or_empty(b, "source_kind"),
                )
            })
    });
    non_empty(rows.into_iter().map(Value::Object).collect())
}

fn dependency(entry: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::with_capacity(DEPENDENCY_KEY_ORDER.len());
    for (key, v) in DEPENDENCY_KEY_ORDER
        .iter()
        .zip(pick(entry, DEPENDENCY_KEY_ORDER))
    {
        let Some(v) = v else {
            continue;
        };
        let normalized = match (*key, v) {
            (_, Value::Null) => None,
            ("id", Value::String(s)) => Some(Value::String(js::lowercase(js::trim(&s)))),
            ("author" | "source_kind", v) => js::trimmed_owned(v),
            ("author_source", Value::String(s)) if s.is_empty() => None,
            (_, v) => Some(v),
        };
        if let Some(n) = normalized {
            out.insert((*key).to_string(), n);
        }
    }
    out
}

/// `comments`, `notes`, `learnings`: entries kept verbatim, sorted by created_at (timestamp),
/// then text, then author.
pub(super) fn log_entries(value: Value) -> Option<Value> {
    let Value::Array(mut rows) = value else {
        return None;
    };
    js::sort_by(&mut rows, |a, b| {
        compare_timestamp_strings(log_field(a, "created_at"), log_field(b, "created_at"))
            .then_with(|| locale_compare(log_field(a, "text"), log_field(b, "text")))
            .then_with(|| locale_compare(log_field(a, "author"), log_field(b, "author")))
    });
    non_empty(rows)
}

fn log_field<'v>(entry: &'v Value, key: &str) -> &'v str {
    entry.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `files`: entries rebuilt as `{path, scope, note}` (`\` → `/` in path, note trimmed and
/// dropped when empty). Order kept.
pub(super) fn files(value: Value) -> Option<Value> {
    non_empty(
        object_entries(value)?
            .map(|e| Value::Object(linked_path(e)))
            .collect(),
    )
}

/// `docs`: rebuilt like `files`, then sorted by scope, path and note.
pub(super) fn docs(value: Value) -> Option<Value> {
    let mut rows: Vec<Map<String, Value>> = object_entries(value)?.map(linked_path).collect();
    js::sort_by(&mut rows, compare_linked_paths);
    non_empty(rows.into_iter().map(Value::Object).collect())
}

/// Sorts linked-path rows the way `docs` are stored: by scope, path, then note (`pm files`
/// sorts its list this way too unless `--append-stable` is given).
pub fn sort_linked_paths(rows: &mut Vec<Value>) {
    let empty = Map::new();
    js::sort_by(rows, |a, b| {
        compare_linked_paths(
            a.as_object().unwrap_or(&empty),
            b.as_object().unwrap_or(&empty),
        )
    });
}

fn compare_linked_paths(a: &Map<String, Value>, b: &Map<String, Value>) -> Ordering {
    locale_compare(str_or_empty(a, "scope"), str_or_empty(b, "scope"))
        .then_with(|| locale_compare(str_or_empty(a, "path"), str_or_empty(b, "path")))
        .then_with(|| locale_compare(str_or_empty(a, "note"), str_or_empty(b, "note")))
}

fn linked_path(entry: Map<String, Value>) -> Map<String, Value> {
    let [path, scope, note] = pick(entry, &["path", "scope", "note"]);
    let mut out = Map::with_capacity(3);
    match path {
        Some(Value::String(p)) => {
            out.insert("path".into(), Value::String(normalize_path(p)));
        }
        Some(Value::Null) | None => {}
        Some(other) => {
            out.insert("path".into(), other);
        }
    }
    if let Some(scope) = scope {
        out.insert("scope".into(), scope);
    }
    if let Some(note) = note.and_then(js::trimmed_owned) {
        out.insert("note".into(), note);
    }
    out
}

/// Returns a path with every `\` replaced by `/` (reusing the string when there is none).
pub(super) fn normalize_path(p: String) -> String {
    if p.contains('\\') {
        p.replace('\\', "/")
    } else {
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dependencies_are_rebuilt_and_sorted() {
        let v = json!([
            {"id": " PM-B ", "kind": "related", "created_at": "2026-01-02T00:00:00.000Z",
             "author": null, "source_kind": null, "extra": 1},
            {"id": "pm-a", "kind": "blocks", "created_at": "2026-01-02T00:00:00.000Z",
             "author": " me ", "source_kind": "", "author_source": "detected"},
            {"kind": "parent", "created_at": "2026-01-01T00:00:00.000Z", "id": "pm-c"}
        ]);
        assert_eq!(
            dependencies(v.clone()),
            Some(json!([
                {"id": "pm-c", "kind": "parent", "created_at": "2026-01-01T00:00:00.000Z"},
                {"id": "pm-a", "kind": "blocks", "created_at": "2026-01-02T00:00:00.000Z",
                 "author": "me", "author_source": "detected"},
                {"id": "pm-b", "kind": "related", "created_at": "2026-01-02T00:00:00.000Z"}
            ]))
        );
        assert_eq!(dependencies(json!([])), None);
    }

    #[test]
    fn dependency_timestamps_compare_as_instants() {
        let v = json!([
            {"id": "a", "kind": "k", "created_at": "2026-01-01T01:00:00.000+02:00"},
            {"id": "b", "kind": "k", "created_at": "2026-01-01T00:00:00.000Z"}
        ]);
        let ids: Vec<_> = dependencies(v.clone())
            .and_then(|d| d.as_array().cloned())
            .unwrap_or_default()
            .iter()
            .map(|d| d["id"].clone())
            .collect();
        assert_eq!(ids, [json!("a"), json!("b")]);
    }

    #[test]
    fn log_entries_sort_stably_and_keep_keys() {
        let v = json!([
            {"created_at": "2026-01-02T00:00:00.000Z", "author": "b", "text": "x"},
            {"text": "y", "created_at": "2026-01-01T00:00:00.000Z", "author": "a", "format": "json"},
            {"created_at": "2026-01-02T00:00:00.000Z", "author": "a", "text": "x"}
        ]);
        assert_eq!(
            log_entries(v.clone()),
            Some(json!([
                {"text": "y", "created_at": "2026-01-01T00:00:00.000Z", "author": "a", "format": "json"},
                {"created_at": "2026-01-02T00:00:00.000Z", "author": "a", "text": "x"},
                {"created_at": "2026-01-02T00:00:00.000Z", "author": "b", "text": "x"}
            ]))
        );
    }

    #[test]
    fn files_keep_order_docs_sort() {
        let v = json!([
            {"note": null, "scope": "project", "path": "src\\b.rs"},
            {"path": "a.md", "scope": "global", "note": "  n  "},
            {"path": "a.md", "scope": "global", "note": "   "}
        ]);
        assert_eq!(
            files(v.clone()),
            Some(json!([
                {"path": "src/b.rs", "scope": "project"},
                {"path": "a.md", "scope": "global", "note": "n"},
                {"path": "a.md", "scope": "global"}
            ]))
        );
        assert_eq!(
            docs(v.clone()),
            Some(json!([
                {"path": "a.md", "scope": "global"},
                {"path": "a.md", "scope": "global", "note": "n"},
                {"path": "src/b.rs", "scope": "project"}
            ]))
        );
    }
}
