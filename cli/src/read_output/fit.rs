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
use super::receipts::{ReceiptFacts, read_output_receipt};
use super::request::Bound;
use super::rows::{self, RowContract, RowPath};
use super::session::{self, SessionState, Tally};
use super::shrink::{
    compact_strings, project_brief, recovery_budget, retain_prefix, settle, write_intent_estimate,
};
use super::surface::Surface;
use crate::failure::{CliError, ReadOutputRefusal, Result};
use crate::render::Format;

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
