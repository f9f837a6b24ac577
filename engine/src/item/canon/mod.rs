//! Canonicalization of item documents (pm's `normalizeItemMetadata` + `normalizeBody`):
//! the one place that decides what a stored, hashed item looks like. Pure and infallible.

mod calendar;
mod collections;
pub(crate) mod js;
mod linked_tests;
mod plan;
mod schema;

pub use collections::sort_linked_paths;
pub use linked_tests::sort_tests_legacy;
pub use schema::{CanonSchema, UnknownFieldPolicy};

use super::ItemDoc;
use super::keys::{self, FieldRule, ITEM_METADATA_KEY_ORDER};
use crate::collate::locale_compare;
use serde_json::{Map, Value};

/// Returns the canonical form of `doc` under `schema`: metadata rebuilt by pm's
/// normalization rules in `ITEM_METADATA_KEY_ORDER` (unknown keys after, sorted with
/// `localeCompare`) and the body normalized. Idempotent.
pub fn canonicalize(doc: &ItemDoc, schema: &CanonSchema) -> ItemDoc {
    // Clone entry by entry rather than the whole map: the source's hash index is never needed.
    let entries = doc.metadata.iter().map(|(k, v)| (k.clone(), v.clone()));
    ItemDoc {
        metadata: canonical_entries(entries, doc.metadata.len(), schema),
        body: normalize_body(&doc.body),
    }
}

/// Returns the canonical form of `doc` like [`canonicalize`], reusing its allocations.
pub fn canonicalize_owned(doc: ItemDoc, schema: &CanonSchema) -> ItemDoc {
    ItemDoc {
        metadata: canonical_metadata(doc.metadata, schema),
        body: normalize_body(&doc.body),
    }
}

/// Returns the registry-free canonical form used for hashing: no status registry, no
/// runtime-field coercion. Idempotent, and a no-op on documents already canonicalized with a
/// schema.
pub fn canonicalize_for_hash(doc: &ItemDoc) -> ItemDoc {
    canonicalize(doc, &CanonSchema::NONE)
}

/// Returns the canonical metadata map for `source` (see [`canonicalize`]).
pub fn canonical_metadata(source: Map<String, Value>, schema: &CanonSchema) -> Map<String, Value> {
    let len = source.len();
    canonical_entries(source.into_iter(), len, schema)
}

fn canonical_entries(
    source: impl Iterator<Item = (String, Value)>,
    len: usize,
    schema: &CanonSchema,
) -> Map<String, Value> {
    let mut known: Vec<(usize, FieldRule, String, Value)> = Vec::with_capacity(len);
    let mut unknown: Vec<(String, Value)> = Vec::new();
    for (key, value) in source {
        if let (Some(rank), Some(rule)) = (keys::key_rank(&key), keys::field_rule(&key)) {
            known.push((rank, rule, key, value));
        } else if !keys::is_forbidden_key(&key) {
            unknown.push((key, value));
        }
    }
    known.sort_unstable_by_key(|k| k.0);
    let mut out = Map::with_capacity(known.len() + unknown.len());
    for (_, rule, key, value) in known {
        if let Some(normalized) = normalize_static(&key, rule, value, schema) {
            out.insert(key, normalized);
        }
    }
    js::sort_by(&mut unknown, |a, b| locale_compare(&a.0, &b.0));
    out.extend(unknown);
    schema.coerce_fields(&mut out);
    out
}

/// Returns the registry-free canonical value of one metadata field exactly as
/// [`canonicalize_for_hash`] produces it, or `None` when canonicalization drops the key. Under
/// `CanonSchema::NONE` every field canonicalizes on its own, which lets history replay rehash
/// only the fields a patch touched.
pub(crate) fn canonical_field_for_hash(key: &str, value: &Value) -> Option<Value> {
    match (keys::key_rank(key), keys::field_rule(key)) {
        (Some(_), Some(rule)) => normalize_static(key, rule, value.clone(), &CanonSchema::NONE),
        _ if keys::is_forbidden_key(key) => None,
        _ => Some(value.clone()),
    }
}

/// Returns pm's `normalizeBody`: leading `\n` characters stripped, then JavaScript `trimEnd`.
pub fn normalize_body(body: &str) -> String {
    js::trim_end(body.trim_start_matches('\n')).to_string()
}

/// Returns `metadata` re-ordered for writing (pm's `orderObject`): static keys in table order,
/// then the others sorted with `localeCompare`.
pub fn order_metadata(metadata: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::with_capacity(metadata.len());
    for key in ITEM_METADATA_KEY_ORDER {
        if let Some(v) = metadata.get(*key) {
            out.insert((*key).to_string(), v.clone());
        }
    }
    let mut rest: Vec<&String> = metadata
        .keys()
        .filter(|k| !keys::is_static_key(k))
        .collect();
    js::sort_by(&mut rest, |a, b| locale_compare(a, b));
    for key in rest {
        out.insert(key.clone(), metadata[key.as_str()].clone());
    }
    out
}

