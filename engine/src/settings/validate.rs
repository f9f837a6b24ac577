//! The one definition of every settings.json key's legal domain (pm's
//! dependency-free port of its zod schema, plus our stricter lock and size ranges). Checking a
//! document against it is `check.rs`.

/// Largest integer JavaScript represents exactly.
pub(super) const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// The expected shape of a JSON value.
pub(super) enum Shape {
    Str,
    Bool,
    /// A finite number.
    Num,
    /// A safe integer, optionally `> 0`, optionally within an inclusive range.
    Int {
        positive: bool,
        range: Option<(f64, f64)>,
    },
    Lit(&'static [&'static str]),
    Arr(Box<Shape>),
    Obj(Vec<(&'static str, bool, Shape)>),
    /// An object with arbitrary keys whose values all match.
    Record(Box<Shape>),
    /// Anything, kept verbatim.
    Any,
    /// A string literal from the list, or an object of the given shape.
    LitOrObj(&'static [&'static str], Box<Shape>),
}

use Shape::{Any, Bool, Lit, Num, Str};

fn int() -> Shape {
    Shape::Int {
        positive: false,
        range: None,
    }
}
fn pos_int() -> Shape {
    Shape::Int {
        positive: true,
        range: None,
    }
}
fn arr(s: Shape) -> Shape {
    Shape::Arr(Box::new(s))
}
fn strs() -> Shape {
    arr(Str)
}
fn req(key: &'static str, s: Shape) -> (&'static str, bool, Shape) {
    (key, true, s)
}
fn opt(key: &'static str, s: Shape) -> (&'static str, bool, Shape) {
    (key, false, s)
}
fn obj(fields: Vec<(&'static str, bool, Shape)>) -> Shape {
    Shape::Obj(fields)
}

const STATUS_ROLES: &[&str] = &[
    "draft",
    "active",
    "blocked",
    "terminal",
    "terminal_done",
    "terminal_canceled",
    "default_open",
    "default_close",
    "default_cancel",
];
const FIELD_TYPES: &[&str] = &[
    "string",
    "number",
    "boolean",
    "string_array",
    "array",
    "object",
];
const FIELD_COMMANDS: &[&str] = &[
    "create",
    "update",
    "update_many",
    "list",
    "search",
    "calendar",
    "context",
];
const OFF_WARN_STRICT: &[&str] = &["off", "warn", "strict"];
/// `governance.duplicate_detection_mode` (pm's `config` help: `off|advisory|strict`).
pub const DUPLICATE_DETECTION_MODES: &[&str] = &["off", "advisory", "strict"];
const OFF_WARN_ENFORCE: &[&str] = &["off", "warn", "enforce"];
const SANDBOX: &[&str] = &["none", "restricted", "strict"];
const POLICY_LISTS: [&str; 13] = [
    "trusted_extensions",
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
];

fn item_type_definition() -> Shape {
    obj(vec![
        req("name", Str),
        opt("description", Str),
        opt("default_status", Str),
        opt("folder", Str),
        opt("aliases", strs()),
        opt("required_create_fields", strs()),
        opt("required_create_repeatables", strs()),
        opt(
            "options",
            arr(obj(vec![
                req("key", Str),
                req("values", strs()),
                opt("required", Bool),
                opt("aliases", strs()),
                opt("description", Str),
            ])),
        ),
        opt(
            "command_option_policies",
            arr(obj(vec![
                req("command", Lit(&["create", "update"])),
                req("option", Str),
                opt("required", Bool),
                opt("visible", Bool),
                opt("enabled", Bool),
            ])),
        ),
    ])
}

fn schema_block() -> Shape {
    let status = obj(vec![
        req("id", Str),
        opt("aliases", strs()),
        opt("roles", arr(Lit(STATUS_ROLES))),
        opt("description", Str),
        opt("order", Num),
    ]);
    let field = obj(vec![
        req("key", Str),
        opt("metadata_key", Str),
        opt("front_matter_key", Str),
        opt("cli_flag", Str),
        opt("cli_aliases", strs()),
        opt("description", Str),
        opt("type", Lit(FIELD_TYPES)),
        opt("commands", arr(Lit(FIELD_COMMANDS))),
        opt("repeatable", Bool),
        opt("required", Bool),
        opt("required_on_create", Bool),
        opt("required_types", strs()),
        opt("allow_unset", Bool),
        opt("value_schema", Any),
    ]);
    let workflow_keys = super::super::schema::WORKFLOW_KEYS;
    obj(vec![
        opt("version", int()),
        opt(
            "files",
            obj(["types", "statuses", "fields", "workflows"]
                .into_iter()
                .map(|k| opt(k, Str))
                .collect()),
        ),
        opt("statuses", arr(status)),
        opt("fields", arr(field)),
        opt(
            "workflow",
            obj(workflow_keys.into_iter().map(|k| opt(k, Str)).collect()),
        ),
        opt(
            "type_workflows",
            arr(obj(vec![
                req("type", Str),
                req("allowed_transitions", arr(arr(Str))),
            ])),
        ),
        opt("unknown_field_policy", Lit(&["allow", "warn", "reject"])),
    ])
}

fn extension_policy() -> Shape {
    let mut fields = vec![
        opt("mode", Lit(OFF_WARN_ENFORCE)),
        opt("trust_mode", Lit(OFF_WARN_ENFORCE)),
        opt(
            "pm_max_version_exceeded_mode",
            Shape::LitOrObj(
                &["block", "warn"],
                Box::new(obj(vec![
                    opt("global", Lit(&["block", "warn"])),
                    opt("project", Lit(&["block", "warn"])),
                ])),
            ),
        ),
        opt("require_provenance", Bool),
        opt("default_sandbox_profile", Lit(SANDBOX)),
    ];
    fields.extend(POLICY_LISTS.iter().map(|k| opt(k, strs())));
    let mut override_fields = vec![
        req("name", Str),
        opt("disabled", Bool),
        opt("require_trusted", Bool),
        opt("require_provenance", Bool),
        opt("sandbox_profile", Lit(SANDBOX)),
    ];
    override_fields.extend(POLICY_LISTS[3..].iter().map(|k| opt(k, strs())));
    fields.push(opt("extension_overrides", arr(obj(override_fields))));
    obj(fields)
}

/// Returns the legal domain of an inclusive `u64` range as an `Int` shape.
fn int_in(range: std::ops::RangeInclusive<u64>) -> Shape {
    Shape::Int {
        positive: false,
        range: Some((*range.start() as f64, *range.end() as f64)),
    }
}

/// Returns the shape of a whole settings.json document.
pub(super) fn settings_shape() -> Shape {
    obj(vec![
        req("version", int()),
        req("id_prefix", Str),
        opt(
            "ids",
            obj(vec![req(
                "token_length",
                Shape::Int {
                    positive: true,
                    range: Some((4.0, 12.0)),
                },
            )]),
        ),
        req("author_default", Str),
        opt(
            "agent_identity",
            obj(vec![
                opt("probes_enabled", Bool),
                opt("identity_vocabulary", Any),
                opt("harness_signals", Any),
            ]),
        ),
        opt(
            "mutation_guard",
            obj(vec![
                opt("require_attributed_author", Bool),
                opt("secret_guard", Lit(&["off", "advise", "block"])),
                opt("stale_in_progress_hours", Num),
            ]),
        ),
        opt("item_format", Lit(&["toon", "json_markdown"])),
        req(
            "locks",
            obj(vec![
                req("ttl_seconds", int_in(super::LOCK_TTL_SECONDS_RANGE)),
                opt("wait_ms", int_in(0..=super::LOCK_WAIT_MS_MAX)),
            ]),
        ),
        opt("checkpoints", obj(vec![opt("retention_days", pos_int())])),
        opt(
            "limits",
            obj(vec![opt(
                "item_max_bytes",
                int_in(super::ITEM_MAX_BYTES_RANGE),
            )]),
        ),
        req(
            "output",
            obj(vec![req("default_format", Lit(&["toon", "json"]))]),
        ),
        opt("ux", obj(vec![opt("deprecation_hints", Bool)])),
        opt(
            "history",
            obj(vec![
                req("missing_stream", Lit(&["auto_create", "strict_error"])),
                opt(
                    "compact_policy",
                    obj(vec![
                        opt("enabled", Bool),
                        opt("max_entries", pos_int()),
                        opt("trigger", Lit(&["health_warn", "auto"])),
                    ]),
                ),
            ]),
        ),
        opt(
            "validation",
            obj(vec![
                req("sprint_release_format", Lit(&["warn", "strict_error"])),
                opt("parent_reference", Lit(&["warn", "strict_error"])),
                opt("metadata_profile", Lit(&["core", "strict", "custom"])),
                opt("metadata_required_fields", strs()),
                opt("lifecycle_stale_blocker_reason_patterns", strs()),
                opt("lifecycle_closure_like_blocked_reason_patterns", strs()),
                opt("lifecycle_closure_like_resolution_patterns", strs()),
                opt("lifecycle_closure_like_actual_result_patterns", strs()),
                opt(
                    "estimate_defaults_by_type",
                    Shape::Record(Box::new(pos_int())),
                ),
            ]),
        ),
        opt(
            "governance",
            obj(vec![
                opt("preset", Lit(&["minimal", "default", "strict", "custom"])),
                opt("ownership_enforcement", Lit(&["none", "warn", "strict"])),
                opt("create_mode_default", Lit(&["progressive", "strict"])),
                opt("close_validation_default", Lit(OFF_WARN_STRICT)),
                opt("require_close_reason", Bool),
                opt("parent_reference", Lit(&["warn", "strict_error"])),
                opt("metadata_profile", Lit(&["core", "strict", "custom"])),
                opt("force_required_for_stale_lock", Bool),
                opt("create_default_type", Str),
                opt("workflow_enforcement", Lit(OFF_WARN_STRICT)),
                opt("duplicate_detection_mode", Lit(DUPLICATE_DETECTION_MODES)),
                opt("duplicate_detection_threshold", Num),
                opt("duplicate_detection_limit", pos_int()),
            ]),
        ),
        opt("workflow", obj(vec![req("definition_of_done", strs())])),
        opt("testing", obj(vec![req("record_results_to_items", Bool)])),
        opt(
            "telemetry",
            obj(vec![
                req("enabled", Bool),
                opt("first_run_prompt_completed", Bool),
                opt("capture_level", Lit(&["minimal", "redacted", "max"])),
                opt("endpoint", Str),
                opt("installation_id", Str),
                opt("retention_days", pos_int()),
            ]),
        ),
        opt(
            "agent_guidance",
            obj(vec![
                opt("prompt_completed", Bool),
                opt("declined", Bool),
                opt("declined_at", Str),
                opt("template_version", pos_int()),
                opt("last_checked_files", strs()),
            ]),
        ),
        opt(
            "item_types",
            obj(vec![req("definitions", arr(item_type_definition()))]),
        ),
        opt("schema", schema_block()),
        opt(
            "context",
            obj(vec![
                opt("default_depth", Lit(&["brief", "standard", "deep"])),
                opt("activity_limit", pos_int()),
                opt("stale_threshold_days", pos_int()),
                opt(
                    "sections",
                    obj([
                        "hierarchy",
                        "activity",
                        "progress",
                        "recently_created",
                        "unparented",
                        "blockers",
                        "files",
                        "workload",
                        "staleness",
                        "tests",
                    ]
                    .into_iter()
                    .map(|k| opt(k, Bool))
                    .collect()),
                ),
            ]),
        ),
        req(
            "extensions",
            obj(vec![
                req("enabled", strs()),
                req("disabled", strs()),
                opt("policy", extension_policy()),
            ]),
        ),
        req(
            "search",
            obj(vec![
                req("score_threshold", Num),
                opt("hybrid_semantic_weight", Num),
                req("max_results", int()),
                req("embedding_model", Str),
                opt("embedding_corpus_max_characters", Num),
                req("embedding_batch_size", int()),
                opt("embedding_timeout_ms", int()),
                req("scanner_max_batch_retries", int()),
                opt("provider", Str),
                opt("corpus_fields", strs()),
                opt("bm25", obj(vec![opt("k1", Num), opt("b", Num)])),
                opt(
                    "mutation_refresh_policy",
                    Lit(&["cache_only", "semantic_configured", "semantic_auto"]),
                ),
                opt(
                    "query_expansion",
                    obj(vec![opt("enabled", Bool), opt("provider", Str)]),
                ),
                opt(
                    "rerank",
                    obj(vec![
                        opt("enabled", Bool),
                        opt("model", Str),
                        opt("top_k", pos_int()),
                    ]),
                ),
            ]),
        ),
        req(
            "providers",
            obj(vec![
                req(
                    "openai",
                    obj(vec![
                        req("base_url", Str),
                        req("api_key", Str),
                        req("model", Str),
                    ]),
                ),
                req("ollama", obj(vec![req("base_url", Str), req("model", Str)])),
            ]),
        ),
        req(
            "vector_store",
            obj(vec![
                opt("adapter", Str),
                opt("collection_name", Str),
                req("qdrant", obj(vec![req("url", Str), req("api_key", Str)])),
                req("lancedb", obj(vec![req("path", Str)])),
            ]),
        ),
    ])
}
