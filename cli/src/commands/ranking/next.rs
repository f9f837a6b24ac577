//! `pm next`: the recommended item with its reasons, the ranked ready queue, decisions, the
//! blocked queue and work held by others (engine `rank::next`), through the read-output layer.

use pm_engine::Error;
use pm_engine::query::StatusFilter;
use pm_engine::rank::item::RankItem;
use pm_engine::rank::next::{Actionable, Hierarchy, NextOptions, compute, reasons};
use pm_engine::rank::relevance::{MODEL, SignalContext, derive_signals};
use pm_engine::schema::load;
use pm_index::Index;
use serde_json::{Map, Value, json};

use super::rank_rows::{Details, Scope, focus_row, packing_json, ranking_json};
use crate::clock_reads::ReadClock;
use crate::commands::filters::list_filters::{EchoStyle, Filters, SelectArgs};
use crate::ctx::Ctx;
use crate::failure::Result;
use crate::progress::index_options;
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
    pub limit: Option<String>,

    /// Blocked rows to show (default: the limit)
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub blocked_limit: Option<String>,

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
    pub token_budget: Option<String>,

    /// Output format for this read: toon or json
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,

    /// Context intent: execute (ready work only, 1200-token budget)
    #[arg(long = "for", value_name = "INTENT")]
    pub for_intent: Option<String>,
}

/// Parses pm's next/context limits: an integer; non-positive or absent gives `fallback`.
///
/// # Errors
/// `invalid_argument_value` for a non-integer.
pub fn positive_or(raw: Option<&str>, flag: &str, fallback: u64) -> Result<u64> {
    let Some(raw) = raw else { return Ok(fallback) };
    let n: i64 = raw.trim().parse().map_err(|_| Error::InvalidArgument {
        field: flag.into(),
        value: raw.into(),
        reason: format!("{flag} must be an integer"),
        allowed: Vec::new(),
    })?;
    Ok(if n <= 0 { fallback } else { n as u64 })
}

/// Parses a token budget override (a positive integer), else `fallback`.
///
/// # Errors
/// `invalid_argument_value` for anything else.
pub fn budget_or(raw: Option<&str>, fallback: u64) -> Result<u64> {
    let Some(raw) = raw else { return Ok(fallback) };
    Ok(raw
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| Error::InvalidArgument {
            field: "--token-budget".into(),
            value: raw.into(),
            reason: "--token-budget must be a positive integer".into(),
            allowed: Vec::new(),
        })?)
}

