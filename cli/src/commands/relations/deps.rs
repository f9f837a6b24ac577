//! `pm deps <id>`: without a mutation flag, the item's dependencies followed transitively
//! (tree, graph or context format, bounded); with `--add`/`--remove`, edit
//! its dependency rows (targets must exist).

use std::collections::BTreeSet;

use pm_engine::Error;
use pm_engine::mutate::{DependencySeed, deps_add, deps_remove, split_list};
use pm_engine::read::TrackerView;
use pm_engine::read::graph::deps::{Bounds, DepsIndex, DepsOptions};
use pm_engine::read::graph::{Direction, EdgeModel, KindFilter, Reach};
use pm_index::{GraphRows, GraphSubset, Index};

use super::deps_result::{DepsLimits, DepsPage, DepsProjection, DepsResult};
use super::graph::direction;
use crate::args::numbers::{AtLeastOne, Number, NumberFlag, TokenBudget};
use crate::ctx::Ctx;
use crate::failure::{CliError, ReadOutputRefusal, Result, UsageKind};
use crate::mutation::{MutationOutput, ReceiptArgs, receipt_for, with_context};
use crate::progress::index_options;
use crate::read_output::{Finished, ReadMeta, Surface, finish_read};

/// Show an item's dependencies transitively, or add and remove them
///
/// Without --add/--remove, prints the dependencies of the item followed transitively: each
/// dependencies[] row (via = its kind), the scalar blocked_by, and a parent that names no item
/// (a typed missing edge). --format tree (default) nests them, marking cycle (the id is already
/// on the path; not expanded), missing (no such item) and, with --collapse repeated, repeated
/// (already expanded elsewhere). --format graph lists nodes and edges breadth-first; --format
/// context is a bounded node/edge page with --direction, --kind and --cursor. node_count,
/// edge_count and missing_count count the whole closure; truncation_reasons says which bound
/// (--max-depth 10, --node-limit 200 / 25 for context, --edge-limit 400 / 50) cut rows.
/// --summary prints only the counts; --full lifts the node and edge bounds.
#[derive(Debug, clap::Args)]
pub struct DepsArgs {
    /// The item id
    #[arg(value_name = "ID")]
    pub id: String,

    /// Read shape: tree (default), graph or context
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<DepsFormat>,

    /// Expand at most N levels below the item (default 10)
    #[arg(long, value_name = "N")]
    pub max_depth: Option<Number<AtLeastOne>>,

    /// Tree: show a node expanded elsewhere once (repeated) or every time (none, default)
    #[arg(long, value_enum, value_name = "MODE")]
    pub collapse: Option<DepsCollapse>,

    /// Only the counts, no tree or graph
    #[arg(long, conflicts_with = "full")]
    pub summary: bool,

    /// No node or edge bound
    #[arg(long)]
    pub full: bool,

    /// At most N nodes (default 200; context 25)
    #[arg(long, value_name = "N")]
    pub node_limit: Option<Number<AtLeastOne>>,

    /// At most N edges (default 400; context 50)
    #[arg(long, value_name = "N")]
    pub edge_limit: Option<Number<AtLeastOne>>,

    /// Token budget of the printed result
    #[arg(long, value_name = "N")]
    pub token_budget: Option<Number<TokenBudget>>,

    /// Context: continue after this node (a previous page's next_cursor)
    #[arg(long, value_name = "CURSOR")]
    pub cursor: Option<String>,

    /// Context: out (what the item depends on, default), in (what depends on it) or both
    #[arg(long, value_enum, value_name = "DIRECTION")]
    pub direction: Option<crate::commands::GraphDirection>,

    /// Only these dependency kinds (comma-separated: blocks, related, blocked_by, parent, …)
    #[arg(long, value_name = "KINDS", value_delimiter = ',')]
    pub kind: Vec<String>,

    /// Add a dependency: id=<id>,kind=<kind> or a bare id (repeatable)
    #[arg(long, value_name = "SPEC")]
    pub add: Vec<String>,

    /// Remove the dependency on these ids (comma-separated, repeatable)
    #[arg(long, value_name = "IDS", conflicts_with = "add")]
    pub remove: Vec<String>,

    /// Change an item another principal holds
    #[arg(long)]
    pub force: bool,

    /// Receipt flags.
    #[command(flatten)]
    pub receipt: ReceiptArgs,
}

/// `deps --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DepsFormat {
    /// Nested dependencies
    Tree,
    /// Breadth-first nodes and edges
    Graph,
    /// A bounded, resumable node/edge page
    Context,
}

/// `deps --collapse`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DepsCollapse {
    /// Expand every occurrence
    None,
    /// Expand a node once; later occurrences are marked repeated
    Repeated,
}

impl DepsArgs {
    /// Returns true when no mutation flag is given (the read mode).
    pub fn is_read(&self) -> bool {
        self.add.is_empty() && self.remove.is_empty()
    }
}

