//! The order of search hits: score desc, non-terminal first, priority asc, `updated_at` desc,
//! id asc (pm's comparator), then the default list order, which pm's stable sort over
//! candidates in list order keeps for hits that tie.

use std::cmp::Ordering;

use super::SearchScore;
use crate::collate::locale_compare;
use crate::summary::ItemSummary;

/// What the hit order needs of a candidate besides its score.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HitOrder {
    /// The status is terminal.
    pub terminal: bool,
    /// `priority`.
    pub priority: i64,
    /// `updated_at` in ms (`parse_timestamp(updated_at)`, as in [`ItemSummary`]).
    pub updated_ms: Option<i64>,
    /// `updated_at` as stored.
    pub updated_at: String,
    /// The id.
    pub id: String,
    /// The tracker-relative path (unique: the final tie-break).
    pub path: String,
}

impl HitOrder {
    /// Returns the order values of `item`.
    pub fn of(item: &ItemSummary) -> HitOrder {
        HitOrder {
            terminal: item.is_terminal(),
            priority: item.priority,
            updated_ms: item.updated_ms,
            updated_at: item.updated_at.clone(),
            id: item.id.clone(),
            path: item.path.clone(),
        }
    }

    /// Returns the borrowed order values.
    pub fn key(&self) -> HitKey<'_> {
        HitKey {
            terminal: self.terminal,
            priority: self.priority,
            updated_ms: self.updated_ms,
            updated_at: &self.updated_at,
            id: &self.id,
            path: &self.path,
        }
    }
}

/// [`HitOrder`] borrowed (compared before anything is allocated).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HitKey<'a> {
    /// The status is terminal.
    pub terminal: bool,
    /// `priority`.
    pub priority: i64,
    /// `updated_at` in ms.
    pub updated_ms: Option<i64>,
    /// `updated_at` as stored.
    pub updated_at: &'a str,
    /// The id.
    pub id: &'a str,
    /// The tracker-relative path.
    pub path: &'a str,
}

impl HitKey<'_> {
    /// Returns the owned order values.
    pub fn to_order(&self) -> HitOrder {
        HitOrder {
            terminal: self.terminal,
            priority: self.priority,
            updated_ms: self.updated_ms,
            updated_at: self.updated_at.to_owned(),
            id: self.id.to_owned(),
            path: self.path.to_owned(),
        }
    }
}

/// A scored hit.
pub type Hit = (HitOrder, SearchScore);

/// Collects hits in hit order, keeping only the first `keep` when given: candidates that
/// cannot be among them are refused before their order values are copied, so memory stays
/// proportional to `keep`, not to the number of hits.
#[derive(Clone, Debug)]
pub struct Ranking {
    keep: Option<usize>,
    hits: Vec<Hit>,
    /// The worst kept hit once a full set is kept: later candidates must beat it.
    bar: Option<Hit>,
    total: usize,
}

impl Ranking {
    /// Returns an empty ranking keeping the first `keep` hits (all when `None`).
    pub fn new(keep: Option<usize>) -> Ranking {
        Ranking {
            keep,
            hits: Vec::new(),
            bar: None,
            total: 0,
        }
    }

    /// Offers one hit.
    pub fn offer(&mut self, score: SearchScore, key: &HitKey<'_>) {
        self.total += 1;
        let Some(keep) = self.keep else {
            self.hits.push((key.to_order(), score));
            return;
        };
        if keep == 0 {
            return;
        }
        if let Some((order, s)) = &self.bar
            && compare_hits(score.score, key, s.score, &order.key()) != Ordering::Less
        {
            // Not better than the worst of `keep` hits already seen.
            return;
        }
        self.hits.push((key.to_order(), score));
        if self.hits.len() >= keep.saturating_mul(2).max(64) {
            self.cut(keep);
            self.bar = self.hits.last().cloned();
        }
    }

    /// Keeps the first `keep` hits (unordered).
    fn cut(&mut self, keep: usize) {
        if keep < self.hits.len() {
            self.hits
                .select_nth_unstable_by(keep - 1, |(a, x), (b, y)| {
                    compare_hits(x.score, &a.key(), y.score, &b.key())
                });
            self.hits.truncate(keep);
        }
    }

    /// Returns the kept hits in hit order and the number of hits offered.
    pub fn finish(mut self) -> (Vec<Hit>, usize) {
        match self.keep {
            Some(0) => self.hits.clear(),
            Some(keep) => self.cut(keep),
            None => {}
        }
        self.hits
            .sort_unstable_by(|(a, x), (b, y)| compare_hits(x.score, &a.key(), y.score, &b.key()));
        (self.hits, self.total)
    }
}

