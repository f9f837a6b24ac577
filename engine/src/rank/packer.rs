//! The value-per-token packer of `context` and `next`: required
//! anchors first, then optional rows by best risk- and redundancy-adjusted value per identity
//! token, then upgrades identity → summary → full by value per extra token.

use std::cmp::Ordering;
use std::collections::{BTreeSet, BinaryHeap};

use crate::collate::locale_compare;

/// Detail level bought for a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Projection {
    /// `{id, title}`.
    Identity,
    /// `{id, title, type, status, priority, parent}`.
    Summary,
    /// The whole item.
    Full,
}

impl Projection {
    /// Returns the level's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Projection::Identity => "identity",
            Projection::Summary => "summary",
            Projection::Full => "full",
        }
    }
}

/// Packing penalties of a task profile.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Profile {
    /// The profile name.
    pub name: &'static str,
    /// Value kept × (1 − this) when the cluster is already represented.
    pub redundancy: f64,
    /// Risk aversion applied to a candidate's uncertainty.
    pub uncertainty: f64,
}

/// `pm context`'s profile.
pub const CONTEXT: Profile = Profile {
    name: "context",
    redundancy: 0.45,
    uncertainty: 0.15,
};
/// `pm next`'s profile.
pub const NEXT: Profile = Profile {
    name: "next",
    redundancy: 0.25,
    uncertainty: 0.30,
};

/// One ranked candidate offered to the packer (borrowing its id and cluster).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate<'a> {
    /// The id.
    pub id: &'a str,
    /// 1-based relevance rank.
    pub rank: usize,
    /// Relevance score.
    pub score: f64,
    /// Token costs of identity, summary and full (monotone, ≥ 1).
    pub costs: [u64; 3],
    /// The parent id, else the type.
    pub cluster: &'a str,
    /// Admitted before optional rows.
    pub required: bool,
}

/// One selected row.
#[derive(Clone, Debug, PartialEq)]
pub struct Packed<'a> {
    /// The candidate.
    pub candidate: Candidate<'a>,
    /// The bought projection.
    pub projection: Projection,
    /// Tokens charged.
    pub tokens: u64,
    /// Value at admission.
    pub marginal_value: f64,
}

/// The packing result.
#[derive(Clone, Debug, PartialEq)]
pub struct Packing<'a> {
    /// Selected rows by rank.
    pub included: Vec<Packed<'a>>,
    /// Ids not selected, by rank.
    pub omitted_ids: Vec<&'a str>,
    /// The budget.
    pub token_budget: u64,
    /// Tokens spent.
    pub used_tokens: u64,
    /// Every candidate selected at full detail.
    pub complete: bool,
    /// Optional candidates examined.
    pub evaluated_candidates: u64,
    /// The profile.
    pub profile: &'static str,
}

fn by_rank(a: &Candidate<'_>, b: &Candidate<'_>) -> Ordering {
    a.rank.cmp(&b.rank).then_with(|| locale_compare(a.id, b.id))
}

/// The value of admitting `c` now: its score, kept × (1 − redundancy) when its cluster is
/// already represented, never below zero.
fn value(c: &Candidate<'_>, represented: bool, profile: Profile) -> f64 {
    let keep = if represented {
        1.0 - profile.redundancy
    } else {
        1.0
    };
    (c.score * keep).max(0.0)
}

/// The optional candidates not yet admitted, counted by identity cost: how many fit a budget.
struct CostCounts {
    /// `(identity cost, candidates)` ascending by cost.
    levels: Vec<(u64, u64)>,
}

impl CostCounts {
    fn new(costs: impl Iterator<Item = u64>) -> CostCounts {
        let mut all: Vec<u64> = costs.collect();
        all.sort_unstable();
        let mut levels: Vec<(u64, u64)> = Vec::new();
        for c in all {
            match levels.last_mut() {
                Some((cost, n)) if *cost == c => *n += 1,
                _ => levels.push((c, 1)),
            }
        }
        CostCounts { levels }
    }

