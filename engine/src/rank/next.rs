//! `pm next` (index-ranking-bench §4.3): actionability (containers, ready, blocked), the
//! decision and held-by-others partitions, the ready ranking (leaves first, critical order,
//! relevance re-rank), the packer over the ready queue, and the recommendation's reasons.

use std::collections::{BTreeMap, BTreeSet};

use crate::rank::critical::{compare_critical, is_in_progress};
use crate::rank::item::{RankItem, blockers, blocking_relations};
use crate::rank::packer::{self, Candidate, Packing};
use crate::rank::relevance::{Ranking, SignalContext, derive_signals, score};
use crate::schema::RuntimeSchema;
use crate::summary::StatusClass;

/// An open blocker of an item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockerRef {
    /// The blocker id.
    pub id: String,
    /// Its title, when the id names an item.
    pub title: Option<String>,
    /// Its status, when the id names an item.
    pub status: Option<String>,
}

/// A classified item.
#[derive(Clone, Debug)]
pub struct Actionable<'a> {
    /// The item.
    pub item: &'a RankItem,
    /// Unresolved blockers (targets that are not terminal; unknown ids stay blocking).
    pub open_blockers: Vec<BlockerRef>,
    /// Non-terminal items that name this item as a blocker.
    pub unblocks: Vec<String>,
}

/// Parent → direct children (scalar `parent`) and descendant queries over a corpus.
#[derive(Clone, Debug, Default)]
pub struct Hierarchy<'a> {
    children: BTreeMap<&'a str, Vec<&'a RankItem>>,
}

impl<'a> Hierarchy<'a> {
    /// Indexes `corpus` by parent id.
    pub fn new(corpus: &'a [RankItem]) -> Hierarchy<'a> {
        let mut children: BTreeMap<&str, Vec<&RankItem>> = BTreeMap::new();
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
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        seen.insert(id);
        let mut stack: Vec<&str> = vec![id];
        while let Some(current) = stack.pop() {
            for child in self.children.get(current).into_iter().flatten() {
                if seen.insert(&child.id) {
                    out.push(*child);
                    stack.push(&child.id);
                }
            }
        }
        out
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
    pub held: Vec<(String, String)>,
    /// Active or blocked candidates examined.
    pub candidates: usize,
    /// Candidates skipped as containers.
    pub containers: usize,
    /// Only items with completed children were ready.
    pub completed_container: bool,
    /// The relevance ranking of the ready queue.
    pub ranking: Ranking,
    /// The packer's selection over the ready queue.
    pub packing: Packing,
}

fn blocker_ref(id: &str, by_id: &BTreeMap<&str, &RankItem>) -> BlockerRef {
    let item = by_id.get(id);
    BlockerRef {
        id: id.to_owned(),
        title: item.map(|i| i.title.to_string()),
        status: item.map(|i| i.status.to_string()),
    }
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
    let relations = blocking_relations(corpus);
    let by_id: BTreeMap<&str, &RankItem> = corpus.iter().map(|s| (&*s.id, s)).collect();
    let mut unblocks: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for item in corpus.iter().filter(|s| !s.is_terminal()) {
        for b in blockers(&relations, item) {
            unblocks.entry(b).or_default().push(item.id.to_string());
        }
    }
    for ids in unblocks.values_mut() {
        ids.sort_by(|a, b| crate::collate::locale_compare(a, b));
    }
    let mut ready: Vec<Actionable<'a>> = Vec::new();
    let mut blocked: Vec<Actionable<'a>> = Vec::new();
    let (mut active, mut containers) = (0, 0);
    for item in candidates.iter().copied() {
        if !matches!(
            item.status_class,
            StatusClass::Active | StatusClass::Blocked
        ) {
            continue;
        }
        active += 1;
        if hierarchy
            .descendants(&item.id)
            .iter()
            .any(|d| !d.is_terminal())
        {
            containers += 1;
            continue;
        }
        let open_blockers: Vec<BlockerRef> = blockers(&relations, item)
            .iter()
            .filter(|b| !relations.is_terminal_id(b))
            .map(|b| blocker_ref(b, &by_id))
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
            Some(a) if !a.is_empty() && a != opts.caller => {
                held.push((e.item.id.to_string(), a.to_owned()))
            }
            _ => available.push(e),
        }
    }
    let leaf_first = |list: &mut Vec<Actionable<'a>>| {
        list.sort_by(|a, b| {
            hierarchy
                .has_children(&a.item.id)
                .cmp(&hierarchy.has_children(&b.item.id))
                .then_with(|| compare_critical(a.item, b.item, schema))
        });
    };
    leaf_first(&mut available);
    let concrete: Vec<Actionable<'a>> = available
        .iter()
        .filter(|e| !hierarchy.has_children(&e.item.id))
        .cloned()
        .collect();
    let completed_container = concrete.is_empty() && !available.is_empty();
    let structural = if concrete.is_empty() {
        available
    } else {
        concrete
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
    let ready: Vec<Actionable<'a>> = ranking
        .ranked
        .iter()
        .map(|r| structural[r.index].clone())
        .collect();
    let mut decisions = decisions;
    leaf_first(&mut decisions);
    blocked.sort_by(|a, b| compare_critical(a.item, b.item, schema));
    NextReport {
        ready,
        decisions,
        blocked,
        held,
        candidates: active,
        containers,
        completed_container: completed_container && !structural.is_empty(),
        ranking,
        packing,
    }
}

/// Returns the packer candidates of ranked items (cluster = parent, else type).
pub fn candidates_of(items: &[&RankItem], ranking: &Ranking) -> Vec<Candidate> {
    ranking
        .ranked
        .iter()
        .map(|r| {
            let s = items[r.index];
            Candidate {
                id: s.id.to_string(),
                rank: r.rank,
                score: r.score,
                costs: costs(s),
                cluster: s.parent.as_deref().unwrap_or(&s.item_type).to_owned(),
                required: false,
            }
        })
        .collect()
}

/// Returns the identity, summary and full token costs of an item (compact JSON estimates).
pub fn costs(s: &RankItem) -> [u64; 3] {
    use serde_json::{Map, Value, json};
    let mut identity = Map::new();
    identity.insert("id".into(), json!(s.id));
    identity.insert("title".into(), json!(s.title));
    let mut summary = identity.clone();
    summary.insert("type".into(), json!(&*s.item_type));
    summary.insert("status".into(), json!(&*s.status));
    summary.insert("priority".into(), json!(s.priority));
    if let Some(p) = &s.parent {
        summary.insert("parent".into(), json!(p));
    }
    let t =
        |m: Map<String, Value>| packer::json_tokens(&crate::json::to_compact(&Value::Object(m)));
    let identity_cost = t(identity);
    let summary_cost = t(summary).max(identity_cost);
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
    if let Some(deadline) = item.deadline.as_deref().filter(|d| !d.trim().is_empty()) {
        out.push(describe_deadline(deadline, item.deadline_ms, now_ms));
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
