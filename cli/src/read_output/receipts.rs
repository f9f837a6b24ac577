//! Receipts the read-output layer attaches: the derived
//! `omission_receipt`, the `read_output` receipt and the `applied_bound` of an output limit.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::provenance::{Binding, PRECEDENCE, Resolved, Source};
use super::surface::Surface;

/// The context sections `omission_receipt` declares, with the depth that restores each.
const CONTEXT_GROUPS: &[(&str, &str)] = &[
    ("hierarchy", "--depth standard"),
    ("activity", "--depth standard"),
    ("progress", "--depth standard"),
    ("blockers", "--depth standard"),
    ("recently_created", "--depth standard"),
    ("unparented", "--depth standard"),
    ("files", "--depth deep"),
    ("workload", "--depth standard"),
    ("staleness", "--depth deep"),
    ("tests", "--depth deep"),
    ("workspace_memory", "--depth deep"),
];

/// `get` groups held on the item (body and the eight collections); the rest are root sections.
const GET_ITEM_GROUPS: &[&str] = &[
    "body",
    "comments",
    "notes",
    "learnings",
    "files",
    "tests",
    "docs",
    "reminders",
    "events",
];
const GET_ROOT_GROUPS: &[&str] = &["children", "claim_state", "linked", "schedule"];

/// Returns an omission receipt: `omitted` groups as `{name, restore_with}`.
pub fn omission_receipt(omitted: Vec<(String, String)>) -> Value {
    let groups: Vec<Value> = omitted
        .into_iter()
        .map(|(name, restore_with)| json!({"name": name, "restore_with": restore_with}))
        .collect();
    json!({
        "has_omissions": !groups.is_empty(),
        "omitted_field_group_count": groups.len(),
        "omitted_field_groups": groups,
    })
}

fn declared_minus_included(declared: &[(&str, &str)], included: &BTreeSet<&str>) -> Value {
    omission_receipt(
        declared
            .iter()
            .filter(|(name, _)| !included.contains(name))
            .map(|(n, r)| ((*n).to_owned(), (*r).to_owned()))
            .collect(),
    )
}

/// Derives the omission receipt of a result that carries none, or `None`
/// when its surface declares none. `material` lists the `get` groups that hold data (the
/// command knows; without it every group is declared).
pub fn derive_omission_receipt(
    surface: Surface,
    env: &Map<String, Value>,
    material: Option<&[String]>,
) -> Option<Value> {
    if let Some(receipt) = declared_projection_receipt(env) {
        return Some(receipt);
    }
    let mode = env
        .get("projection")
        .filter(|p| p.is_object())
        .map(|p| p.get("mode").and_then(Value::as_str));
    match surface {
        Surface::Context => {
            let included: BTreeSet<&str> = env
                .get("sections_included")?
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .collect();
            Some(declared_minus_included(CONTEXT_GROUPS, &included))
        }
        Surface::Get => get_receipt(env, material),
        Surface::List | Surface::Search => match mode {
            Some(mode) => {
                let included: BTreeSet<&str> = (mode == Some("full"))
                    .then_some("full_item_fields")
                    .into_iter()
                    .collect();
                Some(declared_minus_included(
                    &[("full_item_fields", "--full")],
                    &included,
                ))
            }
            None if surface == Surface::Search => Some(declared_minus_included(
                &[("projection_metadata", "--full")],
                &BTreeSet::new(),
            )),
            None => None,
        },
        Surface::Health => match mode {
            None => Some(omission_receipt(Vec::new())),
            Some(None) => None,
            Some(Some(mode)) => {
                let included: BTreeSet<&str> = (mode == "full")
                    .then_some("full_check_details")
                    .into_iter()
                    .collect();
                Some(declared_minus_included(
                    &[("full_check_details", "--full")],
                    &included,
                ))
            }
        },
        Surface::Contracts => {
            let summary = env.get("selected")?.get("summary")?.as_bool()?;
            let included: BTreeSet<&str> = (!summary)
                .then_some("full_contract_catalog")
                .into_iter()
                .collect();
            Some(declared_minus_included(
                &[("full_contract_catalog", "--full")],
                &included,
            ))
        }
        _ => None,
    }
}

