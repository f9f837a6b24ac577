//! The item metadata key tables: write order (`ITEM_METADATA_KEY_ORDER`) and the field classes
//! that canonicalization applies. This is the only definition of these lists.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::LazyLock;

/// pm's `ITEM_METADATA_KEY_ORDER`: known metadata keys in the order they are written.
///
/// Keys outside this list follow, sorted with `localeCompare`; in TOON files `body` comes last.
pub const ITEM_METADATA_KEY_ORDER: &[&str] = &[
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
    "dependencies",
    "comments",
    "notes",
    "learnings",
    "files",
    "tests",
    "test_runs",
    "docs",
    "close_reason",
    "duplicate_of",
    "plan_mode",
    "plan_scope",
    "plan_harness",
    "plan_resume_context",
    "plan_validation",
    "plan_decisions",
    "plan_discoveries",
    "plan_steps",
];

/// Required metadata fields: a read fails without them.
pub const REQUIRED_FIELDS: &[&str] = &[
    "id",
    "title",
    "description",
    "type",
    "status",
    "priority",
    "tags",
    "created_at",
    "updated_at",
];

/// Fields copied unchanged by canonicalization (including a `null` value).
pub const VERBATIM_FIELDS: &[&str] = &[
    "id",
    "title",
    "description",
    "type",
    "priority",
    "created_at",
    "updated_at",
    "estimated_minutes",
    "order",
    "regression",
];

/// String fields that are trimmed (JS `trim`) and dropped when empty or not a string.
pub const TRIMMED_FIELDS: &[&str] = &[
    "source_type",
    "assignee",
    "claim_principal",
    "source_owner",
    "definition_of_ready",
    "goal",
    "objective",
    "value",
    "impact",
    "outcome",
    "why_now",
    "parent",
    "reviewer",
    "sprint",
    "release",
    "blocked_by",
    "blocked_reason",
    "unblock_note",
    "reporter",
    "environment",
    "repro_steps",
    "resolution",
    "expected_result",
    "actual_result",
    "affected_version",
    "fixed_version",
    "component",
    "customer_impact",
    "plan_mode",
    "plan_scope",
    "plan_harness",
    "plan_resume_context",
];

/// Fields kept verbatim unless JS-falsy (`value || undefined`): `""`, `0`, `false`, `null`.
pub const FALSY_DROPPED_FIELDS: &[&str] = &[
    "author",
    "deadline",
    "closed_at",
    "completed_at",
    "close_reason",
];

/// Fields kept verbatim unless `null` (`value ?? undefined`); `""` survives.
pub const NULL_DROPPED_FIELDS: &[&str] = &["acceptance_criteria", "design", "external_ref", "risk"];

/// Keys that are never copied from a source object (JavaScript prototype pollution guards).
pub const FORBIDDEN_KEYS: &[&str] = &["__proto__", "constructor", "prototype"];

/// Key order of a rebuilt dependency entry.
pub const DEPENDENCY_KEY_ORDER: &[&str; 6] = &[
    "id",
    "kind",
    "created_at",
    "author",
    "source_kind",
    "author_source",
];

/// Key order of a rebuilt linked test entry (`tests`).
pub const TEST_KEY_ORDER: &[&str; 16] = &[
    "command",
    "path",
    "scope",
    "timeout_seconds",
    "pm_context_mode",
    "env_set",
    "env_clear",
    "shared_host_safe",
    "assert_stdout_contains",
    "assert_stdout_regex",
    "assert_stderr_contains",
    "assert_stderr_regex",
    "assert_stdout_min_lines",
    "assert_json_field_equals",
    "assert_json_field_gte",
    "note",
];

/// Key order of a rebuilt test-run summary (`test_runs`).
pub const TEST_RUN_KEY_ORDER: &[&str] = &[
    "run_id",
    "kind",
    "status",
    "started_at",
    "finished_at",
    "recorded_at",
    "attempt",
    "resumed_from",
    "passed",
    "failed",
    "skipped",
    "items",
    "linked_tests",
    "fail_on_skipped_triggered",
    "measurements",
    "executions",
];

/// Built-in status ids (used when no status registry is given).
pub const BUILTIN_STATUSES: &[&str] = &[
    "draft",
    "open",
    "in_progress",
    "blocked",
    "closed",
    "canceled",
];

/// Built-in status aliases, applied after trimming and lowercasing.
pub const BUILTIN_STATUS_ALIASES: &[(&str, &str)] =
    &[("in-progress", "in_progress"), ("cancelled", "canceled")];

/// Textual `confidence` values (`med` is accepted as `medium`).
pub const CONFIDENCE_TEXT_VALUES: &[&str] = &["low", "medium", "high"];

/// `severity` values (`med` is accepted as `medium`).
pub const SEVERITY_VALUES: &[&str] = &["low", "medium", "high", "critical"];

/// Linked-test `pm_context_mode` values.
pub const PM_CONTEXT_MODES: &[&str] = &["schema", "tracker", "auto"];

/// Test-run status values; anything else canonicalizes to `failed`.
pub const TEST_RUN_STATUSES: &[&str] = &["passed", "failed", "stopped", "canceled"];

/// Plan step status values; steps with another status are dropped.
pub const PLAN_STEP_STATUSES: &[&str] = &[
    "pending",
    "in_progress",
    "completed",
    "blocked",
    "skipped",
    "superseded",
];

