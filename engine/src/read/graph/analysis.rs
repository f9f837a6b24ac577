//! Whole-graph reads: `analyze` (shape counts: roots, leaves, components, depth, cycles) and
//! `audit` (structural findings: cycles, self edges, missing targets, several parents, open
//! children of terminal parents), both deterministic and cycle-safe.

use std::collections::BTreeMap;

use serde::Serialize;

use super::cycles::cycles;
use super::model::{Direction, ItemGraph, PARENT};

/// The shape of the item graph.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GraphAnalysis {
    /// Items (missing references excluded).
    pub node_count: usize,
    /// Referenced ids that name no item.
    pub missing_node_count: usize,
    /// Distinct edges.
    pub edge_count: usize,
    /// Edges per kind, by kind name.
    pub edges_by_kind: BTreeMap<String, usize>,
    /// Items without a parent.
    pub root_count: usize,
    /// Items without a child.
    pub leaf_count: usize,
    /// Items without any edge.
    pub isolated_count: usize,
    /// Weakly connected components among items (edges of every kind).
    pub component_count: usize,
    /// Items in the largest component.
    pub largest_component: usize,
    /// The longest parent chain from a root, in edges (items on hierarchy cycles excluded).
    pub max_hierarchy_depth: usize,
    /// Cycles over dependency edges.
    pub dependency_cycle_count: usize,
    /// Cycles over parent edges.
    pub hierarchy_cycle_count: usize,
}

/// Returns the shape of `graph`.
pub fn analyze(graph: &ItemGraph) -> GraphAnalysis {
    let items: Vec<usize> = (0..graph.len())
        .filter(|&n| !graph.info(n).missing)
        .collect();
    let mut edges_by_kind: BTreeMap<String, usize> = BTreeMap::new();
    for n in 0..graph.len() {
        for adj in graph.outgoing(n) {
            *edges_by_kind
                .entry(graph.kind_name(adj.kind).to_owned())
                .or_default() += 1;
        }
    }
    let has_parent = |n: usize| graph.incoming(n).iter().any(|a| a.kind == PARENT);
    let has_child = |n: usize| graph.outgoing(n).iter().any(|a| a.kind == PARENT);
    let root_count = items.iter().filter(|&&n| !has_parent(n)).count();
    let leaf_count = items.iter().filter(|&&n| !has_child(n)).count();
    let isolated_count = items
        .iter()
        .filter(|&&n| graph.outgoing(n).is_empty() && graph.incoming(n).is_empty())
        .count();
    let (component_count, largest_component) = components(graph);
    let all: Vec<usize> = (0..graph.len()).collect();
    GraphAnalysis {
        node_count: items.len(),
        missing_node_count: graph.len() - items.len(),
        edge_count: graph.edge_count(),
        edges_by_kind,
        root_count,
        leaf_count,
        isolated_count,
        component_count,
        largest_component,
        max_hierarchy_depth: hierarchy_depth(graph),
        dependency_cycle_count: cycles(graph, &all, &graph.dependency_kinds(), Direction::Out)
            .len(),
        hierarchy_cycle_count: cycles(graph, &all, &graph.hierarchy_kinds(), Direction::Out).len(),
    }
}

/// Returns `(count, largest size)` of the weakly connected components among items.
fn components(graph: &ItemGraph) -> (usize, usize) {
    let mut seen = vec![false; graph.len()];
    let (mut count, mut largest) = (0, 0);
    for start in 0..graph.len() {
        if seen[start] || graph.info(start).missing {
            continue;
        }
        count += 1;
        seen[start] = true;
        let mut stack = vec![start];
        let mut size = 0;
        while let Some(n) = stack.pop() {
            size += usize::from(!graph.info(n).missing);
            for adj in graph.neighbours(n, Direction::Both) {
                if !seen[adj.node] {
                    seen[adj.node] = true;
                    stack.push(adj.node);
                }
            }
        }
        largest = largest.max(size);
    }
    (count, largest)
}

/// Returns the longest parent chain (in edges) reached breadth-first from the items without a
/// parent; nodes on hierarchy cycles are never reached from a root and do not count.
fn hierarchy_depth(graph: &ItemGraph) -> usize {
    let mut depth = vec![usize::MAX; graph.len()];
    let mut frontier: Vec<usize> = (0..graph.len())
        .filter(|&n| !graph.incoming(n).iter().any(|a| a.kind == PARENT))
        .collect();
    for &n in &frontier {
        depth[n] = 0;
    }
    let mut level = 0;
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for &n in &frontier {
            for adj in graph.outgoing(n).iter().filter(|a| a.kind == PARENT) {
                if depth[adj.node] == usize::MAX {
                    depth[adj.node] = level + 1;
                    next.push(adj.node);
                }
            }
        }
        if !next.is_empty() {
            level += 1;
        }
        frontier = next;
    }
    level
}

/// One audit finding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// `dependency_cycle`, `hierarchy_cycle`, `self_reference`, `missing_parent`,
    /// `missing_dependency`, `multiple_parents` or `open_child_of_terminal_parent`.
    pub code: &'static str,
    /// `error` or `warning`.
    pub severity: &'static str,
    /// The item the finding is about (a cycle's smallest id).
    pub id: String,
    /// The other items involved (cycle members, missing targets, parents), sorted.
    pub related: Vec<String>,
    /// One sentence.
    pub message: String,
}

