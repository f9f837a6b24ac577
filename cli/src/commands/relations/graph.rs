//! `pm graph <subcommand> [id] [target]`: traversals, paths, impact,
//! analysis and audit over parent links and dependency edges. The algorithms live in
//! `pm_engine::read::graph`; this file parses the flags, picks bounds and renders rows.

use pm_engine::Error;
use pm_engine::read::TrackerView;
use pm_engine::read::graph::{
    Direction, ItemGraph, KindSet, PathOptions, Reached, TraversalOptions, analyze, audit,
    find_paths, traverse,
};
use pm_index::Index;
use serde_json::{Map, Value, json};

use crate::commands::relations::graph_reach;
use crate::ctx::Ctx;
use crate::failure::{CliError, ReadOutputRefusal, Result, UsageKind};
use crate::progress::index_options;
use crate::read_output::{Finished, ReadMeta, Surface, finish_read};

/// At most this many cycles, and ids per cycle, are listed in a result.
const CYCLE_CAP: usize = 10;
/// At most this many missing ids are listed in a traversal result.
const MISSING_CAP: usize = 50;

/// Walk and check the item graph: parent links and dependency edges
///
/// Supported subcommands: ancestors (parents, transitively), descendants (children),
/// predecessors (what the item waits for: blocks/blocked_by and other ordering dependencies),
/// successors (what waits for it), paths <id> <target> (simple paths, shortest first), impact
/// (descendants and successors with their distance; 10 rows unless --full), analyze (graph
/// shape: roots, leaves, components, depth, cycle counts) and audit (findings: cycles, self
/// references, missing parents or targets, several parents, open children of terminal parents).
/// Traversals return 100 ids per page; continue with --after <next_cursor>. Cycles are
/// reported, never followed. pm-cli's communities, redundancy, dominators, slack, centrality,
/// articulation, plan and index are refused with unsupported_subcommand.
#[derive(Debug, clap::Args)]
pub struct GraphArgs {
    /// What to compute
    #[arg(value_enum, value_name = "SUBCOMMAND")]
    pub subcommand: GraphSubcommand,

    /// The item to start from (traversals, paths, impact)
    #[arg(value_name = "ID")]
    pub id: Option<String>,

    /// The item paths lead to (paths only)
    #[arg(value_name = "TARGET")]
    pub target: Option<String>,

    /// Follow only these edge kinds (parent, blocks, related, discovered_from, or a custom kind;
    /// comma-separated)
    #[arg(long, value_name = "KINDS", value_delimiter = ',')]
    pub kind: Vec<String>,

    /// Stop this many edges from the start item
    #[arg(long, value_name = "N")]
    pub max_depth: Option<String>,

    /// Rows per page (traversals 100, impact 10, audit 50)
    #[arg(long, value_name = "N")]
    pub limit: Option<String>,

    /// Continue after this row (a previous page's next_cursor)
    #[arg(long, value_name = "CURSOR")]
    pub after: Option<String>,

    /// Which way paths and impact follow edges: out (default), in or both
    #[arg(long, value_enum, value_name = "DIRECTION")]
    pub direction: Option<GraphDirection>,

    /// The most paths to return (paths; default 10)
    #[arg(long, value_name = "N")]
    pub max_paths: Option<String>,

    /// Counts only, no rows
    #[arg(long, conflicts_with = "full")]
    pub summary: bool,

    /// Full rows: details for traversal ids and paths; every impact row and audit finding
    #[arg(long)]
    pub full: bool,
}

/// pm-cli's graph subcommands; the ones this pm does not implement are refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
#[allow(missing_docs)]
pub enum GraphSubcommand {
    Ancestors,
    Descendants,
    Predecessors,
    Successors,
    Paths,
    Impact,
    Analyze,
    Audit,
    Communities,
    Redundancy,
    Dominators,
    Slack,
    Centrality,
    Articulation,
    Plan,
    Index,
}

