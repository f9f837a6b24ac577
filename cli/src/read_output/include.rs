//! The include dimension after execution: field selectors project rows or
//! root sections (`get` has its own vocabulary), and selectors that match nothing are refused.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::rows::{self, RowContract};
use super::surface::Surface;
use crate::failure::{CliError, ReadOutputRefusal, Result};

/// Envelope keys a root projection always keeps (they describe the result, not content).
pub(super) const ENVELOPE_KEYS: &[&str] = &[
    "applied_bound",
    "applied_limit",
    "budget_derived_limit",
    "budget_retention_policy",
    "completeness",
    "context_intent",
    "continuation_contract",
    "continuation_kind",
    "continuation_path",
    "count",
    "filters",
    "has_more",
    "next_cursor",
    "now",
    "omission_receipt",
    "projection",
    "row_contract",
    "sorting",
    "source",
    "total",
    "truncated",
];

/// Root keys that are receipts, never `get` sections.
pub(super) const RECEIPT_KEYS: &[&str] =
    &["read_output", "read_session", "output_budget_truncation"];

fn first_segment(selector: &str) -> &str {
    selector.split('.').next().unwrap_or(selector)
}

fn refuse(message: String, first: &str, allowed: Vec<String>) -> CliError {
    CliError::ReadOutput {
        kind: ReadOutputRefusal::UnmatchedSelector,
        message,
        flag: "--output-include",
        value: Some(first.to_owned()),
        allowed: allowed.into(),
        suggestion: None,
    }
}

/// Applies field `selectors` to `env` (nothing happens without selectors); `flag` is the
/// option they came from (`--output-include`, or `get --fields`), named in refusals.
///
/// # Errors
/// `command_failed` when no selector matches any field of any returned row (or, for `get`, an
/// unknown selector), with the legal domain; `invalid_argument_value` when `get` mixes `item`
/// with `item.<field>` selectors.
pub fn apply(
    surface: Surface,
    env: &mut Map<String, Value>,
    contract: &RowContract,
    selectors: &[String],
    flag: &'static str,
) -> Result<()> {
    if selectors.is_empty() {
        return Ok(());
    }
    if surface == Surface::Get {
        return super::include_get::apply(env, selectors, flag);
    }
    let row_paths: Vec<String> = contract.rows.iter().map(|r| r.path.to_string()).collect();
    let qualified: Vec<String> = selectors
        .iter()
        .flat_map(|s| {
            row_paths
                .iter()
                .filter_map(move |p| s.strip_prefix(p.as_str())?.strip_prefix('.'))
                .map(str::to_owned)
        })
        .collect();
    let selects_root = selectors.iter().any(|s| {
        env.contains_key(first_segment(s))
            && !row_paths.iter().any(|p| {
                s.strip_prefix(p.as_str())
                    .is_some_and(|r| r.starts_with('.'))
            })
    });
    if !row_paths.is_empty() && (!selects_root || !qualified.is_empty()) {
        let row_selectors = if qualified.is_empty() {
            selectors.to_vec()
        } else {
            qualified
        };
        return project_rows(surface, env, contract, &row_selectors);
    }
    env.retain(|key, _| {
        ENVELOPE_KEYS.contains(&key.as_str()) || selectors.iter().any(|s| first_segment(s) == key)
    });
    Ok(())
}

fn populated_rows(env: &Map<String, Value>, contract: &RowContract) -> (usize, BTreeSet<String>) {
    let mut populated = 0;
    let mut fields = BTreeSet::new();
    rows::for_each_row(env, contract, |row| {
        if let Some(m) = row.as_object().filter(|m| !m.is_empty()) {
            populated += 1;
            fields.extend(m.keys().cloned());
        }
    });
    (populated, fields)
}

