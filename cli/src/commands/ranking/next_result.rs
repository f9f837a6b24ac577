//! The typed result of `pm next`: the envelope, its rows, summary, filter echo and truncation
//! totals, in the printed key order.

use pm_engine::rank::next::{Actionable, Hierarchy};
use pm_engine::schema::RuntimeSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::rank_rows::{Details, Explain, focus_row};
use crate::read_output::envelope::Stamp;

/// An open blocker of a queued item.
#[derive(Debug, Serialize)]
pub struct Blocker<'a> {
    id: &'a str,
    title: Option<&'a str>,
    status: Option<&'a str>,
}

/// A queue row: the focus row, then its blockers, what it unblocks and its rank (from 1).
#[derive(Debug, Serialize)]
pub struct NextRow<'a> {
    #[serde(flatten)]
    focus: Map<String, Value>,
    open_blocker_count: usize,
    blockers: Vec<Blocker<'a>>,
    unblocks: &'a [&'a str],
    rank: usize,
}

/// The recommended item: its ready row with the reasons to pick it.
#[derive(Debug, Serialize)]
pub struct Recommended<'r, 'a> {
    #[serde(flatten)]
    pub row: &'r NextRow<'a>,
    pub reasons: Vec<String>,
}

/// Ready work assigned to someone else.
#[derive(Debug, Serialize)]
pub struct Held<'a> {
    pub id: &'a str,
    pub assignee: &'a str,
}

/// Queue sizes.
#[derive(Debug, Serialize)]
pub struct NextSummary {
    pub recommended: bool,
    pub ready: usize,
    pub blocked: usize,
    pub in_progress: usize,
    pub candidates: usize,
    pub containers: usize,
    pub decision_needed: usize,
    pub held_by_others: usize,
}

/// The filter echo: the selectors, then the read's own settings.
#[derive(Debug, Serialize)]
pub struct NextFilters {
    #[serde(flatten)]
    pub selectors: Map<String, Value>,
    pub limit: u64,
    pub blocked_limit: u64,
    pub ready_only: bool,
    pub include_decisions: bool,
    pub token_budget: u64,
}

/// Totals of the queues cut at the limit.
#[derive(Debug, Default, Serialize)]
pub struct Truncation {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_needed_total: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_by_others_total: Option<usize>,
}

impl Truncation {
    /// The totals of `decisions` and `held` where they exceed `limit`.
    pub fn over(limit: usize, decisions: usize, held: usize) -> Self {
        Self {
            decision_needed_total: (decisions > limit).then_some(decisions),
            held_by_others_total: (held > limit).then_some(held),
        }
    }

    fn is_empty(&self) -> bool {
        self.decision_needed_total.is_none() && self.held_by_others_total.is_none()
    }
}

/// The `pm next` envelope.
#[derive(Debug, Serialize)]
pub struct NextResult<'r, 'a> {
    #[serde(flatten)]
    pub stamp: Stamp,
    pub recommended: Option<Recommended<'r, 'a>>,
    pub ready: &'r [NextRow<'a>],
    pub decision_needed: &'r [NextRow<'a>],
    pub blocked: &'r [NextRow<'a>],
    pub held_by_others: Vec<Held<'a>>,
    pub summary: NextSummary,
    pub filters: NextFilters,
    #[serde(skip_serializing_if = "Truncation::is_empty")]
    pub truncation: Truncation,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestions: Option<Vec<String>>,
    #[serde(flatten)]
    pub explain: Option<Explain>,
}

/// Returns the rows of `list` (ranks from 1), for the first `n` entries.
pub fn rows<'a>(
    list: &'a [Actionable<'a>],
    n: usize,
    details: &Details,
    hierarchy: &Hierarchy<'_>,
    schema: &RuntimeSchema,
) -> Vec<NextRow<'a>> {
    list.iter()
        .take(n)
        .enumerate()
        .filter_map(|(i, e)| {
            Some(NextRow {
                focus: focus_row(details.get(e.item)?, hierarchy, schema),
                open_blocker_count: e.open_blockers.len(),
                blockers: (e.open_blockers.iter())
                    .map(|b| Blocker {
                        id: b.id,
                        title: b.title,
                        status: b.status,
                    })
                    .collect(),
                unblocks: &e.unblocks,
                rank: i + 1,
            })
        })
        .collect()
}

/// Returns the next steps to print when nothing is ready.
pub fn suggestions(blocked: &[Actionable<'_>]) -> Vec<String> {
    if blocked.is_empty() {
        return vec![
            "pm create --type Task --title \"...\" to add a new work item".into(),
            "pm list --status in_progress to review work already underway".into(),
            "pm context --depth deep for the full project snapshot".into(),
        ];
    }
    let first = blocked.iter().find(|e| !e.open_blockers.is_empty());
    let head = match first {
        Some(e) => format!(
            "{} item(s) are blocked; unblock the top one by closing {}",
            blocked.len(),
            e.open_blockers
                .iter()
                .map(|b| b.id)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => format!(
            "{} item(s) are blocked; add blocker context or move the top item back to an active status",
            blocked.len()
        ),
    };
    vec![
        head,
        "pm next --ready-only after a blocker closes to re-check ready work".into(),
        "pm create --type Task --title \"...\" to add new ready work".into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read_output::envelope::to_object;

    #[test]
    fn envelope_keys_keep_the_printed_order() {
        let result = NextResult {
            stamp: Stamp::toon("now".into()),
            recommended: None,
            ready: &[],
            decision_needed: &[],
            blocked: &[],
            held_by_others: vec![Held {
                id: "a",
                assignee: "b",
            }],
            summary: NextSummary {
                recommended: false,
                ready: 0,
                blocked: 0,
                in_progress: 0,
                candidates: 0,
                containers: 0,
                decision_needed: 0,
                held_by_others: 1,
            },
            filters: NextFilters {
                selectors: Map::new(),
                limit: 5,
                blocked_limit: 5,
                ready_only: false,
                include_decisions: false,
                token_budget: 640,
            },
            truncation: Truncation::over(0, 0, 1),
            suggestions: Some(vec![]),
            explain: Some(Explain {
                ranking: Value::Null,
                packing: Value::Null,
            }),
        };
        let text = serde_json::to_string(&result).unwrap_or_default();
        assert_eq!(
            text,
            concat!(
                r#"{"output_default":"toon","now":"now","recommended":null,"ready":[],"#,
                r#""decision_needed":[],"blocked":[],"held_by_others":[{"id":"a","assignee":"b"}],"#,
                r#""summary":{"recommended":false,"ready":0,"blocked":0,"in_progress":0,"#,
                r#""candidates":0,"containers":0,"decision_needed":0,"held_by_others":1},"#,
                r#""filters":{"limit":5,"blocked_limit":5,"ready_only":false,"#,
                r#""include_decisions":false,"token_budget":640},"#,
                r#""truncation":{"held_by_others_total":1},"suggestions":[],"#,
                r#""ranking":null,"packing":null}"#
            )
        );
        assert_eq!(to_object(&result).len(), 13);
    }
}