/// Orders two scored candidates (a total order).
///
/// pm's comparator: score desc, non-terminal first, priority asc, `updated_at` desc (as
/// timestamps when both parse and differ, else `localeCompare`), id asc (`localeCompare`).
/// pm sorts candidates taken in default list order with a stable sort, so hits that tie keep
/// that order: `updated_ms` desc, `updated_at` desc, id asc, path — the remaining keys of
/// `Sort::default_order()` once terminal and priority are equal.
pub fn compare_hits(a_score: f64, a: &HitKey<'_>, b_score: f64, b: &HitKey<'_>) -> Ordering {
    b_score
        .partial_cmp(&a_score)
        .unwrap_or(Ordering::Equal)
        .then(a.terminal.cmp(&b.terminal))
        .then(a.priority.cmp(&b.priority))
        .then_with(|| match (a.updated_ms, b.updated_ms) {
            (Some(x), Some(y)) if x != y => y.cmp(&x),
            _ => locale_compare(b.updated_at, a.updated_at),
        })
        .then_with(|| locale_compare(a.id, b.id))
        .then_with(|| b.updated_ms.cmp(&a.updated_ms))
        .then_with(|| locale_compare(b.updated_at, a.updated_at))
        .then_with(|| locale_compare(a.id, b.id))
        .then_with(|| a.path.cmp(b.path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::{Sort, SortAnchor};
    use crate::timestamp::{compare_timestamp_strings, parse_timestamp};
    use proptest::prelude::*;

    fn order(terminal: bool, priority: i64, updated_at: &str, id: &str, path: &str) -> HitOrder {
        HitOrder {
            terminal,
            priority,
            updated_ms: parse_timestamp(updated_at),
            updated_at: updated_at.into(),
            id: id.into(),
            path: path.into(),
        }
    }

    #[test]
    fn hit_order_breaks_ties() {
        let t = "2026-01-01T00:00:00.000Z";
        let mut hits = [
            (65.0, order(false, 2, t, "b", "b")),
            (65.0, order(true, 0, t, "a", "a")),
            (66.0, order(true, 4, t, "z", "z")),
            (65.0, order(false, 0, t, "c", "c")),
        ];
        hits.sort_by(|a, b| compare_hits(a.0, &a.1.key(), b.0, &b.1.key()));
        let ids: Vec<&str> = hits.iter().map(|h| h.1.id.as_str()).collect();
        assert_eq!(ids, ["z", "c", "b", "a"]);
    }

    fn score_of(score: f64) -> SearchScore {
        SearchScore {
            score,
            matched: Default::default(),
            matched_all_terms: false,
            exact_id: false,
        }
    }

    const TIMES: [&str; 5] = [
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:00Z",
        "2026-01-02T00:00:00.000Z",
        "not a time",
        "",
    ];
    const IDS: [&str; 6] = ["pm-a", "pm-B", "pm-b", "pm-a1", "pm-e\u{301}", "pm-\u{e9}"];

    proptest! {
        /// The order equals pm's: a stable sort by (score, terminal, priority, updated_at
        /// as timestamps, id) of candidates in default list order.
        #[test]
        fn equals_a_stable_sort_of_list_ordered_candidates(
            rows in proptest::collection::vec(
                (0u8..3, any::<bool>(), 0i64..3, 0..TIMES.len(), 0..IDS.len()), 0..200)
        ) {
            let hits: Vec<(f64, HitOrder)> = rows
                .iter()
                .enumerate()
                .map(|(n, (s, term, p, t, i))| {
                    (f64::from(*s), order(*term, *p, TIMES[*t], IDS[*i], &format!("f{n:02}")))
                })
                .collect();
            let anchor = |h: &HitOrder| SortAnchor {
                terminal: h.terminal,
                priority: h.priority,
                updated_ms: h.updated_ms,
                updated_at: h.updated_at.clone(),
                id: h.id.clone(),
                path: h.path.clone(),
                ..SortAnchor::default()
            };
            let mut reference = hits.clone();
            reference.sort_by(|a, b| Sort::default_order().compare_anchors(&anchor(&a.1), &anchor(&b.1)));
            reference.sort_by(|a, b| {
                b.0.partial_cmp(&a.0)
                    .unwrap_or(Ordering::Equal)
                    .then(a.1.terminal.cmp(&b.1.terminal))
                    .then(a.1.priority.cmp(&b.1.priority))
                    .then_with(|| compare_timestamp_strings(&b.1.updated_at, &a.1.updated_at))
                    .then_with(|| locale_compare(&a.1.id, &b.1.id))
            });
            let mut ours = hits.clone();
            ours.sort_unstable_by(|a, b| compare_hits(a.0, &a.1.key(), b.0, &b.1.key()));
            prop_assert_eq!(&ours, &reference);
            // A ranking keeping the first `keep` hits returns that prefix and the total.
            for keep in [None, Some(0), Some(1), Some(3), Some(40)] {
                let mut ranking = Ranking::new(keep);
                for (score, order) in &hits {
                    ranking.offer(score_of(*score), &order.key());
                }
                let (kept, total) = ranking.finish();
                let n = keep.unwrap_or(usize::MAX).min(hits.len());
                let kept: Vec<(f64, HitOrder)> = kept.into_iter().map(|(o, s)| (s.score, o)).collect();
                prop_assert_eq!(&kept[..], &reference[..n]);
                prop_assert_eq!(total, hits.len());
            }
        }
    }
}
