//! Fitting a read to its binding token budget (seed semantics): receipts and
//! disclosures are attached before every measurement of the exact printed bytes, long strings
//! are shortened, collections keep their largest fitting prefix, and nothing fitting means the
//! omission document.

use std::collections::{BTreeSet, HashSet};

use serde_json::{Map, Value, json};

use super::amount::set;
use super::continuation::ProducerCursor;
use super::cursor::OutputCursor;
use super::provenance::{Binding, Resolved};
use super::receipts::{ReceiptFacts, omission_receipt, read_output_receipt};
use super::request::Bound;
use super::rows::{self, RowContract, RowPath};
use super::session::{self, SessionState, Tally};
use super::surface::Surface;
use crate::failure::{CliError, ReadOutputRefusal, Result};
use crate::render::{Format, budget};

/// Strings longer than this many UTF-16 code units are shortened by budget compaction.
pub const MAX_STRING_UNITS: usize = 240;

/// Root keys budget string compaction leaves alone: receipts, cursors and disclosures.
const PROTECTED_KEYS: &[&str] = &[
    "context_intent",
    "continuation_contract",
    "continuation_kind",
    "next_cursor",
    "output_budget_truncation",
    "read_output",
    "read_session",
    "row_contract",
];

/// A continuation row collection as it stood before the layer cut it.
#[derive(Clone, Debug)]
pub struct CollectionSnapshot {
    /// Where it is.
    pub path: RowPath,
    /// Rows in the whole collection (the cursor's `n` on a continuation page).
    pub total: u64,
    /// Index of the first row present (the cursor's `o` on a continuation page, else 0).
    pub base: u64,
    /// Content fingerprint of the whole collection.
    pub fingerprint: String,
}

/// Everything fitting needs besides the envelope.
pub struct Plan<'a> {
    /// The surface.
    pub surface: Surface,
    /// The encoding that will be printed (and measured).
    pub format: Format,
    /// Resolved dimensions.
    pub resolved: &'a Resolved,
    /// The binding ceiling, if any.
    pub binding: Option<Binding>,
    /// The session, if any.
    pub session: Option<&'a SessionState>,
    /// The result's rows.
    pub contract: &'a RowContract,
    /// Continuation collections before any cut, in continuation order.
    pub collections: Vec<CollectionSnapshot>,
    /// The collection an `--output-cursor` continued.
    pub continued: Option<RowPath>,
    /// The producer cursor to rebase when `items` lose rows.
    pub producer: Option<ProducerCursor>,
    /// Length of `items` before the amount bound.
    pub items_before: Option<usize>,
    /// `has_more`, `truncated`, `next_cursor` and `applied_limit` as the envelope held them
    /// before receipts (absent keys are absent here).
    pub base_keys: Map<String, Value>,
    /// Whether a standard `get` may fall back to its brief projection.
    pub brief_fallback: bool,
    /// Rows a collection keeps at least (assurance: its non-passing assertions).
    pub minimum_rows: Vec<(RowPath, usize)>,
}

/// The outcome of fitting.
#[derive(Debug)]
pub enum Fitted {
    /// The (possibly shaped) result with its receipts.
    Result(Map<String, Value>),
    /// The omission document (exit 2).
    Omitted(Map<String, Value>),
}

#[derive(Default)]
struct Progress {
    strings_compacted: bool,
    brief: bool,
    compacted: BTreeSet<String>,
    measured_before: u64,
}

/// Keys the layer sets when it withholds rows, in the order it appends new ones.
pub const CONTINUATION_KEYS: [&str; 3] = ["has_more", "truncated", "next_cursor"];

/// Measures `env` as printed in `format`.
pub fn measure_map(env: &mut Map<String, Value>, format: Format) -> u64 {
    let value = Value::Object(std::mem::take(env));
    let tokens = budget::measure(&value, format);
    if let Value::Object(m) = value {
        *env = m;
    }
    tokens
}

/// The root keys a [`settle`] writer may rewrite: the receipts that carry the estimate.
const SETTLED_KEYS: [&str; 3] = ["read_output", "read_session", "context_intent"];

