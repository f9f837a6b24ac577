//! settings.json serialization: the full tree `pm init` writes and the sparse
//! rewrite of the user's own document; both pretty JSON plus `\n` in pm's fixed key orders.

use super::governance::Governance;
use crate::json::to_pretty;
use crate::schema::{FieldRegistry, Workflow, normalize_status_definitions};
use serde_json::{Map, Value, json};

/// Top-level key order of a written settings.json.
pub const TOP_LEVEL_ORDER: [&str; 25] = [
    "version",
    "id_prefix",
    "ids",
    "author_default",
    "agent_identity",
    "mutation_guard",
    "item_format",
    "locks",
    "checkpoints",
    "output",
    "ux",
    "history",
    "validation",
    "governance",
    "workflow",
    "testing",
    "telemetry",
    "agent_guidance",
    "item_types",
    "schema",
    "context",
    "extensions",
    "search",
    "providers",
    "vector_store",
];

/// Nested key orders (pm's `orderSerializedSettingsSections`), by path.
const NESTED_ORDERS: &[(&[&str], &[&str])] = &[
    (&["locks"], &["ttl_seconds"]),
    (&["checkpoints"], &["retention_days"]),
    (&["output"], &["default_format"]),
    (&["history"], &["missing_stream", "compact_policy"]),
    (
        &["validation"],
        &[
            "sprint_release_format",
            "parent_reference",
            "metadata_profile",
            "metadata_required_fields",
            "lifecycle_stale_blocker_reason_patterns",
            "lifecycle_closure_like_blocked_reason_patterns",
            "lifecycle_closure_like_resolution_patterns",
            "lifecycle_closure_like_actual_result_patterns",
            "estimate_defaults_by_type",
        ],
    ),
    (
        &["governance"],
        &[
            "preset",
            "ownership_enforcement",
            "create_mode_default",
            "close_validation_default",
            "require_close_reason",
            "parent_reference",
            "metadata_profile",
            "force_required_for_stale_lock",
            "create_default_type",
            "workflow_enforcement",
        ],
    ),
    (&["workflow"], &["definition_of_done"]),
    (&["testing"], &["record_results_to_items"]),
    (
        &["telemetry"],
        &[
            "enabled",
            "first_run_prompt_completed",
            "capture_level",
            "endpoint",
            "installation_id",
            "retention_days",
        ],
    ),
    (
        &["agent_guidance"],
        &[
            "prompt_completed",
            "declined",
            "declined_at",
            "template_version",
            "last_checked_files",
        ],
    ),
    (&["item_types"], &["definitions"]),
    (
        &["schema"],
        &[
            "version",
            "files",
            "statuses",
            "fields",
            "workflow",
            "type_workflows",
            "unknown_field_policy",
        ],
    ),
    (
        &["schema", "files"],
        &["types", "statuses", "fields", "workflows"],
    ),
    (&["schema", "workflow"], &crate::schema::WORKFLOW_KEYS),
    (
        &["context"],
        &[
            "default_depth",
            "activity_limit",
            "stale_threshold_days",
            "sections",
        ],
    ),
    (
        &["context", "sections"],
        &[
            "hierarchy",
            "activity",
            "progress",
            "blockers",
            "files",
            "workload",
            "staleness",
            "tests",
        ],
    ),
    (&["extensions"], &["enabled", "disabled", "policy"]),
    (
        &["extensions", "policy"],
        &[
            "mode",
            "trust_mode",
            "pm_max_version_exceeded_mode",
            "require_provenance",
            "trusted_extensions",
            "default_sandbox_profile",
            "allowed_extensions",
            "blocked_extensions",
            "allowed_capabilities",
            "blocked_capabilities",
            "allowed_surfaces",
            "blocked_surfaces",
            "allowed_commands",
            "blocked_commands",
            "allowed_actions",
            "blocked_actions",
            "allowed_services",
            "blocked_services",
            "extension_overrides",
        ],
    ),
    (
        &["search"],
        &[
            "score_threshold",
            "hybrid_semantic_weight",
            "max_results",
            "embedding_model",
            "embedding_corpus_max_characters",
            "embedding_batch_size",
            "embedding_timeout_ms",
            "scanner_max_batch_retries",
            "provider",
            "mutation_refresh_policy",
            "query_expansion",
            "rerank",
        ],
    ),
    (&["search", "query_expansion"], &["enabled", "provider"]),
    (&["search", "rerank"], &["enabled", "model", "top_k"]),
    (&["providers"], &["openai", "ollama"]),
    (&["providers", "openai"], &["base_url", "api_key", "model"]),
    (&["providers", "ollama"], &["base_url", "model"]),
    (
        &["vector_store"],
        &["adapter", "collection_name", "qdrant", "lancedb"],
    ),
    (&["vector_store", "qdrant"], &["url", "api_key"]),
    (&["vector_store", "lancedb"], &["path"]),
];

/// Returns the full settings tree for an effective settings tree, ready to print: governance in
/// its persisted form, `schema` normalized (statuses with `order` and normalized aliases, fields
/// in pm's serialized form), every section in pm's key order.
pub fn full_tree(effective: &Map<String, Value>, governance: &Governance) -> Map<String, Value> {
    let mut tree = effective.clone();
    tree.insert("governance".into(), governance.to_persisted_json());
    if let Some(Value::Object(schema)) = tree.get("schema") {
        let normalized = normalize_schema_block(schema);
        tree.insert("schema".into(), Value::Object(normalized));
    }
    order_document(tree)
}

