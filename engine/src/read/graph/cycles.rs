//! Cycle detection: strongly connected components (iterative Tarjan, so deep graphs cannot
//! overflow the stack) over a chosen node subset and edge kinds. A cycle is reported, never
//! followed.

use super::model::{Direction, ItemGraph, KindSet};

/// Returns the cycles among `nodes`: every strongly connected component with more than one
/// node, plus single nodes with a self edge, following `direction` edges of `kinds` that stay
/// inside `nodes`. Each cycle lists its node ids sorted; cycles are sorted by first id.
pub fn cycles(
    graph: &ItemGraph,
    nodes: &[usize],
    kinds: &KindSet,
    direction: Direction,
) -> Vec<Vec<String>> {
    let mut member = vec![usize::MAX; graph.len()];
    for (i, &n) in nodes.iter().enumerate() {
        member[n] = i;
    }
    let neighbours = |n: usize| -> Vec<usize> {
        graph
            .neighbours(n, direction)
            .filter(|a| kinds.contains(a.kind) && member[a.node] != usize::MAX)
            .map(|a| a.node)
            .collect()
    };
    let count = nodes.len();
    let mut index = vec![usize::MAX; count];
    let mut low = vec![0usize; count];
    let mut on_stack = vec![false; count];
    let mut stack: Vec<usize> = Vec::new();
    let mut next_index = 0usize;
    let mut out: Vec<Vec<String>> = Vec::new();
    for start in 0..count {
        if index[start] != usize::MAX {
            continue;
        }
        // Frames: (local node, its neighbours as local indices, next neighbour position).
        let mut frames: Vec<(usize, Vec<usize>, usize)> = Vec::new();
        let open = |v: usize,
                    index: &mut Vec<usize>,
                    low: &mut Vec<usize>,
                    on_stack: &mut Vec<bool>,
                    stack: &mut Vec<usize>,
                    next_index: &mut usize|
         -> (usize, Vec<usize>, usize) {
            index[v] = *next_index;
            low[v] = *next_index;
            *next_index += 1;
            stack.push(v);
            on_stack[v] = true;
            let ns = neighbours(nodes[v])
                .into_iter()
                .map(|n| member[n])
                .collect();
            (v, ns, 0)
        };
        frames.push(open(
            start,
            &mut index,
            &mut low,
            &mut on_stack,
            &mut stack,
            &mut next_index,
        ));
        while let Some(top) = frames.len().checked_sub(1) {
            let (v, next) = {
                let frame = &mut frames[top];
                let next = frame.1.get(frame.2).copied();
                if next.is_some() {
                    frame.2 += 1;
                }
                (frame.0, next)
            };
            if let Some(w) = next {
                if index[w] == usize::MAX {
                    let child = open(
                        w,
                        &mut index,
                        &mut low,
                        &mut on_stack,
                        &mut stack,
                        &mut next_index,
                    );
                    frames.push(child);
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            frames.pop();
            if let Some(parent) = frames.last() {
                let p = parent.0;
                low[p] = low[p].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                let self_loop = component.len() == 1 && neighbours(nodes[v]).contains(&nodes[v]);
                if component.len() > 1 || self_loop {
                    let mut ids: Vec<String> = component
                        .iter()
                        .map(|&c| graph.id(nodes[c]).to_owned())
                        .collect();
                    ids.sort();
                    out.push(ids);
                }
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::graph::model::tests::item;

    #[test]
    fn finds_dependency_cycles_and_self_loops() {
        let items = [
            item("a", None, &[("c", "blocked_by")]),
            item("b", None, &[("a", "blocked_by")]),
            item("c", None, &[("b", "blocked_by")]),
            item("d", None, &[("d", "blocked_by")]),
            item("e", None, &[("a", "blocked_by")]),
        ];
        let g = ItemGraph::build(&items);
        let all: Vec<usize> = (0..g.len()).collect();
        let found = cycles(&g, &all, &g.dependency_kinds(), Direction::Out);
        assert_eq!(found, vec![vec!["a", "b", "c"], vec!["d"]]);
        assert!(cycles(&g, &all, &g.hierarchy_kinds(), Direction::Out).is_empty());
    }

    #[test]
    fn a_long_chain_does_not_overflow() {
        let items: Vec<_> = (0..3_000)
            .map(|i| {
                let dep = format!("n{}", (i + 1) % 3_000);
                item(&format!("n{i}"), None, &[(dep.as_str(), "blocked_by")])
            })
            .collect();
        let g = ItemGraph::build(&items);
        let all: Vec<usize> = (0..g.len()).collect();
        let found = cycles(&g, &all, &g.dependency_kinds(), Direction::Out);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].len(), 3_000);
    }
}