/// Applies the rule of one static key; `None` means the key is absent from the result.
fn normalize_static(
    key: &str,
    rule: FieldRule,
    value: Value,
    schema: &CanonSchema,
) -> Option<Value> {
    match rule {
        FieldRule::Verbatim => Some(value),
        FieldRule::Trimmed => js::trimmed_owned(value),
        FieldRule::FalsyDropped => js::truthy(&value).then_some(value),
        FieldRule::NullDropped => (!value.is_null()).then_some(value),
        FieldRule::Special => normalize_special(key, value, schema),
    }
}

fn normalize_special(key: &str, value: Value, schema: &CanonSchema) -> Option<Value> {
    match key {
        "pm_format_version" => {
            (js::is_integer(&value) && js::number(&value).is_some_and(|v| v > 1.0)).then_some(value)
        }
        "type_options" => type_options(value),
        "status" => Some(status(value, schema)),
        "tags" => Some(tags(value)),
        "confidence" => confidence(value),
        "severity" => text_level(&value, keys::SEVERITY_VALUES),
        "reminders" => calendar::reminders(value),
        "events" => calendar::events(value),
        "dependencies" => collections::dependencies(value),
        "comments" | "notes" | "learnings" => collections::log_entries(value),
        "files" => collections::files(value),
        "docs" => collections::docs(value),
        "tests" => linked_tests::tests(value),
        "test_runs" => linked_tests::test_runs(value),
        "plan_steps" => plan::steps(value),
        "plan_decisions" => plan::decisions(value),
        "plan_discoveries" => plan::discoveries(value),
        "plan_validation" => plan::validation(value),
        _ => Some(value),
    }
}

/// Status: the registry id when the value resolves, otherwise the value verbatim.
fn status(value: Value, schema: &CanonSchema) -> Value {
    match value.as_str().and_then(|raw| schema.resolve_status(raw)) {
        Some(id) => Value::String(id),
        None => value,
    }
}

/// Tags: strings trimmed and lowercased, empties dropped, de-duplicated, `localeCompare` sorted.
/// A non-array value is kept as it is (pm refuses such documents before canonicalizing).
fn tags(value: Value) -> Value {
    let Value::Array(items) = value else {
        return value;
    };
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for tag in items.iter().filter_map(Value::as_str) {
        let t = js::lowercase(js::trim(tag));
        if !t.is_empty() && !out.contains(&t) {
            out.push(t);
        }
    }
    js::sort_by(&mut out, |a, b| locale_compare(a, b));
    Value::Array(out.into_iter().map(Value::String).collect())
}

/// `confidence`: numbers kept; text lowercased with `med` → `medium`; unknown text dropped.
fn confidence(value: Value) -> Option<Value> {
    if value.is_number() {
        return Some(value);
    }
    text_level(&value, keys::CONFIDENCE_TEXT_VALUES)
}

/// A trimmed, lowercased enum string (`med` accepted for `medium`); anything else is dropped.
fn text_level(value: &Value, allowed: &[&str]) -> Option<Value> {
    let t = js::lowercase(js::trim(value.as_str()?));
    if t == "med" {
        return Some(Value::String("medium".into()));
    }
    allowed.contains(&t.as_str()).then_some(Value::String(t))
}

/// `type_options`: keys and values trimmed, empty pairs dropped, keys `localeCompare` sorted.
fn type_options(value: Value) -> Option<Value> {
    let map = value.as_object()?;
    let mut pairs: Vec<(&str, &str)> = map
        .iter()
        .filter_map(|(k, v)| Some((js::trim(k), js::trim(v.as_str()?))))
        .filter(|(k, v)| !k.is_empty() && !v.is_empty())
        .collect();
    js::sort_by(&mut pairs, |a, b| locale_compare(a.0, b.0));
    let out = object_from_entries(pairs.into_iter().map(|(k, v)| (k, Value::String(v.into()))));
    (!out.is_empty()).then_some(Value::Object(out))
}

/// Builds an object like `Object.fromEntries`: a repeated key keeps its first position and
/// takes the last value.
pub(crate) fn object_from_entries<'k>(
    entries: impl IntoIterator<Item = (&'k str, Value)>,
) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, v) in entries {
        out.insert(k.to_string(), v);
    }
    out
}

/// Wraps a non-empty list as an array value (`undefined` for an empty collection).
pub(crate) fn non_empty(items: Vec<Value>) -> Option<Value> {
    (!items.is_empty()).then_some(Value::Array(items))
}

