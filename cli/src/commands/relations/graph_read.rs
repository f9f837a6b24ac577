//! The result of each `pm graph` subcommand over a loaded item graph: traversal and impact
//! pages, path searches, the analysis and the audit findings. The algorithms live in
//! `pm_engine::read::graph`; this file picks their options from the flags and fills the rows.

use std::collections::BTreeMap;

use pm_engine::Error;
use pm_engine::read::TrackerView;
use pm_engine::read::graph::{
    Direction, Finding, ItemGraph, KindSet, Path, PathOptions, Reached, TraversalOptions, analyze,
    audit, find_paths, traverse,
};

use super::graph::{GraphArgs, GraphSubcommand, conflict, direction};
use super::graph_result::{
    AuditBody, GraphBody, GraphCost, GraphProjection, GraphResult, NodeRow, PathRow, PathsBody,
    ReachedRow, TraversalBody, TraversalRow,
};
use crate::failure::{CliError, ReadOutputRefusal, Result};

/// At most this many cycles, and ids per cycle, are listed in a result.
const CYCLE_CAP: usize = 10;
/// At most this many missing ids are listed in a traversal result.
const MISSING_CAP: usize = 50;

/// The numeric flags of a graph read, checked before the tracker is opened.
pub(crate) struct GraphBounds {
    pub limit: Option<usize>,
    pub max_depth: Option<usize>,
    pub max_paths: Option<usize>,
}

/// One graph read: the graph, the view that names unknown ids, and the flags.
pub(crate) struct GraphRead<'a> {
    pub graph: &'a ItemGraph,
    pub view: &'a TrackerView,
    pub args: &'a GraphArgs,
    pub bounds: GraphBounds,
}