/// Writes `estimate` into every receipt of `env` via `write` until the printed size equals the
/// estimate it carries (at most 16 rounds); returns the measured size of the final text.
///
/// `write` may change only the [`SETTLED_KEYS`]. Root entries print independently of each
/// other in both encodings, so the rest of the document is measured once and every round
/// measures only the receipts.
pub fn settle(
    env: &mut Map<String, Value>,
    format: Format,
    mut write: impl FnMut(&mut Map<String, Value>, u64),
) -> u64 {
    let fixed = budget::RootSize::of(
        env.iter_mut()
            .filter(|(k, _)| !SETTLED_KEYS.contains(&k.as_str())),
        format,
    );
    let measure = |env: &mut Map<String, Value>| {
        let settled = env
            .iter_mut()
            .filter(|(k, _)| SETTLED_KEYS.contains(&k.as_str()));
        let tokens = fixed.plus(settled, format).tokens();
        debug_assert_eq!(
            tokens,
            budget::tokens_for_bytes(
                crate::render::encode(&Value::Object(env.clone()), format).len()
            ),
            "root entries print independently"
        );
        tokens
    };
    let mut guess = 0;
    for _ in 0..16 {
        write(env, guess);
        let measured = measure(env);
        if measured == guess {
            return measured;
        }
        guess = measured;
    }
    write(env, guess);
    measure(env)
}

/// Updates an intent receipt to the final estimate (unless its result was omitted).
pub fn write_intent_estimate(env: &mut Map<String, Value>, estimate: u64) {
    if let Some(Value::Object(intent)) = env.get_mut("context_intent")
        && intent.get("result_omitted") != Some(&Value::Bool(true))
    {
        let within = intent
            .get("token_budget")
            .and_then(Value::as_u64)
            .is_none_or(|b| estimate <= b);
        intent.insert("estimated_tokens".into(), json!(estimate));
        intent.insert("within_budget".into(), json!(within));
    }
}

/// Shortens every string longer than 240 UTF-16 code units (outside receipts) to its first 240
/// units plus `…`, never splitting a surrogate pair; returns whether any string changed.
pub fn compact_strings(env: &mut Map<String, Value>) -> bool {
    fn walk(value: &mut Value) -> bool {
        match value {
            Value::String(s) => {
                let Some(cut) = utf16_cut(s, MAX_STRING_UNITS) else {
                    return false;
                };
                s.truncate(cut);
                s.push('\u{2026}');
                true
            }
            Value::Array(a) => a.iter_mut().fold(false, |any, v| walk(v) | any),
            Value::Object(m) => m.values_mut().fold(false, |any, v| walk(v) | any),
            _ => false,
        }
    }
    env.iter_mut()
        .filter(|(k, _)| !PROTECTED_KEYS.contains(&k.as_str()))
        .fold(false, |any, (_, v)| walk(v) | any)
}

/// Returns the byte index where the first `units` UTF-16 code units of `s` end (backing off a
/// character that would be split), or `None` when `s` is not longer than `units`.
fn utf16_cut(s: &str, units: usize) -> Option<usize> {
    if s.len() <= units {
        return None;
    }
    let mut used = 0;
    for (i, c) in s.char_indices() {
        let width = c.len_utf16();
        if used + width > units {
            return Some(i);
        }
        used += width;
    }
    None
}

/// Returns the recovery budget of rule v1: base = max(binding + 1, measured), plus 25%,
/// rounded up to 100 tokens; `None` (unbounded) when an input is not positive.
pub fn recovery_budget(binding: u64, measured: u64) -> Option<u64> {
    if binding == 0 || measured == 0 {
        return None;
    }
    let base = (binding + 1).max(measured);
    let margin = base.checked_mul(5)?.div_ceil(4);
    let rounded = margin.div_ceil(100).checked_mul(100)?;
    (rounded <= 9_007_199_254_740_991).then_some(rounded)
}