/// The subcommands that are implemented.
const SUPPORTED: [GraphSubcommand; 8] = [
    GraphSubcommand::Ancestors,
    GraphSubcommand::Descendants,
    GraphSubcommand::Predecessors,
    GraphSubcommand::Successors,
    GraphSubcommand::Paths,
    GraphSubcommand::Impact,
    GraphSubcommand::Analyze,
    GraphSubcommand::Audit,
];

impl GraphSubcommand {
    fn name(self) -> String {
        use clap::ValueEnum;
        self.to_possible_value()
            .map(|v| v.get_name().to_owned())
            .unwrap_or_default()
    }
}

/// `--direction`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphDirection {
    /// From parent to child, from prerequisite to dependent
    Out,
    /// From child to parent, from dependent to prerequisite
    In,
    /// Both ways
    Both,
}

/// The `graph` result after the read-output layer.
pub type GraphOutput = Finished;

/// Computes the graph read and runs it through the read-output layer.
///
/// # Errors
/// `unsupported_subcommand`; `missing_required_argument`/`unexpected_argument` for operands;
/// `item_not_found` for an unknown id; `invalid_argument_value` for bad numbers or kinds;
/// `conflicting_arguments`; `invalid_query_cursor` for an `--after` that is not a row.
pub fn cmd_graph(ctx: &Ctx, args: &GraphArgs) -> Result<GraphOutput> {
    use GraphSubcommand as S;
    let sub = args.subcommand;
    if !SUPPORTED.contains(&sub) {
        return Err(Error::UnsupportedSubcommand {
            command: "graph".into(),
            subcommand: sub.name(),
            supported: SUPPORTED.iter().map(|s| s.name()).collect(),
        }
        .into());
    }
    check_operands(args)?;
    let limit = positive(args.limit.as_deref(), "--limit")?;
    let max_depth = positive(args.max_depth.as_deref(), "--max-depth")?;
    let max_paths = positive(args.max_paths.as_deref(), "--max-paths")?;
    if let Some(after) = &args.after
        && after.trim().is_empty()
    {
        return Err(CliError::ReadOutput {
            kind: ReadOutputRefusal::InvalidQueryCursor,
            message: "Query cursor is malformed.".into(),
            flag: "--after",
            value: Some(after.clone()),
            allowed: Box::default(),
            suggestion: None,
        });
    }
    if args.full && limit.is_some() && matches!(sub, S::Impact | S::Audit) {
        return Err(conflict(
            "--full returns every row; drop --limit or --full",
            "--full",
        ));
    }
    let tracker = ctx.tracker()?;
    let view = TrackerView::open(tracker.clone(), &ctx.settings_env())?;
    let root = args
        .id
        .as_deref()
        .map(|raw| resolve(&view, raw))
        .transpose()?;
    let target = args
        .target
        .as_deref()
        .map(|raw| resolve(&view, raw))
        .transpose()?;
    let index = Index::open(&tracker, view.schema(), index_options(ctx));
    let graph = graph_reach::load(&index, args, root.as_deref(), target.as_deref(), max_depth)?;
    let node = |id: &str| graph.node(id).ok_or_else(|| view.not_found(id));
    let kinds = |default: KindSet| -> Result<KindSet> {
        if args.kind.is_empty() {
            return Ok(default);
        }
        Ok(graph
            .parse_kinds(args.kind.iter().map(String::as_str))
            .map_err(|bad| Error::InvalidArgument {
                field: "--kind".into(),
                value: bad,
                reason: "not an edge kind of this tracker".into(),
                allowed: graph.kind_names().to_vec(),
            })?)
    };
    let mode = if args.summary {
        "summary"
    } else if args.full {
        "full"
    } else {
        "default"
    };
    let mut env = Map::new();
    env.insert("subcommand".into(), json!(sub.name()));
    env.insert("root".into(), json!(root));
    match sub {
        S::Ancestors | S::Descendants | S::Predecessors | S::Successors | S::Impact => {
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
            let page = if args.summary || (impact && args.full) {
                None
            } else {
                Some(limit.unwrap_or(if impact { 10 } else { 100 }))
            };
            let options = TraversalOptions {
                direction,
                kinds: kinds(default_kinds)?,
                max_depth,
                after: if args.summary {
                    None
                } else {
                    args.after.clone()
                },
                limit: page,
            };
            let start = node(root.as_deref().unwrap_or_default())?;
            let walk = traverse(&graph, start, &options)?;
            env.insert(
                "count".into(),
                json!(if args.summary { 0 } else { walk.rows.len() }),
            );
            if args.summary {
                env.insert("total".into(), json!(walk.rows.len()));
            }
            env.insert(
                "truncated".into(),
                json!(walk.has_more || walk.depth_limited),
            );
            env.insert(
                "cost".into(),
                json!({"visited_nodes": walk.visited_nodes, "inspected_edges": walk.inspected_edges}),
            );
            env.insert("next_cursor".into(), json!(walk.next_cursor));
            if !args.summary {
                let rows: Vec<Value> = walk
                    .rows
                    .iter()
                    .map(|r| {
                        if impact || args.full {
                            reached_row(&graph, r, if impact { "distance" } else { "depth" })
                        } else {
                            json!(graph.id(r.node))
                        }
                    })
                    .collect();
                env.insert(
                    (if impact { "affected" } else { "ids" }).into(),
                    Value::Array(rows),
                );
            }
            env.insert("direction".into(), json!(direction_name(direction)));
            env.insert("kinds".into(), json!(kind_list(&graph, &options.kinds)));
            env.insert("max_depth".into(), json!(max_depth));
            env.insert("limit".into(), json!(page));
            env.insert("depth_limited".into(), json!(walk.depth_limited));
            env.insert("missing".into(), json!(cap(walk.missing, MISSING_CAP)));
            insert_cycles(&mut env, walk.cycles);
        }
        S::Paths => {
            let options = PathOptions {
                direction: direction(args.direction),
                kinds: kinds(graph.directed_kinds())?,
                max_depth: max_depth.unwrap_or(10),
                max_paths: max_paths.unwrap_or(10),
            };
            let (from, to) = (
                node(root.as_deref().unwrap_or_default())?,
                node(target.as_deref().unwrap_or_default())?,
            );
            let search = find_paths(&graph, from, to, &options);
            env.insert("target".into(), json!(target));
            env.insert(
                "count".into(),
                json!(if args.summary { 0 } else { search.paths.len() }),
            );
            if args.summary {
                env.insert("total".into(), json!(search.paths.len()));
            }
            env.insert(
                "truncated".into(),
                json!(search.stopped_by.is_some() || search.depth_limited),
            );
            env.insert(
                "cost".into(),
                json!({"visited_nodes": search.visited_nodes, "inspected_edges": search.inspected_edges}),
            );
            env.insert("next_cursor".into(), Value::Null);
            if !args.summary {
                let rows: Vec<Value> = search
                    .paths
                    .iter()
                    .map(|p| {
                        let mut row = Map::new();
                        row.insert("length".into(), json!(p.kinds.len()));
                        row.insert(
                            "ids".into(),
                            json!(p.nodes.iter().map(|&n| graph.id(n)).collect::<Vec<_>>()),
                        );
                        row.insert(
                            "via".into(),
                            json!(
                                p.kinds
                                    .iter()
                                    .map(|&k| graph.kind_name(k))
                                    .collect::<Vec<_>>()
                            ),
                        );
                        if args.full {
                            let nodes: Vec<Value> =
                                p.nodes.iter().map(|&n| node_row(&graph, n)).collect();
                            row.insert("nodes".into(), Value::Array(nodes));
                        }
                        Value::Object(row)
                    })
                    .collect();
                env.insert("paths".into(), Value::Array(rows));
            }
            env.insert("direction".into(), json!(direction_name(options.direction)));
            env.insert("kinds".into(), json!(kind_list(&graph, &options.kinds)));
            env.insert("max_depth".into(), json!(options.max_depth));
            env.insert("max_paths".into(), json!(options.max_paths));
            env.insert("stopped_by".into(), json!(search.stopped_by));
        }
        S::Analyze => {
            env.insert("count".into(), json!(graph.len()));
            env.insert("truncated".into(), json!(false));
            env.insert(
                "cost".into(),
                json!({"visited_nodes": graph.len(), "inspected_edges": graph.edge_count()}),
            );
            env.insert("next_cursor".into(), Value::Null);
            env.insert("analysis".into(), json!(analyze(&graph)));
        }
        _ => return audit_result(&graph, args, limit, env, mode, ctx),
    }
    finish(ctx, args, env, mode)
}

