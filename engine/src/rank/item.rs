//! `RankItem`, the compact row `context` and `next` rank: only the fields the critical order,
//! relevance signals, packer costs, actionability and agenda pre-selection read. Derived from
//! an `ItemSummary` here (scan path); the index reads the same fields from its columns.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::summary::{DependencyRef, ItemSummary, StatusClass, own_blockers_of};

/// Dependency kinds a ranking row keeps: the edges that block (`blocks` reverse, `blocked_by`).
pub const BLOCKING_KINDS: [&str; 2] = ["blocks", "blocked_by"];

/// Top-level light metadata keys whose array values feed the context agenda.
pub const SCHEDULE_KEYS: [&str; 2] = ["reminders", "events"];

/// The ranking row of one item.
///
/// Strings that repeat across a tracker (type, status) are shared; the light metadata is not
/// kept, only its compact length (the packer's full-projection cost). The row's `key` finds the
/// whole summary again (`pm_index::Index::rank_details`).
///
/// A terminal item is never a candidate, a printed row or an agenda entry: it only resolves
/// blockers and counts in hierarchy roll-ups. Its row keeps `key`, `id`, `item_type`, `status`,
/// `status_class`, `priority`, `parent`, `blocked_by` and `blocking`; the other fields are
/// empty (`""`, `None`, `0`, `false`).
#[derive(Clone, Debug, PartialEq)]
pub struct RankItem {
    /// Handle of the item for fetching its summary: the index row key, or the position in the
    /// scanned summaries.
    pub key: i64,
    /// `id`.
    pub id: Box<str>,
    /// `title`.
    pub title: Box<str>,
    /// `type`.
    pub item_type: Arc<str>,
    /// `status`.
    pub status: Arc<str>,
    /// The lifecycle class of the status.
    pub status_class: StatusClass,
    /// `priority`.
    pub priority: i64,
    /// `parent` (trimmed, non-empty; equal ids share one string).
    pub parent: Option<Arc<str>>,
    /// `assignee` (trimmed, non-empty; equal names share one string).
    pub assignee: Option<Arc<str>>,
    /// `updated_at` in epoch ms.
    pub updated_ms: Option<i64>,
    /// The fields most items leave empty (`None` when all of them are).
    pub extra: Option<Box<RankExtra>>,
    /// comments + notes + learnings.
    pub knowledge: u32,
    /// Bytes of the compact light metadata JSON.
    pub light_len: usize,
    /// The light metadata has a [`SCHEDULE_KEYS`] array (reminders or scheduled events).
    pub has_schedule: bool,
}

/// The fields of a ranking row that most items leave empty, kept out of line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RankExtra {
    /// `deadline` as stored.
    pub deadline: Option<Box<str>>,
    /// `deadline` in epoch ms.
    pub deadline_ms: Option<i64>,
    /// `order`.
    pub order: Option<f64>,
    /// `risk`.
    pub risk: Option<Box<str>>,
    /// Scalar `blocked_by`.
    pub blocked_by: Option<Box<str>>,
    /// The dependency edges whose kind is one of [`BLOCKING_KINDS`], in file order.
    pub blocking: Vec<DependencyRef>,
}

impl RankExtra {
    /// Returns the fields boxed, or `None` when all of them are empty.
    pub fn boxed(self) -> Option<Box<RankExtra>> {
        (self != RankExtra::default()).then(|| Box::new(self))
    }
}

/// Shares equal strings (types, statuses, assignees, parent ids) between rows.
#[derive(Clone, Debug, Default)]
pub struct Interner {
    known: HashSet<Arc<str>>,
}

impl Interner {
    /// Returns the shared copy of `s`.
    pub fn get(&mut self, s: &str) -> Arc<str> {
        if let Some(found) = self.known.get(s) {
            return Arc::clone(found);
        }
        let shared: Arc<str> = Arc::from(s);
        self.known.insert(Arc::clone(&shared));
        shared
    }
}

/// Returns `order` of light metadata (a JSON number), as `ItemSummary::order` derives it (the
/// index stores it as `items.rank_order`).
pub fn light_order(light: &Map<String, Value>) -> Option<f64> {
    light.get("order").and_then(Value::as_f64)
}

/// Returns true when light metadata has a [`SCHEDULE_KEYS`] array (the index stores it as
/// `items.has_schedule`).
pub fn light_has_schedule(light: &Map<String, Value>) -> bool {
    SCHEDULE_KEYS
        .iter()
        .any(|k| light.get(*k).is_some_and(Value::is_array))
}

/// Returns true when `kind` is one of [`BLOCKING_KINDS`].
pub fn is_blocking(kind: &str) -> bool {
    BLOCKING_KINDS.contains(&kind)
}

fn boxed(s: Option<&String>) -> Option<Box<str>> {
    s.map(|s| s.as_str().into())
}