/// Returns the rows of `list` (ranks from 1), for the first `n` entries.
fn rows(
    list: &[Actionable<'_>],
    n: usize,
    details: &Details,
    hierarchy: &Hierarchy<'_>,
    schema: &pm_engine::schema::RuntimeSchema,
) -> Vec<Map<String, Value>> {
    list.iter()
        .take(n)
        .enumerate()
        .filter_map(|(i, e)| {
            let mut row = focus_row(details.get(e.item)?, hierarchy, schema);
            row.insert("open_blocker_count".into(), json!(e.open_blockers.len()));
            let blockers: Vec<Value> = e
                .open_blockers
                .iter()
                .map(|b| json!({"id": b.id, "title": b.title, "status": b.status}))
                .collect();
            row.insert("blockers".into(), Value::Array(blockers));
            row.insert("unblocks".into(), json!(e.unblocks));
            row.insert("rank".into(), json!(i + 1));
            Some(row)
        })
        .collect()
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
        args.token_budget.as_deref(),
        None,
    )?;
    let limit = positive_or(args.limit.as_deref(), "--limit", 5)?;
    let blocked_limit = positive_or(args.blocked_limit.as_deref(), "--blocked-limit", limit)?;
    let execute = resolved_intent.is_some();
    let token_budget = match &resolved_intent {
        Some(i) => i.token_budget,
        None => budget_or(args.token_budget.as_deref(), (limit * 128).max(192))?,
    };
    let ready_only = args.ready_only || execute;

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
    let caller = args
        .filters
        .assignees
        .first()
        .map(|a| a.trim().to_owned())
        .filter(|a| !a.is_empty())
        .or_else(|| ctx.author.clone())
        .unwrap_or_else(|| loaded.settings.author_default().to_owned());
    let opts = NextOptions {
        caller,
        now_ms,
        token_budget,
        include_decisions: args.include_decisions,
    };
    let report = compute(&candidates, &corpus.items, &hierarchy, schema, &opts);

    let lim = limit as usize;
    let blocked_shown = if ready_only {
        0
    } else {
        blocked_limit as usize
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
    let recommended = report
        .ready
        .first()
        .zip(ready_rows.first())
        .map(|(e, row)| {
            let mut row = row.clone();
            row.insert(
                "reasons".into(),
                json!(reasons(e, schema, now_ms, report.completed_container)),
            );
            Value::Object(row)
        });
    let take = |rows: &[Map<String, Value>], skip: usize, n: usize| -> Value {
        Value::Array(
            rows.iter()
                .skip(skip)
                .take(n)
                .cloned()
                .map(Value::Object)
                .collect(),
        )
    };
    let in_progress = report
        .ready
        .iter()
        .filter(|e| pm_engine::rank::critical::is_in_progress(&e.item.status, schema))
        .count();

    let mut env = Map::new();
    env.insert("output_default".into(), json!("toon"));
    env.insert("now".into(), json!(pm_engine::clock::format_iso_ms(now_ms)));
    env.insert(
        "recommended".into(),
        recommended.clone().unwrap_or(Value::Null),
    );
    env.insert("ready".into(), take(&ready_rows, 1, lim));
    env.insert("decision_needed".into(), take(&decision_rows, 0, lim));
    env.insert(
        "blocked".into(),
        if ready_only {
            json!([])
        } else {
            take(&blocked_rows, 0, blocked_limit as usize)
        },
    );
    let held: Vec<Value> = report
        .held
        .iter()
        .take(lim)
        .map(|(id, a)| json!({"id": id, "assignee": a}))
        .collect();
    env.insert("held_by_others".into(), Value::Array(held));
    env.insert(
        "summary".into(),
        json!({
            "recommended": recommended.is_some(),
            "ready": report.ready.len(),
            "blocked": report.blocked.len(),
            "in_progress": in_progress,
            "candidates": report.candidates,
            "containers": report.containers,
            "decision_needed": report.decisions.len(),
            "held_by_others": report.held.len(),
        }),
    );
    let mut filters = view.echo_values(EchoStyle::Every);
    filters.insert("limit".into(), json!(limit));
    filters.insert("blocked_limit".into(), json!(blocked_limit));
    filters.insert("ready_only".into(), json!(ready_only));
    filters.insert("include_decisions".into(), json!(args.include_decisions));
    filters.insert("token_budget".into(), json!(token_budget));
    env.insert("filters".into(), Value::Object(filters));
    let mut truncation = Map::new();
    if report.decisions.len() > lim {
        truncation.insert(
            "decision_needed_total".into(),
            json!(report.decisions.len()),
        );
    }
    if report.held.len() > lim {
        truncation.insert("held_by_others_total".into(), json!(report.held.len()));
    }
    if !truncation.is_empty() {
        env.insert("truncation".into(), Value::Object(truncation));
    }
    if recommended.is_none() {
        env.insert("suggestions".into(), json!(suggestions(&report.blocked)));
    }
    if args.explain_ranking {
        let mut baseline: Vec<Option<&RankItem>> = vec![None; report.ranking.ranked.len()];
        for (r, e) in report.ranking.ranked.iter().zip(&report.ready) {
            baseline[r.index] = Some(e.item);
        }
        let baseline: Vec<&RankItem> = baseline.into_iter().flatten().collect();
        let ids: Vec<&str> = baseline.iter().map(|s| &*s.id).collect();
        let signal_ctx = SignalContext {
            schema,
            now_ms,
            author: Some(opts.caller.as_str()),
        };
        let signals = derive_signals(&baseline, &signal_ctx);
        env.insert(
            "ranking".into(),
            ranking_json(&report.ranking, MODEL, &ids, &signals),
        );
        env.insert("packing".into(), packing_json(&report.packing));
    }

    let mut meta = ReadMeta::new(Surface::Next, "next")
        .legacy_value("--limit", args.limit.as_deref())
        .legacy_value("--blocked-limit", args.blocked_limit.as_deref());
    meta.intent = resolved_intent;
    let format = ctx.read_output.resolve_format(ctx.format, args.format);
    crate::read_output::skipped::report(&mut env, &corpus.notices);
    finish_read(Value::Object(env), &meta, &ctx.read_output, format)
}

fn suggestions(blocked: &[Actionable<'_>]) -> Vec<String> {
    if blocked.is_empty() {
        return vec![
            "pm create --type Task --title \"...\" to add a new work item".into(),
            "pm list --status in_progress to review work already underway".into(),
            "pm context --depth deep for the full project snapshot".into(),
        ];
    }
    let first = blocked.iter().find(|e| !e.open_blockers.is_empty());
    let head = match first {
        Some(e) => format!(
            "{} item(s) are blocked; unblock the top one by closing {}",
            blocked.len(),
            e.open_blockers
                .iter()
                .map(|b| b.id)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => format!(
            "{} item(s) are blocked; add blocker context or move the top item back to an active status",
            blocked.len()
        ),
    };
    vec![
        head,
        "pm next --ready-only after a blocker closes to re-check ready work".into(),
        "pm create --type Task --title \"...\" to add new ready work".into(),
    ]
}