    /// Returns how many candidates cost at most `budget`.
    fn fitting(&self, budget: u64) -> u64 {
        self.levels
            .iter()
            .take_while(|(c, _)| *c <= budget)
            .map(|(_, n)| n)
            .sum()
    }

    fn remove(&mut self, cost: u64) {
        if let Ok(i) = self.levels.binary_search_by_key(&cost, |(c, _)| *c) {
            self.levels[i].1 -= 1;
        }
    }
}

/// A heap entry of an optional candidate: its density when pushed (an upper bound of its
/// current density: a cluster only ever becomes represented, which lowers it), its position
/// in rank order (lower wins a tie), and whether the density already counts its cluster as
/// represented.
#[derive(Clone, Copy, Debug)]
struct Entry {
    density: f64,
    position: usize,
    penalised: bool,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Densities are never NaN here (`pack` falls back to the plain scan otherwise).
        self.density
            .partial_cmp(&other.density)
            .unwrap_or(Ordering::Equal)
            .then_with(|| other.position.cmp(&self.position))
    }
}

/// Packs `candidates` into `budget` tokens. Selection is deterministic: pm's 25 ms latency
/// cut-off is not applied (every candidate is examined).
///
/// Each round admits the fitting optional candidate of highest value per identity token (the
/// better rank on a tie) and counts every fitting candidate as examined; a max-heap with lazy
/// re-keying finds it without rescanning every candidate per round.
pub fn pack<'a>(candidates: &[Candidate<'a>], budget: u64, profile: Profile) -> Packing<'a> {
    let mut ordered: Vec<Candidate<'a>> = candidates.to_vec();
    if !ordered.is_sorted_by(|a, b| by_rank(a, b) != Ordering::Greater) {
        ordered.sort_by(by_rank);
    }
    let mut represented: BTreeSet<&'a str> = BTreeSet::new();
    let mut included: Vec<Packed<'a>> = Vec::new();
    let mut remaining = budget;
    let admit = |c: Candidate<'a>,
                 remaining: &mut u64,
                 represented: &mut BTreeSet<&'a str>,
                 included: &mut Vec<Packed<'a>>| {
        let tokens = c.costs[0];
        let marginal_value = value(&c, represented.contains(c.cluster), profile);
        *remaining -= tokens;
        represented.insert(c.cluster);
        included.push(Packed {
            candidate: c,
            projection: Projection::Identity,
            tokens,
            marginal_value,
        });
    };
    for c in ordered.iter().filter(|c| c.required) {
        if c.costs[0] <= remaining {
            admit(*c, &mut remaining, &mut represented, &mut included);
        }
    }
    let optional: Vec<Candidate<'a>> = ordered.iter().filter(|c| !c.required).copied().collect();
    let mut evaluated = 0u64;
    if optional.iter().any(|c| c.score.is_nan()) {
        // NaN densities do not order: examine every candidate each round, as pm does.
        let mut optional = optional;
        loop {
            let mut best: Option<(usize, f64)> = None;
            for (i, c) in optional.iter().enumerate() {
                if c.costs[0] > remaining {
                    continue;
                }
                evaluated += 1;
                let density =
                    value(c, represented.contains(c.cluster), profile) / c.costs[0] as f64;
                let better = match best {
                    None => true,
                    Some((b, bd)) => {
                        density > bd
                            || (density == bd && by_rank(c, &optional[b]) == Ordering::Less)
                    }
                };
                if better {
                    best = Some((i, density));
                }
            }
            let Some((i, _)) = best else { break };
            let c = optional.remove(i);
            admit(c, &mut remaining, &mut represented, &mut included);
        }
    } else {
        let mut counts = CostCounts::new(optional.iter().map(|c| c.costs[0]));
        let mut heap: BinaryHeap<Entry> = optional
            .iter()
            .enumerate()
            .map(|(position, c)| {
                let penalised = represented.contains(c.cluster);
                Entry {
                    density: value(c, penalised, profile) / c.costs[0] as f64,
                    position,
                    penalised,
                }
            })
            .collect();
        loop {
            let fitting = counts.fitting(remaining);
            if fitting == 0 {
                break;
            }
            evaluated += fitting;
            let mut chosen = None;
            while let Some(top) = heap.pop() {
                let c = &optional[top.position];
                if c.costs[0] > remaining {
                    // The budget only shrinks: this candidate never fits again.
                    continue;
                }
                if !top.penalised && represented.contains(c.cluster) {
                    heap.push(Entry {
                        density: value(c, true, profile) / c.costs[0] as f64,
                        penalised: true,
                        ..top
                    });
                    continue;
                }
                chosen = Some(*c);
                break;
            }
            let Some(c) = chosen else { break };
            counts.remove(c.costs[0]);
            admit(c, &mut remaining, &mut represented, &mut included);
        }
    }
    upgrade(&mut included, &mut remaining);
    included.sort_by(|a, b| by_rank(&a.candidate, &b.candidate));
    let selected: BTreeSet<&str> = included.iter().map(|p| p.candidate.id).collect();
    let omitted_ids = ordered
        .iter()
        .filter(|c| !selected.contains(c.id))
        .map(|c| c.id)
        .collect();
    let complete = included.len() == candidates.len()
        && included.iter().all(|p| p.projection == Projection::Full);
    Packing {
        included,
        omitted_ids,
        token_budget: budget,
        used_tokens: budget - remaining,
        complete,
        evaluated_candidates: evaluated,
        profile: profile.name,
    }
}

