//! The `lifecycle` check: active items with closure-like text, active items under a terminal
//! parent, stale blocker context (`--check-stale-blockers`), ordering-dependency cycles among
//! active items, and hierarchy integrity (parent cycles, cardinality, divergence).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::hierarchy::{analyze, cyclic_components, sample_path};
use super::items::{CheckItem, capped, sorted_unique};
use super::{CheckName, Outcome, Scope};
use crate::collate::locale_compare;

/// Dependency kinds that order work (a cycle of them can never finish).
const ORDERING_KINDS: [&str; 2] = ["blocks", "blocked_by"];

/// A list of settings patterns, trimmed, lower-cased, deduplicated and sorted, and whether it
/// equals the built-in default.
struct Patterns {
    values: Vec<String>,
    source: &'static str,
}

fn patterns(scope: &Scope<'_>, key: &str, defaults: &[&str]) -> Patterns {
    let normalize = |values: Vec<String>| {
        sorted_unique(
            values
                .into_iter()
                .map(|v| v.trim().to_lowercase())
                .filter(|v| !v.is_empty())
                .collect(),
        )
    };
    let configured = scope
        .view
        .settings()
        .effective()
        .get("validation")
        .and_then(|v| v.get(key))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    let values = normalize(configured);
    let default = normalize(defaults.iter().map(|s| s.to_string()).collect());
    let source = if values == default {
        "default"
    } else {
        "settings"
    };
    Patterns { values, source }
}

/// Extracts `<prefix>-…` ids mentioned in free text (definition of ready), lower-cased.
fn mentioned_ids(text: &str, prefix: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let needle = format!("{}-", prefix.trim_end_matches('-'));
    let bytes = lower.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(pos) = lower[from..].find(&needle) {
        let start = from + pos;
        let before_ok = start == 0 || {
            let b = bytes[start - 1];
            !(b.is_ascii_alphanumeric() || b == b'-')
        };
        let mut end = start + needle.len();
        while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'-') {
            end += 1;
        }
        if before_ok && end > start + needle.len() && bytes[start + needle.len()] != b'-' {
            out.push(lower[start..end].to_string());
        }
        from = end.max(start + 1);
    }
    sorted_unique(out)
}

