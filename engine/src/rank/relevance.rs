//! The relevance model of `context` and `next`: twelve signals in
//! [0, 1], the weighted score Σ(value·weight)/Σ(weight of present signals), and the ranking
//! (score desc, then the structural baseline). Model id `default-weighted-v1`.

use crate::collate::locale_compare;
use crate::rank::critical::{StatusFacts, compare_updated_desc};
use crate::rank::item::RankItem;
use crate::schema::RuntimeSchema;

/// The model id reported by `--explain-ranking`.
pub const MODEL: &str = "default-weighted-v1";

/// Every signal, in pm's order, with its default weight.
pub const SIGNALS: [(&str, f64); 12] = [
    ("structural", 0.40),
    ("recency", 0.35),
    ("activity_density", 0.25),
    ("graph_proximity", 0.15),
    ("claim_focus", 0.60),
    ("priority_pressure", 0.35),
    ("risk_pressure", 0.20),
    ("deadline_pressure", 0.45),
    ("knowledge_density", 0.25),
    ("author_affinity", 0.20),
    ("usage_affinity", 0.30),
    ("semantic_similarity", 0.50),
];

/// Signal values of one candidate, indexed like [`SIGNALS`]; `None` = not available.
pub type SignalVector = [Option<f64>; 12];

/// What signal derivation needs besides the candidates.
#[derive(Clone, Debug)]
pub struct SignalContext<'a> {
    /// The runtime schema (in-progress status).
    pub schema: &'a RuntimeSchema,
    /// The clock, epoch ms (deadline pressure).
    pub now_ms: i64,
    /// The caller (assignment affinity), compared trimmed and lowercased.
    pub author: Option<&'a str>,
}

fn normalized_pressure(value: f64, max: f64) -> f64 {
    1.0 - value.clamp(0.0, max) / max
}

fn deadline_pressure(deadline_ms: Option<i64>, now_ms: i64) -> f64 {
    let Some(d) = deadline_ms else { return 0.0 };
    let days = (d - now_ms) as f64 / 86_400_000.0;
    if days <= 0.0 {
        1.0
    } else {
        1.0 / (1.0 + days / 30.0)
    }
}

fn risk_pressure(risk: Option<&str>) -> f64 {
    match risk.map(|r| r.trim().to_lowercase()).as_deref() {
        Some("critical" | "high") => 1.0,
        Some("medium") => 0.5,
        Some("low") => 0.1,
        _ => 0.0,
    }
}

/// Derives the signals of `items` (in baseline order) from their metadata, as pm 2026.8.22
/// does: recency by `updated_at` rank, graph proximity 0.3 for items with a parent, claim
/// focus, priority, risk and deadline pressure, knowledge density and author affinity.
/// Activity density, usage affinity and semantic similarity have no source here and stay
/// unavailable (they take no part in the weighting).
pub fn derive_signals(items: &[&RankItem], ctx: &SignalContext<'_>) -> Vec<SignalVector> {
    let n = items.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        compare_updated_desc(items[a].updated_ms, items[b].updated_ms)
            .then_with(|| locale_compare(&items[a].id, &items[b].id))
    });
    let mut facts = StatusFacts::default();
    let mut recency_rank = vec![0usize; n];
    for (rank, &i) in order.iter().enumerate() {
        recency_rank[i] = rank;
    }
    let denominator = n.saturating_sub(1).max(1) as f64;
    let author = ctx
        .author
        .map(|a| a.trim().to_lowercase())
        .filter(|a| !a.is_empty());
    items
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let assigned = author.is_some()
                && s.assignee.as_deref().map(|a| a.trim().to_lowercase()) == author;
            let knowledge = f64::from(s.knowledge);
            let claim = if facts.of(&s.status, ctx.schema).1 {
                1.0
            } else if assigned {
                0.75
            } else {
                0.0
            };
            [
                None,
                Some(if n == 1 {
                    1.0
                } else {
                    1.0 - recency_rank[i] as f64 / denominator
                }),
                None,
                Some(if s.parent.is_some() { 0.3 } else { 0.0 }),
                Some(claim),
                Some(normalized_pressure(s.priority as f64, 4.0)),
                Some(risk_pressure(s.risk())),
                Some(deadline_pressure(s.deadline_ms(), ctx.now_ms)),
                Some((knowledge / 5.0).min(1.0)),
                Some(if assigned { 1.0 } else { 0.0 }),
                None,
                None,
            ]
        })
        .collect()
}

