//! Which items `pm graph <traversal> <id>` reads: the walk from the start item that the
//! traversal, path search or impact read can follow, so the index answers it with the reachable
//! items instead of every item.

use pm_engine::read::graph::{Direction, EdgeModel, ItemGraph, KindFilter, Reach};
use pm_index::{GraphRows, Index};

use crate::commands::relations::graph::{GraphArgs, GraphSubcommand};
use crate::failure::Result;

/// Returns the graph a `graph` read runs on: built from the items reachable from `root` when
/// the subcommand walks from it and the index answers, from every item otherwise.
///
/// # Errors
/// As [`Index::graph_items`].
pub(crate) fn load(
    index: &Index,
    args: &GraphArgs,
    root: Option<&str>,
    target: Option<&str>,
    max_depth: Option<usize>,
) -> Result<ItemGraph> {
    Ok(match (reach(args, max_depth, target), root) {
        (Some(reach), Some(start)) => match index.graph_reachable(start, &reach)?.rows {
            GraphRows::Reachable(subset) => {
                ItemGraph::build_with_kinds(&subset.items, &subset.dependency_kinds)
            }
            GraphRows::All(items) => ItemGraph::build(&items),
        },
        _ => ItemGraph::build(&index.graph_items()?.rows),
    })
}

/// The walk a traversal, path search or impact read needs, by kind name (the kinds each
/// subcommand follows by default, as [`ItemGraph`]'s kind sets); `None` for analyze and audit,
/// which read every item.
fn reach(args: &GraphArgs, max_depth: Option<usize>, target: Option<&str>) -> Option<Reach> {
    use GraphSubcommand as S;
    let names = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect();
    let (direction, default_kinds) = match args.subcommand {
        S::Ancestors => (Direction::In, KindFilter::Only(names(&["parent"]))),
        S::Descendants => (Direction::Out, KindFilter::Only(names(&["parent"]))),
        S::Predecessors => (
            Direction::In,
            KindFilter::Except(names(&["parent", "related"])),
        ),
        S::Successors => (
            Direction::Out,
            KindFilter::Except(names(&["parent", "related"])),
        ),
        S::Impact | S::Paths => (
            super::graph::direction(args.direction),
            KindFilter::Except(names(&["related"])),
        ),
        _ => return None,
    };
    let kinds = if args.kind.is_empty() {
        default_kinds
    } else {
        KindFilter::Only(args.kind.iter().map(|k| k.trim().to_owned()).collect())
    };
    let paths = args.subcommand == S::Paths;
    Some(Reach {
        model: EdgeModel::Graph,
        direction,
        kinds,
        max_depth: if paths {
            Some(max_depth.unwrap_or(10))
        } else {
            max_depth
        },
        also: target.map(str::to_owned).into_iter().collect(),
    })
}
