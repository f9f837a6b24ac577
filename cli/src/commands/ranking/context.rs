//! `pm context` (alias `ctx`): the ranked focus (high-level and low-level active work),
//! blocked fallback and agenda of a tracker (engine `rank::context`) with the optional sections
//! of deeper reads (`context_sections`), paged with query cursors and finished by the
//! read-output layer.

use pm_engine::query::{Query, StatusFilter};
use pm_engine::rank::context::{Focus, focus};
use pm_engine::rank::critical::is_in_progress;
use pm_engine::rank::item::RankItem;
use pm_engine::rank::next::Hierarchy;
use pm_engine::rank::relevance::{MODEL, SignalContext, derive_signals};
use pm_engine::schema::{RuntimeSchema, load};
use pm_engine::settings::ContextDefaults;
use pm_engine::summary::ItemSummary;
use pm_index::Index;
use serde_json::{Map, Value, json};

use super::agenda::agenda;
use super::context_result::{ContextFilters, ContextResult, ContextSummary, RowBuilder, Window};
use super::context_sections::{self, SectionArgs};
use super::rank_rows::{Details, Explain, Scope, packing_json, ranking_json};
use crate::args::numbers::{LimitOrDefault, Number, NumberFlag, TokenBudget};
use crate::clock_reads::ReadClock;
use crate::commands::filters::list_filters::{EchoStyle, Filters, SelectArgs};
use crate::ctx::Ctx;
use crate::failure::Result;
use crate::progress::index_options;
use crate::read_output::envelope::{More, Paging, Stamp, to_object};
use crate::read_output::intent::ResolvedIntent;
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
    pub activity_limit: Option<Number<LimitOrDefault>>,

    /// Days without an update after which active work is stale, and the activity window
    /// (default settings.context.stale_threshold_days, 7)
    #[arg(long, value_name = "DAYS")]
    pub stale_threshold: Option<Number<LimitOrDefault>>,

    /// Focus rows per section (default 10)
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub limit: Option<Number<LimitOrDefault>>,

    /// Continue after a previous page's next_cursor
    #[arg(long, value_name = "CURSOR")]
    pub after: Option<String>,

    /// Item filters (`--parent` scopes the read to the item's subtree).
    #[command(flatten)]
    pub filters: SelectArgs,

    /// Token budget of the packer (default max(256, limit×160))
    #[arg(long, value_name = "N")]
    pub token_budget: Option<Number<TokenBudget>>,

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

/// The row limit and token budget of a context read, with its resolved intent.
fn limits(args: &ContextArgs) -> Result<(u64, u64, Option<ResolvedIntent>)> {
    let explicit_limit = (args.limit.value("--limit")?).map(|l| l.unwrap_or(10));
    let resolved_intent = intent::resolve(
        Surface::Context,
        args.for_intent.as_deref(),
        args.token_budget.as_ref(),
        explicit_limit,
    )?;
    let limit = (resolved_intent.as_ref())
        .and_then(|i| i.ceiling.as_ref())
        .map(|c| c.limit)
        .or(explicit_limit)
        .unwrap_or(10);
    let token_budget = match &resolved_intent {
        Some(i) => i.token_budget,
        None => (args.token_budget.value("--token-budget")?).unwrap_or((limit * 160).max(256)),
    };
    Ok((limit, token_budget, resolved_intent))
}

/// The numbers of rows printed per focus level and of agenda events.
struct Shown {
    high: usize,
    low: usize,
    agenda: usize,
}

impl From<(usize, usize, usize)> for Shown {
    fn from((high, low, agenda): (usize, usize, usize)) -> Self {
        Self { high, low, agenda }
    }
}

/// The focus page of a context read: the active items answered, split by level, and the
/// blocked fallback when nothing is active.
struct FocusPage<'f, 'a> {
    items: &'f [&'a RankItem],
    high: Vec<&'a RankItem>,
    low: Vec<&'a RankItem>,
    fallback: Vec<&'a RankItem>,
    paging: Paging,
}