/// Fills the audit envelope (findings paged after a `code:id` cursor) and finishes it.
fn audit_result(
    graph: &ItemGraph,
    args: &GraphArgs,
    limit: Option<usize>,
    mut env: Map<String, Value>,
    mode: &str,
    ctx: &Ctx,
) -> Result<Finished> {
    let findings = audit(graph);
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for f in &findings {
        *counts.entry(f.code).or_default() += 1;
    }
    let start = match &args.after {
        None => 0,
        Some(after) => match findings.iter().position(|f| f.key() == *after) {
            Some(i) => i + 1,
            None => {
                return Err(CliError::ReadOutput {
                    kind: ReadOutputRefusal::InvalidQueryCursor,
                    message: format!(
                        "Query cursor item {after} is no longer present in this result set."
                    ),
                    flag: "--after",
                    value: Some(after.clone()),
                    allowed: Box::default(),
                    suggestion: None,
                });
            }
        },
    };
    let page = if args.full || args.summary {
        None
    } else {
        Some(limit.unwrap_or(50))
    };
    let end = page.map_or(findings.len(), |n| {
        start.saturating_add(n).min(findings.len())
    });
    let has_more = end < findings.len();
    env.insert(
        "count".into(),
        json!(if args.summary { 0 } else { end - start }),
    );
    env.insert("total".into(), json!(findings.len()));
    env.insert("truncated".into(), json!(has_more));
    env.insert(
        "cost".into(),
        json!({"visited_nodes": graph.len(), "inspected_edges": graph.edge_count()}),
    );
    let next = (has_more && end > start).then(|| findings[end - 1].key());
    env.insert("next_cursor".into(), json!(next));
    if !args.summary {
        env.insert("findings".into(), json!(findings[start..end]));
    }
    env.insert("finding_counts".into(), json!(counts));
    env.insert("limit".into(), json!(page));
    finish(ctx, args, env, mode)
}

