//! `pm context` focus selection: non-terminal items in critical
//! order, relevance-ranked, packed into `max(256, limit × 160)` tokens; the packed items with
//! an active status form the focus list, those with a blocked status the blocked list.

use crate::rank::critical::sort_critical;
use crate::rank::item::RankItem;
use crate::rank::next::candidates_of;
use crate::rank::packer::{self, Packing};
use crate::rank::relevance::{Ranking, SignalContext, derive_signals, score};
use crate::schema::{RuntimeSchema, StatusRole};

/// The ranked focus of a context read.
#[derive(Clone, Debug)]
pub struct Focus<'a> {
    /// The candidates in critical (baseline) order.
    pub baseline: Vec<&'a RankItem>,
    /// Packed items with an active status, in relevance order.
    pub active: Vec<&'a RankItem>,
    /// Packed items with a blocked status, in relevance order.
    pub blocked: Vec<&'a RankItem>,
    /// The relevance ranking of `baseline`.
    pub ranking: Ranking,
    /// The packer's selection.
    pub packing: Packing<'a>,
}

/// Ranks and packs the non-terminal `listed` items.
pub fn focus<'a>(
    listed: &[&'a RankItem],
    schema: &RuntimeSchema,
    ctx: &SignalContext<'_>,
    token_budget: u64,
) -> Focus<'a> {
    let mut baseline: Vec<&RankItem> = listed.to_vec();
    sort_critical(&mut baseline, |s| s, None, schema);
    let ranking = score(&derive_signals(&baseline, ctx));
    let packing = packer::pack(
        &candidates_of(&baseline, &ranking),
        token_budget,
        packer::CONTEXT,
    );
    let included: std::collections::BTreeSet<&str> =
        packing.included.iter().map(|p| p.candidate.id).collect();
    let ranked: Vec<&RankItem> = ranking
        .ranked
        .iter()
        .map(|r| baseline[r.index])
        .filter(|s| included.contains(&*s.id))
        .collect();
    let has = |s: &RankItem, role| {
        schema.statuses.has_role(
            schema.statuses.resolve(&s.status).unwrap_or(&s.status),
            role,
        )
    };
    let active = ranked
        .iter()
        .copied()
        .filter(|s| has(s, StatusRole::Active))
        .collect();
    let blocked = ranked
        .iter()
        .copied()
        .filter(|s| has(s, StatusRole::Blocked))
        .collect();
    Focus {
        baseline,
        active,
        blocked,
        ranking,
        packing,
    }
}
