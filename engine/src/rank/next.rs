//! `pm next`: actionability (containers, ready, blocked), the
//! decision and held-by-others partitions, the ready ranking (leaves first, critical order,
//! relevance re-rank), the packer over the ready queue, and the recommendation's reasons.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::rank::critical::{is_in_progress, sort_critical};
use crate::rank::item::{RankItem, RankRelations};
use crate::rank::packer::{self, Candidate, Packing};
use crate::rank::relevance::{Ranking, SignalContext, derive_signals, score};
use crate::schema::RuntimeSchema;
use crate::summary::StatusClass;

/// An open blocker of an item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockerRef<'a> {
    /// The blocker id.
    pub id: &'a str,
    /// Its title, when the id names an item.
    pub title: Option<&'a str>,
    /// Its status, when the id names an item.
    pub status: Option<&'a str>,
}

/// A classified item.
#[derive(Clone, Debug)]
pub struct Actionable<'a> {
    /// The item.
    pub item: &'a RankItem,
    /// Unresolved blockers (targets that are not terminal; unknown ids stay blocking).
    pub open_blockers: Vec<BlockerRef<'a>>,
    /// Non-terminal items that name this item as a blocker.
    pub unblocks: Vec<&'a str>,
}

/// Parent → direct children (scalar `parent`) and descendant queries over a corpus.
#[derive(Clone, Debug, Default)]
pub struct Hierarchy<'a> {
    children: HashMap<&'a str, Vec<&'a RankItem>>,
}

impl<'a> Hierarchy<'a> {
    /// Indexes `corpus` by parent id.
    pub fn new(corpus: &'a [RankItem]) -> Hierarchy<'a> {
        let mut children: HashMap<&str, Vec<&RankItem>> = HashMap::new();
        for item in corpus {
            if let Some(p) = item.parent.as_deref() {
                children.entry(p).or_default().push(item);
            }
        }
        Hierarchy { children }
    }

    /// Returns true when `id` has a direct child.
    pub fn has_children(&self, id: &str) -> bool {
        self.children.get(id).is_some_and(|c| !c.is_empty())
    }

    /// Returns every descendant of `id` (depth first, each once).
    pub fn descendants(&self, id: &str) -> Vec<&'a RankItem> {
        let mut out = Vec::new();
        self.walk(id, |d| {
            out.push(d);
            false
        });
        out
    }

    /// Returns true when some descendant of `id` is not terminal (an unfinished container).
    pub fn has_open_descendant(&self, id: &str) -> bool {
        self.walk(id, |d| !d.is_terminal())
    }

    /// Visits the descendants of `id` depth first, each once, until `visit` returns true;
    /// returns whether it did.
    fn walk(&self, id: &str, mut visit: impl FnMut(&'a RankItem) -> bool) -> bool {
        if !self.children.contains_key(id) {
            return false;
        }
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        seen.insert(id);
        let mut stack: Vec<&str> = vec![id];
        while let Some(current) = stack.pop() {
            for child in self.children.get(current).into_iter().flatten() {
                if seen.insert(&child.id) {
                    if visit(child) {
                        return true;
                    }
                    stack.push(&child.id);
                }
            }
        }
        false
    }
}

/// What `next` was asked for.
#[derive(Clone, Debug)]
pub struct NextOptions {
    /// The caller (held-by-others partition, author affinity).
    pub caller: String,
    /// Clock, epoch ms.
    pub now_ms: i64,
    /// Packer budget.
    pub token_budget: u64,
    /// Keep Decision items in the ready queue.
    pub include_decisions: bool,
}

/// The computed `next` answer, before projection into rows.
#[derive(Clone, Debug)]
pub struct NextReport<'a> {
    /// The ready queue in final rank order (the first is the recommendation).
    pub ready: Vec<Actionable<'a>>,
    /// Decision items held for a human, ranked.
    pub decisions: Vec<Actionable<'a>>,
    /// Blocked items in critical order.
    pub blocked: Vec<Actionable<'a>>,
    /// Ready items assigned to someone else: `(id, assignee)`.
    pub held: Vec<(&'a str, &'a str)>,
    /// Active or blocked candidates examined.
    pub candidates: usize,
    /// Candidates skipped as containers.
    pub containers: usize,
    /// Only items with completed children were ready.
    pub completed_container: bool,
    /// The relevance ranking of the ready queue.
    pub ranking: Ranking,
    /// The packer's selection over the ready queue.
    pub packing: Packing<'a>,
}