/// Recurrence frequencies.
pub const RECURRENCE_FREQUENCIES: &[&str] = &["daily", "weekly", "monthly", "yearly"];

/// Recurrence weekdays in canonical (Monday-first) order.
pub const WEEKDAYS: &[&str] = &["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/// How canonicalization treats a static metadata key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldRule {
    /// Copied unchanged, `null` included ([`VERBATIM_FIELDS`], and `duplicate_of`).
    Verbatim,
    /// Trimmed; dropped when empty or not a string ([`TRIMMED_FIELDS`]).
    Trimmed,
    /// Dropped when JS-falsy ([`FALSY_DROPPED_FIELDS`]).
    FalsyDropped,
    /// Dropped when `null` ([`NULL_DROPPED_FIELDS`]).
    NullDropped,
    /// A field with its own rule (status, tags, collections, …).
    Special,
}

/// Rank and rule of a static key.
#[derive(Clone, Copy)]
struct KeyInfo {
    rank: usize,
    rule: FieldRule,
}

/// FNV-1a: key lookups happen for every metadata key of every item, and these keys are
/// fixed, short and trusted, so SipHash's DoS resistance buys nothing here.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

static KEY_INFO: LazyLock<HashMap<&'static str, KeyInfo, BuildHasherDefault<Fnv>>> =
    LazyLock::new(|| {
        let classes: [(&[&str], FieldRule); 5] = [
            (VERBATIM_FIELDS, FieldRule::Verbatim),
            (TRIMMED_FIELDS, FieldRule::Trimmed),
            (FALSY_DROPPED_FIELDS, FieldRule::FalsyDropped),
            (NULL_DROPPED_FIELDS, FieldRule::NullDropped),
            (&["duplicate_of"], FieldRule::Verbatim),
        ];
        ITEM_METADATA_KEY_ORDER
            .iter()
            .enumerate()
            .map(|(rank, key)| {
                let rule = classes
                    .iter()
                    .find(|(keys, _)| keys.contains(key))
                    .map_or(FieldRule::Special, |(_, rule)| *rule);
                (*key, KeyInfo { rank, rule })
            })
            .collect()
    });

/// Returns the canonicalization rule of a static key, or `None` for keys outside the table.
pub fn field_rule(key: &str) -> Option<FieldRule> {
    KEY_INFO.get(key).map(|i| i.rule)
}

/// Returns the position of `key` in [`ITEM_METADATA_KEY_ORDER`], or `None` for other keys.
pub fn key_rank(key: &str) -> Option<usize> {
    KEY_INFO.get(key).map(|i| i.rank)
}

/// Returns true if `key` is one of pm's static metadata keys (those of `ITEM_METADATA_KEY_ORDER`).
pub fn is_static_key(key: &str) -> bool {
    KEY_INFO.contains_key(key)
}

/// Returns true if canonicalization builds `key` itself, so a source value of that key is never
/// copied verbatim as an unknown field. Every static key except `duplicate_of` is built.
pub fn is_normalized_key(key: &str) -> bool {
    key != "duplicate_of" && is_static_key(key)
}

/// Returns true for keys never copied from a source object (`__proto__`, `constructor`, `prototype`).
pub fn is_forbidden_key(key: &str) -> bool {
    FORBIDDEN_KEYS.contains(&key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn key_order_has_no_duplicates() {
        let set: HashSet<_> = ITEM_METADATA_KEY_ORDER.iter().collect();
        assert_eq!(set.len(), ITEM_METADATA_KEY_ORDER.len());
        assert_eq!(ITEM_METADATA_KEY_ORDER.len(), 72);
    }

    #[test]
    fn every_static_key_has_exactly_one_rule() {
        let special = [
            "pm_format_version",
            "type_options",
            "status",
            "tags",
            "confidence",
            "severity",
            "duplicate_of",
            "reminders",
            "events",
            "dependencies",
            "comments",
            "notes",
            "learnings",
            "files",
            "tests",
            "test_runs",
            "docs",
            "plan_validation",
            "plan_decisions",
            "plan_discoveries",
            "plan_steps",
        ];
        for key in ITEM_METADATA_KEY_ORDER {
            let rules = [
                VERBATIM_FIELDS.contains(key),
                TRIMMED_FIELDS.contains(key),
                FALSY_DROPPED_FIELDS.contains(key),
                NULL_DROPPED_FIELDS.contains(key),
                special.contains(key),
            ];
            assert_eq!(rules.iter().filter(|r| **r).count(), 1, "{key}");
        }
    }

    #[test]
    fn ranks_follow_the_table() {
        assert_eq!(key_rank("id"), Some(0));
        assert_eq!(key_rank("plan_steps"), Some(71));
        assert_eq!(key_rank("body"), None);
        assert!(is_static_key("duplicate_of"));
        assert!(!is_normalized_key("duplicate_of"));
        assert!(is_normalized_key("close_reason"));
        assert_eq!(field_rule("goal"), Some(FieldRule::Trimmed));
        assert_eq!(field_rule("duplicate_of"), Some(FieldRule::Verbatim));
        assert_eq!(field_rule("tags"), Some(FieldRule::Special));
        assert_eq!(field_rule("custom"), None);
    }
}
