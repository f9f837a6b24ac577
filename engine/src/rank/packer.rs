//! The value-per-token packer of `context` and `next` (index-ranking-bench §4.1): required
//! anchors first, then optional rows by best risk- and redundancy-adjusted value per identity
//! token, then upgrades identity → summary → full by value per extra token.

use std::cmp::Ordering;
use std::collections::BTreeSet;

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

/// One ranked candidate offered to the packer.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The id.
    pub id: String,
    /// 1-based relevance rank.
    pub rank: usize,
    /// Relevance score.
    pub score: f64,
    /// Token costs of identity, summary and full (monotone, ≥ 1).
    pub costs: [u64; 3],
    /// The parent id, else the type.
    pub cluster: String,
    /// Admitted before optional rows.
    pub required: bool,
}

/// One selected row.
#[derive(Clone, Debug, PartialEq)]
pub struct Packed {
    /// The candidate.
    pub candidate: Candidate,
    /// The bought projection.
    pub projection: Projection,
    /// Tokens charged.
    pub tokens: u64,
    /// Value at admission.
    pub marginal_value: f64,
}

/// The packing result.
#[derive(Clone, Debug, PartialEq)]
pub struct Packing {
    /// Selected rows by rank.
    pub included: Vec<Packed>,
    /// Ids not selected, by rank.
    pub omitted_ids: Vec<String>,
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

fn by_rank(a: &Candidate, b: &Candidate) -> Ordering {
    a.rank
        .cmp(&b.rank)
        .then_with(|| locale_compare(&a.id, &b.id))
}

/// Packs `candidates` into `budget` tokens. Selection is deterministic: pm's 25 ms latency
/// cut-off is not applied (every candidate is examined).
pub fn pack(candidates: &[Candidate], budget: u64, profile: Profile) -> Packing {
    let mut ordered: Vec<Candidate> = candidates.to_vec();
    ordered.sort_by(by_rank);
    let mut represented: BTreeSet<String> = BTreeSet::new();
    let mut included: Vec<Packed> = Vec::new();
    let mut remaining = budget;
    let value = |c: &Candidate, represented: &BTreeSet<String>| {
        let keep = if represented.contains(&c.cluster) {
            1.0 - profile.redundancy
        } else {
            1.0
        };
        (c.score * keep).max(0.0)
    };
    let admit = |c: Candidate,
                 remaining: &mut u64,
                 represented: &mut BTreeSet<String>,
                 included: &mut Vec<Packed>| {
        let tokens = c.costs[0];
        let marginal_value = value(&c, represented);
        *remaining -= tokens;
        represented.insert(c.cluster.clone());
        included.push(Packed {
            candidate: c,
            projection: Projection::Identity,
            tokens,
            marginal_value,
        });
    };
    for c in ordered.iter().filter(|c| c.required) {
        if c.costs[0] <= remaining {
            admit(c.clone(), &mut remaining, &mut represented, &mut included);
        }
    }
    let mut optional: Vec<Candidate> = ordered.iter().filter(|c| !c.required).cloned().collect();
    let mut evaluated = 0u64;
    loop {
        let mut best: Option<(usize, f64)> = None;
        for (i, c) in optional.iter().enumerate() {
            if c.costs[0] > remaining {
                continue;
            }
            evaluated += 1;
            let density = value(c, &represented) / c.costs[0] as f64;
            let better = match best {
                None => true,
                Some((b, bd)) => {
                    density > bd || (density == bd && by_rank(c, &optional[b]) == Ordering::Less)
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
    for (target, previous) in [(1usize, Projection::Identity), (2, Projection::Summary)] {
        let mut order: Vec<usize> = (0..included.len()).collect();
        let density = |p: &Packed| {
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
            if extra > remaining {
                continue;
            }
            p.projection = if target == 1 {
                Projection::Summary
            } else {
                Projection::Full
            };
            p.tokens += extra;
            remaining -= extra;
        }
    }
    included.sort_by(|a, b| by_rank(&a.candidate, &b.candidate));
    let selected: BTreeSet<&str> = included.iter().map(|p| p.candidate.id.as_str()).collect();
    let omitted_ids = ordered
        .iter()
        .filter(|c| !selected.contains(c.id.as_str()))
        .map(|c| c.id.clone())
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

    fn cand(id: &str, rank: usize, score: f64, cluster: &str) -> Candidate {
        Candidate {
            id: id.into(),
            rank,
            score,
            costs: [10, 20, 40],
            cluster: cluster.into(),
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
        let ids: Vec<&str> = p.included.iter().map(|x| x.candidate.id.as_str()).collect();
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
}