/// The `lifecycle` check.
pub(crate) fn lifecycle(scope: &Scope<'_>, stale_blockers: bool) -> Outcome {
    let stale = patterns(
        scope,
        "lifecycle_stale_blocker_reason_patterns",
        &[
            "no active blocker",
            "ready for planned execution sequencing",
            "work completed",
            "work is closed",
        ],
    );
    let closure = [
        (
            "blocked_reason",
            patterns(
                scope,
                "lifecycle_closure_like_blocked_reason_patterns",
                &["no active blocker because work is closed", "work is closed"],
            ),
        ),
        (
            "resolution",
            patterns(
                scope,
                "lifecycle_closure_like_resolution_patterns",
                &[
                    "closed with implementation evidence",
                    "closed with verification evidence",
                    "work completed and recorded",
                    "work is closed",
                ],
            ),
        ),
        (
            "actual_result",
            patterns(
                scope,
                "lifecycle_closure_like_actual_result_patterns",
                &[
                    "closed and recorded",
                    "work completed",
                    "work completed and recorded",
                ],
            ),
        ),
    ];
    let by_lower: BTreeMap<String, &CheckItem> = scope
        .items
        .iter()
        .map(|i| (i.id.to_lowercase(), i))
        .collect();
    let statuses = &scope.view.schema().statuses;
    let blocked_status = statuses.blocked_status().unwrap_or("blocked");
    let active: Vec<&CheckItem> = scope.items.iter().filter(|i| !i.terminal).collect();
    let mut closure_rows = Vec::new();
    let mut parent_rows = Vec::new();
    let mut stale_rows = Vec::new();
    for item in &active {
        let mut fields: Vec<&str> = closure
            .iter()
            .filter(|(field, p)| {
                item.meaningful(field).is_some_and(|v| {
                    let v = v.to_lowercase();
                    p.values.iter().any(|pat| v.contains(pat.as_str()))
                })
            })
            .map(|(field, _)| *field)
            .collect();
        fields.sort_by(|a, b| locale_compare(a, b));
        if !fields.is_empty() {
            closure_rows.push(format!("{}:{}", item.id, fields.join(",")));
        }
        if let Some(parent) = item
            .meaningful("parent")
            .and_then(|p| by_lower.get(&p.to_lowercase()))
            && parent.terminal
        {
            parent_rows.push(format!("{}:{}:{}", item.id, parent.id, parent.status));
        }
        if stale_blockers {
            let reasons = stale_reasons(item, blocked_status, &stale.values);
            if !reasons.is_empty() {
                stale_rows.push(format!("{}:{}:{}", item.id, item.status, reasons.join(",")));
            }
        }
    }
    let prefix = scope.view.settings().id_prefix();
    let cycles = dependency_cycles(&active, &prefix);
    let hierarchy = analyze(scope.items);
    let count =
        |rows: &[(String, bool)], legacy: bool| rows.iter().filter(|r| r.1 == legacy).count();
    let active_cycles = hierarchy.cycles.iter().filter(|c| !c.1).count();
    let legacy_cycles = hierarchy.cycles.len() - active_cycles;
    let (active_card, legacy_card) = (
        count(&hierarchy.cardinality, false),
        count(&hierarchy.cardinality, true),
    );
    let (active_div, legacy_div) = (
        count(&hierarchy.divergence, false),
        count(&hierarchy.divergence, true),
    );
    let mut warnings = Vec::new();
    let mut warn = |token: &str, n: usize| {
        if n > 0 {
            warnings.push(format!("{token}:{n}"));
        }
    };
    warn(
        "validate_lifecycle_active_closure_like_metadata",
        closure_rows.len(),
    );
    warn(
        "validate_lifecycle_active_terminal_parent",
        parent_rows.len(),
    );
    warn("validate_lifecycle_stale_blockers", stale_rows.len());
    warn("validate_lifecycle_dependency_cycles", cycles.count);
    warn("validate_hierarchy_parent_cycle", active_cycles);
    warn("validate_hierarchy_cardinality_violation", active_card);
    warn("validate_hierarchy_parent_divergence", active_div);
    warn("validate_legacy_hierarchy_parent_cycle", legacy_cycles);
    warn(
        "validate_legacy_hierarchy_cardinality_violation",
        legacy_card,
    );
    warn("validate_legacy_hierarchy_parent_divergence", legacy_div);
    let limit = scope.limit;
    let closure_list = capped(closure_rows.clone(), limit);
    let parent_list = capped(parent_rows.clone(), limit);
    let stale_list = capped(stale_rows.clone(), limit);
    let cycle_ids = capped(cycles.item_ids.clone(), limit);
    let cycle_paths = capped(cycles.sample_paths, limit);
    let parent_cycle_ids = sorted_unique(
        hierarchy
            .cycles
            .iter()
            .flat_map(|c| c.0.iter().cloned())
            .collect(),
    );
    let parent_cycle_count = parent_cycle_ids.len();
    let parent_cycle_ids = capped(parent_cycle_ids, limit);
    let parent_paths = capped(
        hierarchy
            .cycles
            .iter()
            .map(|c| sample_path(&c.0, &hierarchy.graph))
            .collect::<Vec<_>>(),
        limit,
    );
    let rows = |r: &[(String, bool)]| r.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    let card_list = capped(rows(&hierarchy.cardinality), limit);
    let div_list = capped(rows(&hierarchy.divergence), limit);
    let details = json!({
        "checked_active_items": active.len(),
        "active_closure_like_metadata_items": closure_rows.len(),
        "active_closure_like_metadata_rows": closure_list.values,
        "active_closure_like_metadata_rows_truncated": closure_list.truncated,
        "active_terminal_parent_items": parent_rows.len(),
        "active_terminal_parent_rows": parent_list.values,
        "active_terminal_parent_rows_truncated": parent_list.truncated,
        "stale_blocker_checks_enabled": stale_blockers,
        "stale_blocker_items": stale_rows.len(),
        "stale_blocker_rows": stale_list.values,
        "stale_blocker_rows_truncated": stale_list.truncated,
        "dependency_cycle_severity_policy": "warn",
        "dependency_cycle_count": cycles.count,
        "dependency_cycle_item_count": cycles.item_ids.len(),
        "dependency_cycle_item_ids": cycle_ids.values,
        "dependency_cycle_item_ids_truncated": cycle_ids.truncated,
        "dependency_cycle_sample_paths": cycle_paths.values,
        "dependency_cycle_sample_paths_truncated": cycle_paths.truncated,
        "parent_cycle_severity_policy": "warn",
        "parent_cycle_count": hierarchy.cycles.len(),
        "active_parent_cycle_count": active_cycles,
        "legacy_parent_cycle_count": legacy_cycles,
        "parent_cycle_item_count": parent_cycle_count,
        "parent_cycle_item_ids": parent_cycle_ids.values,
        "parent_cycle_item_ids_truncated": parent_cycle_ids.truncated,
        "parent_cycle_sample_paths": parent_paths.values,
        "parent_cycle_sample_paths_truncated": parent_paths.truncated,
        "hierarchy_cardinality_violation_count": hierarchy.cardinality.len(),
        "active_hierarchy_cardinality_violation_count": active_card,
        "legacy_hierarchy_cardinality_violation_count": legacy_card,
        "hierarchy_cardinality_violation_rows": card_list.values,
        "hierarchy_cardinality_violation_rows_truncated": card_list.truncated,
        "hierarchy_parent_divergence_count": hierarchy.divergence.len(),
        "active_hierarchy_parent_divergence_count": active_div,
        "legacy_hierarchy_parent_divergence_count": legacy_div,
        "hierarchy_parent_divergence_rows": div_list.values,
        "hierarchy_parent_divergence_rows_truncated": div_list.truncated,
        "stale_blocker_reason_patterns": stale.values,
        "stale_blocker_reason_pattern_source": stale.source,
        "closure_like_blocked_reason_patterns": closure[0].1.values,
        "closure_like_blocked_reason_pattern_source": closure[0].1.source,
        "closure_like_resolution_patterns": closure[1].1.values,
        "closure_like_resolution_pattern_source": closure[1].1.source,
        "closure_like_actual_result_patterns": closure[2].1.values,
        "closure_like_actual_result_pattern_source": closure[2].1.source,
    });
    Outcome::new(CheckName::Lifecycle, false, details, warnings)
}