impl Plan<'_> {
    /// Attaches receipts, measures, and compacts or omits the result as the budget requires.
    ///
    /// # Errors
    /// `invalid_read_output_session` when even the omission document exceeds the session's
    /// remaining allowance.
    pub fn fit(&self, mut env: Map<String, Value>) -> Result<Fitted> {
        let mut progress = Progress::default();
        let estimate = self.finalize(&mut env, &progress);
        let Some(budget) = self.binding.map(|b| b.tokens) else {
            return Ok(Fitted::Result(env));
        };
        if estimate <= budget {
            return Ok(Fitted::Result(env));
        }
        progress.measured_before = estimate;
        if self.brief_fallback && project_brief(&mut env) {
            progress.brief = true;
            if self.finalize(&mut env, &progress) <= budget {
                return Ok(Fitted::Result(env));
            }
        }
        progress.strings_compacted = compact_strings(&mut env);
        let mut last = self.finalize(&mut env, &progress);
        if last <= budget {
            return Ok(Fitted::Result(env));
        }
        let mut visited: HashSet<RowPath> = HashSet::new();
        loop {
            let candidate = rows::budget_collections(&env, self.contract)
                .into_iter()
                .filter(|c| !visited.contains(&c.path) && c.len > self.minimum(&c.path))
                .map(|c| (c.len, c.path.to_string(), c.path))
                .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(&a.1)));
            let Some((len, name, path)) = candidate else {
                break;
            };
            visited.insert(path.clone());
            progress.compacted.insert(name);
            let min = self.minimum(&path);
            last = self.retain_prefix(&mut env, &path, len, min, budget, &progress);
            if last <= budget {
                return Ok(Fitted::Result(env));
            }
        }
        self.omission(last).map(Fitted::Omitted)
    }

    fn minimum(&self, path: &RowPath) -> usize {
        self.minimum_rows
            .iter()
            .find(|(p, _)| p == path)
            .map_or(1, |(_, n)| (*n).max(1))
    }

    fn retain_prefix(
        &self,
        env: &mut Map<String, Value>,
        path: &RowPath,
        len: usize,
        min: usize,
        budget: u64,
        progress: &Progress,
    ) -> u64 {
        retain_prefix(env, path, min, len, budget, |env| {
            self.finalize(env, progress)
        })
    }

    /// Recomputes every derived key (count, applied_limit, continuation flags and cursors,
    /// disclosure, receipts) for the current rows, settles the estimates and returns the
    /// measured size.
    fn finalize(&self, env: &mut Map<String, Value>, progress: &Progress) -> u64 {
        for key in [
            "read_output",
            "read_session",
            "continuation_kind",
            "output_budget_truncation",
        ] {
            env.shift_remove(key);
        }
        for key in CONTINUATION_KEYS {
            if !self.base_keys.contains_key(key) {
                env.shift_remove(key);
            }
        }
        for (key, value) in &self.base_keys {
            set(env, key, value.clone());
        }
        if env.get("count").is_some_and(Value::is_number) {
            let count = rows::count_rows(env, self.contract);
            set(env, "count", json!(count));
        }
        let entries = self.continuations(env);
        let primary = entries
            .iter()
            .find(|e| {
                self.continued
                    .as_ref()
                    .is_some_and(|c| c.to_string() == e.0)
            })
            .or_else(|| entries.first());
        let items_now = env.get("items").and_then(Value::as_array);
        let shrank = match (items_now, self.items_before) {
            (Some(items), Some(before)) => items.len() < before,
            _ => false,
        };
        let rebased = match (items_now, &self.producer, self.items_before) {
            (Some(items), Some(producer), Some(before)) if shrank => producer.rebase(items, before),
            _ => None,
        };
        if shrank
            && env.get("applied_limit").is_some_and(Value::is_number)
            && let Some(n) = items_now.map(Vec::len)
        {
            set(env, "applied_limit", json!(n));
        }
        let rows_compacted = !progress.compacted.is_empty();
        let cut = !entries.is_empty() || rows_compacted || rebased.is_some();
        let next_cursor = match (&rebased, primary) {
            (Some(r), _) => Some(r.clone()),
            (None, Some(p)) if !env.get("next_cursor").is_some_and(Value::is_string) => {
                Some(p.1.clone())
            }
            _ => None,
        };
        let mut appended: Vec<(&str, Value)> = Vec::new();
        for (i, key) in CONTINUATION_KEYS.iter().enumerate() {
            let value = match i {
                2 => next_cursor.clone().map(Value::String),
                _ => cut.then_some(Value::Bool(true)),
            };
            match (value, self.base_keys.contains_key(*key)) {
                (Some(v), true) => set(env, key, v),
                (Some(v), false) => appended.push((key, v)),
                (None, _) => {}
            }
        }
        let kind = if rebased.is_some() {
            Some("producer_cursor")
        } else if primary.is_some() {
            Some("output_cursor")
        } else {
            rows_compacted.then_some("none")
        };
        if let Some(kind) = kind {
            appended.push(("continuation_kind", json!(kind)));
        }
        if rows_compacted {
            appended.push((
                "output_budget_truncation",
                self.disclosure(progress, &entries, primary, rebased.is_some()),
            ));
        }
        let tally = self
            .session
            .map(|_| session::tally(env, self.contract))
            .unwrap_or_default();
        env.insert("read_output".into(), Value::Null);
        if self.session.is_some() {
            env.insert("read_session".into(), Value::Null);
        }
        for (key, value) in appended {
            env.insert(key.to_owned(), value);
        }
        let facts = ReceiptFacts {
            strings_compacted: progress.strings_compacted,
            rows_compacted,
            applied_brief_depth: progress.brief,
            compacted_row_paths: progress.compacted.iter().cloned().collect(),
            ..ReceiptFacts::default()
        };
        settle(env, self.format, |env, estimate| {
            self.write_receipts(env, &facts, &tally, estimate);
        })
    }

    fn write_receipts(
        &self,
        env: &mut Map<String, Value>,
        facts: &ReceiptFacts,
        tally: &Tally,
        estimate: u64,
    ) {
        let facts = ReceiptFacts {
            estimated_tokens: estimate,
            within_budget: self.binding.is_none_or(|b| estimate <= b.tokens),
            ..facts.clone()
        };
        let minimal = facts.result_omitted;
        set(
            env,
            "read_output",
            read_output_receipt(self.surface, self.resolved, self.binding, &facts, minimal),
        );
        if let Some(state) = self.session {
            set(
                env,
                "read_session",
                session::receipt(state, tally, estimate),
            );
        }
        write_intent_estimate(env, estimate);
    }

    /// Returns `(path, cursor, retained, remaining, total)` for every continuation collection
    /// with rows after the ones present.
    fn continuations(&self, env: &Map<String, Value>) -> Vec<(String, String, u64, u64, u64)> {
        self.collections
            .iter()
            .filter_map(|c| {
                let len = rows::get(env, &c.path).and_then(rows::collection_len)? as u64;
                let offset = c.base + len;
                (offset < c.total).then(|| {
                    let path = c.path.to_string();
                    let cursor = OutputCursor {
                        surface: self.surface,
                        path: path.clone(),
                        offset,
                        total: c.total,
                        fingerprint: c.fingerprint.clone(),
                    };
                    (path, cursor.encode(), len, c.total - offset, c.total)
                })
            })
            .collect()
    }

    fn disclosure(
        &self,
        progress: &Progress,
        entries: &[(String, String, u64, u64, u64)],
        primary: Option<&(String, String, u64, u64, u64)>,
        rebased: bool,
    ) -> Value {
        let binding = self.binding.unwrap_or(Binding {
            source: None,
            tokens: 0,
        });
        let recovery_budget = recovery_budget(binding.tokens, progress.measured_before);
        let overridden: Vec<&str> = match self.resolved.amount {
            Some((_, Bound::Unbounded)) => vec!["amount"],
            _ => Vec::new(),
        };
        let continuations: Vec<Value> = entries
            .iter()
            .map(|(path, cursor, retained, remaining, total)| {
                json!({"path": path, "cursor": cursor, "retained_rows": retained,
                    "remaining_rows": remaining, "total_rows": total})
            })
            .collect();
        let (multiplier, restore_with, recovery) = match (primary, recovery_budget) {
            (Some(p), _) => (
                json!(1),
                "Use recovery binding.".to_owned(),
                json!({"cursor": p.1, "cli": "--output-cursor", "sdk": "outputCursor", "mcp": "outputCursor"}),
            ),
            (None, Some(b)) => (
                pm_engine::json::number_from_f64(b as f64 / binding.tokens as f64)
                    .map_or(Value::Null, Value::Number),
                format!(
                    "Retry with --output-budget {b} because no declared row collection can be continued."
                ),
                json!({"cli": format!("--output-budget {b}"), "sdk": {"outputBudget": b}, "mcp": {"outputBudget": b}}),
            ),
            (None, None) => (
                Value::Null,
                "Retry with --output-budget unbounded because no declared row collection can be continued.".to_owned(),
                json!({"cli": "--output-budget unbounded", "sdk": {"outputBudget": "unbounded"}, "mcp": {"outputBudget": "unbounded"}}),
            ),
        };
        json!({
            "reason": "output_budget_reached",
            "budget_source": binding.source_name(),
            "budget_tokens": binding.tokens,
            "overridden_dimensions": overridden,
            "compacted_row_paths": progress.compacted.iter().collect::<Vec<_>>(),
            "continuation_cursor_rebased": rebased,
            "continuation_available": !entries.is_empty(),
            "recovery_budget_multiplier": multiplier,
            "continuations": continuations,
            "restore_with": restore_with,
            "recovery": recovery,
        })
    }

    /// Returns the omission document for a result whose most compacted form measured
    /// `omitted_estimate`.
    fn omission(&self, omitted_estimate: u64) -> Result<Map<String, Value>> {
        let mut env = Map::new();
        env.insert(
            "output_budget_exceeded".into(),
            json!({"omitted_result": true, "reason": "requested_budget_infeasible",
                "restore_with": "Retry with --output-budget unbounded.",
                "recovery": {"outputBudget": "unbounded"}}),
        );
        env.insert("read_output".into(), Value::Null);
        if self.session.is_some() {
            env.insert("read_session".into(), Value::Null);
        }
        let facts = ReceiptFacts {
            result_omitted: true,
            omitted_result_estimated_tokens: self.session.is_none().then_some(omitted_estimate),
            ..ReceiptFacts::default()
        };
        let tally = Tally::default();
        let estimate = settle(&mut env, self.format, |env, estimate| {
            let facts = ReceiptFacts {
                estimated_tokens: estimate,
                ..facts.clone()
            };
            set(
                env,
                "read_output",
                read_output_receipt(self.surface, self.resolved, self.binding, &facts, true),
            );
            if let Some(state) = self.session {
                set(
                    env,
                    "read_session",
                    session::receipt(state, &tally, estimate),
                );
            }
        });
        if let Some(state) = self.session
            && estimate > state.remaining()
        {
            return Err(CliError::ReadOutput {
                kind: ReadOutputRefusal::InvalidSession,
                message: "The remaining output-session budget cannot fit its mandatory receipts; start a new session with a larger token_budget.".into(),
                flag: "--output-session",
                value: None,
                allowed: Box::default(),
                suggestion: None,
            });
        }
        Ok(env)
    }
}

