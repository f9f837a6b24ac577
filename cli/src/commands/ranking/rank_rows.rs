//! Rows and explanations shared by `context` and `next`: the focus row with its child rollup,
//! the `--parent` scope, and the `ranking`/`packing` objects of `--explain-ranking`.

use std::collections::{BTreeMap, BTreeSet};

use crate::failure::Result;
use pm_engine::Error;
use pm_engine::rank::item::RankItem;
use pm_engine::rank::next::Hierarchy;
use pm_engine::rank::packer::Packing;
use pm_engine::rank::relevance::{Ranking, SignalVector};
use pm_engine::schema::RuntimeSchema;
use pm_engine::summary::ItemSummary;
use pm_index::{Index, RankCorpus};
use serde_json::{Map, Value, json};

fn number(v: f64) -> Value {
    pm_engine::json::number_from_f64(v).map_or(Value::Null, Value::Number)
}

/// Returns pm's focus row: `id, title, type, status, priority, order, deadline, assignee,
/// tags, updated_at, parent` (nulls kept), plus `children_total`, `children_closed` and
/// `completion_pct` when the item has descendants.
pub fn focus_row(
    s: &ItemSummary,
    hierarchy: &Hierarchy<'_>,
    schema: &RuntimeSchema,
) -> Map<String, Value> {
    let get = |k: &str| s.light.get(k).cloned().unwrap_or(Value::Null);
    let mut row = Map::new();
    row.insert("id".into(), json!(s.id));
    row.insert("title".into(), json!(s.title));
    row.insert("type".into(), json!(s.item_type));
    row.insert("status".into(), json!(s.status));
    row.insert("priority".into(), json!(s.priority));
    row.insert("order".into(), get("order"));
    row.insert("deadline".into(), get("deadline"));
    row.insert("assignee".into(), get("assignee"));
    row.insert("tags".into(), json!(s.tags));
    row.insert("updated_at".into(), json!(s.updated_at));
    row.insert(
        "parent".into(),
        s.parent.as_deref().map_or(Value::Null, |p| json!(p)),
    );
    let descendants = hierarchy.descendants(&s.id);
    if !descendants.is_empty() {
        let close = schema.statuses.close_status();
        let total = descendants.len();
        let closed = descendants
            .iter()
            .filter(|d| schema.statuses.resolve(&d.status).unwrap_or(&d.status) == close)
            .count();
        row.insert("children_total".into(), json!(total));
        row.insert("children_closed".into(), json!(closed));
        let pct = (closed as f64 / total as f64 * 100.0).round() as u64;
        row.insert("completion_pct".into(), json!(pct));
    }
    row
}

/// Returns the lowercase ids of `parent` and its descendants, or `None` when no item has
/// that id.
fn subtree(
    corpus: &[RankItem],
    hierarchy: &Hierarchy<'_>,
    parent: &str,
) -> Option<BTreeSet<String>> {
    let target = parent.trim().to_lowercase();
    let anchor = corpus
        .iter()
        .find(|s| s.id.trim().to_lowercase() == target)?;
    let mut ids: BTreeSet<String> = hierarchy
        .descendants(&anchor.id)
        .iter()
        .map(|d| d.id.trim().to_lowercase())
        .collect();
    ids.insert(anchor.id.trim().to_lowercase());
    Some(ids)
}

/// The summaries of the rows a command prints, by ranking-row key.
#[derive(Clone, Debug, Default)]
pub struct Details {
    by_key: BTreeMap<i64, ItemSummary>,
}

impl Details {
    /// Fetches the summaries of `rows` of `corpus`.
    ///
    /// # Errors
    /// As `Index::rank_details`.
    pub fn fetch(index: &Index<'_>, corpus: &RankCorpus, rows: &[&RankItem]) -> Result<Details> {
        let mut wanted: Vec<&RankItem> = Vec::with_capacity(rows.len());
        let mut seen = BTreeSet::new();
        for r in rows {
            if seen.insert(r.key) {
                wanted.push(r);
            }
        }
        let found = index.rank_details(corpus, &wanted)?.rows;
        let by_key = wanted
            .iter()
            .zip(found)
            .filter_map(|(r, s)| s.map(|s| (r.key, s)))
            .collect();
        Ok(Details { by_key })
    }

