//! Bounded breadth-first traversal from one item (ancestors, descendants, predecessors,
//! successors, impact): rows in a deterministic order (by distance, then neighbours by id),
//! resumable after a node id, stopping as soon as one row past the page is seen. Every node
//! is visited at most once, so a cycle ends the walk instead of looping it.

use std::collections::VecDeque;

use super::cycles::cycles;
use super::model::{Direction, ItemGraph, Kind, KindSet};
use crate::error::{Error, Result};

/// How to walk.
#[derive(Clone, Debug)]
pub struct TraversalOptions {
    /// Which way edges are followed.
    pub direction: Direction,
    /// Which edge kinds are followed.
    pub kinds: KindSet,
    /// Do not expand nodes at this distance (`None`: no depth bound).
    pub max_depth: Option<usize>,
    /// Resume after the row with this id (a previous page's `next_cursor`).
    pub after: Option<String>,
    /// At most this many rows (`None`: every reachable node).
    pub limit: Option<usize>,
}

/// One reached node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reached {
    /// The node.
    pub node: usize,
    /// Its distance from the root (1 for a neighbour).
    pub depth: usize,
    /// The kind of the edge it was reached by.
    pub via: Kind,
    /// The node it was reached from.
    pub from: usize,
}

/// A traversal's page and what it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Traversal {
    /// The rows of this page.
    pub rows: Vec<Reached>,
    /// Rows follow this page.
    pub has_more: bool,
    /// Some node at the depth bound had unexplored edges.
    pub depth_limited: bool,
    /// The id to resume after, when `has_more`.
    pub next_cursor: Option<String>,
    /// Distinct nodes visited (the root included).
    pub visited_nodes: usize,
    /// Adjacency entries examined.
    pub inspected_edges: usize,
    /// Referenced ids that name no item (reached, not expanded), sorted.
    pub missing: Vec<String>,
    /// Cycles among the visited nodes (sorted ids each); empty for `Direction::Both`.
    pub cycles: Vec<Vec<String>>,
}

/// Walks from `root` and returns one page.
///
/// # Errors
/// `invalid_query_cursor` when `after` is not a row of this traversal.
pub fn traverse(graph: &ItemGraph, root: usize, options: &TraversalOptions) -> Result<Traversal> {
    let mut seen = vec![false; graph.len()];
    seen[root] = true;
    let mut visited = vec![root];
    let mut queue: VecDeque<(usize, usize)> = VecDeque::from([(root, 0)]);
    let mut skipping = options.after.is_some();
    let mut rows: Vec<Reached> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    let (mut inspected, mut has_more, mut depth_limited) = (0usize, false, false);
    'walk: while let Some((node, depth)) = queue.pop_front() {
        let at_bound = options.max_depth.is_some_and(|max| depth >= max);
        for adj in graph.neighbours(node, options.direction) {
            if !options.kinds.contains(adj.kind) {
                continue;
            }
            inspected += 1;
            if seen[adj.node] {
                continue;
            }
            if at_bound {
                depth_limited = true;
                continue;
            }
            seen[adj.node] = true;
            visited.push(adj.node);
            let info = graph.info(adj.node);
            if info.missing {
                missing.push(info.id.clone());
                continue;
            }
            queue.push_back((adj.node, depth + 1));
            if skipping {
                skipping = options.after.as_deref() != Some(info.id.as_str());
                continue;
            }
            if options.limit.is_some_and(|limit| rows.len() >= limit) {
                has_more = true;
                break 'walk;
            }
            rows.push(Reached {
                node: adj.node,
                depth: depth + 1,
                via: adj.kind,
                from: node,
            });
        }
    }
    if skipping {
        let after = options.after.clone().unwrap_or_default();
        return Err(Error::CursorNotInResult {
            flag: "--after",
            after,
        });
    }
    missing.sort();
    let cycles = if options.direction == Direction::Both {
        Vec::new()
    } else {
        cycles(graph, &visited, &options.kinds, options.direction)
    };
    Ok(Traversal {
        next_cursor: if has_more {
            rows.last().map(|r| graph.id(r.node).to_owned())
        } else {
            None
        },
        rows,
        has_more,
        depth_limited,
        visited_nodes: visited.len(),
        inspected_edges: inspected,
        missing,
        cycles,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::graph::model::tests::item;

    fn ids(g: &ItemGraph, t: &Traversal) -> Vec<String> {
        t.rows.iter().map(|r| g.id(r.node).to_owned()).collect()
    }

    fn options(g: &ItemGraph, limit: Option<usize>, after: Option<&str>) -> TraversalOptions {
        TraversalOptions {
            direction: Direction::Out,
            kinds: g.hierarchy_kinds(),
            max_depth: None,
            after: after.map(str::to_owned),
            limit,
        }
    }

    #[test]
    fn descendants_page_and_resume() -> Result<()> {
        let items = [
            item("r", None, &[]),
            item("b", Some("r"), &[]),
            item("a", Some("r"), &[]),
            item("c", Some("a"), &[]),
            item("d", Some("b"), &[]),
        ];
        let g = ItemGraph::build(&items);
        let root = g.node("r").unwrap_or(0);
        let all = traverse(&g, root, &options(&g, None, None))?;
        assert_eq!(ids(&g, &all), ["a", "b", "c", "d"]);
        assert_eq!(
            all.rows.iter().map(|r| r.depth).collect::<Vec<_>>(),
            [1, 1, 2, 2]
        );
        let first = traverse(&g, root, &options(&g, Some(3), None))?;
        assert_eq!(ids(&g, &first), ["a", "b", "c"]);
        assert!(first.has_more);
        let next = traverse(
            &g,
            root,
            &options(&g, Some(3), first.next_cursor.as_deref()),
        )?;
        assert_eq!(ids(&g, &next), ["d"]);
        assert!(!next.has_more && next.next_cursor.is_none());
        assert!(traverse(&g, root, &options(&g, Some(3), Some("zz"))).is_err());
        Ok(())
    }

    #[test]
    fn cycles_are_reported_not_followed() -> Result<()> {
        let items = [
            item("a", Some("c"), &[]),
            item("b", Some("a"), &[]),
            item("c", Some("b"), &[]),
        ];
        let g = ItemGraph::build(&items);
        let t = traverse(&g, g.node("a").unwrap_or(0), &options(&g, None, None))?;
        assert_eq!(ids(&g, &t), ["b", "c"]);
        assert_eq!(t.cycles, vec![vec!["a", "b", "c"]]);
        Ok(())
    }

    #[test]
    fn depth_bound_and_missing_nodes() -> Result<()> {
        let items = [
            item("a", None, &[]),
            item("b", Some("a"), &[]),
            item("c", Some("b"), &[]),
            item("d", Some("gone"), &[]),
        ];
        let g = ItemGraph::build(&items);
        let mut o = options(&g, None, None);
        o.max_depth = Some(1);
        let t = traverse(&g, g.node("a").unwrap_or(0), &o)?;
        assert_eq!(ids(&g, &t), ["b"]);
        assert!(t.depth_limited);
        let mut up = options(&g, None, None);
        up.direction = Direction::In;
        let t = traverse(&g, g.node("d").unwrap_or(0), &up)?;
        assert!(t.rows.is_empty());
        assert_eq!(t.missing, ["gone"]);
        Ok(())
    }
}
