//! Merging a validated settings.json document over pm's defaults (after key-by-key validation):
//! two levels deep, `schema`/`item_types` replaced, governance resolved.

use super::defaults::defaults_tree;
use super::governance::{Governance, GovernancePreset};
use serde_json::{Map, Value};

/// Merges a validated document over the defaults; returns the effective tree and governance.
pub(super) fn merge(validated: &Map<String, Value>) -> (Map<String, Value>, Governance) {
    let mut effective = defaults_tree(GovernancePreset::Minimal);
    for (key, value) in validated {
        match key.as_str() {
            "governance" => {}
            "schema" | "item_types" => {
                effective.insert(key.clone(), value.clone());
            }
            _ => match (effective.get_mut(key), value) {
                (Some(Value::Object(base)), Value::Object(over)) => merge_two_levels(base, over),
                _ => {
                    effective.insert(key.clone(), value.clone());
                }
            },
        }
    }
    // A document without a `governance` block runs under preset `default`.
    let governance = Governance::resolve(validated.get("governance").and_then(Value::as_object));
    effective.insert("governance".into(), governance.to_effective_json());
    if let Some(Value::Object(validation)) = effective.get_mut("validation") {
        validation.insert(
            "parent_reference".into(),
            Value::String(governance.parent_reference.clone()),
        );
        validation.insert(
            "metadata_profile".into(),
            Value::String(governance.metadata_profile.clone()),
        );
    }
    (effective, governance)
}

fn merge_two_levels(base: &mut Map<String, Value>, over: &Map<String, Value>) {
    for (key, value) in over {
        match (base.get_mut(key), value) {
            (Some(Value::Object(inner)), Value::Object(over_inner)) => {
                for (k, v) in over_inner {
                    inner.insert(k.clone(), v.clone());
                }
            }
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}
