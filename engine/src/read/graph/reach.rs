//! The items a read from one item can touch (`pm deps <id>`, `pm graph <traversal> <id>`):
//! a breadth-first walk that asks an [`ItemSource`] for a frontier's items and the items
//! referring to them, so the graph code runs on that subset instead of every item.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::deps::declared_targets;
use super::model::{Direction, GraphItem, declared_edges};

/// Which edges a walk follows: those of [`super::deps::DepsIndex`] (declared dependencies,
/// `pm deps`) or of [`super::ItemGraph`] (parent links and normalized dependencies, `pm graph`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeModel {
    /// Declared edges: `dependencies[]`, scalar `blocked_by`, a parent that names no item.
    Declared,
    /// The item graph's normalized edges.
    Graph,
}

/// Which edge kinds (by name) a walk follows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KindFilter {
    /// Every kind.
    All,
    /// Only these kinds.
    Only(BTreeSet<String>),
    /// Every kind but these.
    Except(BTreeSet<String>),
}

impl KindFilter {
    /// Returns true when edges of `kind` are followed.
    pub fn allows(&self, kind: &str) -> bool {
        match self {
            KindFilter::All => true,
            KindFilter::Only(kinds) => kinds.contains(kind),
            KindFilter::Except(kinds) => !kinds.contains(kind),
        }
    }
}

/// What a read walks: from which model, which way, over which kinds, how far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reach {
    /// The edges.
    pub model: EdgeModel,
    /// Which way edges are followed.
    pub direction: Direction,
    /// Which kinds are followed.
    pub kinds: KindFilter,
    /// Do not expand nodes at this distance (`None`: no bound).
    pub max_depth: Option<usize>,
    /// Ids whose items belong to the subset whether reached or not (a path's target).
    pub also: Vec<String>,
}

/// Where a walk reads items. Every item comes with a key that orders items as the full item
/// list does (the index's `item_key`); an item may be returned more than once.
pub trait ItemSource {
    /// The source's failure.
    type Error;

    /// Returns every item whose id is one of `ids`.
    ///
    /// # Errors
    /// The source's failures.
    fn items_with_ids(&mut self, ids: &[String]) -> Result<Vec<(i64, GraphItem)>, Self::Error>;

    /// Returns at least every item that refers to one of `ids`: its `parent` or `blocked_by`,
    /// or a `dependencies[]` target, equals the id after trimming (more items are fine).
    ///
    /// # Errors
    /// The source's failures.
    fn items_referring_to(&mut self, ids: &[String]) -> Result<Vec<(i64, GraphItem)>, Self::Error>;
}

/// Returns the items a read from `start` under `reach` can touch, in key order: every node
/// within `max_depth` of `start` with all of its edges (in both directions) and the items at
/// their other ends. The graph and dependency code answers the same over this subset as over
/// every item, for traversals from `start` bounded by `max_depth` in `reach.direction`.
///
/// # Errors
/// The source's failures.
pub fn reachable_items<S: ItemSource>(
    source: &mut S,
    start: &str,
    reach: &Reach,
) -> Result<Vec<GraphItem>, S::Error> {
    let mut walk = Walk {
        rows: BTreeMap::new(),
        by_id: HashMap::new(),
        fetched: HashSet::new(),
    };
    let mut first: Vec<String> = vec![start.to_owned()];
    first.extend(reach.also.iter().cloned());
    walk.fetch_ids(source, first)?;
    let incoming = reach.model == EdgeModel::Graph || reach.direction != Direction::Out;
    let mut depth_of: HashSet<String> = HashSet::from([start.to_owned()]);
    let mut frontier: Vec<String> = vec![start.to_owned()];
    let mut depth = 0usize;
    while !frontier.is_empty() {
        walk.fetch_ids(source, frontier.clone())?;
        let referrers: Vec<i64> = if incoming {
            walk.add(source.items_referring_to(&frontier)?)
        } else {
            Vec::new()
        };
        // The items at the other end of the frontier's own edges (their existence decides a
        // missing node, and for declared edges whether a parent is an edge).
        let mut refs: Vec<String> = Vec::new();
        for id in &frontier {
            for item in walk.own(id) {
                refs.extend(references(item));
            }
        }
        walk.fetch_ids(source, refs)?;
        if reach.max_depth.is_some_and(|max| depth >= max) {
            break;
        }
        let wanted: HashSet<&str> = frontier.iter().map(String::as_str).collect();
        let mut next: Vec<String> = Vec::new();
        let mut push = |id: &str, next: &mut Vec<String>| {
            if !depth_of.contains(id) {
                depth_of.insert(id.to_owned());
                next.push(id.to_owned());
            }
        };
        for id in &frontier {
            for n in walk.neighbours_own(id, reach) {
                push(&n, &mut next);
            }
        }
        for key in &referrers {
            let item = &walk.rows[key];
            for (target, outgoing_from_target, kind) in walk.edges_of(item, reach.model) {
                if !wanted.contains(target.as_str()) || !reach.kinds.allows(&kind) {
                    continue;
                }
                let follows = match reach.direction {
                    Direction::Out => outgoing_from_target,
                    Direction::In => !outgoing_from_target,
                    Direction::Both => true,
                };
                if follows {
                    push(&item.id, &mut next);
                }
            }
        }
        if reach.model == EdgeModel::Graph {
            // The item graph never expands a node that names no item.
            next.retain(|id| walk.is_item(id));
        }
        walk.fetch_ids(source, next.clone())?;
        frontier = next;
        depth += 1;
    }
    Ok(walk.rows.into_values().collect())
}