/// One ranked candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranked {
    /// Index of the candidate in the baseline order.
    pub index: usize,
    /// 1-based baseline rank.
    pub baseline_rank: usize,
    /// 1-based relevance rank.
    pub rank: usize,
    /// The weighted score.
    pub score: f64,
}

/// A scored ranking.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranking {
    /// Signals some candidate has (structural always), in [`SIGNALS`] order.
    pub available: Vec<&'static str>,
    /// Candidates best first.
    pub ranked: Vec<Ranked>,
    /// Which signals are available, indexed like [`SIGNALS`].
    present: [bool; 12],
}

/// Calls `f(signal, value × weight)` for every available signal of the candidate at baseline
/// `index` of `n` with signals `v`, in [`SIGNALS`] order.
fn each_contribution(
    present: &[bool; 12],
    index: usize,
    n: usize,
    v: &SignalVector,
    mut f: impl FnMut(&'static str, f64, f64),
) {
    let denominator = n.saturating_sub(1).max(1) as f64;
    let structural = if n == 1 {
        1.0
    } else {
        1.0 - index as f64 / denominator
    };
    for (k, (name, weight)) in SIGNALS.iter().enumerate() {
        if !present[k] {
            continue;
        }
        let value = if k == 0 { Some(structural) } else { v[k] };
        let Some(value) = value else { continue };
        f(name, value * weight, *weight);
    }
}

impl Ranking {
    /// Returns `(signal, value × weight)` of every available signal of `r`, whose signals
    /// (as given to [`score`]) are `v`, in [`SIGNALS`] order.
    pub fn contributions(&self, r: &Ranked, v: &SignalVector) -> Vec<(&'static str, f64)> {
        let mut out = Vec::new();
        each_contribution(
            &self.present,
            r.index,
            self.ranked.len(),
            v,
            |name, c, _| {
                out.push((name, c));
            },
        );
        out
    }
}

/// Scores candidates given in baseline order with their signals.
pub fn score(signals: &[SignalVector]) -> Ranking {
    let n = signals.len();
    let mut present = [false; 12];
    present[0] = true;
    for v in signals {
        for (k, value) in v.iter().enumerate() {
            present[k] |= value.is_some();
        }
    }
    let mut ranked: Vec<Ranked> = signals
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut weighted = 0.0;
            let mut total = 0.0;
            each_contribution(&present, i, n, v, |_, c, weight| {
                weighted += c;
                total += weight;
            });
            Ranked {
                index: i,
                baseline_rank: i + 1,
                rank: 0,
                score: if total == 0.0 { 0.0 } else { weighted / total },
            }
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.baseline_rank.cmp(&b.baseline_rank))
    });
    for (i, r) in ranked.iter_mut().enumerate() {
        r.rank = i + 1;
    }
    let available = SIGNALS
        .iter()
        .enumerate()
        .filter(|(k, _)| present[*k])
        .map(|(_, (name, _))| *name)
        .collect();
    Ranking {
        available,
        ranked,
        present,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_is_weighted_mean_of_present_signals() {
        let mut a: SignalVector = [None; 12];
        let mut b: SignalVector = [None; 12];
        a[5] = Some(0.0); // priority pressure
        b[5] = Some(1.0);
        let r = score(&[a, b]);
        assert_eq!(r.available, ["structural", "priority_pressure"]);
        // a: (1·0.4 + 0)/0.75; b: (0 + 1·0.35)/0.75.
        assert_eq!(r.ranked[0].index, 0);
        assert!((r.ranked[0].score - 0.4 / 0.75).abs() < 1e-12);
        assert!((r.ranked[1].score - 0.35 / 0.75).abs() < 1e-12);
        assert_eq!(r.ranked[1].rank, 2);
    }

    #[test]
    fn pressures() {
        assert_eq!(normalized_pressure(0.0, 4.0), 1.0);
        assert_eq!(normalized_pressure(2.0, 4.0), 0.5);
        assert_eq!(deadline_pressure(Some(0), 10), 1.0);
        assert!((deadline_pressure(Some(30 * 86_400_000), 0) - 0.5).abs() < 1e-12);
        assert_eq!(risk_pressure(Some(" High ")), 1.0);
        assert_eq!(risk_pressure(None), 0.0);
    }
}
