//! Cross-item facts that some filters need: which ids are terminal (a blocker is resolved only
//! when its target is terminal), reverse `blocks` edges, and reverse hierarchy edges.

use crate::summary::{DependencyRef, ItemSummary};
use std::collections::{BTreeMap, BTreeSet};

/// Dependency kinds on an item that name its parent (`{id: P, kind}` means P is the parent).
pub const PARENT_KINDS: [&str; 2] = ["parent", "child_of"];
/// Dependency kinds on an item that name its child (`{id: C, kind}` means C is a child).
pub const CHILD_KINDS: [&str; 2] = ["child", "parent_child"];

/// Corpus-wide relations, built once from every summary of a tracker.
#[derive(Clone, Debug, Default)]
pub struct Relations {
    /// Ids of items whose status is terminal.
    terminal_ids: BTreeSet<String>,
    /// target id → ids of the items that declare `{id: target, kind: blocks}`.
    blocked_by_reverse: BTreeMap<String, BTreeSet<String>>,
    /// child id → ids of the items that declare it with a [`CHILD_KINDS`] edge.
    parents_by_child_edge: BTreeMap<String, BTreeSet<String>>,
}

impl Relations {
    /// Builds the relations of a corpus.
    pub fn from_summaries<'a>(items: impl IntoIterator<Item = &'a ItemSummary>) -> Relations {
        let mut rel = Relations::default();
        for item in items {
            rel.insert(&item.id, item.is_terminal(), &item.dependencies);
        }
        rel
    }

    /// Adds one item: its id, whether it is terminal, and its dependency edges.
    pub fn insert(&mut self, id: &str, terminal: bool, dependencies: &[DependencyRef]) {
        if terminal {
            self.terminal_ids.insert(id.to_owned());
        }
        for dep in dependencies {
            if dep.kind == "blocks" {
                self.blocked_by_reverse
                    .entry(dep.id.clone())
                    .or_default()
                    .insert(id.to_owned());
            }
            if CHILD_KINDS.contains(&dep.kind.as_str()) {
                self.parents_by_child_edge
                    .entry(dep.id.clone())
                    .or_default()
                    .insert(id.to_owned());
            }
        }
    }

    /// Returns true when some item with this id is terminal (a resolved blocker).
    pub fn is_terminal_id(&self, id: &str) -> bool {
        self.terminal_ids.contains(id)
    }

    /// Returns every blocker id of `item`: its own (scalar `blocked_by`, `blocked_by` edges)
    /// and the items that declare a `blocks` edge to it; sorted, without duplicates.
    pub fn blockers(&self, item: &ItemSummary) -> BTreeSet<String> {
        self.blockers_of(&item.id, item.own_blockers())
    }

    /// Returns every blocker id of the item `id` whose own blockers are `own`, plus the items
    /// that declare a `blocks` edge to it; sorted, without duplicates.
    pub fn blockers_of<'a>(
        &self,
        id: &str,
        own: impl Iterator<Item = &'a str>,
    ) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = own.map(str::to_string).collect();
        if let Some(reverse) = self.blocked_by_reverse.get(id) {
            out.extend(reverse.iter().cloned());
        }
        out
    }

    /// Returns true when at least one blocker of `item` is unresolved (its id is not the id of
    /// a terminal item; unknown ids stay blocking).
    pub fn has_open_blocker(&self, item: &ItemSummary) -> bool {
        item.own_blockers().any(|b| !self.is_terminal_id(b))
            || self
                .blocked_by_reverse
                .get(&item.id)
                .is_some_and(|ids| ids.iter().any(|b| !self.is_terminal_id(b)))
    }

    /// Returns true when `parent` is the logical parent of `item`: its scalar `parent`, a
    /// [`PARENT_KINDS`] edge of the item to it, or a [`CHILD_KINDS`] edge of it to the item.
    pub fn has_parent(&self, item: &ItemSummary, parent: &str) -> bool {
        item.parent.as_deref() == Some(parent)
            || item
                .dependencies
                .iter()
                .any(|d| d.id == parent && PARENT_KINDS.contains(&d.kind.as_str()))
            || self
                .parents_by_child_edge
                .get(&item.id)
                .is_some_and(|parents| parents.contains(parent))
    }
}