impl RankItem {
    /// Returns the ranking row of a summary, with handle `key`.
    pub fn of(s: &ItemSummary, key: i64, interner: &mut Interner) -> RankItem {
        let c = &s.facts.counts;
        let blocking: Vec<DependencyRef> = s
            .dependencies
            .iter()
            .filter(|d| is_blocking(&d.kind))
            .cloned()
            .collect();
        if s.status_class == StatusClass::Terminal {
            return RankItem {
                key,
                id: s.id.as_str().into(),
                title: Box::default(),
                item_type: interner.get(&s.item_type),
                status: interner.get(&s.status),
                status_class: s.status_class,
                priority: s.priority,
                parent: s.parent.as_deref().map(|p| interner.get(p)),
                assignee: None,
                updated_ms: None,
                extra: RankExtra {
                    blocked_by: boxed(s.blocked_by.as_ref()),
                    blocking,
                    ..RankExtra::default()
                }
                .boxed(),
                knowledge: 0,
                light_len: 0,
                has_schedule: false,
            };
        }
        RankItem {
            key,
            id: s.id.as_str().into(),
            title: s.title.as_str().into(),
            item_type: interner.get(&s.item_type),
            status: interner.get(&s.status),
            status_class: s.status_class,
            priority: s.priority,
            parent: s.parent.as_deref().map(|p| interner.get(p)),
            assignee: s.assignee.as_deref().map(|a| interner.get(a)),
            updated_ms: s.updated_ms,
            extra: RankExtra {
                deadline: boxed(s.deadline.as_ref()),
                deadline_ms: s.deadline_ms,
                order: s.order,
                risk: boxed(s.risk.as_ref()),
                blocked_by: boxed(s.blocked_by.as_ref()),
                blocking,
            }
            .boxed(),
            knowledge: c.comments + c.notes + c.learnings,
            light_len: crate::json::to_compact(&Value::Object(s.light.clone())).len(),
            has_schedule: light_has_schedule(&s.light),
        }
    }

    /// `deadline` as stored.
    pub fn deadline(&self) -> Option<&str> {
        self.extra.as_ref()?.deadline.as_deref()
    }

    /// `deadline` in epoch ms.
    pub fn deadline_ms(&self) -> Option<i64> {
        self.extra.as_ref()?.deadline_ms
    }

    /// `order`.
    pub fn order(&self) -> Option<f64> {
        self.extra.as_ref()?.order
    }

    /// `risk`.
    pub fn risk(&self) -> Option<&str> {
        self.extra.as_ref()?.risk.as_deref()
    }

    /// Scalar `blocked_by`.
    pub fn blocked_by(&self) -> Option<&str> {
        self.extra.as_ref()?.blocked_by.as_deref()
    }

    /// The dependency edges whose kind is one of [`BLOCKING_KINDS`], in file order.
    pub fn blocking(&self) -> &[DependencyRef] {
        self.extra.as_ref().map_or(&[], |e| &e.blocking)
    }

    /// Returns true when the status is terminal.
    pub fn is_terminal(&self) -> bool {
        self.status_class == StatusClass::Terminal
    }

    /// Returns the ids that block this item by its own data (`ItemSummary::own_blockers`).
    pub fn own_blockers(&self) -> impl Iterator<Item = &str> {
        own_blockers_of(self.blocked_by(), self.blocking())
    }
}

/// The blocking relations of a corpus of ranking rows, borrowing its ids: reverse `blocks`
/// edges; blocker ids are resolved against the corpus in one pass ([`RankRelations::resolve`]).
#[derive(Debug)]
pub struct RankRelations<'a> {
    corpus: &'a [RankItem],
    /// target id → ids of the items that declare `{id: target, kind: blocks}`.
    reverse: BTreeMap<&'a str, BTreeSet<&'a str>>,
}

/// What the corpus says about a set of ids: which are ids of terminal items, and the last
/// item of each id.
#[derive(Clone, Debug, Default)]
pub struct Resolved<'a> {
    terminal: BTreeSet<&'a str>,
    items: BTreeMap<&'a str, &'a RankItem>,
}

impl<'a> Resolved<'a> {
    /// Returns true when some item with this id is terminal (a resolved blocker).
    pub fn is_terminal_id(&self, id: &str) -> bool {
        self.terminal.contains(id)
    }

    /// Returns the last item (in corpus order) with this id.
    pub fn item(&self, id: &str) -> Option<&'a RankItem> {
        self.items.get(id).copied()
    }
}

impl<'a> RankRelations<'a> {
    /// Indexes the `blocks` edges of `corpus`.
    pub fn new(corpus: &'a [RankItem]) -> RankRelations<'a> {
        let mut reverse: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for item in corpus {
            for dep in item.blocking().iter().filter(|d| d.kind == "blocks") {
                reverse.entry(&dep.id).or_default().insert(&item.id);
            }
        }
        RankRelations { corpus, reverse }
    }

    /// Returns every blocker id of `item` (own and reverse `blocks` edges), sorted, without
    /// duplicates.
    pub fn blockers<'b>(&self, item: &'b RankItem) -> BTreeSet<&'b str>
    where
        'a: 'b,
    {
        let mut out: BTreeSet<&'b str> = item.own_blockers().collect();
        if let Some(reverse) = self.reverse.get(&*item.id) {
            out.extend(reverse.iter().copied());
        }
        out
    }

    /// Resolves `ids` against the corpus in one pass (nothing when `ids` is empty).
    pub fn resolve(&self, ids: &BTreeSet<&str>) -> Resolved<'a> {
        let mut out = Resolved::default();
        if ids.is_empty() {
            return out;
        }
        // A hash probe per corpus item: a tree search compared strings a dozen times each.
        let wanted: std::collections::HashSet<&str> = ids.iter().copied().collect();
        for item in self.corpus.iter().filter(|s| wanted.contains(&*s.id)) {
            if item.is_terminal() {
                out.terminal.insert(&item.id);
            }
            out.items.insert(&item.id, item);
        }
        out
    }
}