/// Every id an item refers to, raw and trimmed (a superset of its edges' other ends).
fn references(item: &GraphItem) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in [&item.parent, &item.blocked_by].into_iter().flatten() {
        out.push(raw.clone());
        out.push(raw.trim().to_owned());
    }
    out.extend(item.dependencies.iter().map(|d| d.id.trim().to_owned()));
    out
}

/// The subset fetched so far.
struct Walk {
    rows: BTreeMap<i64, GraphItem>,
    by_id: HashMap<String, Vec<i64>>,
    fetched: HashSet<String>,
}

impl Walk {
    /// Adds items; returns their keys.
    fn add(&mut self, items: Vec<(i64, GraphItem)>) -> Vec<i64> {
        let mut keys = Vec::with_capacity(items.len());
        for (key, item) in items {
            keys.push(key);
            if let std::collections::btree_map::Entry::Vacant(slot) = self.rows.entry(key) {
                let keys = self.by_id.entry(item.id.clone()).or_default();
                keys.push(key);
                keys.sort_unstable();
                slot.insert(item);
            }
        }
        keys
    }

    /// Fetches the items of the ids not fetched yet.
    fn fetch_ids<S: ItemSource>(
        &mut self,
        source: &mut S,
        ids: Vec<String>,
    ) -> Result<(), S::Error> {
        let mut todo: Vec<String> = Vec::new();
        for id in ids {
            if self.fetched.insert(id.clone()) {
                todo.push(id);
            }
        }
        if !todo.is_empty() {
            let found = source.items_with_ids(&todo)?;
            self.add(found);
        }
        Ok(())
    }

    fn is_item(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// The items with this id, in key order.
    fn own<'a>(&'a self, id: &str) -> impl Iterator<Item = &'a GraphItem> + 'a {
        self.by_id
            .get(id)
            .into_iter()
            .flatten()
            .map(|key| &self.rows[key])
    }

    /// The edges `item` declares under `model`, as `(other end, the edge leaves the other
    /// end, kind)`.
    fn edges_of(&self, item: &GraphItem, model: EdgeModel) -> Vec<(String, bool, String)> {
        match model {
            EdgeModel::Declared => declared_targets(item, |id| self.is_item(id))
                .into_iter()
                .map(|(target, via)| (target, false, via))
                .collect(),
            EdgeModel::Graph => declared_edges(item)
                .into_iter()
                .map(|e| (e.other.to_owned(), !e.outgoing, e.kind.name().to_owned()))
                .collect(),
        }
    }