/// The receipt of a self-describing `projection {mode, declared_field_groups,
/// included_field_groups}` (validate, deps, graph), when well formed.
fn declared_projection_receipt(env: &Map<String, Value>) -> Option<Value> {
    let projection = env.get("projection")?.as_object()?;
    projection
        .get("mode")?
        .as_str()
        .filter(|m| !m.trim().is_empty())?;
    let declared = projection.get("declared_field_groups")?.as_array()?;
    let included = projection.get("included_field_groups")?.as_array()?;
    let mut groups: Vec<(&str, &str)> = Vec::with_capacity(declared.len());
    for g in declared {
        let name = g.get("name")?.as_str().filter(|s| !s.trim().is_empty())?;
        let restore = g
            .get("restore_with")?
            .as_str()
            .filter(|s| !s.trim().is_empty())?;
        if groups.iter().any(|(n, _)| *n == name) {
            return None;
        }
        groups.push((name, restore));
    }
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for name in included {
        let name = name.as_str()?;
        if !names.insert(name) || !groups.iter().any(|(n, _)| *n == name) {
            return None;
        }
    }
    Some(declared_minus_included(&groups, &names))
}

fn get_receipt(env: &Map<String, Value>, material: Option<&[String]>) -> Option<Value> {
    let item = env.get("item")?.as_object()?;
    let present = |name: &str| {
        if GET_ITEM_GROUPS.contains(&name) {
            item.contains_key(name)
        } else {
            env.contains_key(name)
        }
    };
    let omitted = GET_ITEM_GROUPS
        .iter()
        .chain(GET_ROOT_GROUPS)
        .filter(|name| material.is_none_or(|m| m.iter().any(|g| g == *name)) || present(name))
        .filter(|name| !present(name))
        .map(|name| ((*name).to_owned(), format!("--fields {name}")))
        .collect();
    Some(omission_receipt(omitted))
}

/// Returns `applied_bound` for an output limit of `n` rows.
pub fn applied_bound(n: u64) -> Value {
    json!({"kind": "output_limit", "source": "explicit", "value": n})
}

/// The facts a `read_output` receipt reports.
#[derive(Clone, Debug, Default)]
pub struct ReceiptFacts {
    /// The fixed-point estimate of the printed envelope.
    pub estimated_tokens: u64,
    /// Whether the envelope fits the binding ceiling.
    pub within_budget: bool,
    /// Whether long strings were shortened.
    pub strings_compacted: bool,
    /// Whether collections were shortened by the budget.
    pub rows_compacted: bool,
    /// Whether the result was replaced by the omission document.
    pub result_omitted: bool,
    /// `get` fell back to its brief projection.
    pub applied_brief_depth: bool,
    /// Every collection the budget shortened, sorted.
    pub compacted_row_paths: Vec<String>,
    /// The estimate of the most compacted useful result, on omission without a session.
    pub omitted_result_estimated_tokens: Option<u64>,
}