/// Keeps the largest prefix of the collection at `path` (between `min` and `len - 1` rows)
/// whose envelope, as `finalize` completes and measures it, fits `budget`: an exponential
/// search from `min`, then bisection. When no prefix fits, keeps `min` rows. Returns the
/// measured size of the kept state.
pub fn retain_prefix(
    env: &mut Map<String, Value>,
    path: &RowPath,
    min: usize,
    len: usize,
    budget: u64,
    mut finalize: impl FnMut(&mut Map<String, Value>) -> u64,
) -> u64 {
    let Some(slot) = rows::get_mut(env, path) else {
        return finalize(env);
    };
    let full = std::mem::take(slot);
    let mut probe = |env: &mut Map<String, Value>, k: usize| -> u64 {
        if let Some(slot) = rows::get_mut(env, path) {
            *slot = prefix_of(&full, k);
        }
        finalize(env)
    };
    let first = probe(env, min);
    if first > budget {
        return first;
    }
    let (mut good, mut bad) = (min, len);
    loop {
        let next = good.saturating_mul(2).max(good + 1);
        if next >= bad {
            break;
        }
        if probe(env, next) <= budget {
            good = next;
        } else {
            bad = next;
            break;
        }
    }
    while bad - good > 1 {
        let mid = good + (bad - good) / 2;
        if probe(env, mid) <= budget {
            good = mid;
        } else {
            bad = mid;
        }
    }
    probe(env, good)
}