/// Returns the object entries of an array value, dropping entries that are not objects;
/// `None` when the value is not an array.
pub(crate) fn object_entries(value: Value) -> Option<impl Iterator<Item = Map<String, Value>>> {
    let Value::Array(items) = value else {
        return None;
    };
    Some(items.into_iter().filter_map(|item| match item {
        Value::Object(m) => Some(m),
        _ => None,
    }))
}

/// Splits an object into the values of `keys` (in that order), dropping every other key. One
/// pass over the entry instead of one hash lookup per key.
pub(crate) fn pick<const N: usize>(
    entry: Map<String, Value>,
    keys: &[&str; N],
) -> [Option<Value>; N] {
    let mut out: [Option<Value>; N] = std::array::from_fn(|_| None);
    for (k, v) in entry {
        if let Some(i) = keys.iter().position(|key| *key == k) {
            out[i] = Some(v);
        }
    }
    out
}

/// Returns `value.as_str()` or `""` (the `?? ""` of pm's comparators).
pub(crate) fn str_or_empty<'v>(map: &'v Map<String, Value>, key: &str) -> &'v str {
    map.get(key).and_then(Value::as_str).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: Value) -> ItemDoc {
        ItemDoc {
            metadata: v.as_object().cloned().unwrap_or_default(),
            body: String::new(),
        }
    }

    #[test]
    fn scalars_follow_the_field_tables() {
        let d = doc(json!({
            "zeta": 1, "Alpha": 2, "__proto__": {"x": 1}, "constructor": 3,
            "tags": [" B ", "a", "b", 7, "", "A:x"],
            "status": " In-Progress ", "priority": 2, "id": "pm-1",
            "goal": "  g  ", "value": "   ", "reviewer": 5,
            "author": "", "close_reason": 0, "deadline": "2026-01-01T00:00:00.000Z",
            "acceptance_criteria": "", "risk": null, "design": null,
            "confidence": "MED", "severity": "urgent",
            "pm_format_version": 1, "estimated_minutes": null,
            "type_options": {" k ": " v ", "e": " ", "a": "b"},
            "duplicate_of": null
        }));
        let c = canonicalize_for_hash(&d);
        assert_eq!(
            Value::Object(c.metadata),
            json!({
                "id": "pm-1", "type_options": {"a": "b", "k": "v"}, "status": "in_progress",
                "priority": 2, "tags": ["a", "a:x", "b"], "deadline": "2026-01-01T00:00:00.000Z",
                "estimated_minutes": null, "acceptance_criteria": "", "goal": "g",
                "confidence": "medium", "duplicate_of": null, "Alpha": 2, "zeta": 1
            })
        );
    }

    #[test]
    fn output_is_in_key_order_with_unknown_keys_locale_sorted() {
        let d = doc(json!({"b_custom": 1, "title": "t", "A_custom": 2, "id": "x", "_z": 0}));
        let keys: Vec<_> = canonicalize_for_hash(&d).metadata.keys().cloned().collect();
        assert_eq!(keys, ["id", "title", "_z", "A_custom", "b_custom"]);
    }

    #[test]
    fn format_version_kept_only_above_one() {
        let two = canonicalize_for_hash(&doc(json!({"pm_format_version": 2})));
        assert_eq!(two.metadata.get("pm_format_version"), Some(&json!(2)));
        for v in [json!(1), json!(0), json!(2.5), json!("3")] {
            let c = canonicalize_for_hash(&doc(json!({ "pm_format_version": v })));
            assert!(c.metadata.get("pm_format_version").is_none());
        }
    }

    #[test]
    fn body_strips_leading_newlines_and_trailing_js_whitespace() {
        assert_eq!(normalize_body("\n\n  a\n b \u{FEFF}\u{A0}\n"), "  a\n b");
        assert_eq!(normalize_body("\r\nx\u{85}"), "\r\nx\u{85}");
        assert_eq!(normalize_body("\n\n\n"), "");
    }

    #[test]
    fn canonicalize_is_idempotent_on_a_mixed_document() {
        let d = ItemDoc {
            metadata: json!({
                "id": "pm-1", "tags": ["Z", "y"], "status": "cancelled",
                "dependencies": [{"id": " PM-2 ", "kind": "blocks", "created_at": "2026-01-02T00:00:00.000Z", "author": null},
                                 {"id": "pm-3", "kind": "related", "created_at": "2026-01-01T00:00:00.000Z", "x": 1}],
                "custom": {"b": 1, "a": 2}
            })
            .as_object()
            .cloned()
            .unwrap_or_default(),
            body: "\nbody  \n".into(),
        };
        let once = canonicalize_for_hash(&d);
        assert_eq!(canonicalize_for_hash(&once), once);
        assert_eq!(once.body, "body");
    }
}
