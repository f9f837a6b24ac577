//! `pm graph <subcommand> [id] [target]`: traversals, paths, impact,
//! analysis and audit over parent links and dependency edges. The algorithms live in
//! `pm_engine::read::graph`; this file parses the flags and hands the typed result
//! (`graph_read`, `graph_result`) to the read-output layer.

use pm_engine::Error;
use pm_engine::read::TrackerView;
use pm_engine::read::graph::Direction;
use pm_index::Index;

use super::graph_read::{GraphBounds, GraphRead};
use super::graph_result::GraphResult;
use crate::args::numbers::{AtLeastOne, Number, NumberFlag};
use crate::commands::relations::graph_reach;
use crate::ctx::Ctx;
use crate::failure::{CliError, ReadOutputRefusal, Result, UsageKind};
use crate::progress::index_options;
use crate::read_output::{Finished, ReadMeta, Surface, finish_read};

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
    pub max_depth: Option<Number<AtLeastOne>>,

    /// Rows per page (traversals 100, impact 10, audit 50)
    #[arg(long, value_name = "N")]
    pub limit: Option<Number<AtLeastOne>>,

    /// Continue after this row (a previous page's next_cursor)
    #[arg(long, value_name = "CURSOR")]
    pub after: Option<String>,

    /// Which way paths and impact follow edges: out (default), in or both
    #[arg(long, value_enum, value_name = "DIRECTION")]
    pub direction: Option<GraphDirection>,

    /// The most paths to return (paths; default 10)
    #[arg(long, value_name = "N")]
    pub max_paths: Option<Number<AtLeastOne>>,

    /// Counts only, no rows
    #[arg(long, conflicts_with = "full")]
    pub summary: bool,

    /// Full rows: details for traversal ids and paths; every impact row and audit finding
    #[arg(long)]
    pub full: bool,
}

/// pm-cli's graph subcommands; the ones this pm does not implement are hidden from help and
/// refused with `unsupported_subcommand`.
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
    #[value(hide = true)]
    Communities,
    #[value(hide = true)]
    Redundancy,
    #[value(hide = true)]
    Dominators,
    #[value(hide = true)]
    Slack,
    #[value(hide = true)]
    Centrality,
    #[value(hide = true)]
    Articulation,
    #[value(hide = true)]
    Plan,
    #[value(hide = true)]
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
    pub(crate) fn name(self) -> String {
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
    let bounds = check_args(args)?;
    let tracker = ctx.tracker()?;
    let view = TrackerView::open(tracker.clone(), &ctx.settings_env())?;
    let root = resolve(&view, args.id.as_deref())?;
    let target = resolve(&view, args.target.as_deref())?;
    let index = Index::open(&tracker, view.schema(), index_options(ctx));
    let graph = graph_reach::load(
        &index,
        args,
        root.as_deref(),
        target.as_deref(),
        bounds.max_depth,
    )?;
    let read = GraphRead {
        graph: &graph,
        view: &view,
        args,
        bounds,
    };
    finish(ctx, args, read.result(root, target)?)
}

/// Checks the subcommand, operands and flags that need no tracker, in refusal order, and
/// returns the numeric bounds.
fn check_args(args: &GraphArgs) -> Result<GraphBounds> {
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
    let bounds = GraphBounds {
        limit: args.limit.value("--limit")?,
        max_depth: args.max_depth.value("--max-depth")?,
        max_paths: args.max_paths.value("--max-paths")?,
    };
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
    let paged = matches!(sub, GraphSubcommand::Impact | GraphSubcommand::Audit);
    if args.full && bounds.limit.is_some() && paged {
        return Err(conflict(
            "--full returns every row; drop --limit or --full",
            "--full",
        ));
    }
    Ok(bounds)
}

/// Runs the typed result through the read-output layer.
fn finish(ctx: &Ctx, args: &GraphArgs, result: GraphResult) -> Result<Finished> {
    let mut meta = ReadMeta::new(Surface::Graph, "graph")
        .legacy_switch("--full", args.full)
        .legacy_switch("--summary", args.summary)
        .legacy_value("--after", args.after.as_deref())
        .legacy_value("--limit", args.limit.raw())
        .legacy_value("--max-depth", args.max_depth.raw())
        .legacy_value("--max-paths", args.max_paths.raw());
    meta.operand.clone_from(&args.id);
    let format = ctx.read_output.resolve_format(ctx.format, None);
    finish_read(result.into_value()?, &meta, &ctx.read_output, format)
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

pub(super) fn conflict(detail: &str, flag: &str) -> CliError {
    CliError::Usage {
        kind: UsageKind::ConflictingArguments,
        detail: detail.into(),
        flag: Some(flag.into()),
        value: None,
        suggestions: Box::new([]),
        allowed: Box::new([]),
    }
}

/// Resolves an optional id argument to the item's id (the tracker prefix may be left out).
fn resolve(view: &TrackerView, raw: Option<&str>) -> Result<Option<String>> {
    Ok(raw
        .map(|raw| view.locate(raw).map(|file| file.stem))
        .transpose()?)
}

/// The direction of `--direction` (out without the flag).
pub(crate) fn direction(flag: Option<GraphDirection>) -> Direction {
    match flag {
        None | Some(GraphDirection::Out) => Direction::Out,
        Some(GraphDirection::In) => Direction::In,
        Some(GraphDirection::Both) => Direction::Both,
    }
}
