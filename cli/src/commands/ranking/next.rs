//! `pm next`: the recommended item with its reasons, the ranked ready queue, decisions, the
//! blocked queue and work held by others (engine `rank::next`), through the read-output layer.

use pm_engine::query::StatusFilter;
use pm_engine::rank::item::RankItem;
use pm_engine::rank::next::{Hierarchy, NextOptions, NextReport, compute, reasons};
use pm_engine::rank::relevance::{MODEL, SignalContext, derive_signals};
use pm_engine::schema::{RuntimeSchema, load};
use pm_index::Index;
use serde_json::{Map, Value};

use super::next_result::{
    Held, NextFilters, NextResult, NextSummary, Recommended, Truncation, rows, suggestions,
};
use super::rank_rows::{Details, Explain, Scope, packing_json, ranking_json};
use crate::args::numbers::{LimitOrDefault, Number, NumberFlag, TokenBudget};
use crate::clock_reads::ReadClock;
use crate::commands::filters::list_filters::{EchoStyle, Filters, SelectArgs};
use crate::ctx::Ctx;
use crate::failure::Result;
use crate::progress::index_options;
use crate::read_output::envelope::{Stamp, to_object};
use crate::read_output::{Finished, ReadMeta, Surface, finish_read, intent};
use crate::render::Format;

/// Recommend the next item to work on, with the ready and blocked queues
///
/// Only open, in-progress and blocked leaf items count: an item with unfinished descendants is
/// a container. A leaf with no unresolved blocker is ready; ready items are ranked leaves
/// first, then by status, priority, order, deadline and recency, then re-ranked by relevance
/// signals. Decision items wait in decision_needed; ready work assigned to someone else is
/// held_by_others.
#[derive(Debug, Default, clap::Args)]
pub struct NextArgs {
    /// Item filters (`--parent` scopes the read to the item's subtree).
    #[command(flatten)]
    pub filters: SelectArgs,

    /// Ready rows to show (default 5; non-positive means the default)
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub limit: Option<Number<LimitOrDefault>>,

    /// Blocked rows to show (default: the limit)
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub blocked_limit: Option<Number<LimitOrDefault>>,

    /// Show no blocked rows
    #[arg(long)]
    pub ready_only: bool,

    /// Keep Decision items in the ready queue
    #[arg(long)]
    pub include_decisions: bool,

    /// Add the relevance ranking and packing of the ready queue
    #[arg(long)]
    pub explain_ranking: bool,

    /// Token budget of the ready-queue packer (default max(192, limit×128))
    #[arg(long, value_name = "N")]
    pub token_budget: Option<Number<TokenBudget>>,

    /// Output format for this read: toon or json
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,

    /// Context intent: execute (ready work only, 1200-token budget)
    #[arg(long = "for", value_name = "INTENT")]
    pub for_intent: Option<String>,
}

/// The limits and budget of one `pm next` read.
struct Limits {
    limit: u64,
    blocked_limit: u64,
    token_budget: u64,
    ready_only: bool,
}

impl Limits {
    fn of(args: &NextArgs, resolved_intent: Option<&intent::ResolvedIntent>) -> Result<Self> {
        let limit = args.limit.value("--limit")?.flatten().unwrap_or(5);
        let blocked_limit =
            (args.blocked_limit.value("--blocked-limit")?.flatten()).unwrap_or(limit);
        let token_budget = match resolved_intent {
            Some(i) => i.token_budget,
            None => (args.token_budget.value("--token-budget")?).unwrap_or((limit * 128).max(192)),
        };
        Ok(Self {
            limit,
            blocked_limit,
            token_budget,
            ready_only: args.ready_only || resolved_intent.is_some(),
        })
    }
}