    /// The neighbours of `id` through the edges its own items declare.
    fn neighbours_own(&self, id: &str, reach: &Reach) -> Vec<String> {
        let mut out = Vec::new();
        for item in self.own(id) {
            for (other, from_other, kind) in self.edges_of(item, reach.model) {
                if !reach.kinds.allows(&kind) {
                    continue;
                }
                let follows = match reach.direction {
                    Direction::Out => !from_other,
                    Direction::In => from_other,
                    Direction::Both => true,
                };
                if follows {
                    out.push(other);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::graph::deps::{DepsIndex, DepsOptions};
    use crate::read::graph::model::tests::item;
    use crate::read::graph::{ItemGraph, TraversalOptions, traverse};
    use std::convert::Infallible;

    /// Every item in memory, keyed by position.
    struct Memory(Vec<GraphItem>);

    impl ItemSource for Memory {
        type Error = Infallible;
        fn items_with_ids(&mut self, ids: &[String]) -> Result<Vec<(i64, GraphItem)>, Infallible> {
            Ok(self.keyed(|i| ids.contains(&i.id)))
        }
        fn items_referring_to(
            &mut self,
            ids: &[String],
        ) -> Result<Vec<(i64, GraphItem)>, Infallible> {
            Ok(self.keyed(|i| references(i).iter().any(|r| ids.contains(r))))
        }
    }

    impl Memory {
        fn keyed(&self, keep: impl Fn(&GraphItem) -> bool) -> Vec<(i64, GraphItem)> {
            (0i64..)
                .zip(&self.0)
                .filter(|(_, i)| keep(i))
                .map(|(k, i)| (k, i.clone()))
                .collect()
        }
    }

    fn items() -> Vec<GraphItem> {
        vec![
            item("a", None, &[("b", "blocks"), ("c", "related")]),
            item("b", Some("a"), &[("c", "blocks"), ("a", "blocked_by")]),
            item("c", Some("gone"), &[("x", "custom")]),
            item("d", Some("c"), &[("e", "blocked_by")]),
            item("e", None, &[]),
            item("f", None, &[("d", "related")]),
        ]
    }

    #[test]
    fn subset_answers_like_every_item() -> Result<(), Infallible> {
        let all = items();
        let full = ItemGraph::build(&all);
        let full_deps = DepsIndex::build(&all);
        for start in ["a", "b", "c", "d", "e", "f"] {
            for direction in [Direction::Out, Direction::In, Direction::Both] {
                let reach = Reach {
                    model: EdgeModel::Graph,
                    direction,
                    kinds: KindFilter::All,
                    max_depth: None,
                    also: Vec::new(),
                };
                let subset = reachable_items(&mut Memory(all.clone()), start, &reach)?;
                let g = ItemGraph::build_with_kinds(&subset, &["custom".to_owned()]);
                let options = |g: &ItemGraph| TraversalOptions {
                    direction,
                    kinds: g.all_kinds(),
                    max_depth: None,
                    after: None,
                    limit: None,
                };
                let want = traverse(&full, full.node(start).unwrap_or(0), &options(&full));
                let got = traverse(&g, g.node(start).unwrap_or(0), &options(&g));
                let ids = |g: &ItemGraph, t: &crate::Result<crate::read::graph::Traversal>| {
                    t.as_ref()
                        .map(|t| {
                            (
                                t.rows
                                    .iter()
                                    .map(|r| g.id(r.node).to_owned())
                                    .collect::<Vec<_>>(),
                                t.missing.clone(),
                                t.cycles.clone(),
                                t.inspected_edges,
                            )
                        })
                        .ok()
                };
                assert_eq!(ids(&full, &want), ids(&g, &got), "{start} {direction:?}");
                let reach = Reach {
                    model: EdgeModel::Declared,
                    ..reach
                };
                let subset = reachable_items(&mut Memory(all.clone()), start, &reach)?;
                let deps = DepsIndex::build(&subset);
                let options = DepsOptions {
                    max_depth: 10,
                    node_limit: None,
                    edge_limit: None,
                    collapse_repeated: false,
                    direction,
                    kinds: None,
                    after: None,
                };
                assert_eq!(
                    deps.census(start, &options),
                    full_deps.census(start, &options)
                );
                assert_eq!(deps.tree(start, &options), full_deps.tree(start, &options));
            }
        }
        Ok(())
    }

    #[test]
    fn out_walk_fetches_only_the_closure() -> Result<(), Infallible> {
        let reach = Reach {
            model: EdgeModel::Declared,
            direction: Direction::Out,
            kinds: KindFilter::All,
            max_depth: Some(10),
            also: Vec::new(),
        };
        let subset = reachable_items(&mut Memory(items()), "d", &reach)?;
        let ids: Vec<&str> = subset.iter().map(|i| i.id.as_str()).collect();
        // d depends on e; its parent c is an item, so no edge: c is fetched, not walked.
        assert_eq!(ids, ["c", "d", "e"]);
        Ok(())
    }
}