impl<'f, 'a> FocusPage<'f, 'a> {
    /// Pages the focus when `bounded` (else lists it whole, `limit` rows per level).
    fn of(focus: &'f Focus<'a>, args: &ContextArgs, limit: usize, bounded: bool) -> Result<Self> {
        let ids: Vec<&str> = focus.active.iter().map(|s| &*s.id).collect();
        let fingerprint = query_fingerprint("context", &fingerprint_options(args));
        let page = if bounded {
            paginate(&ids, args.after.as_deref(), &fingerprint, limit)?
        } else {
            paginate(&ids, None, &fingerprint, ids.len())?
        };
        let items = &focus.active[page.start..page.end];
        let cap = if bounded { items.len() } else { limit };
        let is_high = |s: &&RankItem| HIGH_LEVEL_TYPES.contains(&&*s.item_type);
        let level = |high: bool| -> Vec<&'a RankItem> {
            (items.iter().copied())
                .filter(|s| is_high(s) == high)
                .take(cap)
                .collect()
        };
        let fallback = match focus.active.is_empty() {
            true => focus.blocked.iter().copied().take(limit).collect(),
            false => Vec::new(),
        };
        let paging = Paging {
            applied_limit: bounded.then_some(limit as u64),
            more: More::new(page.has_more),
            next_cursor: page.next_cursor,
        };
        Ok(Self {
            items,
            high: level(true),
            low: level(false),
            fallback,
            paging,
        })
    }

    /// The counts of the page.
    fn summary(&self, focus: &Focus<'_>, schema: &RuntimeSchema, shown: Shown) -> ContextSummary {
        let open_id = schema.statuses.open_status();
        let open = (self.items.iter())
            .filter(|s| schema.statuses.resolve(&s.status).unwrap_or(&s.status) == open_id)
            .count();
        ContextSummary {
            active_items: self.items.len(),
            in_progress: (self.items.iter())
                .filter(|s| is_in_progress(&s.status, schema))
                .count(),
            open,
            blocked: focus.blocked.len(),
            blocked_fallback_used: focus.active.is_empty(),
            high_level: shown.high,
            low_level: shown.low,
            agenda_events: shown.agenda,
        }
    }
}

/// Runs `pm context` and the read-output layer.
///
/// # Errors
/// `invalid_argument_value` for an unknown depth or section, bad limits or filters;
/// `item_not_found` for an unknown `--parent`; `invalid_query_cursor`; `not_in_project`.
pub fn cmd_context(ctx: &Ctx, args: &ContextArgs, spelling: &str) -> Result<Finished> {
    let (limit, token_budget, resolved_intent) = limits(args)?;
    let tracker = ctx.tracker()?;
    let loaded = load(&tracker, &ctx.settings_env())?;
    let schema = &loaded.schema;
    let defaults = loaded.settings.context();
    let plan = context_sections::plan(args.depth.as_deref(), &args.section, &defaults)?;
    let section_limits = section_limits(args, &defaults)?;
    let view = Filters::new(&args.filters);
    let window_base = ReadClock::new(&ctx.clock).window_base();
    let mut query = view.to_query(StatusFilter::NonTerminal, schema, &window_base)?;
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
    let author = (ctx.author.clone()).unwrap_or_else(|| loaded.settings.author_default().into());
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
    let lim = limit as usize;
    let page = FocusPage::of(&focus, args, lim, bounded)?;
    let agenda_items = agenda_rows(&corpus.items, &scope, now_ms, lim);
    let shown: Vec<&RankItem> = (page.high.iter().chain(&page.low))
        .chain(&page.fallback)
        .chain(&agenda_items)
        .copied()
        .collect();
    let details = Details::fetch(&index, &corpus, &shown)?;
    let rows = RowBuilder::new(&corpus.items, &shown, &details, schema);
    let agenda_corpus: Vec<ItemSummary> = (agenda_items.iter())
        .filter_map(|s| details.get(s).cloned())
        .collect();
    let agenda = agenda(&agenda_corpus, now_ms, lim, &|s: &ItemSummary| {
        scope.contains(&s.id)
    });
    let section_args = section_limits.args(lim, now_ms, &all_statuses);
    let in_scope = |id: &str| scope.contains(id);
    let (high, low) = (rows.rows(&page.high), rows.rows(&page.low));
    let result = ContextResult {
        stamp: Stamp::toon(now.clone()),
        depth: plan.depth.name(),
        sections_included: &plan.sections,
        window: Window::from_now(&now),
        filters: filters_echo(&view, args, token_budget),
        summary: page.summary(&focus, schema, (high.len(), low.len(), agenda.count).into()),
        high_level: high,
        low_level: low,
        blocked_fallback: rows.rows(&page.fallback),
        agenda: agenda.value,
        paging: page.paging,
        sections: context_sections::build(&plan, &index, &query, &in_scope, &section_args)?,
        explain: args.explain_ranking.then(|| explain(&focus, &signal_ctx)),
    };
    let mut env = to_object(&result);

    let meta = meta_of(args, spelling, resolved_intent);
    let format = ctx.read_output.resolve_format(ctx.format, args.format);
    crate::read_output::skipped::report(&mut env, &corpus.notices);
    finish_read(Value::Object(env), &meta, &ctx.read_output, format)
}

