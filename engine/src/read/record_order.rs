//! The key order of an item as pm holds it in memory after `normalizeItemMetadata`, which is
//! the order `pm get` prints (files use `ITEM_METADATA_KEY_ORDER` instead). Reconstructed from
//! pm's construction order and checked against its `get` and `list --full` outputs.

use serde_json::{Map, Value};

/// The known keys in pm's construction order: collections follow `dependencies`, dates and
/// ownership follow the collections, plan fields come last.
pub const IN_MEMORY_KEY_ORDER: &[&str] = &[
    "id",
    "title",
    "description",
    "type",
    "pm_format_version",
    "source_type",
    "type_options",
    "status",
    "priority",
    "tags",
    "created_at",
    "updated_at",
    "dependencies",
    "comments",
    "notes",
    "learnings",
    "files",
    "tests",
    "test_runs",
    "docs",
    "deadline",
    "reminders",
    "events",
    "closed_at",
    "completed_at",
    "assignee",
    "claim_principal",
    "source_owner",
    "author",
    "estimated_minutes",
    "acceptance_criteria",
    "design",
    "external_ref",
    "definition_of_ready",
    "order",
    "goal",
    "objective",
    "value",
    "impact",
    "outcome",
    "why_now",
    "parent",
    "reviewer",
    "risk",
    "confidence",
    "sprint",
    "release",
    "blocked_by",
    "blocked_reason",
    "unblock_note",
    "reporter",
    "severity",
    "environment",
    "repro_steps",
    "resolution",
    "expected_result",
    "actual_result",
    "affected_version",
    "fixed_version",
    "component",
    "regression",
    "customer_impact",
    "close_reason",
    "plan_mode",
    "plan_scope",
    "plan_harness",
    "plan_resume_context",
    "plan_steps",
    "plan_decisions",
    "plan_discoveries",
    "plan_validation",
];

/// Returns `metadata` in pm's in-memory order: the known keys of [`IN_MEMORY_KEY_ORDER`], then
/// the runtime schema fields in registry order (`runtime_fields`), then every other key in its
/// current order (canonical metadata has them `localeCompare` sorted, as pm's files do).
pub fn in_memory_order(
    metadata: &Map<String, Value>,
    runtime_fields: &[&str],
) -> Map<String, Value> {
    let mut out = Map::with_capacity(metadata.len());
    let placed = IN_MEMORY_KEY_ORDER.iter().chain(runtime_fields);
    for key in placed {
        if let Some(value) = metadata.get(*key) {
            out.insert((*key).to_string(), value.clone());
        }
    }
    for (key, value) in metadata {
        if !out.contains_key(key) {
            out.insert(key.clone(), value.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::keys::ITEM_METADATA_KEY_ORDER;
    use serde_json::json;

    #[test]
    fn covers_every_key_of_the_file_order() {
        let mut file: Vec<&str> = ITEM_METADATA_KEY_ORDER.to_vec();
        let mut memory: Vec<&str> = IN_MEMORY_KEY_ORDER.to_vec();
        file.retain(|k| *k != "duplicate_of");
        file.sort_unstable();
        memory.sort_unstable();
        assert_eq!(memory, file, "duplicate_of is an extra key in memory");
    }

    #[test]
    fn orders_known_then_runtime_then_other_keys() {
        let metadata: Map<String, Value> = [
            ("id", json!("pm-a")),
            ("closed_at", json!("t")),
            ("test_runs", json!([])),
            ("duplicate_of", json!("pm-b")),
            ("gate", json!("x")),
            ("updated_at", json!("t")),
            ("author", json!("me")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let ordered = in_memory_order(&metadata, &["gate"]);
        let keys: Vec<&str> = ordered.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "id",
                "updated_at",
                "test_runs",
                "closed_at",
                "author",
                "gate",
                "duplicate_of"
            ]
        );
    }
}