    /// Returns the summary of a row (`None` only when its file vanished during the read).
    pub fn get(&self, row: &RankItem) -> Option<&ItemSummary> {
        self.by_key.get(&row.key)
    }
}

/// The `--parent` scope of `context` and `next`: the parent and its descendants.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    ids: Option<BTreeSet<String>>,
}

impl Scope {
    /// Returns the scope of `parent` (everything when `None`).
    ///
    /// # Errors
    /// `item_not_found` when no item has the id `parent`.
    pub fn of(
        corpus: &[RankItem],
        hierarchy: &Hierarchy<'_>,
        parent: Option<&str>,
    ) -> Result<Scope> {
        let ids = match parent {
            Some(p) => Some(
                subtree(corpus, hierarchy, p)
                    .ok_or_else(|| Error::ItemNotFound { id: p.to_owned() })?,
            ),
            None => None,
        };
        Ok(Scope { ids })
    }

    /// Returns true when the item with this id is in scope.
    pub fn contains(&self, id: &str) -> bool {
        self.ids
            .as_ref()
            .is_none_or(|ids| ids.contains(&id.to_lowercase()))
    }

    /// Returns the rows at `positions` of `corpus` that are in scope, in that order.
    pub fn select<'a>(&self, corpus: &'a [RankItem], positions: &[usize]) -> Vec<&'a RankItem> {
        positions
            .iter()
            .map(|&i| &corpus[i])
            .filter(|s| self.contains(&s.id))
            .collect()
    }
}

/// Returns the `ranking` explanation: model, available signals and per-item rank, baseline
/// rank, score and contributions (`ids` are the candidates in baseline order, `signals` their
/// signals as ranked).
pub fn ranking_json(
    ranking: &Ranking,
    model: &str,
    ids: &[&str],
    signals: &[SignalVector],
) -> Value {
    let none: SignalVector = [None; 12];
    let items: Vec<Value> = ranking
        .ranked
        .iter()
        .map(|r| {
            let contributions: Map<String, Value> = ranking
                .contributions(r, signals.get(r.index).unwrap_or(&none))
                .iter()
                .map(|(k, v)| ((*k).to_owned(), number(*v)))
                .collect();
            json!({
                "id": ids.get(r.index).copied().unwrap_or_default(),
                "rank": r.rank,
                "baseline_rank": r.baseline_rank,
                "score": number(r.score),
                "contributions": contributions,
            })
        })
        .collect();
    json!({
        "model": model,
        "available_signals": ranking.available,
        "items": items,
    })
}

/// Returns the `packing` explanation.
pub fn packing_json(p: &Packing) -> Value {
    let included: Vec<Value> = p
        .included
        .iter()
        .map(|x| json!({"id": x.candidate.id, "projection": x.projection.as_str(), "tokens": x.tokens}))
        .collect();
    json!({
        "included": included,
        "omitted_ids": p.omitted_ids,
        "token_budget": p.token_budget,
        "used_tokens": p.used_tokens,
        "remaining_tokens": p.token_budget - p.used_tokens,
        "complete": p.complete,
        "selection_complete": true,
        "termination_reason": "exhausted",
        "evaluated_candidates": p.evaluated_candidates,
        "latency_budget_ms": null,
        "profile": p.profile,
        "degradation_ladder": ["full", "summary", "identity"],
    })
}

/// The `--explain-ranking` keys: `ranking`, then `packing`.
#[derive(Debug, serde::Serialize)]
pub struct Explain {
    /// The relevance ranking ([`ranking_json`]).
    pub ranking: Value,
    /// The packer's selection ([`packing_json`]).
    pub packing: Value,
}
