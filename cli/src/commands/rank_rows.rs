//! Rows and explanations shared by `context` and `next`: the focus row with its child rollup,
//! `--parent` subtree scoping, and the `ranking`/`packing` objects of `--explain-ranking`.

use std::collections::BTreeSet;

use pm_engine::rank::next::Hierarchy;
use pm_engine::rank::packer::Packing;
use pm_engine::rank::relevance::Ranking;
use pm_engine::schema::RuntimeSchema;
use pm_engine::summary::ItemSummary;
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
pub fn subtree(corpus: &[ItemSummary], parent: &str) -> Option<BTreeSet<String>> {
    let target = parent.trim().to_lowercase();
    let anchor = corpus
        .iter()
        .find(|s| s.id.trim().to_lowercase() == target)?;
    let hierarchy = Hierarchy::new(corpus);
    let mut ids: BTreeSet<String> = hierarchy
        .descendants(&anchor.id)
        .iter()
        .map(|d| d.id.trim().to_lowercase())
        .collect();
    ids.insert(anchor.id.trim().to_lowercase());
    Some(ids)
}

/// Returns the `ranking` explanation: model, available signals and per-item rank, baseline
/// rank, score and contributions (`ids` are the candidates in baseline order).
pub fn ranking_json(ranking: &Ranking, model: &str, ids: &[&str]) -> Value {
    let items: Vec<Value> = ranking
        .ranked
        .iter()
        .map(|r| {
            let contributions: Map<String, Value> = r
                .contributions
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