/// Returns the `read_output` receipt. `minimal` gives the omission document's receipt, whose
/// alias and hint lists are empty.
pub fn read_output_receipt(
    surface: Surface,
    resolved: &Resolved,
    binding: Option<Binding>,
    facts: &ReceiptFacts,
    minimal: bool,
) -> Value {
    let mut r = Map::new();
    r.insert("contract_version".into(), json!(1));
    r.insert("command".into(), json!(surface.name()));
    r.insert("requested_dimensions".into(), json!(resolved.requested()));
    if let Some(b) = binding.filter(|b| b.source == Some(Source::Default)) {
        r.insert("budget_source".into(), json!("default"));
        r.insert("budget_tokens".into(), json!(b.tokens));
    }
    r.insert("precedence".into(), json!(PRECEDENCE));
    if !resolved.canonical_options_used.is_empty() {
        r.insert(
            "canonical_options_used".into(),
            json!(resolved.canonical_options_used),
        );
    }
    let (aliases, hints): (&[&str], &[String]) = if minimal {
        (&[], &[])
    } else {
        (&resolved.legacy_aliases_used, &resolved.migration_hints)
    };
    r.insert("legacy_aliases_used".into(), json!(aliases));
    r.insert("migration_hints".into(), json!(hints));
    r.insert("estimated_tokens".into(), json!(facts.estimated_tokens));
    r.insert("within_budget".into(), json!(facts.within_budget));
    r.insert("strings_compacted".into(), json!(facts.strings_compacted));
    r.insert("rows_compacted".into(), json!(facts.rows_compacted));
    r.insert("result_omitted".into(), json!(facts.result_omitted));
    if facts.applied_brief_depth {
        r.insert("applied_depth".into(), json!("brief"));
        r.insert("degradation_reason".into(), json!("output_budget_reached"));
    }
    if facts.rows_compacted {
        r.insert(
            "compacted_row_paths".into(),
            json!(facts.compacted_row_paths),
        );
    }
    if let Some(n) = facts.omitted_result_estimated_tokens {
        r.insert("omitted_result_estimated_tokens".into(), json!(n));
    }
    Value::Object(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn names(receipt: Option<Value>) -> Vec<String> {
        receipt
            .and_then(|r| r.get("omitted_field_groups").cloned())
            .and_then(|g| g.as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|g| g["name"].as_str().map(str::to_owned))
            .collect()
    }

    #[test]
    fn list_and_search() {
        let brief = obj(json!({"items": [], "projection": {"mode": "brief", "fields": ["id"]}}));
        assert_eq!(
            derive_omission_receipt(Surface::List, &brief, None),
            Some(
                json!({"has_omissions": true, "omitted_field_group_count": 1,
                "omitted_field_groups": [{"name": "full_item_fields", "restore_with": "--full"}]})
            )
        );
        let full = obj(json!({"items": [], "projection": {"mode": "full", "fields": null}}));
        assert_eq!(
            derive_omission_receipt(Surface::List, &full, None),
            Some(
                json!({"has_omissions": false, "omitted_field_group_count": 0, "omitted_field_groups": []})
            )
        );
        let compact_search = obj(json!({"items": []}));
        assert_eq!(
            names(derive_omission_receipt(
                Surface::Search,
                &compact_search,
                None
            )),
            ["projection_metadata"]
        );
        assert_eq!(
            derive_omission_receipt(Surface::List, &compact_search, None),
            None
        );
        assert_eq!(
            derive_omission_receipt(Surface::Next, &compact_search, None),
            None
        );
    }

    #[test]
    fn declared_projection_and_context_and_health() {
        let validate = obj(json!({"projection": {"mode": "counts",
            "declared_field_groups": [{"name": "diagnostic_rows", "restore_with": "--full"}],
            "included_field_groups": []}}));
        assert_eq!(
            names(derive_omission_receipt(Surface::Validate, &validate, None)),
            ["diagnostic_rows"]
        );
        let context = obj(
            json!({"sections_included": ["hierarchy", "activity", "progress",
            "recently_created", "unparented", "workload"]}),
        );
        assert_eq!(
            names(derive_omission_receipt(Surface::Context, &context, None)),
            [
                "blockers",
                "files",
                "staleness",
                "tests",
                "workspace_memory"
            ]
        );
        let health = obj(json!({"checks": []}));
        assert_eq!(
            names(derive_omission_receipt(Surface::Health, &health, None)),
            Vec::<String>::new()
        );
        let summary = obj(json!({"checks": [], "projection": {"mode": "summary"}}));
        assert_eq!(
            names(derive_omission_receipt(Surface::Health, &summary, None)),
            ["full_check_details"]
        );
        let contracts = obj(json!({"selected": {"summary": true}}));
        assert_eq!(
            names(derive_omission_receipt(
                Surface::Contracts,
                &contracts,
                None
            )),
            ["full_contract_catalog"]
        );
    }

    /// An assigned task with one comment, one note and one file at standard depth: comments,
    /// notes, files and children are omitted (as pm-cli reports for such an item).
    #[test]
    fn get_declares_material_groups() {
        let get =
            obj(json!({"item": {"id": "pm-1", "body": "text"}, "linked": {}, "claim_state": {}}));
        let material: Vec<String> = [
            "body",
            "comments",
            "notes",
            "files",
            "children",
            "claim_state",
            "linked",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        assert_eq!(
            names(derive_omission_receipt(Surface::Get, &get, Some(&material))),
            ["comments", "notes", "files", "children"]
        );
        assert_eq!(
            names(derive_omission_receipt(Surface::Get, &get, None)).len(),
            10
        );
    }
}
