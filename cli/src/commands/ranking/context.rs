//! `pm context` (alias `ctx`): the ranked focus (high-level and low-level active work),
//! blocked fallback and agenda of a tracker (engine `rank::context`) with the optional sections
//! of deeper reads (`context_sections`), paged with query cursors and finished by the
//! read-output layer.

use pm_engine::query::{Query, StatusFilter};
use pm_engine::rank::context::focus;
use pm_engine::rank::critical::is_in_progress;
use pm_engine::rank::item::{RankItem, RankRelations};
use pm_engine::rank::next::Hierarchy;
use pm_engine::rank::relevance::{MODEL, SignalContext, derive_signals};
use pm_engine::schema::load;
use pm_engine::summary::ItemSummary;
use pm_index::Index;
use serde_json::{Map, Value, json};

use super::agenda::agenda;
use super::context_sections;
use super::next::{budget_or, positive_or};
use super::rank_rows::{Details, Scope, focus_row, packing_json, ranking_json};
use crate::clock_reads::ReadClock;
use crate::commands::filters::list_filters::{EchoStyle, Filters, SelectArgs};
use crate::ctx::Ctx;
use crate::failure::Result;
use crate::progress::index_options;
use crate::read_output::{
    Finished, ReadMeta, Surface, finish_read, intent, paginate, query_fingerprint,
};
use crate::render::Format;

/// Types listed under `high_level`.
const HIGH_LEVEL_TYPES: [&str; 2] = ["Epic", "Feature"];
/// At this many items the focus is paged even without `--limit`.
const SCALE_THRESHOLD: usize = 10_000;

/// Show what matters now: ranked active work, blocked fallback and the agenda
///
/// Non-terminal items are ordered by status, priority, order, deadline and recency, re-ranked
/// by relevance signals and packed into max(256, limit×160) tokens; the packed active items
/// form the focus, split into high_level (Epic, Feature) and low_level. Deeper reads add
/// sections: standard = hierarchy, activity, progress, recently_created, unparented,
/// workload; deep (or full) adds blockers, files, staleness, tests. --section picks sections
/// by name instead of a depth.
#[derive(Debug, Default, clap::Args)]
pub struct ContextArgs {
    /// Detail depth: brief (no sections), standard, deep or full (full is deep); default
    /// from settings.context.default_depth (brief)
    #[arg(long, value_name = "DEPTH")]
    pub depth: Option<String>,

    /// Include this section (repeatable or comma-separated; overrides the depth's sections):
    /// hierarchy, activity, progress, recently_created, unparented, workload, blockers,
    /// files, staleness, tests
    #[arg(long, value_name = "NAME")]
    pub section: Vec<String>,

    /// History events in the activity section (default settings.context.activity_limit, 10)
    #[arg(long, value_name = "N")]
    pub activity_limit: Option<String>,

    /// Days without an update after which active work is stale, and the activity window
    /// (default settings.context.stale_threshold_days, 7)
    #[arg(long, value_name = "DAYS")]
    pub stale_threshold: Option<String>,

    /// Focus rows per section (default 10)
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub limit: Option<String>,

    /// Continue after a previous page's next_cursor
    #[arg(long, value_name = "CURSOR")]
    pub after: Option<String>,

    /// Item filters (`--parent` scopes the read to the item's subtree).
    #[command(flatten)]
    pub filters: SelectArgs,

    /// Token budget of the packer (default max(256, limit×160))
    #[arg(long, value_name = "N")]
    pub token_budget: Option<String>,

    /// Add the relevance ranking and packing
    #[arg(long)]
    pub explain_ranking: bool,

    /// Output format for this read: toon or json
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,

    /// Context intent: orient or handoff (budget-derived row limit)
    #[arg(long = "for", value_name = "INTENT")]
    pub for_intent: Option<String>,
}