impl Finding {
    /// Returns the finding's cursor key (`code:id`).
    pub fn key(&self) -> String {
        format!("{}:{}", self.code, self.id)
    }
}

/// Returns every structural finding: errors first, then by code, then by id.
pub fn audit(graph: &ItemGraph) -> Vec<Finding> {
    let mut out = Vec::new();
    let all: Vec<usize> = (0..graph.len()).collect();
    for (code, kinds, what) in [
        ("dependency_cycle", graph.dependency_kinds(), "dependency"),
        ("hierarchy_cycle", graph.hierarchy_kinds(), "parent"),
    ] {
        for cycle in cycles(graph, &all, &kinds, Direction::Out) {
            if cycle.len() == 1 {
                continue; // reported as self_reference
            }
            out.push(Finding {
                code,
                severity: "error",
                id: cycle[0].clone(),
                message: format!("{} items form a {what} cycle", cycle.len()),
                related: cycle[1..].to_vec(),
            });
        }
    }
    for &(node, kind) in graph.self_loops() {
        out.push(Finding {
            code: "self_reference",
            severity: "error",
            id: graph.id(node).to_owned(),
            related: Vec::new(),
            message: format!("the item names itself as {}", graph.kind_name(kind)),
        });
    }
    for n in 0..graph.len() {
        let info = graph.info(n);
        if info.missing {
            continue;
        }
        let mut parents: Vec<&str> = Vec::new();
        let mut missing_parents: Vec<String> = Vec::new();
        let mut missing_deps: Vec<String> = Vec::new();
        let mut terminal_parent = false;
        for adj in graph.incoming(n) {
            let other = graph.info(adj.node);
            if adj.kind == PARENT {
                parents.push(&other.id);
                terminal_parent |= other.terminal;
                if other.missing {
                    missing_parents.push(other.id.clone());
                }
            } else if other.missing {
                missing_deps.push(other.id.clone());
            }
        }
        for adj in graph.outgoing(n) {
            let other = graph.info(adj.node);
            if other.missing {
                missing_deps.push(other.id.clone());
            }
        }
        let mut push = |code, severity, related: Vec<String>, message: String| {
            let mut related = related;
            related.sort();
            related.dedup();
            out.push(Finding {
                code,
                severity,
                id: info.id.clone(),
                related,
                message,
            });
        };
        if !missing_parents.is_empty() {
            push(
                "missing_parent",
                "error",
                missing_parents,
                "the parent names no item".into(),
            );
        }
        if !missing_deps.is_empty() {
            let n = missing_deps.len();
            push(
                "missing_dependency",
                "warning",
                missing_deps,
                format!("{n} dependency target(s) name no item"),
            );
        }
        if parents.len() > 1 {
            let related: Vec<String> = parents.iter().map(|p| (*p).to_owned()).collect();
            push(
                "multiple_parents",
                "warning",
                related,
                format!("{} parents declared", parents.len()),
            );
        }
        if terminal_parent && !info.terminal {
            let related: Vec<String> = graph
                .incoming(n)
                .iter()
                .filter(|a| a.kind == PARENT && graph.info(a.node).terminal)
                .map(|a| graph.id(a.node).to_owned())
                .collect();
            push(
                "open_child_of_terminal_parent",
                "warning",
                related,
                format!("status {} under a terminal parent", info.status),
            );
        }
    }
    out.sort_by(|a, b| {
        (a.severity != "error")
            .cmp(&(b.severity != "error"))
            .then(a.code.cmp(b.code))
            .then_with(|| a.id.cmp(&b.id))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::graph::model::tests::item;

    #[test]
    fn analyze_counts_the_shape() {
        let items = [
            item("e", None, &[]),
            item("f", Some("e"), &[]),
            item("t", Some("f"), &[("u", "blocked_by")]),
            item("u", Some("f"), &[("t", "blocked_by")]),
            item("lone", None, &[]),
        ];
        let a = analyze(&ItemGraph::build(&items));
        assert_eq!(a.node_count, 5);
        assert_eq!(a.root_count, 2);
        assert_eq!(a.leaf_count, 3);
        assert_eq!(a.isolated_count, 1);
        assert_eq!((a.component_count, a.largest_component), (2, 4));
        assert_eq!(a.max_hierarchy_depth, 2);
        assert_eq!(a.dependency_cycle_count, 1);
        assert_eq!(a.edges_by_kind.get("blocks"), Some(&2));
    }

    #[test]
    fn audit_reports_structural_findings() {
        let items = [
            item("a", None, &[("b", "blocked_by")]),
            item("b", None, &[("a", "blocked_by")]),
            item("c", Some("gone"), &[("c", "related"), ("nope", "blocks")]),
            item("d", Some("a"), &[("b", "parent")]),
        ];
        let codes: Vec<String> = audit(&ItemGraph::build(&items))
            .iter()
            .map(|f| format!("{}:{}:{}", f.code, f.id, f.related.join("+")))
            .collect();
        assert_eq!(
            codes,
            [
                "dependency_cycle:a:b",
                "missing_parent:c:gone",
                "self_reference:c:",
                "missing_dependency:c:nope",
                "multiple_parents:d:a+b",
            ]
        );
    }
}