/// Returns the first `k` rows of a collection value.
fn prefix_of(full: &Value, k: usize) -> Value {
    match full {
        Value::Array(a) => Value::Array(a[..k.min(a.len())].to_vec()),
        Value::Object(_) => {
            let mut v = full.clone();
            rows::keep_prefix(&mut v, k);
            v
        }
        other => other.clone(),
    }
}

/// Projects a standard `get` to its brief depth (the over-budget fallback): drops `linked`,
/// `claim_state`, `schedule` and the item body, and names them in the omission receipt.
/// Returns whether anything was dropped.
fn project_brief(env: &mut Map<String, Value>) -> bool {
    let mut omitted: Vec<String> = ["linked", "claim_state", "schedule"]
        .into_iter()
        .filter(|k| env.shift_remove(*k).is_some())
        .map(str::to_owned)
        .collect();
    if let Some(Value::Object(item)) = env.get_mut("item")
        && item.shift_remove("body").is_some()
    {
        omitted.push("body".into());
    }
    if omitted.is_empty() {
        return false;
    }
    let mut groups: Vec<(String, String)> = env
        .get("omission_receipt")
        .and_then(|r| r.get("omitted_field_groups"))
        .and_then(Value::as_array)
        .map(|g| {
            g.iter()
                .filter_map(|g| {
                    Some((
                        g.get("name")?.as_str()?.to_owned(),
                        g.get("restore_with")?.as_str()?.to_owned(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    groups.extend(omitted.into_iter().map(|n| {
        let restore = format!("--fields {n}");
        (n, restore)
    }));
    set(env, "omission_receipt", omission_receipt(groups));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_cut_at_240_utf16_units_without_splitting_pairs() {
        let mut env = Map::new();
        env.insert("a".into(), json!("x".repeat(241)));
        env.insert("b".into(), json!(format!("{}{}", "y".repeat(239), "😀z")));
        env.insert("c".into(), json!("short"));
        env.insert("next_cursor".into(), json!("n".repeat(300)));
        assert!(compact_strings(&mut env));
        assert_eq!(env["a"], json!(format!("{}…", "x".repeat(240))));
        // The emoji is two code units; 239 + 2 > 240, so it is dropped whole.
        assert_eq!(env["b"], json!(format!("{}…", "y".repeat(239))));
        assert_eq!(env["c"], json!("short"));
        assert_eq!(env["next_cursor"].as_str().map(str::len), Some(300));
    }

    #[test]
    fn recovery_budget_rule_v1() {
        // base = max(601, 2000) = 2000 → 2500 → 2500.
        assert_eq!(recovery_budget(600, 2000), Some(2500));
        // base = max(1001, 1000) = 1001 → 1252 (ceil) → 1300.
        assert_eq!(recovery_budget(1000, 1000), Some(1300));
        assert_eq!(recovery_budget(0, 10), None);
        assert_eq!(recovery_budget(10, 0), None);
        assert_eq!(recovery_budget(u64::MAX / 2, 1), None);
    }

    #[test]
    fn brief_projection_names_what_it_dropped() {
        let mut env = match json!({"item": {"id": "pm-1", "body": "long"}, "linked": {}, "claim_state": {},
            "omission_receipt": {"has_omissions": true, "omitted_field_group_count": 1,
            "omitted_field_groups": [{"name": "children", "restore_with": "--fields children"}]}})
        {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        assert!(project_brief(&mut env));
        assert_eq!(env["item"], json!({"id": "pm-1"}));
        assert_eq!(env["omission_receipt"]["omitted_field_group_count"], 4);
        assert_eq!(
            env["omission_receipt"]["omitted_field_groups"][3],
            json!({"name": "body", "restore_with": "--fields body"})
        );
        assert!(!project_brief(&mut env));
    }
}