/// Runs `pm next` and the read-output layer.
///
/// # Errors
/// `invalid_argument_value` for bad limits, budgets or filters; `item_not_found` for an
/// unknown `--parent`; `not_in_project`; the read-output refusals.
pub fn cmd_next(ctx: &Ctx, args: &NextArgs) -> Result<Finished> {
    let now_ms = ReadClock::new(&ctx.clock).instant();
    let resolved_intent = intent::resolve(
        Surface::Next,
        args.for_intent.as_deref(),
        args.token_budget.as_ref(),
        None,
    )?;
    let limits = Limits::of(args, resolved_intent.as_ref())?;

    let tracker = ctx.tracker()?;
    let loaded = load(&tracker, &ctx.settings_env())?;
    let schema = &loaded.schema;
    let view = Filters::new(&args.filters);
    let mut query = view.to_query(StatusFilter::NonTerminal, schema, &|| now_ms)?;
    // The parent scopes the read to a subtree (`Scope`) instead of filtering children.
    let parent = query.parent.take();
    let index = Index::open(&tracker, schema, index_options(ctx));
    let corpus = index.rank_corpus(&query)?;
    let hierarchy = Hierarchy::new(&corpus.items);
    let scope = Scope::of(&corpus.items, &hierarchy, parent.as_deref())?;
    let candidates = scope.select(&corpus.items, &corpus.matches);
    let opts = NextOptions {
        caller: caller_of(ctx, args, loaded.settings.author_default()),
        now_ms,
        token_budget: limits.token_budget,
        include_decisions: args.include_decisions,
    };
    let report = compute(&candidates, &corpus.items, &hierarchy, schema, &opts);

    let lim = limits.limit as usize;
    let blocked_shown = if limits.ready_only {
        0
    } else {
        limits.blocked_limit as usize
    };
    let shown: Vec<&RankItem> = (report.ready.iter().take(lim + 1))
        .chain(report.decisions.iter().take(lim))
        .chain(report.blocked.iter().take(blocked_shown))
        .map(|e| e.item)
        .collect();
    let details = Details::fetch(&index, &corpus, &shown)?;
    let ready_rows = rows(&report.ready, lim + 1, &details, &hierarchy, schema);
    let blocked_rows = rows(&report.blocked, blocked_shown, &details, &hierarchy, schema);
    let decision_rows = rows(&report.decisions, lim, &details, &hierarchy, schema);
    let recommended = (report.ready.first().zip(ready_rows.first())).map(|(e, row)| Recommended {
        row,
        reasons: reasons(e, schema, now_ms, report.completed_container),
    });
    let result = NextResult {
        stamp: Stamp::toon(pm_engine::clock::format_iso_ms(now_ms)),
        suggestions: recommended.is_none().then(|| suggestions(&report.blocked)),
        summary: summary(&report, recommended.is_some(), schema),
        recommended,
        ready: ready_rows.get(1..).unwrap_or_default(),
        decision_needed: &decision_rows,
        blocked: &blocked_rows,
        held_by_others: (report.held.iter().take(lim))
            .map(|&(id, assignee)| Held { id, assignee })
            .collect(),
        filters: limits.echo(view.echo_values(EchoStyle::Every), args.include_decisions),
        truncation: Truncation::over(lim, report.decisions.len(), report.held.len()),
        explain: args
            .explain_ranking
            .then(|| explain(&report, schema, now_ms, &opts.caller)),
    };
    let mut env = to_object(&result);

    let mut meta = ReadMeta::new(Surface::Next, "next")
        .legacy_value("--limit", args.limit.raw())
        .legacy_value("--blocked-limit", args.blocked_limit.raw());
    meta.intent = resolved_intent;
    let format = ctx.read_output.resolve_format(ctx.format, args.format);
    crate::read_output::skipped::report(&mut env, &corpus.notices);
    finish_read(Value::Object(env), &meta, &ctx.read_output, format)
}

/// Who asks: the first `--assignee`, else the author, else the settings' default author.
fn caller_of(ctx: &Ctx, args: &NextArgs, author_default: &str) -> String {
    (args.filters.assignees.first())
        .map(|a| a.trim().to_owned())
        .filter(|a| !a.is_empty())
        .or_else(|| ctx.author.clone())
        .unwrap_or_else(|| author_default.to_owned())
}

impl Limits {
    fn echo(&self, selectors: Map<String, Value>, include_decisions: bool) -> NextFilters {
        NextFilters {
            selectors,
            limit: self.limit,
            blocked_limit: self.blocked_limit,
            ready_only: self.ready_only,
            include_decisions,
            token_budget: self.token_budget,
        }
    }
}

/// The queue sizes of `report`.
fn summary(report: &NextReport<'_>, recommended: bool, schema: &RuntimeSchema) -> NextSummary {
    let in_progress = (report.ready.iter())
        .filter(|e| pm_engine::rank::critical::is_in_progress(&e.item.status, schema))
        .count();
    NextSummary {
        recommended,
        ready: report.ready.len(),
        blocked: report.blocked.len(),
        in_progress,
        candidates: report.candidates,
        containers: report.containers,
        decision_needed: report.decisions.len(),
        held_by_others: report.held.len(),
    }
}

/// The relevance ranking and packing of the ready queue.
fn explain(report: &NextReport<'_>, schema: &RuntimeSchema, now_ms: i64, caller: &str) -> Explain {
    let mut baseline: Vec<Option<&RankItem>> = vec![None; report.ranking.ranked.len()];
    for (r, e) in report.ranking.ranked.iter().zip(&report.ready) {
        baseline[r.index] = Some(e.item);
    }
    let baseline: Vec<&RankItem> = baseline.into_iter().flatten().collect();
    let ids: Vec<&str> = baseline.iter().map(|s| &*s.id).collect();
    let signal_ctx = SignalContext {
        schema,
        now_ms,
        author: Some(caller),
    };
    let signals = derive_signals(&baseline, &signal_ctx);
    Explain {
        ranking: ranking_json(&report.ranking, MODEL, &ids, &signals),
        packing: packing_json(&report.packing),
    }
}