/// Upgrades admitted rows identity → summary, then summary → full, by value per extra token.
fn upgrade(included: &mut [Packed<'_>], remaining: &mut u64) {
    for (target, previous) in [(1usize, Projection::Identity), (2, Projection::Summary)] {
        let mut order: Vec<usize> = (0..included.len()).collect();
        let density = |p: &Packed<'_>| {
            let extra = p.candidate.costs[target] as f64 - p.candidate.costs[target - 1] as f64;
            p.marginal_value / extra.max(1.0)
        };
        order.sort_by(|&a, &b| {
            let (pa, pb) = (&included[a], &included[b]);
            density(pb)
                .partial_cmp(&density(pa))
                .unwrap_or(Ordering::Equal)
                .then_with(|| by_rank(&pa.candidate, &pb.candidate))
        });
        for i in order {
            let p = &mut included[i];
            if p.projection != previous {
                continue;
            }
            let extra = p.candidate.costs[target].saturating_sub(p.tokens);
            if extra > *remaining {
                continue;
            }
            p.projection = if target == 1 {
                Projection::Summary
            } else {
                Projection::Full
            };
            p.tokens += extra;
            *remaining -= extra;
        }
    }
}

/// Returns pm's token estimate of a JSON value's text: `max(1, ceil(utf8_bytes / 4))`.
pub fn json_tokens(compact_json: &str) -> u64 {
    byte_tokens(compact_json.len())
}