/// Adds the projection and runs the envelope through the read-output layer.
fn finish(
    ctx: &Ctx,
    args: &GraphArgs,
    mut env: Map<String, Value>,
    mode: &str,
) -> Result<Finished> {
    let analyze = args.subcommand == GraphSubcommand::Analyze;
    let declared: Vec<Value> = if analyze {
        Vec::new()
    } else {
        vec![json!({"name": "result_rows", "restore_with": "--full"})]
    };
    // impact and audit rows are complete when nothing was cut; traversal ids and paths
    // carry their details only with --full.
    let rows_complete = matches!(
        args.subcommand,
        GraphSubcommand::Impact | GraphSubcommand::Audit
    ) && !args.summary
        && env.get("truncated") == Some(&Value::Bool(false));
    let included: Vec<&str> = if (args.full || rows_complete) && !analyze {
        vec!["result_rows"]
    } else {
        Vec::new()
    };
    env.insert(
        "projection".into(),
        json!({"mode": mode, "declared_field_groups": declared, "included_field_groups": included}),
    );
    let mut meta = ReadMeta::new(Surface::Graph, "graph")
        .legacy_switch("--full", args.full)
        .legacy_switch("--summary", args.summary)
        .legacy_value("--after", args.after.as_deref())
        .legacy_value("--limit", args.limit.as_deref())
        .legacy_value("--max-depth", args.max_depth.as_deref())
        .legacy_value("--max-paths", args.max_paths.as_deref());
    meta.operand.clone_from(&args.id);
    let format = ctx.read_output.resolve_format(ctx.format, None);
    finish_read(Value::Object(env), &meta, &ctx.read_output, format)
}

