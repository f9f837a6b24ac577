//! `get`'s include vocabulary: selectors name item fields (`title`,
//! `item.title`), the whole `item`, root sections (`linked`, `children`) or keys of a section
//! (`linked.files`, `claim_state.assignee`); the omission receipt lists everything left out.

use std::collections::{BTreeMap, BTreeSet};

use pm_engine::read::FIELD_GROUPS;
use serde_json::{Map, Value};

use super::include::{ENVELOPE_KEYS, RECEIPT_KEYS, sorted_locale};
use super::receipts::omission_receipt;
use crate::failure::{CliError, ReadOutputRefusal, Result};

/// Projects the `get` envelope to `selectors` given with `flag`.
///
/// # Errors
/// `command_failed` for an unknown selector (with the legal domain); `invalid_argument_value`
/// when `item` is mixed with `item.<field>` selectors.
pub fn apply(env: &mut Map<String, Value>, selectors: &[String], flag: &'static str) -> Result<()> {
    let item = env
        .get("item")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let item_fields = sorted_locale(item.keys().cloned().collect());
    let sections = sorted_locale(
        env.keys()
            .filter(|k| {
                *k != "item"
                    && !ENVELOPE_KEYS.contains(&k.as_str())
                    && !RECEIPT_KEYS.contains(&k.as_str())
            })
            .cloned()
            .collect(),
    );
    let section_keys: Vec<String> = sections
        .iter()
        .filter_map(|s| Some((s, env.get(s)?.as_object()?)))
        .flat_map(|(s, map)| map.keys().map(move |k| format!("{s}.{k}")))
        .collect();
    // The field groups `get` computes on request are legal even where this item has none.
    let requestable = FIELD_GROUPS.iter().flat_map(|(name, item_level)| {
        let qualified = item_level.then(|| format!("item.{name}"));
        std::iter::once((*name).to_owned()).chain(qualified)
    });
    let mut valid: Vec<String> = Vec::new();
    for selector in item_fields
        .iter()
        .cloned()
        .chain(std::iter::once("item".to_owned()))
        .chain(item_fields.iter().map(|f| format!("item.{f}")))
        .chain(sections.iter().cloned())
        .chain(section_keys)
        .chain(requestable)
    {
        if !valid.contains(&selector) {
            valid.push(selector);
        }
    }
    let unknown: Vec<&String> = selectors.iter().filter(|s| !valid.contains(s)).collect();
    if let Some(first) = unknown.first() {
        let listed: Vec<&str> = unknown.iter().map(|s| s.as_str()).collect();
        return Err(CliError::ReadOutput {
            kind: ReadOutputRefusal::UnmatchedSelector,
            message: format!(
                "Unknown {flag} selector(s) for get: {}. Valid selectors: {}.",
                listed.join(", "),
                valid.join(", ")
            ),
            flag,
            value: Some((*first).clone()),
            allowed: valid.clone().into(),
            suggestion: None,
        });
    }
    let full_item = selectors.iter().any(|s| s == "item");
    let mut item_selectors: Vec<&str> = Vec::new();
    for s in selectors {
        let field = s
            .strip_prefix("item.")
            .or_else(|| item_fields.contains(s).then_some(s.as_str()));
        if let Some(f) = field.filter(|f| !item_selectors.contains(f)) {
            item_selectors.push(f);
        }
    }
    if full_item && !item_selectors.is_empty() {
        return Err(CliError::ReadOutput {
            kind: ReadOutputRefusal::InvalidValue,
            message: format!(
                "{flag} cannot mix a full item with projected item fields; use item or item.<field>, not both."
            ),
            flag,
            value: Some(selectors.join(",")),
            allowed: Box::default(),
            suggestion: None,
        });
    }
    let chosen: BTreeSet<&str> = selectors
        .iter()
        .filter(|s| sections.contains(s))
        .map(String::as_str)
        .collect();

    // Keys picked inside a section that is not selected whole.
    let mut picked: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for s in selectors {
        if let Some((section, key)) = s.split_once('.')
            && section != "item"
            && sections.iter().any(|x| x == section)
            && !chosen.contains(section)
        {
            picked.entry(section).or_default().push(key);
        }
    }
    let mut omitted = inherited_omissions(env);
    if !full_item && item_selectors.is_empty() {
        omitted.push(("item".into(), "--output-include item".into()));
    } else if !full_item {
        omitted.extend(
            item_fields
                .iter()
                .filter(|f| !item_selectors.contains(&f.as_str()))
                .map(|f| (format!("item.{f}"), format!("--output-include item.{f}"))),
        );
    }
    for section in &sections {
        if chosen.contains(section.as_str()) {
            continue;
        }
        match picked.get(section.as_str()) {
            None => omitted.push((section.clone(), format!("--output-include {section}"))),
            Some(keys) => {
                let all = env.get(section).and_then(Value::as_object);
                omitted.extend(
                    all.into_iter()
                        .flat_map(Map::keys)
                        .filter(|k| !keys.contains(&k.as_str()))
                        .map(|k| {
                            let path = format!("{section}.{k}");
                            let restore = format!("--output-include {path}");
                            (path, restore)
                        }),
                );
            }
        }
    }
    let keep_item = full_item || !item_selectors.is_empty();
    env.retain(|key, _| {
        (key == "item" && keep_item)
            || ENVELOPE_KEYS.contains(&key.as_str())
            || RECEIPT_KEYS.contains(&key.as_str())
            || chosen.contains(key.as_str())
            || picked.contains_key(key.as_str())
    });
    if !full_item && let Some(Value::Object(item)) = env.get_mut("item") {
        item.retain(|k, _| item_selectors.contains(&k.as_str()));
    }
    for (section, keys) in &picked {
        if let Some(Value::Object(map)) = env.get_mut(*section) {
            map.retain(|k, _| keys.contains(&k.as_str()));
        }
    }
    env.insert("omission_receipt".into(), omission_receipt(omitted));
    Ok(())
}

