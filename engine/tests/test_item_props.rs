//! Property tests of item canonicalization, serialization and hashing: idempotence, TOON and
//! Markdown round trips of canonical documents, and hash independence from key order.

use pm_engine::hash::{HashEpoch, item_hash};
use pm_engine::item::canon::{CanonSchema, canonicalize, canonicalize_for_hash};
use pm_engine::item::codec::{parse_item, serialize_item};
use pm_engine::item::keys::ITEM_METADATA_KEY_ORDER;
use pm_engine::item::{ItemDoc, ItemFormat};
use pm_engine::json::to_compact;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::path::Path;

/// Keys of the sub-records (dependencies, tests, events, …) so that random objects hit the
/// canonicalization rules, plus a few keys that need quoting in TOON.
const RECORD_KEYS: &[&str] = &[
    "id",
    "kind",
    "created_at",
    "author",
    "source_kind",
    "author_source",
    "text",
    "format",
    "data",
    "path",
    "scope",
    "note",
    "command",
    "timeout_seconds",
    "pm_context_mode",
    "env_set",
    "env_clear",
    "shared_host_safe",
    "assert_stdout_contains",
    "assert_stdout_min_lines",
    "assert_json_field_equals",
    "assert_json_field_gte",
    "run_id",
    "status",
    "started_at",
    "finished_at",
    "recorded_at",
    "passed",
    "failed",
    "skipped",
    "items",
    "measurements",
    "executions",
    "name",
    "value",
    "unit",
    "at",
    "start_at",
    "end_at",
    "title",
    "all_day",
    "recurrence",
    "freq",
    "interval",
    "by_weekday",
    "by_month_day",
    "exdates",
    "order",
    "ts",
    "decision",
    "linked_items",
    "__proto__",
    "",
    "a b",
    "1",
    "x:y",
    "#h",
    "-d",
    "Z",
];

/// Timestamps in one format, so that pm's timestamp comparator is a consistent order.
const TIMESTAMPS: &[&str] = &[
    "2026-01-01T00:00:00.000Z",
    "2026-01-01T00:00:00.001Z",
    "2026-03-05T12:30:00.000Z",
    "2025-12-31T23:59:59.999Z",
];

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[ a-cA-C_:,\\-\\\\/\t\u{a0}\u{feff}é1#\"\n\r\\[\\]{}]{0,8}",
        1 => prop::sample::select(TIMESTAMPS).prop_map(str::to_string),
        1 => prop::sample::select(&["open", " In-Progress ", "cancelled", "med", "HIGH", "weekly", "Mon", "project", "test-all", "passed", "pending", "true", "null", "-1", "1e3"][..]).prop_map(str::to_string),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..120).prop_map(Value::from),
        prop::sample::select(&[0.5f64, 2.25, -1.5, 1e21, 3.0][..]).prop_map(|f| json!(f)),
        text().prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(RECORD_KEYS), inner), 0..6).prop_map(
                |pairs| Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            ),
        ]
    })
}

fn metadata_key() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(ITEM_METADATA_KEY_ORDER).prop_map(str::to_string),
        1 => prop::sample::select(&["custom_b", "Custom_a", "_x", "10", "constructor", "weird key"][..]).prop_map(str::to_string),
    ]
}

/// Arbitrary metadata: known and unknown keys with arbitrary JSON values.
fn any_metadata() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((metadata_key(), json_value()), 0..16)
        .prop_map(|pairs| pairs.into_iter().collect())
}

/// A document that passes pm's read checks, with arbitrary unchecked extras.
fn valid_doc() -> impl Strategy<Value = ItemDoc> {
    let unchecked = prop::sample::select(
        &[
            "goal",
            "assignee",
            "parent",
            "author",
            "close_reason",
            "acceptance_criteria",
            "risk",
            "estimated_minutes",
            "order",
            "dependencies",
            "comments",
            "notes",
            "files",
            "docs",
            "tests",
            "test_runs",
            "plan_steps",
            "plan_decisions",
            "plan_validation",
            "duplicate_of",
            "custom_b",
            "Custom_a",
            "10",
            "weird key",
            "gate_evidence",
        ][..],
    );
    (
        text(),
        text(),
        prop::sample::select(&["open", "closed", " In-Progress ", "Cancelled", "draft"][..]),
        0i64..5,
        prop::collection::vec(text(), 0..4),
        prop::sample::select(TIMESTAMPS),
        prop::collection::vec((unchecked, json_value()), 0..8),
        text(),
    )
        .prop_map(
            |(title, description, status, priority, tags, at, extras, body)| {
                let mut metadata = Map::new();
                for (k, v) in extras {
                    metadata.insert(k.to_string(), v);
                }
                let base = json!({
                    "id": "pm-a1b2", "title": title, "description": description, "type": "Task",
                    "status": status, "priority": priority, "tags": tags,
                    "created_at": at, "updated_at": at,
                });
                for (k, v) in base.as_object().cloned().unwrap_or_default() {
                    metadata.insert(k, v);
                }
                ItemDoc { metadata, body }
            },
        )
}

/// Compares documents as JSON text (numbers and key order the way JavaScript prints them).
fn as_text(doc: &ItemDoc) -> String {
    format!(
        "{}\n{:?}",
        to_compact(&Value::Object(doc.metadata.clone())),
        doc.body
    )
}

fn reorder(doc: &ItemDoc, seed: u64) -> ItemDoc {
    let mut entries: Vec<(String, Value)> = doc.metadata.clone().into_iter().collect();
    let n = entries.len();
    for i in (1..n).rev() {
        let j = (seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(i as u64)
            >> 33) as usize
            % (i + 1);
        entries.swap(i, j);
    }
    ItemDoc {
        metadata: entries.into_iter().collect(),
        body: doc.body.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn canonicalization_is_idempotent(metadata in any_metadata(), body in text()) {
        let doc = ItemDoc { metadata, body };
        let once = canonicalize_for_hash(&doc);
        prop_assert_eq!(&canonicalize_for_hash(&once), &once);
        prop_assert_eq!(&canonicalize(&once, &CanonSchema::NONE), &once);
    }

    #[test]
    fn canonical_documents_round_trip_through_toon_and_markdown(doc in valid_doc()) {
        let path = Path::new("tasks/pm-a1b2.toon");
        let canonical = canonicalize_for_hash(&doc);
        for format in [ItemFormat::Toon, ItemFormat::Markdown] {
            let bytes = serialize_item(&canonical, format).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let parsed = parse_item(&bytes, format, path, &CanonSchema::NONE)
                .map_err(|e| TestCaseError::fail(format!("{e}\n{}", String::from_utf8_lossy(&bytes))))?;
            prop_assert_eq!(as_text(&parsed), as_text(&canonical));
            prop_assert_eq!(serialize_item(&parsed, format).ok(), Some(bytes));
            prop_assert_eq!(item_hash(&parsed, HashEpoch::V2), item_hash(&doc, HashEpoch::V2));
        }
    }

    #[test]
    fn hash_does_not_depend_on_metadata_key_order(metadata in any_metadata(), body in text(), seed in any::<u64>()) {
        let doc = ItemDoc { metadata, body };
        let shuffled = reorder(&doc, seed);
        prop_assert_eq!(canonicalize_for_hash(&shuffled), canonicalize_for_hash(&doc));
        for epoch in [HashEpoch::V1, HashEpoch::V2] {
            prop_assert_eq!(item_hash(&shuffled, epoch), item_hash(&doc, epoch));
        }
    }
}