impl GraphRead<'_> {
    /// Returns the result of the subcommand from `root` (and to `target` for paths).
    ///
    /// # Errors
    /// `conflicting_arguments` for `--direction` on a traversal, `invalid_argument_value` for
    /// an unknown `--kind`, `item_not_found`, `invalid_query_cursor`.
    pub fn result(&self, root: Option<String>, target: Option<String>) -> Result<GraphResult> {
        use GraphSubcommand as S;
        match self.args.subcommand {
            S::Ancestors | S::Descendants | S::Predecessors | S::Successors | S::Impact => {
                self.traversal(root)
            }
            S::Paths => self.paths(root, target),
            S::Analyze => Ok(self.analysis(root)),
            _ => self.audit(root),
        }
    }

    /// A traversal or impact page: ids (details with `--full`) or affected rows.
    fn traversal(&self, root: Option<String>) -> Result<GraphResult> {
        let (args, graph) = (self.args, self.graph);
        let options = self.traversal_options()?;
        let start = self.node(root.as_deref().unwrap_or_default())?;
        let walk = traverse(graph, start, &options)?;
        let truncated = walk.has_more || walk.depth_limited;
        let (ids, affected) = self.traversal_rows(&walk.rows);
        let body = TraversalBody {
            ids,
            affected,
            direction: direction_name(options.direction),
            kinds: kind_list(graph, &options.kinds),
            max_depth: self.bounds.max_depth,
            limit: options.limit,
            depth_limited: walk.depth_limited,
            missing: cap(walk.missing, MISSING_CAP),
            cycle_count: walk.cycles.len(),
            cycles: shown_cycles(walk.cycles),
        };
        Ok(GraphResult {
            subcommand: args.subcommand.name(),
            root,
            target: None,
            count: if args.summary { 0 } else { walk.rows.len() },
            total: args.summary.then_some(walk.rows.len()),
            truncated,
            cost: GraphCost {
                visited_nodes: walk.visited_nodes,
                inspected_edges: walk.inspected_edges,
            },
            next_cursor: walk.next_cursor,
            body: GraphBody::Traversal(body),
            projection: self.projection(truncated),
        })
    }

    /// The walk of a traversal: its fixed direction (impact's from `--direction`), kinds and
    /// page size (none with `--summary`, or for impact with `--full`).
    fn traversal_options(&self) -> Result<TraversalOptions> {
        use GraphSubcommand as S;
        let (args, graph) = (self.args, self.graph);
        let sub = args.subcommand;
        let (direction, default_kinds) = match sub {
            S::Ancestors => (Direction::In, graph.hierarchy_kinds()),
            S::Descendants => (Direction::Out, graph.hierarchy_kinds()),
            S::Predecessors => (Direction::In, graph.dependency_kinds()),
            S::Successors => (Direction::Out, graph.dependency_kinds()),
            _ => (direction(args.direction), graph.directed_kinds()),
        };
        if sub != S::Impact && args.direction.is_some() {
            return Err(conflict(
                "the traversal fixes its direction; --direction applies to paths and impact",
                "--direction",
            ));
        }
        let impact = sub == S::Impact;
        let limit = if args.summary || (impact && args.full) {
            None
        } else {
            Some(self.bounds.limit.unwrap_or(if impact { 10 } else { 100 }))
        };
        Ok(TraversalOptions {
            direction,
            kinds: self.kinds(default_kinds)?,
            max_depth: self.bounds.max_depth,
            after: if args.summary {
                None
            } else {
                args.after.clone()
            },
            limit,
        })
    }

    /// The `ids` (traversals) or `affected` (impact) rows; neither with `--summary`.
    fn traversal_rows(
        &self,
        rows: &[Reached],
    ) -> (Option<Vec<TraversalRow>>, Option<Vec<ReachedRow>>) {
        let (args, graph) = (self.args, self.graph);
        if args.summary {
            return (None, None);
        }
        if args.subcommand == GraphSubcommand::Impact {
            let affected = rows.iter().map(|r| ReachedRow::of(graph, r, true));
            return (None, Some(affected.collect()));
        }
        let ids = rows.iter().map(|r| {
            if args.full {
                TraversalRow::Reached(ReachedRow::of(graph, r, false))
            } else {
                TraversalRow::Id(graph.id(r.node).to_owned())
            }
        });
        (Some(ids.collect()), None)
    }

    /// The simple paths from `root` to `target`, shortest first.
    fn paths(&self, root: Option<String>, target: Option<String>) -> Result<GraphResult> {
        let (args, graph) = (self.args, self.graph);
        let options = PathOptions {
            direction: direction(args.direction),
            kinds: self.kinds(graph.directed_kinds())?,
            max_depth: self.bounds.max_depth.unwrap_or(10),
            max_paths: self.bounds.max_paths.unwrap_or(10),
        };
        let from = self.node(root.as_deref().unwrap_or_default())?;
        let to = self.node(target.as_deref().unwrap_or_default())?;
        let search = find_paths(graph, from, to, &options);
        let truncated = search.stopped_by.is_some() || search.depth_limited;
        let paths =
            (!args.summary).then(|| search.paths.iter().map(|p| self.path_row(p)).collect());
        let body = PathsBody {
            paths,
            direction: direction_name(options.direction),
            kinds: kind_list(graph, &options.kinds),
            max_depth: options.max_depth,
            max_paths: options.max_paths,
            stopped_by: search.stopped_by,
        };
        Ok(GraphResult {
            subcommand: args.subcommand.name(),
            root,
            target,
            count: if args.summary { 0 } else { search.paths.len() },
            total: args.summary.then_some(search.paths.len()),
            truncated,
            cost: GraphCost {
                visited_nodes: search.visited_nodes,
                inspected_edges: search.inspected_edges,
            },
            next_cursor: None,
            body: GraphBody::Paths(body),
            projection: self.projection(truncated),
        })
    }

    /// One path row; the nodes' details with `--full`.
    fn path_row(&self, path: &Path) -> PathRow {
        let graph = self.graph;
        PathRow {
            length: path.kinds.len(),
            ids: path.nodes.iter().map(|&n| graph.id(n).to_owned()).collect(),
            via: path
                .kinds
                .iter()
                .map(|&k| graph.kind_name(k).to_owned())
                .collect(),
            nodes: self
                .args
                .full
                .then(|| path.nodes.iter().map(|&n| NodeRow::of(graph, n)).collect()),
        }
    }

    /// The shape of the whole graph.
    fn analysis(&self, root: Option<String>) -> GraphResult {
        let graph = self.graph;
        GraphResult {
            subcommand: self.args.subcommand.name(),
            root,
            target: None,
            count: graph.len(),
            total: None,
            truncated: false,
            cost: self.whole_graph_cost(),
            next_cursor: None,
            body: GraphBody::Analysis {
                analysis: analyze(graph),
            },
            projection: self.projection(false),
        }
    }

    /// The audit findings, paged after a `code:id` cursor.
    fn audit(&self, root: Option<String>) -> Result<GraphResult> {
        let args = self.args;
        let mut findings = audit(self.graph);
        let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
        for f in &findings {
            *counts.entry(f.code).or_default() += 1;
        }
        let start = audit_start(&findings, args.after.as_deref())?;
        let page = if args.full || args.summary {
            None
        } else {
            Some(self.bounds.limit.unwrap_or(50))
        };
        let total = findings.len();
        let end = page.map_or(total, |n| start.saturating_add(n).min(total));
        let has_more = end < total;
        let next_cursor = (has_more && end > start).then(|| findings[end - 1].key());
        let body = AuditBody {
            findings: (!args.summary).then(|| findings.drain(start..end).collect()),
            finding_counts: counts,
            limit: page,
        };
        Ok(GraphResult {
            subcommand: args.subcommand.name(),
            root,
            target: None,
            count: if args.summary { 0 } else { end - start },
            total: Some(total),
            truncated: has_more,
            cost: self.whole_graph_cost(),
            next_cursor,
            body: GraphBody::Audit(body),
            projection: self.projection(has_more),
        })
    }

    /// What reading every node and edge costs (analyze and audit).
    fn whole_graph_cost(&self) -> GraphCost {
        GraphCost {
            visited_nodes: self.graph.len(),
            inspected_edges: self.graph.edge_count(),
        }
    }

    /// The projection: impact and audit rows are complete when nothing was cut; traversal ids
    /// and paths carry their details only with `--full`; analyze has no rows.
    fn projection(&self, truncated: bool) -> GraphProjection {
        let args = self.args;
        let mode = if args.summary {
            "summary"
        } else if args.full {
            "full"
        } else {
            "default"
        };
        let rows_complete = matches!(
            args.subcommand,
            GraphSubcommand::Impact | GraphSubcommand::Audit
        ) && !args.summary
            && !truncated;
        let has_rows = args.subcommand != GraphSubcommand::Analyze;
        GraphProjection::new(mode, has_rows, args.full || rows_complete)
    }

    /// Returns the node of `id`, or `item_not_found`.
    fn node(&self, id: &str) -> Result<usize> {
        Ok(self.graph.node(id).ok_or_else(|| self.view.not_found(id))?)
    }

    /// Returns the `--kind` set, or `default` without the flag.
    fn kinds(&self, default: KindSet) -> Result<KindSet> {
        let args = self.args;
        if args.kind.is_empty() {
            return Ok(default);
        }
        Ok(self
            .graph
            .parse_kinds(args.kind.iter().map(String::as_str))
            .map_err(|bad| Error::InvalidArgument {
                field: "--kind".into(),
                value: bad,
                reason: "not an edge kind of this tracker".into(),
                allowed: self.graph.kind_names().to_vec(),
            })?)
    }
}