/// Returns pm's token estimate of a JSON text of `bytes` UTF-8 bytes.
pub fn byte_tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cand(
        id: &'static str,
        rank: usize,
        score: f64,
        cluster: &'static str,
    ) -> Candidate<'static> {
        Candidate {
            id,
            rank,
            score,
            costs: [10, 20, 40],
            cluster,
            required: false,
        }
    }

    #[test]
    fn packs_by_value_then_upgrades() {
        let c = [
            cand("a", 1, 0.9, "p"),
            cand("b", 2, 0.8, "p"),
            cand("c", 3, 0.5, "q"),
        ];
        // Budget for three identities plus one summary upgrade.
        let p = pack(&c, 40, CONTEXT);
        let ids: Vec<&str> = p.included.iter().map(|x| x.candidate.id).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        assert_eq!(p.used_tokens, 40);
        assert_eq!(p.included[0].projection, Projection::Summary);
        // b was admitted after a, in the same cluster: penalised.
        assert!((p.included[1].marginal_value - 0.8 * 0.55).abs() < 1e-12);
        // Too small for anything.
        let p = pack(&c, 5, NEXT);
        assert!(p.included.is_empty());
        assert_eq!(p.omitted_ids, ["a", "b", "c"]);
        assert_eq!(json_tokens(""), 1);
        assert_eq!(json_tokens("12345"), 2);
    }

    /// The plain greedy packer: every round rescans every optional candidate.
    fn pack_by_scan<'a>(
        candidates: &[Candidate<'a>],
        budget: u64,
        profile: Profile,
    ) -> Packing<'a> {
        let mut ordered: Vec<Candidate<'a>> = candidates.to_vec();
        ordered.sort_by(by_rank);
        let mut represented: BTreeSet<&str> = BTreeSet::new();
        let mut included: Vec<Packed<'a>> = Vec::new();
        let mut remaining = budget;
        let mut admit = |c: Candidate<'a>, remaining: &mut u64, included: &mut Vec<Packed<'a>>| {
            let tokens = c.costs[0];
            let marginal_value = value(&c, represented.contains(c.cluster), profile);
            *remaining -= tokens;
            represented.insert(c.cluster);
            included.push(Packed {
                candidate: c,
                projection: Projection::Identity,
                tokens,
                marginal_value,
            });
        };
        for c in ordered.iter().filter(|c| c.required) {
            if c.costs[0] <= remaining {
                admit(*c, &mut remaining, &mut included);
            }
        }
        let mut optional: Vec<Candidate<'a>> =
            ordered.iter().filter(|c| !c.required).copied().collect();
        let mut evaluated = 0u64;
        loop {
            let clusters: BTreeSet<&str> = included.iter().map(|p| p.candidate.cluster).collect();
            let mut best: Option<(usize, f64)> = None;
            for (i, c) in optional.iter().enumerate() {
                if c.costs[0] > remaining {
                    continue;
                }
                evaluated += 1;
                let density = value(c, clusters.contains(c.cluster), profile) / c.costs[0] as f64;
                let better = match best {
                    None => true,
                    Some((b, bd)) => {
                        density > bd
                            || (density == bd && by_rank(c, &optional[b]) == Ordering::Less)
                    }
                };
                if better {
                    best = Some((i, density));
                }
            }
            let Some((i, _)) = best else { break };
            let c = optional.remove(i);
            admit(c, &mut remaining, &mut included);
        }
        upgrade(&mut included, &mut remaining);
        included.sort_by(|a, b| by_rank(&a.candidate, &b.candidate));
        let selected: BTreeSet<&str> = included.iter().map(|p| p.candidate.id).collect();
        let omitted_ids = ordered
            .iter()
            .filter(|c| !selected.contains(c.id))
            .map(|c| c.id)
            .collect();
        let complete = included.len() == candidates.len()
            && included.iter().all(|p| p.projection == Projection::Full);
        Packing {
            included,
            omitted_ids,
            token_budget: budget,
            used_tokens: budget - remaining,
            complete,
            evaluated_candidates: evaluated,
            profile: profile.name,
        }
    }

    const IDS: [&str; 5] = ["a", "b", "B", "c", "d"];
    const CLUSTERS: [&str; 3] = ["p", "q", "r"];
    const SCORES: [f64; 6] = [0.0, -0.0, 0.5, 0.25, 1.0, -0.3];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        #[test]
        fn heap_packer_equals_scan_packer(
            rows in proptest::collection::vec(
                (0..5usize, 0..6usize, 0..6usize, 0..3usize, 1..6u64, 0..4u64, 0..40u64, 0..8u8),
                0..40,
            ),
            budget in 0..120u64,
            next in any::<bool>(),
        ) {
            let candidates: Vec<Candidate<'static>> = rows
                .iter()
                .map(|&(id, rank, score, cluster, identity, summary, full, required)| Candidate {
                    id: IDS[id],
                    rank,
                    score: SCORES[score],
                    costs: [identity, identity + summary, identity + summary + full],
                    cluster: CLUSTERS[cluster],
                    required: required == 0,
                })
                .collect();
            let profile = if next { NEXT } else { CONTEXT };
            prop_assert_eq!(
                pack(&candidates, budget, profile),
                pack_by_scan(&candidates, budget, profile)
            );
        }
    }
}