/// Reads the dependencies of `args.id` and runs them through the read-output layer.
///
/// # Errors
/// `not_in_project`, `item_not_found`, `invalid_argument_value` for bad numbers or kinds,
/// `invalid_query_cursor` for a `--cursor` that is not a node of the page order.
pub fn cmd_deps_read(ctx: &Ctx, args: &DepsArgs) -> Result<Finished> {
    let format = args.format.unwrap_or(DepsFormat::Tree);
    let context = format == DepsFormat::Context;
    let bounds = read_bounds(args, format)?;
    let tracker = ctx.tracker()?;
    let view = TrackerView::open(tracker.clone(), &ctx.settings_env())?;
    let id = view.locate(&args.id)?.stem;
    let index = Index::open(&tracker, view.schema(), index_options(ctx));
    let direction = direction(args.direction);
    let (deps, kinds) = load_deps(&index, &id, args, direction, bounds.max_depth)?;
    let bounded = !args.full;
    let options = DepsOptions {
        max_depth: bounds.max_depth,
        node_limit: bounds
            .node_limit
            .or(bounded.then_some(if context { 25 } else { 200 })),
        edge_limit: bounds
            .edge_limit
            .or(bounded.then_some(if context { 50 } else { 400 })),
        collapse_repeated: args.collapse == Some(DepsCollapse::Repeated),
        direction,
        kinds,
        after: args.cursor.clone(),
    };
    let result = deps_result(&deps, &id, &options, format, args)?;
    finish(ctx, args, id, result)
}

/// The numeric bounds of a deps read.
struct ReadBounds {
    max_depth: usize,
    node_limit: Option<usize>,
    edge_limit: Option<usize>,
}

/// Parses the numeric flags and refuses the context-only flags outside `--format context`
/// and a blank `--cursor`, in that order.
fn read_bounds(args: &DepsArgs, format: DepsFormat) -> Result<ReadBounds> {
    let bounds = ReadBounds {
        max_depth: args.max_depth.value("--max-depth")?.unwrap_or(10),
        node_limit: args.node_limit.value("--node-limit")?,
        edge_limit: args.edge_limit.value("--edge-limit")?,
    };
    let context_only = args.cursor.is_some() || args.direction.is_some() || !args.kind.is_empty();
    if format != DepsFormat::Context && context_only {
        return Err(Error::invalid_argument(
            "--format",
            if format == DepsFormat::Tree {
                "tree"
            } else {
                "graph"
            },
            "--cursor, --direction and --kind need --format context",
            Vec::new(),
        )
        .into());
    }
    if args.cursor.as_deref().is_some_and(|c| c.trim().is_empty()) {
        return Err(CliError::ReadOutput {
            kind: ReadOutputRefusal::InvalidQueryCursor,
            message: "Query cursor is malformed.".into(),
            flag: "--cursor",
            value: args.cursor.clone(),
            allowed: Box::default(),
            suggestion: None,
        });
    }
    Ok(bounds)
}

/// Builds the dependency index the read walks and returns it with the `--kind` set.
///
/// Only the items reachable from the item, unless `--kind` names a kind the kind facts of
/// the projection cannot confirm (a dangling parent's `parent`, or no such kind: the
/// refusal lists every kind, which takes every item).
fn load_deps(
    index: &Index,
    id: &str,
    args: &DepsArgs,
    direction: Direction,
    max_depth: usize,
) -> Result<(DepsIndex, Option<BTreeSet<String>>)> {
    let wanted: Option<BTreeSet<String>> =
        (!args.kind.is_empty()).then(|| args.kind.iter().map(|k| k.trim().to_owned()).collect());
    let reach = Reach {
        model: EdgeModel::Declared,
        direction,
        kinds: wanted.clone().map_or(KindFilter::All, KindFilter::Only),
        max_depth: Some(max_depth),
        also: Vec::new(),
    };
    let (deps, every_item) = match index.graph_reachable(id, &reach)?.rows {
        GraphRows::Reachable(subset)
            if wanted
                .as_ref()
                .is_none_or(|w| w.is_subset(&declared_kinds(&subset))) =>
        {
            (DepsIndex::build(&subset.items), false)
        }
        GraphRows::Reachable(_) => (DepsIndex::build(&index.graph_items()?.rows), true),
        GraphRows::All(items) => (DepsIndex::build(&items), true),
    };
    if let Some(wanted) = wanted.as_ref().filter(|_| every_item) {
        let known = deps.kinds();
        if let Some(bad) = wanted.iter().find(|k| !known.contains(*k)) {
            let mut err = Error::invalid_argument(
                "--kind",
                bad,
                "no item declares a dependency of this kind",
                Vec::new(),
            );
            if let Error::InvalidArgument { allowed, .. } = &mut err {
                *allowed = known.into_iter().collect();
            }
            return Err(err.into());
        }
    }
    Ok((deps, wanted))
}