/// Classifies `candidates` against the whole `corpus` (whose `hierarchy` is given) and ranks
/// the ready queue.
pub fn compute<'a>(
    candidates: &[&'a RankItem],
    corpus: &'a [RankItem],
    hierarchy: &Hierarchy<'a>,
    schema: &RuntimeSchema,
    opts: &NextOptions,
) -> NextReport<'a> {
    let relations = RankRelations::new(corpus);
    let mut unblocks: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for item in corpus.iter().filter(|s| !s.is_terminal()) {
        for b in relations.blockers(item) {
            unblocks.entry(b).or_default().push(&item.id);
        }
    }
    for ids in unblocks.values_mut() {
        ids.sort_by(|a, b| crate::collate::locale_compare(a, b));
    }
    // Leaf candidates with their blocker ids; the ids are then resolved in one corpus pass.
    let (mut active, mut containers) = (0, 0);
    let mut leaves: Vec<(&'a RankItem, BTreeSet<&'a str>)> = Vec::new();
    for item in candidates.iter().copied() {
        if !matches!(
            item.status_class,
            StatusClass::Active | StatusClass::Blocked
        ) {
            continue;
        }
        active += 1;
        if hierarchy.has_open_descendant(&item.id) {
            containers += 1;
            continue;
        }
        leaves.push((item, relations.blockers(item)));
    }
    let wanted: BTreeSet<&str> = leaves.iter().flat_map(|(_, b)| b.iter().copied()).collect();
    let resolved = relations.resolve(&wanted);
    let mut ready: Vec<Actionable<'a>> = Vec::new();
    let mut blocked: Vec<Actionable<'a>> = Vec::new();
    for (item, blockers) in leaves {
        let open_blockers: Vec<BlockerRef<'a>> = blockers
            .into_iter()
            .filter(|b| !resolved.is_terminal_id(b))
            .map(|id| {
                let found = resolved.item(id);
                BlockerRef {
                    id,
                    title: found.map(|i| &*i.title),
                    status: found.map(|i| &*i.status),
                }
            })
            .collect();
        let entry = Actionable {
            item,
            unblocks: unblocks.get(&*item.id).cloned().unwrap_or_default(),
            open_blockers,
        };
        if entry.open_blockers.is_empty() && item.status_class != StatusClass::Blocked {
            ready.push(entry);
        } else {
            blocked.push(entry);
        }
    }
    let (decisions, agent): (Vec<_>, Vec<_>) = ready
        .into_iter()
        .partition(|e| !opts.include_decisions && &*e.item.item_type == "Decision");
    let mut held = Vec::new();
    let mut available = Vec::new();
    for e in agent {
        match e.item.assignee.as_deref().map(str::trim) {
            Some(a) if !a.is_empty() && a != opts.caller => held.push((&*e.item.id, a)),
            _ => available.push(e),
        }
    }
    let has_children = |s: &RankItem| hierarchy.has_children(&s.id);
    let leaf_first = |list: &mut Vec<Actionable<'a>>| {
        sort_critical(list, |e| e.item, Some(&has_children), schema);
    };
    leaf_first(&mut available);
    let completed_container =
        !available.is_empty() && available.iter().all(|e| has_children(e.item));
    let structural: Vec<Actionable<'a>> = if completed_container {
        available
    } else {
        available
            .into_iter()
            .filter(|e| !has_children(e.item))
            .collect()
    };
    let items: Vec<&RankItem> = structural.iter().map(|e| e.item).collect();
    let ctx = SignalContext {
        schema,
        now_ms: opts.now_ms,
        author: Some(opts.caller.as_str()),
    };
    let ranking = score(&derive_signals(&items, &ctx));
    let packing = packer::pack(
        &candidates_of(&items, &ranking),
        opts.token_budget,
        packer::NEXT,
    );
    let mut slots: Vec<Option<Actionable<'a>>> = structural.into_iter().map(Some).collect();
    let ready: Vec<Actionable<'a>> = ranking
        .ranked
        .iter()
        .filter_map(|r| slots.get_mut(r.index).and_then(Option::take))
        .collect();
    let mut decisions = decisions;
    leaf_first(&mut decisions);
    sort_critical(&mut blocked, |e| e.item, None, schema);
    NextReport {
        ready,
        decisions,
        blocked,
        held,
        candidates: active,
        containers,
        completed_container: completed_container && !items.is_empty(),
        ranking,
        packing,
    }
}

/// Returns the packer candidates of ranked items (cluster = parent, else type).
pub fn candidates_of<'a>(items: &[&'a RankItem], ranking: &Ranking) -> Vec<Candidate<'a>> {
    ranking
        .ranked
        .iter()
        .map(|r| {
            let s = items[r.index];
            Candidate {
                id: &s.id,
                rank: r.rank,
                score: r.score,
                costs: costs(s),
                cluster: s.parent.as_deref().unwrap_or(&s.item_type),
                required: false,
            }
        })
        .collect()
}