/// Runs `pm context` and the read-output layer.
///
/// # Errors
/// `invalid_argument_value` for an unknown depth or section, bad limits or filters;
/// `item_not_found` for an unknown `--parent`; `invalid_query_cursor`; `not_in_project`.
pub fn cmd_context(ctx: &Ctx, args: &ContextArgs, spelling: &str) -> Result<Finished> {
    let explicit_limit = args
        .limit
        .as_deref()
        .map(|l| positive_or(Some(l), "--limit", 10))
        .transpose()?;
    let resolved_intent = intent::resolve(
        Surface::Context,
        args.for_intent.as_deref(),
        args.token_budget.as_deref(),
        explicit_limit,
    )?;
    let limit = resolved_intent
        .as_ref()
        .and_then(|i| i.ceiling.as_ref())
        .map(|c| c.limit)
        .or(explicit_limit)
        .unwrap_or(10);
    let token_budget = match &resolved_intent {
        Some(i) => i.token_budget,
        None => budget_or(args.token_budget.as_deref(), (limit * 160).max(256))?,
    };
    let tracker = ctx.tracker()?;
    let loaded = load(&tracker, &ctx.settings_env())?;
    let schema = &loaded.schema;
    let defaults = loaded.settings.context();
    let plan = context_sections::plan(args.depth.as_deref(), &args.section, &defaults)?;
    let activity_limit = positive_or(
        args.activity_limit.as_deref(),
        "--activity-limit",
        defaults.activity_limit,
    )?;
    let stale_threshold = positive_or(
        args.stale_threshold.as_deref(),
        "--stale-threshold",
        defaults.stale_threshold_days,
    )?;
    let view = Filters::new(&args.filters);
    let mut query = view.to_query(
        StatusFilter::NonTerminal,
        schema,
        &ReadClock::new(&ctx.clock).window_base(),
    )?;
    // The parent scopes the read to a subtree (`Scope`) instead of filtering children.
    let parent = query.parent.take();
    let all_statuses = Query {
        status: StatusFilter::All,
        ..query.clone()
    };
    let index = Index::open(&tracker, schema, index_options(ctx));
    let corpus = index.rank_corpus(&query)?;
    let now_ms = ReadClock::new(&ctx.clock).context_now();
    let now = pm_engine::clock::format_iso_ms(now_ms);
    let hierarchy = match parent {
        Some(_) => Hierarchy::new(&corpus.items),
        None => Hierarchy::default(),
    };
    let scope = Scope::of(&corpus.items, &hierarchy, parent.as_deref())?;
    let listed = scope.select(&corpus.items, &corpus.matches);
    let author = ctx
        .author
        .clone()
        .unwrap_or_else(|| loaded.settings.author_default().to_owned());
    let signal_ctx = SignalContext {
        schema,
        now_ms,
        author: Some(author.as_str()),
    };
    let focus = focus(&listed, schema, &signal_ctx, token_budget);

    let bounded = args.limit.is_some()
        || args.after.is_some()
        || corpus.items.len() >= SCALE_THRESHOLD
        || resolved_intent.is_some();
    let ids: Vec<&str> = focus.active.iter().map(|s| &*s.id).collect();
    let fingerprint = query_fingerprint("context", &fingerprint_options(args));
    let page = if bounded {
        paginate(&ids, args.after.as_deref(), &fingerprint, limit as usize)?
    } else {
        paginate(&ids, None, &fingerprint, ids.len())?
    };
    let page_items = &focus.active[page.start..page.end];
    let cap = if bounded {
        page_items.len()
    } else {
        limit as usize
    };
    let is_high = |s: &&RankItem| HIGH_LEVEL_TYPES.contains(&&*s.item_type);
    let high_items: Vec<&RankItem> = page_items
        .iter()
        .copied()
        .filter(is_high)
        .take(cap)
        .collect();
    let low_items: Vec<&RankItem> = (page_items.iter().copied())
        .filter(|s| !is_high(s))
        .take(cap)
        .collect();
    let fallback_used = focus.active.is_empty();
    let fallback_items: Vec<&RankItem> = if fallback_used {
        focus.blocked.iter().copied().take(limit as usize).collect()
    } else {
        Vec::new()
    };
    let agenda_items = agenda_rows(&corpus.items, &scope, now_ms, limit as usize);
    let shown: Vec<&RankItem> = (high_items.iter().chain(&low_items))
        .chain(&fallback_items)
        .chain(&agenda_items)
        .copied()
        .collect();
    let details = Details::fetch(&index, &corpus, &shown)?;
    let relations = RankRelations::new(&corpus.items);
    let wanted: std::collections::BTreeSet<&str> =
        shown.iter().flat_map(|s| relations.blockers(s)).collect();
    let resolved = relations.resolve(&wanted);
    let no_rollup = Hierarchy::default();
    let row = |s: &&RankItem| {
        let mut r = focus_row(details.get(s)?, &no_rollup, schema);
        let open: Vec<&str> = relations
            .blockers(s)
            .into_iter()
            .filter(|b| !resolved.is_terminal_id(b))
            .collect();
        if !open.is_empty() {
            r.insert("blocked".into(), json!(true));
            r.insert("blocker_ids".into(), json!(open));
        }
        Some(Value::Object(r))
    };
    let high: Vec<Value> = high_items.iter().filter_map(row).collect();
    let low: Vec<Value> = low_items.iter().filter_map(row).collect();
    let fallback: Vec<Value> = fallback_items.iter().filter_map(row).collect();
    let agenda_corpus: Vec<ItemSummary> = agenda_items
        .iter()
        .filter_map(|s| details.get(s).cloned())
        .collect();
    let agenda = agenda(
        &agenda_corpus,
        now_ms,
        limit as usize,
        &|s: &ItemSummary| scope.contains(&s.id),
    );
    let in_progress = page_items
        .iter()
        .filter(|s| is_in_progress(&s.status, schema))
        .count();
    let open_id = schema.statuses.open_status();
    let open = page_items
        .iter()
        .filter(|s| schema.statuses.resolve(&s.status).unwrap_or(&s.status) == open_id)
        .count();

    let mut env = Map::new();
    env.insert("output_default".into(), json!("toon"));
    env.insert("now".into(), json!(now));
    env.insert("depth".into(), json!(plan.depth.name()));
    env.insert("sections_included".into(), json!(plan.sections));
    env.insert(
        "window".into(),
        json!({"anchor": now, "start": now, "end": null, "past": false, "from": null, "to": null}),
    );
    let mut filters = view.echo_values(EchoStyle::Every);
    // pm's context prints `limit` between the selectors and `parent`.
    let at = (filters.keys().position(|k| k == "parent")).unwrap_or(filters.len());
    let limit_echo = args.limit.as_deref().map_or(Value::Null, |l| json!(l));
    filters.shift_insert(at, "limit".into(), limit_echo);
    filters.insert("token_budget".into(), json!(token_budget));
    filters.insert("runtime_filters".into(), json!({}));
    env.insert("filters".into(), Value::Object(filters));
    env.insert(
        "summary".into(),
        json!({
            "active_items": page_items.len(),
            "in_progress": in_progress,
            "open": open,
            "blocked": focus.blocked.len(),
            "blocked_fallback_used": fallback_used,
            "high_level": high.len(),
            "low_level": low.len(),
            "agenda_events": agenda.count,
        }),
    );
    env.insert("high_level".into(), Value::Array(high));
    env.insert("low_level".into(), Value::Array(low));
    env.insert("blocked_fallback".into(), Value::Array(fallback));
    env.insert("agenda".into(), agenda.value);
    if bounded {
        env.insert("applied_limit".into(), json!(limit));
    }
    if page.has_more {
        env.insert("has_more".into(), json!(true));
        env.insert("truncated".into(), json!(true));
    }
    if let Some(next) = page.next_cursor {
        env.insert("next_cursor".into(), json!(next));
    }
    let section_args = context_sections::SectionArgs {
        limit: limit as usize,
        activity_limit: activity_limit as usize,
        stale_threshold_days: stale_threshold,
        now_ms,
        all_statuses: &all_statuses,
    };
    env.extend(context_sections::build(
        &plan,
        &index,
        &query,
        &|id| scope.contains(id),
        &section_args,
    )?);
    if args.explain_ranking {
        let baseline: Vec<&str> = focus.baseline.iter().map(|s| &*s.id).collect();
        let signals = derive_signals(&focus.baseline, &signal_ctx);
        env.insert(
            "ranking".into(),
            ranking_json(&focus.ranking, MODEL, &baseline, &signals),
        );
        env.insert("packing".into(), packing_json(&focus.packing));
    }

    let mut meta = ReadMeta::new(Surface::Context, spelling)
        .legacy_value("--limit", args.limit.as_deref())
        .legacy_value("--depth", args.depth.as_deref())
        .legacy_value("--after", args.after.as_deref());
    meta.after = args.after.clone();
    meta.intent = resolved_intent;
    let format = ctx.read_output.resolve_format(ctx.format, args.format);
    crate::read_output::skipped::report(&mut env, &corpus.notices);
    finish_read(Value::Object(env), &meta, &ctx.read_output, format)
}

