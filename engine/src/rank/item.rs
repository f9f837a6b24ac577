//! `RankItem`, the compact row `context` and `next` rank: only the fields the critical order,
//! relevance signals, packer costs, actionability and agenda pre-selection read. Derived from
//! an `ItemSummary` here (scan path); the index reads the same fields from its columns.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::query::Relations;
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
    /// `parent` (trimmed, non-empty).
    pub parent: Option<Box<str>>,
    /// `assignee` (trimmed, non-empty).
    pub assignee: Option<Box<str>>,
    /// `updated_at` in epoch ms.
    pub updated_ms: Option<i64>,
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
    /// comments + notes + learnings.
    pub knowledge: u32,
    /// Bytes of the compact light metadata JSON.
    pub light_len: usize,
    /// The light metadata has a [`SCHEDULE_KEYS`] array (reminders or scheduled events).
    pub has_schedule: bool,
}

/// Shares equal strings (types, statuses) between rows.
#[derive(Clone, Debug, Default)]
pub struct Interner {
    known: BTreeSet<Arc<str>>,
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

/// Returns `order` of light metadata (a JSON number), as `ItemSummary::order` derives it.
pub fn light_order(light: &Map<String, Value>) -> Option<f64> {
    light.get("order").and_then(Value::as_f64)
}

/// Returns true when light metadata has a [`SCHEDULE_KEYS`] array.
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
        RankItem {
            key,
            id: s.id.as_str().into(),
            title: s.title.as_str().into(),
            item_type: interner.get(&s.item_type),
            status: interner.get(&s.status),
            status_class: s.status_class,
            priority: s.priority,
            parent: boxed(s.parent.as_ref()),
            assignee: boxed(s.assignee.as_ref()),
            updated_ms: s.updated_ms,
            deadline: boxed(s.deadline.as_ref()),
            deadline_ms: s.deadline_ms,
            order: s.order,
            risk: boxed(s.risk.as_ref()),
            blocked_by: boxed(s.blocked_by.as_ref()),
            blocking: s
                .dependencies
                .iter()
                .filter(|d| is_blocking(&d.kind))
                .cloned()
                .collect(),
            knowledge: c.comments + c.notes + c.learnings,
            light_len: crate::json::to_compact(&Value::Object(s.light.clone())).len(),
            has_schedule: light_has_schedule(&s.light),
        }
    }

    /// Returns true when the status is terminal.
    pub fn is_terminal(&self) -> bool {
        self.status_class == StatusClass::Terminal
    }

    /// Returns the ids that block this item by its own data (`ItemSummary::own_blockers`).
    pub fn own_blockers(&self) -> impl Iterator<Item = &str> {
        own_blockers_of(self.blocked_by.as_deref(), &self.blocking)
    }
}

/// Returns the blocking relations of a corpus of ranking rows: terminal ids and reverse
/// `blocks` edges (hierarchy edges are not kept in ranking rows, so `has_parent` is not
/// answered by this value).
pub fn blocking_relations(corpus: &[RankItem]) -> Relations {
    let mut rel = Relations::default();
    for item in corpus {
        rel.insert(&item.id, item.is_terminal(), &item.blocking);
    }
    rel
}

/// Returns every blocker id of `item` (own and reverse `blocks` edges), sorted.
pub fn blockers(relations: &Relations, item: &RankItem) -> BTreeSet<String> {
    relations.blockers_of(&item.id, item.own_blockers())
}