/// The typed result: the census counts, then (without `--summary`) the rows and what the
/// bounds cut.
fn deps_result(
    deps: &DepsIndex,
    id: &str,
    options: &DepsOptions,
    format: DepsFormat,
    args: &DepsArgs,
) -> Result<DepsResult> {
    let census = deps.census(id, options);
    let format_name = match format {
        DepsFormat::Tree => "tree",
        DepsFormat::Graph => "graph",
        DepsFormat::Context => "context",
    };
    let mut result = DepsResult {
        id: id.to_owned(),
        format: format_name,
        node_count: census.node_count,
        edge_count: census.edge_count,
        edge_basis: "declared_dependencies",
        missing_count: census.missing_count,
        tree: None,
        graph: None,
        context: None,
        truncated: None,
        truncation_reasons: None,
        limits: None,
        omitted_node_count: None,
        omitted_edge_count: None,
        legacy_alias_counts: census.legacy_alias_counts,
        projection: DepsProjection::new("summary", false),
    };
    if args.summary {
        return Ok(result);
    }
    let bounds = deps_rows(deps, id, options, format, &mut result)?;
    let complete = bounds.reasons.is_empty();
    result.truncated = Some(!complete);
    result.limits = Some(DepsLimits {
        max_depth: options.max_depth,
        node_limit: options.node_limit,
        edge_limit: options.edge_limit,
    });
    result.omitted_node_count = Some(census.node_count.saturating_sub(bounds.nodes));
    result.omitted_edge_count = Some(census.edge_count.saturating_sub(bounds.edges));
    result.truncation_reasons = Some(bounds.reasons);
    let mode = if args.full { "full" } else { format_name };
    result.projection = DepsProjection::new(mode, complete);
    Ok(result)
}

/// Runs the typed result through the read-output layer.
fn finish(ctx: &Ctx, args: &DepsArgs, id: String, result: DepsResult) -> Result<Finished> {
    let collapse = args.collapse.map(|c| {
        if c == DepsCollapse::Repeated {
            "repeated"
        } else {
            "none"
        }
    });
    let mut meta = ReadMeta::new(Surface::Deps, "deps")
        .legacy_value("--collapse", collapse)
        .legacy_switch("--full", args.full)
        .legacy_switch("--summary", args.summary)
        .legacy_value("--edge-limit", args.edge_limit.raw())
        .legacy_value("--max-depth", args.max_depth.raw())
        .legacy_value("--node-limit", args.node_limit.raw())
        .legacy_value("--token-budget", args.token_budget.raw());
    meta.operand = Some(id);
    let encoding = ctx.read_output.resolve_format(ctx.format, None);
    finish_read(result.into_value()?, &meta, &ctx.read_output, encoding)
}

/// Renders the tree, graph or context rows into `result`; returns what the bounds left out.
fn deps_rows(
    deps: &DepsIndex,
    id: &str,
    options: &DepsOptions,
    format: DepsFormat,
    result: &mut DepsResult,
) -> Result<Bounds> {
    if format == DepsFormat::Tree {
        let (tree, bounds) = deps.tree(id, options);
        result.tree = Some(tree);
        return Ok(bounds);
    }
    let (nodes, edges, bounds) = deps.graph(id, options)?;
    let context = format == DepsFormat::Context;
    let page = DepsPage {
        nodes,
        edges,
        next_cursor: context.then(|| bounds.next_cursor.clone()),
        has_more: context.then_some(bounds.next_cursor.is_some()),
    };
    if context {
        result.context = Some(page);
    } else {
        result.graph = Some(page);
    }
    Ok(bounds)
}

/// The `via` kinds the projection's kind facts confirm some item declares: every dependency
/// kind (`unspecified` for an empty one) and `blocked_by` when some item has a scalar blocker.
/// A subset of [`DepsIndex::kinds`] over every item, which adds `parent` for a dangling parent.
fn declared_kinds(subset: &GraphSubset) -> BTreeSet<String> {
    let mut kinds: BTreeSet<String> = subset
        .dependency_kinds
        .iter()
        .map(|k| {
            if k.is_empty() {
                "unspecified".to_owned()
            } else {
                k.clone()
            }
        })
        .collect();
    if subset.scalar_blocker {
        kinds.insert("blocked_by".to_owned());
    }
    kinds
}

/// Adds or removes dependency rows.
///
/// # Errors
/// `dependency_target_unresolved`, unknown kinds, a missing `--add`/`--remove`, ownership,
/// lock and revision conflicts.
pub fn cmd_deps(ctx: &Ctx, args: &DepsArgs) -> Result<(MutationOutput, Vec<String>)> {
    let m = if !args.add.is_empty() {
        let seeds = args
            .add
            .iter()
            .map(|raw| DependencySeed::parse(raw, "cli:deps:add"))
            .collect::<pm_engine::Result<Vec<_>>>()?;
        with_context(ctx, "deps", args.force, |mctx, _| {
            Ok(deps_add(mctx, &args.id, &seeds)?)
        })?
    } else if !args.remove.is_empty() {
        let ids: Vec<String> = args.remove.iter().flat_map(|r| split_list(r)).collect();
        with_context(ctx, "deps", args.force, |mctx, _| {
            Ok(deps_remove(mctx, &args.id, &ids)?)
        })?
    } else {
        return Err(CliError::Usage {
            kind: UsageKind::MissingRequiredArgument,
            detail: "deps needs --add or --remove".into(),
            flag: Some("--add".into()),
            value: None,
            suggestions: Box::new([]),
            allowed: Box::new([]),
        });
    };
    Ok((receipt_for(&m, &args.receipt), m.warnings))
}