/// Why an item's blocker context is stale (sorted reason tokens).
fn stale_reasons(item: &CheckItem, blocked_status: &str, patterns: &[String]) -> Vec<&'static str> {
    let blocked_by = item.meaningful("blocked_by");
    let reason = item.meaningful("blocked_reason").map(str::to_lowercase);
    let mut reasons = Vec::new();
    if item.canonical_status != blocked_status {
        if blocked_by.is_some() {
            reasons.push("non_blocked_status_has_blocked_by");
        }
        if reason.is_some() {
            reasons.push("non_blocked_status_has_blocked_reason");
        }
    } else {
        if blocked_by.is_none() && reason.is_none() {
            reasons.push("blocked_status_missing_blocker_context");
        }
        if let Some(reason) = &reason {
            if reason.contains("no active blocker") {
                reasons.push("blocked_status_reason_reports_no_active_blocker");
            }
            if patterns.iter().any(|p| reason.contains(p.as_str())) {
                reasons.push("blocked_status_reason_matches_stale_pattern");
            }
        }
    }
    reasons.sort_by(|a, b| locale_compare(a, b));
    reasons
}

/// Ordering-dependency cycles among active items.
struct Cycles {
    count: usize,
    item_ids: Vec<String>,
    sample_paths: Vec<String>,
}

fn dependency_cycles(active: &[&CheckItem], prefix: &str) -> Cycles {
    let ids: BTreeSet<&str> = active.iter().map(|i| i.id.as_str()).collect();
    let mut graph: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for item in active {
        let mut edges: Vec<String> = Vec::new();
        if let Some(b) = item.meaningful("blocked_by")
            && ids.contains(b)
        {
            edges.push(b.to_string());
        }
        for (target, kind) in item.dependencies() {
            if ORDERING_KINDS.contains(&kind) && ids.contains(target) {
                edges.push(target.to_string());
            }
        }
        if let Some(text) = item.meaningful("definition_of_ready") {
            edges.extend(
                mentioned_ids(text, prefix)
                    .into_iter()
                    .filter(|id| ids.contains(id.as_str())),
            );
        }
        graph.insert(item.id.clone(), sorted_unique(edges));
    }
    let mut nodes: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    nodes.sort_by(|a, b| locale_compare(a, b));
    let components = cyclic_components(&nodes, &graph);
    Cycles {
        count: components.len(),
        item_ids: sorted_unique(components.iter().flatten().cloned().collect()),
        sample_paths: components.iter().map(|c| sample_path(c, &graph)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_prefixed_ids() {
        assert_eq!(
            mentioned_ids("after PM-ab1 and pm-cd2, not xpm-zz or pm-", "pm-"),
            ["pm-ab1", "pm-cd2"]
        );
    }
}