fn check_operands(args: &GraphArgs) -> Result<()> {
    use GraphSubcommand as S;
    let sub = args.subcommand;
    let usage = |kind, detail: String, flag: &str| CliError::Usage {
        kind,
        detail,
        flag: Some(flag.into()),
        value: None,
        suggestions: Box::new([]),
        allowed: Box::new([]),
    };
    let takes_id = !matches!(sub, S::Analyze | S::Audit);
    if takes_id && args.id.is_none() {
        return Err(usage(
            UsageKind::MissingRequiredArgument,
            format!("graph {} needs an item id", sub.name()),
            "<ID>",
        ));
    }
    if !takes_id && args.id.is_some() {
        return Err(usage(
            UsageKind::UnexpectedArgument,
            format!(
                "graph {} reads the whole tracker and takes no item id",
                sub.name()
            ),
            "<ID>",
        ));
    }
    match (sub == S::Paths, args.target.is_some()) {
        (true, false) => Err(usage(
            UsageKind::MissingRequiredArgument,
            "graph paths needs a target id: pm graph paths <id> <target>".into(),
            "<TARGET>",
        )),
        (false, true) => Err(usage(
            UsageKind::UnexpectedArgument,
            format!("graph {} takes no target id", sub.name()),
            "<TARGET>",
        )),
        _ => Ok(()),
    }
}

fn conflict(detail: &str, flag: &str) -> CliError {
    CliError::Usage {
        kind: UsageKind::ConflictingArguments,
        detail: detail.into(),
        flag: Some(flag.into()),
        value: None,
        suggestions: Box::new([]),
        allowed: Box::new([]),
    }
}

/// Parses an optional whole number of at least 1.
fn positive(raw: Option<&str>, flag: &str) -> Result<Option<usize>> {
    Ok(raw
        .map(|raw| match raw.trim().parse::<usize>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(Error::InvalidArgument {
                field: flag.into(),
                value: raw.into(),
                reason: "expected a whole number of at least 1".into(),
                allowed: Vec::new(),
            }),
        })
        .transpose()?)
}

/// Resolves an id argument to the item's id (the tracker prefix may be left out).
fn resolve(view: &TrackerView, raw: &str) -> Result<String> {
    Ok(view.locate(raw).map(|file| file.stem)?)
}

pub(crate) fn direction(flag: Option<GraphDirection>) -> Direction {
    match flag {
        None | Some(GraphDirection::Out) => Direction::Out,
        Some(GraphDirection::In) => Direction::In,
        Some(GraphDirection::Both) => Direction::Both,
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

fn node_row(graph: &ItemGraph, node: usize) -> Value {
    let info = graph.info(node);
    json!({"id": info.id, "title": info.title, "type": info.item_type, "status": info.status})
}

fn reached_row(graph: &ItemGraph, r: &Reached, depth_key: &str) -> Value {
    let info = graph.info(r.node);
    let mut row = Map::new();
    row.insert("id".into(), json!(info.id));
    row.insert("title".into(), json!(info.title));
    row.insert("type".into(), json!(info.item_type));
    row.insert("status".into(), json!(info.status));
    row.insert(depth_key.into(), json!(r.depth));
    row.insert("via".into(), json!(graph.kind_name(r.via)));
    row.insert("from".into(), json!(graph.id(r.from)));
    Value::Object(row)
}

fn cap<T>(mut list: Vec<T>, n: usize) -> Vec<T> {
    list.truncate(n);
    list
}

/// Inserts `cycle_count` and at most [`CYCLE_CAP`] cycles of at most [`CYCLE_CAP`] ids each.
fn insert_cycles(env: &mut Map<String, Value>, cycles: Vec<Vec<String>>) {
    env.insert("cycle_count".into(), json!(cycles.len()));
    let shown: Vec<Vec<String>> = cap(cycles, CYCLE_CAP)
        .into_iter()
        .map(|c| cap(c, CYCLE_CAP))
        .collect();
    env.insert("cycles".into(), json!(shown));
}
