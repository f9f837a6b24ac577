//! Caller-carried read sessions (`--output-session`): strict state parsing, references for items
//! already served, and the `read_session` receipt with the next state to carry.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::codec::safe_non_negative;
use super::rows::{self, RowContract};
use crate::failure::{CliError, ReadOutputRefusal, Result};
use crate::render::budget::ESTIMATOR;

/// The most item ids a session carries.
pub const MAX_SEEN_ITEMS: usize = 10_000;
/// Sessions smaller than this cannot hold a useful read (and `exhausted` turns true below it).
pub const MIN_SESSION_TOKENS: u64 = 256;

const STATE_KEYS: &[&str] = &[
    "id",
    "seen_item_ids",
    "spent_tokens",
    "token_budget",
    "version",
];

/// A validated session state (`{version: 1, id, token_budget, spent_tokens, seen_item_ids}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionState {
    /// The caller's request-group id.
    pub id: String,
    /// Tokens the whole group may spend.
    pub token_budget: u64,
    /// Tokens already spent.
    pub spent_tokens: u64,
    /// Items already served in full, deduplicated and sorted.
    pub seen_item_ids: Vec<String>,
}

/// Returns whether `s` is a portable identifier: an ASCII letter or digit, then up to `max - 1`
/// letters, digits, `.`, `_`, `:` or `-`.
fn portable(s: &str, max: usize) -> bool {
    let bytes = s.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= max
        && bytes[0].is_ascii_alphanumeric()
        && bytes[1..]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(b))
}

impl SessionState {
    /// Parses and validates `--output-session` JSON.
    ///
    /// # Errors
    /// `invalid_read_output_session` with pm's reason: not JSON, not an object, an unknown
    /// field (the first in sorted order), a bad version, id, token_budget, spent_tokens or
    /// seen_item_ids.
    pub fn parse(raw: &str) -> Result<SessionState> {
        let value: Value = serde_json::from_str(raw).map_err(|_| {
            CliError::refused(
                ReadOutputRefusal::InvalidSession,
                "--output-session",
                raw,
                format!("--output-session {}", "must be a valid JSON object."),
            )
        })?;
        let Value::Object(state) = value else {
            return Err(CliError::refused(
                ReadOutputRefusal::InvalidSession,
                "--output-session",
                raw,
                format!("--output-session {}", "must be a JSON object."),
            ));
        };
        let mut unknown: Vec<&String> = state
            .keys()
            .filter(|k| !STATE_KEYS.contains(&k.as_str()))
            .collect();
        unknown.sort_by(|a, b| pm_engine::json::cmp_utf16(a, b));
        if let Some(first) = unknown.first() {
            return Err(CliError::refused(
                ReadOutputRefusal::InvalidSession,
                "--output-session",
                raw,
                format!(
                    "--output-session {}",
                    &format!("contains unknown field \"{first}\".")
                ),
            ));
        }
        if state.get("version").and_then(safe_non_negative) != Some(1) {
            return Err(CliError::refused(
                ReadOutputRefusal::InvalidSession,
                "--output-session",
                raw,
                format!("--output-session {}", "version must equal 1."),
            ));
        }
        let id = state
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| portable(id, 64))
            .ok_or_else(|| {
                CliError::refused(
                    ReadOutputRefusal::InvalidSession,
                    "--output-session",
                    raw,
                    format!(
                        "--output-session {}",
                        "id must be 1-64 portable identifier characters."
                    ),
                )
            })?;
        let token_budget = state
            .get("token_budget")
            .and_then(safe_non_negative)
            .filter(|b| *b >= MIN_SESSION_TOKENS)
            .ok_or_else(|| {
                CliError::refused(
                    ReadOutputRefusal::InvalidSession,
                    "--output-session",
                    raw,
                    format!(
                        "--output-session {}",
                        "token_budget must be a safe integer of at least 256."
                    ),
                )
            })?;
        let spent_tokens = state
            .get("spent_tokens")
            .and_then(safe_non_negative)
            .filter(|s| *s <= token_budget)
            .ok_or_else(|| {
                CliError::refused(ReadOutputRefusal::InvalidSession, "--output-session", raw, format!("--output-session {}", "spent_tokens must be a non-negative safe integer no larger than token_budget."))
            })?;
        let seen_error = || {
            CliError::refused(
                ReadOutputRefusal::InvalidSession,
                "--output-session",
                raw,
                format!(
                    "--output-session {}",
                    "seen_item_ids must contain at most 10000 portable item identifiers."
                ),
            )
        };
        let seen = state
            .get("seen_item_ids")
            .and_then(Value::as_array)
            .filter(|ids| ids.len() <= MAX_SEEN_ITEMS)
            .ok_or_else(seen_error)?;
        let mut seen_item_ids = BTreeSet::new();
        for entry in seen {
            let id = entry
                .as_str()
                .filter(|id| portable(id, 128))
                .ok_or_else(seen_error)?;
            seen_item_ids.insert(id.to_owned());
        }
        Ok(SessionState {
            id: id.to_owned(),
            token_budget,
            spent_tokens,
            seen_item_ids: seen_item_ids.into_iter().collect(),
        })
    }

    /// Returns the tokens this call may still spend.
    pub fn remaining(&self) -> u64 {
        self.token_budget.saturating_sub(self.spent_tokens)
    }

    /// Returns the state as the JSON object a caller passes back.
    pub fn to_json(&self) -> Value {
        json!({
            "version": 1,
            "id": self.id,
            "token_budget": self.token_budget,
            "spent_tokens": self.spent_tokens,
            "seen_item_ids": self.seen_item_ids,
        })
    }
}