/// Returns the UTF-8 length of `s` as a JSON string literal (`JSON.stringify`, quotes
/// included), as `crate::json::quote` writes it.
fn quoted_len(s: &str) -> usize {
    2 + s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | 0x08 | 0x0C | b'\n' | b'\r' | b'\t' => 2,
            0x00..=0x1F => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// Returns the identity, summary and full token costs of an item (compact JSON estimates):
/// the lengths of `{"id":…,"title":…}` and `{"id":…,"title":…,"type":…,"status":…,
/// "priority":…[,"parent":…]}`, counted without writing them.
pub fn costs(s: &RankItem) -> [u64; 3] {
    // `{"id":` + `,"title":` + `}`.
    let identity = 16 + quoted_len(&s.id) + quoted_len(&s.title);
    // `,"type":` + `,"status":` + `,"priority":` (+ `,"parent":`).
    let mut summary = identity
        + 30
        + quoted_len(&s.item_type)
        + quoted_len(&s.status)
        + s.priority.to_string().len();
    if let Some(p) = &s.parent {
        summary += 10 + quoted_len(p);
    }
    let identity_cost = packer::byte_tokens(identity);
    let summary_cost = packer::byte_tokens(summary).max(identity_cost);
    let full = packer::byte_tokens(s.light_len).max(summary_cost);
    [identity_cost, summary_cost, full]
}

/// Returns the recommendation's reasons: status, priority, deadline, blockers, parent,
/// unblocks.
pub fn reasons(
    entry: &Actionable<'_>,
    schema: &RuntimeSchema,
    now_ms: i64,
    completed_container: bool,
) -> Vec<String> {
    let item = entry.item;
    let mut out = vec![if is_in_progress(&item.status, schema) {
        "in progress — resume to finish".to_owned()
    } else {
        "open and ready to start".to_owned()
    }];
    if completed_container {
        out.push("completed container — governance closeout".into());
    }
    let highest = if item.priority == 0 { " (highest)" } else { "" };
    out.push(format!("priority p{}{highest}", item.priority));
    if let Some(deadline) = item.deadline().filter(|d| !d.trim().is_empty()) {
        out.push(describe_deadline(deadline, item.deadline_ms(), now_ms));
    }
    out.push(if item.own_blockers().next().is_some() {
        "all blockers resolved".into()
    } else {
        "no blockers".into()
    });
    if let Some(p) = item.parent.as_deref() {
        out.push(format!("advances {p}"));
    }
    if !entry.unblocks.is_empty() {
        out.push(format!("unblocks {} item(s)", entry.unblocks.len()));
    }
    out
}

fn describe_deadline(raw: &str, ms: Option<i64>, now_ms: i64) -> String {
    let Some(ms) = ms else {
        return format!("deadline {}", raw.trim());
    };
    let day = 86_400_000;
    let token = crate::clock::format_iso_ms(ms);
    let date = &token[..10];
    let days = ms.div_euclid(day) - now_ms.div_euclid(day);
    match days {
        d if d < 0 => format!("deadline {date} (overdue {}d)", -d),
        0 => format!("deadline {date} (due today)"),
        d => format!("deadline {date} (in {d}d)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::StatusClass;
    use serde_json::{Map, Value, json};

    /// The costs as the compact JSON texts of the projections.
    fn written_costs(s: &RankItem) -> [u64; 3] {
        let mut identity = Map::new();
        identity.insert("id".into(), json!(s.id));
        identity.insert("title".into(), json!(s.title));
        let mut summary = identity.clone();
        summary.insert("type".into(), json!(&*s.item_type));
        summary.insert("status".into(), json!(&*s.status));
        summary.insert("priority".into(), json!(s.priority));
        if let Some(p) = &s.parent {
            summary.insert("parent".into(), json!(&**p));
        }
        let t = |m: Map<String, Value>| {
            packer::json_tokens(&crate::json::to_compact(&Value::Object(m)))
        };
        let identity_cost = t(identity);
        let summary_cost = t(summary).max(identity_cost);
        [
            identity_cost,
            summary_cost,
            packer::byte_tokens(s.light_len).max(summary_cost),
        ]
    }

    #[test]
    fn counted_costs_equal_written_costs() {
        let texts = [
            "",
            "a",
            "quote \" and \\ backslash",
            "tab\tnew\nline\r\u{8}\u{c}",
            "nul \u{0} and \u{1f} and \u{7f}",
            "é ü 日本 🎉 \u{2028}",
            "a longer title with several words to pass eight bytes",
        ];
        // Padding moves each text across every multiple of four bytes: an off-by-one length
        // changes some token count.
        for (n, text, pad) in (0..4).flat_map(|pad| {
            texts
                .iter()
                .enumerate()
                .map(move |(n, t)| (n, *t, "x".repeat(pad)))
        }) {
            for priority in [0i64, 4, 12, -3] {
                for parent in [None, Some(text)] {
                    let item = RankItem {
                        key: 0,
                        id: format!("pm-{text}").into(),
                        title: format!("{text}{pad}").into(),
                        item_type: texts[(n + 1) % texts.len()].into(),
                        status: text.into(),
                        status_class: StatusClass::Active,
                        priority,
                        parent: parent.map(Into::into),
                        assignee: None,
                        updated_ms: None,
                        extra: None,
                        knowledge: 0,
                        light_len: n * 37,
                        has_schedule: false,
                    };
                    assert_eq!(costs(&item), written_costs(&item), "{text:?}");
                }
            }
        }
    }
}