/// Returns the rows that can give one of the first `limit` agenda events, in corpus order:
/// non-terminal rows in scope with reminders or scheduled events, and the `limit` earliest
/// upcoming deadlines of the others (the agenda orders events by time, then item id).
fn agenda_rows<'a>(
    corpus: &'a [RankItem],
    scope: &Scope,
    now_ms: i64,
    limit: usize,
) -> Vec<&'a RankItem> {
    let eligible = |s: &RankItem| !s.is_terminal() && scope.contains(&s.id);
    let mut deadlines: Vec<(i64, &str, usize)> = corpus
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.has_schedule && eligible(s))
        .filter_map(|(i, s)| Some((s.deadline_ms().filter(|ms| *ms >= now_ms)?, &*s.id, i)))
        .collect();
    deadlines.sort_unstable();
    deadlines.truncate(limit);
    let mut keep: Vec<usize> = deadlines.into_iter().map(|(_, _, i)| i).collect();
    keep.extend(
        (corpus.iter().enumerate())
            .filter(|(_, s)| s.has_schedule && eligible(s))
            .map(|(i, _)| i),
    );
    keep.sort_unstable();
    keep.into_iter().map(|i| &corpus[i]).collect()
}

/// The query-semantic options of a context read (its filters and budget), for the cursor.
fn fingerprint_options(args: &ContextArgs) -> Value {
    let mut m = Filters::new(&args.filters).echo_values(EchoStyle::GivenJoined);
    if let Some(t) = &args.token_budget {
        m.insert("token_budget".into(), json!(t));
    }
    Value::Object(m)
}