/// Returns the item identity of a row: `id`, else `item_id`, else `item.id`.
fn row_identity(row: &Value) -> Option<&str> {
    let row = row.as_object()?;
    row.get("id")
        .and_then(Value::as_str)
        .or_else(|| row.get("item_id").and_then(Value::as_str))
        .or_else(|| row.get("item")?.get("id")?.as_str())
}

/// Replaces every row whose item was already served with `{id, context_ref}`.
pub fn apply_references(
    env: &mut Map<String, Value>,
    contract: &RowContract,
    state: &SessionState,
) {
    rows::for_each_row_mut(env, contract, |row| {
        let Some(id) = row_identity(row) else { return };
        if state
            .seen_item_ids
            .binary_search_by(|s| s.as_str().cmp(id))
            .is_ok()
        {
            let id = id.to_owned();
            let context_ref = format!("session:{}:{id}", state.id);
            *row = json!({"id": id, "context_ref": context_ref});
        }
    });
}

/// What a final envelope delivers to a session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Items served in full.
    pub delivered: BTreeSet<String>,
    /// Rows printed as references.
    pub suppressed: usize,
}

/// Counts the rows of `env` served in full and as references.
pub fn tally(env: &Map<String, Value>, contract: &RowContract) -> Tally {
    let mut tally = Tally::default();
    rows::for_each_row(env, contract, |row| {
        if row.get("context_ref").is_some_and(Value::is_string) {
            tally.suppressed += 1;
        } else if let Some(id) = row_identity(row) {
            tally.delivered.insert(id.to_owned());
        }
    });
    tally
}

/// Returns the `read_session` receipt for a call whose whole envelope measures `spent`.
pub fn receipt(state: &SessionState, tally: &Tally, spent: u64) -> Value {
    let charged = state.remaining().min(spent);
    let total = (state.spent_tokens + charged).min(state.token_budget);
    let remaining = state.token_budget.saturating_sub(total);
    let room = MAX_SEEN_ITEMS.saturating_sub(state.seen_item_ids.len());
    let new_ids: Vec<&String> = tally
        .delivered
        .iter()
        .filter(|id| state.seen_item_ids.binary_search(id).is_err())
        .collect();
    let carried: BTreeSet<String> = state
        .seen_item_ids
        .iter()
        .cloned()
        .chain(new_ids.iter().take(room).map(|s| (*s).clone()))
        .collect();
    let overflow = new_ids.len().saturating_sub(room);
    let mut r = Map::new();
    r.insert("contract_version".into(), json!(1));
    r.insert("id".into(), json!(state.id));
    r.insert("measurement_scope".into(), json!("complete_read_envelope"));
    r.insert("estimator".into(), json!(ESTIMATOR));
    r.insert("token_budget".into(), json!(state.token_budget));
    r.insert("spent_before_tokens".into(), json!(state.spent_tokens));
    r.insert("spent_this_call_tokens".into(), json!(spent));
    r.insert("charged_this_call_tokens".into(), json!(charged));
    r.insert("spent_total_tokens".into(), json!(total));
    r.insert("remaining_tokens".into(), json!(remaining));
    r.insert("exhausted".into(), json!(remaining < MIN_SESSION_TOKENS));
    r.insert("seen_before_count".into(), json!(state.seen_item_ids.len()));
    r.insert("new_item_count".into(), json!(tally.delivered.len()));
    if overflow > 0 {
        r.insert("seen_item_overflow_count".into(), json!(overflow));
    }
    r.insert("suppressed_repeat_count".into(), json!(tally.suppressed));
    r.insert(
        "reference_format".into(),
        json!("session:<session-id>:<item-id>"),
    );
    r.insert(
        "restore_reference_with".into(),
        json!("pm get <item-id> --brief"),
    );
    let next = SessionState {
        spent_tokens: total,
        seen_item_ids: carried.into_iter().collect(),
        ..state.clone()
    };
    r.insert("next_state".into(), next.to_json());
    Value::Object(r)
}

#[cfg(test)]
mod tests {
    use super::super::surface::Surface;
    use super::*;