/// The field groups the command itself already left out (its own omission receipt).
fn inherited_omissions(env: &Map<String, Value>) -> Vec<(String, String)> {
    env.get("omission_receipt")
        .and_then(|r| r.get("omitted_field_groups"))
        .and_then(Value::as_array)
        .map(|groups| {
            groups
                .iter()
                .filter_map(|g| {
                    Some((
                        g.get("name")?.as_str()?.to_owned(),
                        g.get("restore_with")?.as_str()?.to_owned(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn get() -> Map<String, Value> {
        match json!({
            "item": {"id": "pm-1", "title": "T", "status": "open", "body": "b"},
            "linked": {"files": [], "tests": [], "docs": []}, "claim_state": {"claimed": false},
            "omission_receipt": {"has_omissions": true, "omitted_field_group_count": 1,
                "omitted_field_groups": [{"name": "children", "restore_with": "--fields children"}]}
        }) {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn run(env: &mut Map<String, Value>, selectors: &[&str]) -> Result<()> {
        let selectors: Vec<String> = selectors.iter().map(|s| (*s).to_owned()).collect();
        apply(env, &selectors, "--output-include")
    }

    fn omitted(env: &Map<String, Value>) -> Vec<&str> {
        env["omission_receipt"]["omitted_field_groups"]
            .as_array()
            .map(|a| a.iter().filter_map(|g| g["name"].as_str()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn projects_item_fields_and_sections() -> Result<()> {
        let mut env = get();
        run(&mut env, &["title", "item.id", "linked"])?;
        assert_eq!(env["item"], json!({"id": "pm-1", "title": "T"}));
        assert!(env.contains_key("linked") && !env.contains_key("claim_state"));
        assert_eq!(
            omitted(&env),
            ["children", "item.body", "item.status", "claim_state"]
        );
        let mut env = get();
        run(&mut env, &["claim_state"])?;
        assert!(!env.contains_key("item"));
        assert_eq!(env["omission_receipt"]["omitted_field_group_count"], 3);
        Ok(())
    }

    #[test]
    fn projects_keys_inside_a_section() -> Result<()> {
        let mut env = get();
        run(&mut env, &["linked.files", "linked.docs"])?;
        assert_eq!(env["linked"], json!({"files": [], "docs": []}));
        assert_eq!(
            omitted(&env),
            ["children", "item", "claim_state", "linked.tests"]
        );
        // The whole section wins over one of its keys.
        let mut env = get();
        run(&mut env, &["linked", "linked.files"])?;
        assert_eq!(env["linked"], json!({"files": [], "tests": [], "docs": []}));
        Ok(())
    }

    #[test]
    fn refuses_unknown_and_mixed_selectors() {
        let mut env = get();
        let err = run(&mut env, &["nope"]).err().map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some(
                "Unknown --output-include selector(s) for get: nope. Valid selectors: body, id, status, title, item, item.body, item.id, item.status, item.title, claim_state, linked, claim_state.claimed, linked.files, linked.tests, linked.docs, comments, item.comments, notes, item.notes, learnings, item.learnings, files, item.files, tests, item.tests, docs, item.docs, reminders, item.reminders, events, item.events, children, schedule."
            )
        );
        let mut env = get();
        let err = apply(&mut env, &["zip".to_owned()], "--fields")
            .err()
            .map(|e| e.to_string());
        assert!(err.is_some_and(|m| m.starts_with("Unknown --fields selector(s) for get: zip.")));
        // A group computed on request but empty here (no schedule) is legal and absent.
        let mut env = get();
        assert!(run(&mut env, &["schedule", "title"]).is_ok());
        assert!(!env.contains_key("schedule"));
        let mut env = get();
        let err = run(&mut env, &["item", "title"]).err();
        assert_eq!(
            err.map(|e| e.code().as_str()),
            Some("invalid_argument_value")
        );
    }
}