/// The read-output metadata of a context read spelled `spelling`.
fn meta_of(args: &ContextArgs, spelling: &str, resolved: Option<ResolvedIntent>) -> ReadMeta {
    let mut meta = ReadMeta::new(Surface::Context, spelling)
        .legacy_value("--limit", args.limit.raw())
        .legacy_value("--depth", args.depth.as_deref())
        .legacy_value("--after", args.after.as_deref());
    meta.after = args.after.clone();
    meta.intent = resolved;
    meta
}

/// The activity limit and stale threshold of the optional sections.
struct SectionLimits {
    activity_limit: u64,
    stale_threshold: u64,
}

fn section_limits(args: &ContextArgs, defaults: &ContextDefaults) -> Result<SectionLimits> {
    let activity_limit = (args.activity_limit.value("--activity-limit")?.flatten())
        .unwrap_or(defaults.activity_limit);
    let stale_threshold = (args.stale_threshold.value("--stale-threshold")?.flatten())
        .unwrap_or(defaults.stale_threshold_days);
    Ok(SectionLimits {
        activity_limit,
        stale_threshold,
    })
}

impl SectionLimits {
    fn args<'q>(&self, limit: usize, now_ms: i64, all: &'q Query) -> SectionArgs<'q> {
        SectionArgs {
            limit,
            activity_limit: self.activity_limit as usize,
            stale_threshold_days: self.stale_threshold,
            now_ms,
            all_statuses: all,
        }
    }
}

/// The filter echo: the selectors with `limit` between them and `parent`, then the budget.
fn filters_echo(view: &Filters<'_>, args: &ContextArgs, token_budget: u64) -> ContextFilters {
    let mut selectors = view.echo_values(EchoStyle::Every);
    // pm's context prints `limit` between the selectors and `parent`.
    let at = (selectors.keys().position(|k| k == "parent")).unwrap_or(selectors.len());
    let limit_echo = args.limit.raw().map_or(Value::Null, |l| json!(l));
    selectors.shift_insert(at, "limit".into(), limit_echo);
    ContextFilters {
        selectors,
        token_budget,
        runtime_filters: Map::new(),
    }
}

/// The relevance ranking and packing of the focus.
fn explain(focus: &Focus<'_>, signal_ctx: &SignalContext<'_>) -> Explain {
    let baseline: Vec<&str> = focus.baseline.iter().map(|s| &*s.id).collect();
    let signals = derive_signals(&focus.baseline, signal_ctx);
    Explain {
        ranking: ranking_json(&focus.ranking, MODEL, &baseline, &signals),
        packing: packing_json(&focus.packing),
    }
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
    if let Some(t) = args.token_budget.raw() {
        m.insert("token_budget".into(), json!(t));
    }
    Value::Object(m)
}