    fn reason(raw: &str) -> String {
        SessionState::parse(raw)
            .err()
            .map(|e| format!("{}: {e}", e.code()))
            .unwrap_or_default()
    }

    #[test]
    fn parse_validates_in_pm_order() {
        let ok = r#"{"version":1,"id":"s-1","token_budget":4000,"spent_tokens":10,"seen_item_ids":["pm-b","pm-a","pm-b"]}"#;
        let state = SessionState::parse(ok);
        assert_eq!(
            state.ok().map(|s| s.seen_item_ids),
            Some(vec!["pm-a".to_owned(), "pm-b".to_owned()])
        );
        for (raw, message) in [
            ("{", "must be a valid JSON object."),
            ("[]", "must be a JSON object."),
            ("null", "must be a JSON object."),
            (
                r#"{"zeta":1,"alpha":2,"version":1}"#,
                "contains unknown field \"alpha\".",
            ),
            (r#"{"version":2}"#, "version must equal 1."),
            (
                r#"{"version":1,"id":"-x"}"#,
                "id must be 1-64 portable identifier characters.",
            ),
            (
                &format!(r#"{{"version":1,"id":"{}"}}"#, "a".repeat(65)),
                "id must be 1-64 portable identifier characters.",
            ),
            (
                r#"{"version":1,"id":"s","token_budget":255}"#,
                "token_budget must be a safe integer of at least 256.",
            ),
            (
                r#"{"version":1,"id":"s","token_budget":300,"spent_tokens":301}"#,
                "spent_tokens must be a non-negative safe integer no larger than token_budget.",
            ),
            (
                r#"{"version":1,"id":"s","token_budget":300,"spent_tokens":0,"seen_item_ids":["a b"]}"#,
                "seen_item_ids must contain at most 10000 portable item identifiers.",
            ),
            (
                r#"{"version":1,"id":"s","token_budget":300,"spent_tokens":0}"#,
                "seen_item_ids must contain at most 10000 portable item identifiers.",
            ),
        ] {
            assert_eq!(
                reason(raw),
                format!("invalid_read_output_session: --output-session {message}"),
                "{raw}"
            );
        }
        let many: Vec<String> = (0..=MAX_SEEN_ITEMS).map(|i| format!("\"i{i}\"")).collect();
        let raw = format!(
            r#"{{"version":1,"id":"s","token_budget":300,"spent_tokens":0,"seen_item_ids":[{}]}}"#,
            many.join(",")
        );
        assert!(reason(&raw).ends_with("at most 10000 portable item identifiers."));
    }

    #[test]
    fn references_and_receipt_add_up() {
        let state = SessionState {
            id: "orient".into(),
            token_budget: 1000,
            spent_tokens: 900,
            seen_item_ids: vec!["pm-a".into()],
        };
        let mut env = match json!({"items": [{"id": "pm-a", "title": "A"}, {"id": "pm-b"}, {"item": {"id": "pm-c"}}]})
        {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        let contract = RowContract::derive(Surface::Search, &env);
        apply_references(&mut env, &contract, &state);
        assert_eq!(
            env["items"][0],
            json!({"id": "pm-a", "context_ref": "session:orient:pm-a"})
        );
        let t = tally(&env, &contract);
        assert_eq!(t.suppressed, 1);
        assert_eq!(t.delivered.len(), 2);
        let r = receipt(&state, &t, 150);
        assert_eq!(r["charged_this_call_tokens"], 100);
        assert_eq!(r["spent_total_tokens"], 1000);
        assert_eq!(r["remaining_tokens"], 0);
        assert_eq!(r["exhausted"], true);
        assert_eq!(r["new_item_count"], 2);
        assert_eq!(
            r["next_state"]["seen_item_ids"],
            json!(["pm-a", "pm-b", "pm-c"])
        );
        assert_eq!(r["next_state"]["spent_tokens"], 1000);
        assert!(r.get("seen_item_overflow_count").is_none());
    }

    #[test]
    fn carried_ids_stop_at_capacity() {
        let seen: Vec<String> = (0..MAX_SEEN_ITEMS - 1)
            .map(|i| format!("s{i:05}"))
            .collect();
        let state = SessionState {
            id: "s".into(),
            token_budget: 1000,
            spent_tokens: 0,
            seen_item_ids: seen,
        };
        let tally = Tally {
            delivered: ["n2", "n1", "n3"].iter().map(|s| (*s).to_owned()).collect(),
            suppressed: 0,
        };
        let r = receipt(&state, &tally, 10);
        assert_eq!(r["seen_item_overflow_count"], 2);
        let carried = r["next_state"]["seen_item_ids"].as_array().map(Vec::len);
        assert_eq!(carried, Some(MAX_SEEN_ITEMS));
        assert!(
            r["next_state"]["seen_item_ids"]
                .as_array()
                .is_some_and(|a| a.contains(&json!("n1")) && !a.contains(&json!("n2")))
        );
    }
}
