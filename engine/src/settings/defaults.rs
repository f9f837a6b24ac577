//! pm's `SETTINGS_DEFAULTS` as a JSON tree, in pm's in-memory key order (the order `pm init
//! --json` prints), with the governance block of a given preset.

use super::governance::{Governance, GovernancePreset};
use crate::schema::{SchemaSection, Workflow, builtin_status_sources};
use serde_json::{Map, Value, json};

/// Returns the full defaults tree with `governance` expanded for `preset` and the validation
/// knobs the preset dictates (`parent_reference`, `metadata_profile`) applied.
pub fn defaults_tree(preset: GovernancePreset) -> Map<String, Value> {
    let governance = Governance::for_preset(preset);
    let files: Map<String, Value> = SchemaSection::ALL
        .iter()
        .map(|s| (s.as_str().to_string(), json!(s.default_path())))
        .collect();
    let mut tree = Map::new();
    tree.insert("version".into(), json!(1));
    tree.insert("id_prefix".into(), json!("pm-"));
    tree.insert("ids".into(), json!({"token_length": 4}));
    tree.insert("author_default".into(), json!(""));
    tree.insert(
        "agent_identity".into(),
        json!({
            "probes_enabled": true,
            "identity_vocabulary": {"version": 1, "aliases": {}},
            "harness_signals": []
        }),
    );
    tree.insert(
        "mutation_guard".into(),
        json!({
            "require_attributed_author": false,
            "secret_guard": "advise",
            "stale_in_progress_hours": 72
        }),
    );
    tree.insert("item_format".into(), json!("toon"));
    tree.insert(
        "locks".into(),
        json!({"ttl_seconds": 1800, "wait_ms": 3000}),
    );
    tree.insert("checkpoints".into(), json!({"retention_days": 14}));
    tree.insert("output".into(), json!({"default_format": "toon"}));
    tree.insert("ux".into(), json!({"deprecation_hints": true}));
    tree.insert(
        "history".into(),
        json!({
            "missing_stream": "auto_create",
            "compact_policy": {"enabled": false, "max_entries": 500, "trigger": "health_warn"}
        }),
    );
    tree.insert(
        "validation".into(),
        json!({
            "sprint_release_format": "warn",
            "parent_reference": governance.parent_reference,
            "metadata_profile": governance.metadata_profile,
            "metadata_required_fields": [],
            "lifecycle_stale_blocker_reason_patterns": [
                "no active blocker",
                "ready for planned execution sequencing",
                "work completed",
                "work is closed"
            ],
            "lifecycle_closure_like_blocked_reason_patterns": [
                "no active blocker because work is closed",
                "work is closed"
            ],
            "lifecycle_closure_like_resolution_patterns": [
                "closed with implementation evidence",
                "closed with verification evidence",
                "work completed and recorded",
                "work is closed"
            ],
            "lifecycle_closure_like_actual_result_patterns": [
                "closed and recorded",
                "work completed",
                "work completed and recorded"
            ],
            "estimate_defaults_by_type": {}
        }),
    );
    tree.insert("governance".into(), json!(governance.to_effective_json()));
    tree.insert("workflow".into(), json!({"definition_of_done": []}));
    tree.insert("testing".into(), json!({"record_results_to_items": false}));
    tree.insert(
        "telemetry".into(),
        json!({
            "enabled": true,
            "first_run_prompt_completed": false,
            "capture_level": "redacted",
            "endpoint": "https://pm-cli.unbrained.dev/v1/events",
            "installation_id": "",
            "retention_days": 365
        }),
    );
    tree.insert(
        "agent_guidance".into(),
        json!({
            "prompt_completed": false,
            "declined": false,
            "declined_at": "",
            "template_version": 1,
            "last_checked_files": []
        }),
    );
    tree.insert("item_types".into(), json!({"definitions": []}));
    tree.insert(
        "schema".into(),
        json!({
            "version": 1,
            "files": files,
            "statuses": builtin_status_sources(),
            "fields": [],
            "workflow": Workflow::builtin_json(),
            "unknown_field_policy": "allow"
        }),
    );
    tree.insert(
        "extensions".into(),
        json!({
            "enabled": [],
            "disabled": [],
            "policy": {
                "mode": "off",
                "trust_mode": "off",
                "require_provenance": false,
                "trusted_extensions": [],
                "default_sandbox_profile": "none",
                "allowed_extensions": [],
                "blocked_extensions": [],
                "allowed_capabilities": [],
                "blocked_capabilities": [],
                "allowed_surfaces": [],
                "blocked_surfaces": [],
                "allowed_commands": [],
                "blocked_commands": [],
                "allowed_actions": [],
                "blocked_actions": [],
                "allowed_services": [],
                "blocked_services": [],
                "extension_overrides": []
            }
        }),
    );
    tree.insert(
        "search".into(),
        json!({
            "score_threshold": 0,
            "hybrid_semantic_weight": 0.7,
            "max_results": 50,
            "embedding_model": "",
            "embedding_batch_size": 32,
            "embedding_timeout_ms": 30000,
            "scanner_max_batch_retries": 3,
            "provider": "",
            "mutation_refresh_policy": "semantic_configured",
            "query_expansion": {"enabled": false, "provider": ""},
            "rerank": {"enabled": false, "model": "", "top_k": 20}
        }),
    );
    tree.insert(
        "providers".into(),
        json!({
            "openai": {"base_url": "", "api_key": "", "model": ""},
            "ollama": {"base_url": "", "model": ""}
        }),
    );
    tree.insert(
        "context".into(),
        json!({
            "default_depth": "brief",
            "activity_limit": 10,
            "stale_threshold_days": 7,
            "sections": {
                "hierarchy": true,
                "activity": true,
                "progress": true,
                "recently_created": true,
                "unparented": true,
                "blockers": true,
                "files": true,
                "workload": true,
                "staleness": true,
                "tests": true
            }
        }),
    );
    tree.insert(
        "vector_store".into(),
        json!({
            "adapter": "",
            "collection_name": "pm_items",
            "qdrant": {"url": "", "api_key": ""},
            "lancedb": {"path": ""}
        }),
    );
    tree
}