/// Returns the index of the first finding after the `--after` cursor (0 without one).
fn audit_start(findings: &[Finding], after: Option<&str>) -> Result<usize> {
    let Some(after) = after else {
        return Ok(0);
    };
    match findings.iter().position(|f| f.key() == after) {
        Some(i) => Ok(i + 1),
        None => Err(CliError::ReadOutput {
            kind: ReadOutputRefusal::InvalidQueryCursor,
            message: format!("Query cursor item {after} is no longer present in this result set."),
            flag: "--after",
            value: Some(after.to_owned()),
            allowed: Box::default(),
            suggestion: None,
        }),
    }
}

fn direction_name(direction: Direction) -> &'static str {
    match direction {
        Direction::Out => "out",
        Direction::In => "in",
        Direction::Both => "both",
    }
}

fn kind_list(graph: &ItemGraph, kinds: &KindSet) -> Vec<String> {
    graph
        .kind_names()
        .iter()
        .enumerate()
        .filter(|(k, _)| u16::try_from(*k).is_ok_and(|k| kinds.contains(k)))
        .map(|(_, name)| name.clone())
        .collect()
}

fn cap<T>(mut list: Vec<T>, n: usize) -> Vec<T> {
    list.truncate(n);
    list
}

/// At most [`CYCLE_CAP`] cycles of at most [`CYCLE_CAP`] ids each.
fn shown_cycles(cycles: Vec<Vec<String>>) -> Vec<Vec<String>> {
    cap(cycles, CYCLE_CAP)
        .into_iter()
        .map(|c| cap(c, CYCLE_CAP))
        .collect()
}