/// Returns a settings document with pm's top-level and nested key orders applied; no key is
/// added or removed (the sparse rewrite of a user's file).
pub fn order_document(tree: Map<String, Value>) -> Map<String, Value> {
    let mut ordered = order_keys(tree, &TOP_LEVEL_ORDER);
    for (path, order) in NESTED_ORDERS {
        if let Some(Value::Object(map)) = lookup_mut(&mut ordered, path) {
            let taken = std::mem::take(map);
            *map = order_keys(taken, order);
        }
    }
    ordered
}

/// Returns the file text of a settings document: pretty JSON (2 spaces) plus `\n`.
pub fn render(tree: &Map<String, Value>) -> String {
    let mut text = to_pretty(&Value::Object(tree.clone()));
    text.push('\n');
    text
}

/// Returns `map` with the keys of `order` first (those present, in that order), then the rest in
/// their existing order (pm's `orderObject`).
pub fn order_keys(mut map: Map<String, Value>, order: &[&str]) -> Map<String, Value> {
    let mut out = Map::new();
    for key in order {
        if let Some(v) = map.shift_remove(*key) {
            out.insert((*key).to_string(), v);
        }
    }
    out.extend(map);
    out
}

fn lookup_mut<'a>(map: &'a mut Map<String, Value>, path: &[&str]) -> Option<&'a mut Value> {
    let (first, rest) = path.split_first()?;
    let mut current = map.get_mut(*first)?;
    for key in rest {
        current = current.as_object_mut()?.get_mut(*key)?;
    }
    Some(current)
}

/// Normalizes a settings `schema` block the way pm serializes it.
fn normalize_schema_block(schema: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    let version = schema
        .get("version")
        .and_then(Value::as_f64)
        .filter(|v| v.is_finite())
        .map_or(json!(1), |v| json!(v.floor() as i64));
    out.insert("version".into(), version);
    let mut files = Map::new();
    for section in crate::schema::SchemaSection::ALL {
        files.insert(section.as_str().into(), json!(section.default_path()));
    }
    if let Some(Value::Object(given)) = schema.get("files") {
        for (k, v) in given {
            files.insert(k.clone(), v.clone());
        }
    }
    out.insert("files".into(), Value::Object(files));
    let statuses: Vec<Value> = match schema.get("statuses") {
        Some(Value::Array(items)) if !items.is_empty() => items.clone(),
        _ => crate::schema::builtin_status_sources(),
    };
    let statuses: Vec<Value> = normalize_status_definitions(&statuses)
        .iter()
        .map(|d| d.to_json())
        .collect();
    out.insert("statuses".into(), Value::Array(statuses));
    let fields = match schema.get("fields") {
        Some(Value::Array(items)) => FieldRegistry::from_sources(items),
        _ => FieldRegistry::default(),
    };
    let fields: Vec<Value> = fields
        .definitions()
        .iter()
        .map(crate::schema::field_to_json)
        .collect();
    out.insert("fields".into(), Value::Array(fields));
    let workflow = match schema.get("workflow") {
        Some(Value::Object(block)) => Workflow::from_settings_block(block),
        _ => Workflow::default(),
    };
    out.insert("workflow".into(), workflow.to_json());
    if let Some(Value::Array(entries)) = schema.get("type_workflows") {
        let rules = crate::schema::normalize_type_workflows(entries);
        if !rules.is_empty() {
            let rules: Vec<Value> = rules
                .iter()
                .map(|r| {
                    let pairs: Vec<Value> = r
                        .allowed_transitions
                        .iter()
                        .map(|(f, t)| json!([f, t]))
                        .collect();
                    json!({"type": r.type_name, "allowed_transitions": pairs})
                })
                .collect();
            out.insert("type_workflows".into(), Value::Array(rules));
        }
    }
    let policy = schema
        .get("unknown_field_policy")
        .and_then(Value::as_str)
        .map_or(
            crate::schema::UnknownFieldPolicy::Allow,
            crate::schema::UnknownFieldPolicy::parse,
        );
    out.insert("unknown_field_policy".into(), json!(policy.as_str()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_keys_puts_listed_first() {
        let map = json!({"b": 1, "z": 2, "a": 3})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let ordered = order_keys(map, &["a", "b", "missing"]);
        assert_eq!(ordered.keys().collect::<Vec<_>>(), ["a", "b", "z"]);
    }

    #[test]
    fn ordering_adds_nothing() {
        let doc = json!({"output": {"default_format": "json"}, "version": 1, "zz": true})
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            render(&order_document(doc)),
            "{\n  \"version\": 1,\n  \"output\": {\n    \"default_format\": \"json\"\n  },\n  \"zz\": true\n}\n"
        );
    }

    #[test]
    fn schema_block_without_workflow_writes_empty_workflow() {
        let schema = json!({"statuses": [{"id": "Todo", "roles": ["default_open"]}], "fields": [{"key": "Risk Level"}]});
        let out = normalize_schema_block(schema.as_object().expect("object"));
        assert_eq!(
            crate::json::to_compact(&Value::Object(out)),
            r#"{"version":1,"files":{"types":"schema/types.json","statuses":"schema/statuses.json","fields":"schema/fields.json","workflows":"schema/workflows.json"},"statuses":[{"id":"todo","roles":["default_open"],"order":0}],"fields":[{"key":"risk_level","type":"string","commands":["create","update"]}],"workflow":{},"unknown_field_policy":"allow"}"#
        );
    }
}
