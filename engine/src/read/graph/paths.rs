//! Simple paths between two items: a depth-first search (neighbours by id) bounded by a path
//! length, a path count and a work budget, so a dense graph answers in bounded time. A node
//! never repeats within a path, so cycles cannot loop the search.

use super::model::{Direction, ItemGraph, Kind, KindSet};

/// The most adjacency entries one search examines.
pub const PATH_WORK_BUDGET: usize = 200_000;

/// How to search.
#[derive(Clone, Debug)]
pub struct PathOptions {
    /// Which way edges are followed.
    pub direction: Direction,
    /// Which edge kinds are followed.
    pub kinds: KindSet,
    /// The longest path, in edges.
    pub max_depth: usize,
    /// Stop after this many paths.
    pub max_paths: usize,
}

/// One path: its nodes from source to target and the kind of each edge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    /// The nodes, source first.
    pub nodes: Vec<usize>,
    /// The edge kinds (one fewer than nodes).
    pub kinds: Vec<Kind>,
}

/// The paths found and why the search stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathSearch {
    /// Paths, shortest first, then by their id sequence.
    pub paths: Vec<Path>,
    /// Why the search may have missed paths: `max_paths`, `work_budget`, or `None` when it
    /// was exhaustive within `max_depth`.
    pub stopped_by: Option<&'static str>,
    /// Some path was cut at `max_depth`.
    pub depth_limited: bool,
    /// Adjacency entries examined.
    pub inspected_edges: usize,
    /// Distinct nodes entered.
    pub visited_nodes: usize,
}

/// Returns the simple paths from `source` to `target`.
pub fn find_paths(
    graph: &ItemGraph,
    source: usize,
    target: usize,
    options: &PathOptions,
) -> PathSearch {
    let mut search = PathSearch {
        paths: Vec::new(),
        stopped_by: None,
        depth_limited: false,
        inspected_edges: 0,
        visited_nodes: 1,
    };
    let mut entered = vec![false; graph.len()];
    entered[source] = true;
    let mut on_path = vec![false; graph.len()];
    on_path[source] = true;
    let mut nodes = vec![source];
    let mut kinds: Vec<Kind> = Vec::new();
    // Frames: the neighbours of the node at the same depth of `nodes`, and the next position.
    let neighbours = |n: usize| -> Vec<(usize, Kind)> {
        graph
            .neighbours(n, options.direction)
            .filter(|a| options.kinds.contains(a.kind))
            .map(|a| (a.node, a.kind))
            .collect()
    };
    let mut frames: Vec<(Vec<(usize, Kind)>, usize)> = vec![(neighbours(source), 0)];
    while let Some(top) = frames.len().checked_sub(1) {
        let next = {
            let frame = &mut frames[top];
            let next = frame.0.get(frame.1).copied();
            frame.1 += 1;
            next
        };
        let Some((node, kind)) = next else {
            frames.pop();
            if let Some(last) = nodes.pop() {
                on_path[last] = false;
            }
            kinds.pop();
            continue;
        };
        search.inspected_edges += 1;
        if search.inspected_edges > PATH_WORK_BUDGET {
            search.stopped_by = Some("work_budget");
            break;
        }
        if on_path[node] {
            continue;
        }
        if node == target {
            let mut path_nodes = nodes.clone();
            path_nodes.push(node);
            let mut path_kinds = kinds.clone();
            path_kinds.push(kind);
            search.paths.push(Path {
                nodes: path_nodes,
                kinds: path_kinds,
            });
            if search.paths.len() >= options.max_paths {
                search.stopped_by = Some("max_paths");
                break;
            }
            continue;
        }
        if nodes.len() >= options.max_depth || graph.info(node).missing {
            search.depth_limited |= nodes.len() >= options.max_depth;
            continue;
        }
        if !entered[node] {
            entered[node] = true;
            search.visited_nodes += 1;
        }
        on_path[node] = true;
        nodes.push(node);
        kinds.push(kind);
        frames.push((neighbours(node), 0));
    }
    search.paths.sort_by(|a, b| {
        a.nodes.len().cmp(&b.nodes.len()).then_with(|| {
            let ids = |p: &Path| p.nodes.iter().map(|&n| graph.id(n)).collect::<Vec<_>>();
            ids(a).cmp(&ids(b))
        })
    });
    search
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::graph::model::tests::item;

    fn render(g: &ItemGraph, s: &PathSearch) -> Vec<String> {
        s.paths
            .iter()
            .map(|p| {
                p.nodes
                    .iter()
                    .map(|&n| g.id(n))
                    .collect::<Vec<_>>()
                    .join(">")
            })
            .collect()
    }

    #[test]
    fn finds_every_simple_path_shortest_first() {
        // a blocks b and c; b and c block d; d blocks a (a cycle through the target's source).
        let items = [
            item("a", None, &[("d", "blocked_by")]),
            item("b", None, &[("a", "blocked_by")]),
            item("c", None, &[("a", "blocked_by")]),
            item("d", None, &[("b", "blocked_by"), ("c", "blocked_by")]),
            item("e", Some("a"), &[("d", "blocked_by")]),
        ];
        let g = ItemGraph::build(&items);
        let options = PathOptions {
            direction: Direction::Out,
            kinds: g.directed_kinds(),
            max_depth: 10,
            max_paths: 10,
        };
        let (a, e) = (g.node("a").unwrap_or(0), g.node("e").unwrap_or(0));
        let s = find_paths(&g, a, e, &options);
        assert_eq!(render(&g, &s), ["a>e", "a>b>d>e", "a>c>d>e"]);
        assert_eq!(s.stopped_by, None);
        let capped = find_paths(
            &g,
            a,
            e,
            &PathOptions {
                max_paths: 1,
                ..options.clone()
            },
        );
        assert_eq!(capped.paths.len(), 1);
        assert_eq!(capped.stopped_by, Some("max_paths"));
        let short = find_paths(
            &g,
            a,
            e,
            &PathOptions {
                max_depth: 2,
                ..options
            },
        );
        assert_eq!(render(&g, &short), ["a>e"]);
        assert!(short.depth_limited);
    }
}