fn project_rows(
    surface: Surface,
    env: &mut Map<String, Value>,
    contract: &RowContract,
    selectors: &[String],
) -> Result<()> {
    let (before, fields) = populated_rows(env, contract);
    let keep: BTreeSet<&str> = selectors.iter().map(|s| first_segment(s)).collect();
    rows::for_each_row_mut(env, contract, |row| {
        if let Value::Object(m) = row {
            m.retain(|k, _| keep.contains(k.as_str()));
        }
    });
    if before == 0 || populated_rows(env, contract).0 > 0 {
        return Ok(());
    }
    let modes = surface.projection_modes();
    let domain = if modes.is_empty() {
        format!(
            " The {} surface declares no projection modes; name row fields instead.",
            surface.name()
        )
    } else {
        format!(
            " Declared {} projection modes: {}.",
            surface.name(),
            modes.join(", ")
        )
    };
    let allowed = modes
        .iter()
        .map(|m| (*m).to_owned())
        .chain(fields)
        .collect();
    Err(refuse(
        format!(
            "Unknown --output-include selector(s) for {}: {}. No selector matched any returned row field.{domain}",
            surface.name(),
            selectors.join(", ")
        ),
        &selectors[0],
        allowed,
    ))
}

pub(super) fn sorted_locale(mut v: Vec<String>) -> Vec<String> {
    v.sort_by(|a, b| pm_engine::collate::locale_compare(a, b));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn run(surface: Surface, env: &mut Map<String, Value>, selectors: &[&str]) -> Result<()> {
        let contract = RowContract::derive(surface, env);
        let selectors: Vec<String> = selectors.iter().map(|s| (*s).to_owned()).collect();
        apply(surface, env, &contract, &selectors, "--output-include")
    }

    fn list() -> Map<String, Value> {
        obj(json!({
            "items": [{"id": "a", "title": "A", "status": "open"}, {"id": "b", "title": "B", "status": "open"}],
            "count": 2, "projection": {"mode": "brief"}, "now": "t", "summary": {"x": 1}
        }))
    }

    #[test]
    fn row_projection_keeps_selected_fields_in_row_order() -> Result<()> {
        let mut env = list();
        run(Surface::List, &mut env, &["title", "id"])?;
        assert_eq!(
            env["items"],
            json!([{"id": "a", "title": "A"}, {"id": "b", "title": "B"}])
        );
        assert_eq!(env["summary"], json!({"x": 1}));
        let mut env = list();
        run(Surface::List, &mut env, &["items.status"])?;
        assert_eq!(
            env["items"],
            json!([{"status": "open"}, {"status": "open"}])
        );
        Ok(())
    }

    #[test]
    fn root_projection_keeps_named_sections_and_envelope() -> Result<()> {
        let mut env = list();
        run(Surface::List, &mut env, &["summary"])?;
        assert_eq!(
            Value::Object(env),
            json!({"count": 2, "projection": {"mode": "brief"}, "now": "t", "summary": {"x": 1}})
        );
        Ok(())
    }

    #[test]
    fn unmatched_selectors_are_refused_with_the_domain() {
        let mut env = list();
        let err = run(Surface::List, &mut env, &["nope", "zip"]).err();
        let Some(CliError::ReadOutput {
            message,
            value,
            allowed,
            ..
        }) = &err
        else {
            panic!("expected a refusal, got {err:?}");
        };
        assert_eq!(
            message,
            "Unknown --output-include selector(s) for list: nope, zip. No selector matched any returned row field. Declared list projection modes: brief, compact, full."
        );
        assert_eq!(value.as_deref(), Some("nope"));
        assert_eq!(
            &**allowed,
            ["brief", "compact", "full", "id", "status", "title"]
        );
        assert_eq!(err.map(|e| e.code().as_str()), Some("command_failed"));
        let mut ctx =
            obj(json!({"sections_included": [], "high_level": [{"id": "a"}], "low_level": []}));
        let err = run(Surface::Context, &mut ctx, &["zz"])
            .err()
            .map(|e| e.to_string());
        assert!(err.is_some_and(|m| m.ends_with(
            "The context surface declares no projection modes; name row fields instead."
        )));
        // No populated rows: nothing to refuse.
        let mut empty = obj(json!({"items": [], "projection": {}}));
        assert!(run(Surface::List, &mut empty, &["nope"]).is_ok());
    }

    #[test]
    fn single_rows_are_projected_like_rows() -> Result<()> {
        let mut env = obj(
            json!({"recommended": {"id": "a", "title": "A", "rank": 1}, "ready": [{"id": "b", "rank": 2}]}),
        );
        run(Surface::Next, &mut env, &["id", "rank"])?;
        assert_eq!(env["recommended"], json!({"id": "a", "rank": 1}));
        Ok(())
    }
}
