//! `pm search <keywords…>`: keyword search with pm's scoring (engine `rank::search`), inline
//! `field:value` filters, list-parity filters, compact/full/fields rows and query cursors.

use pm_engine::Error;
use pm_engine::rank::search::{
    KeywordQuery, MatchMode, SearchOptions, SearchSpec, SearchTuning, parse_inline_filters,
};
use pm_engine::schema::load;
use pm_engine::settings::Settings;
use pm_index::Index;
use serde_json::{Value, json};

use super::search_echo::SearchEcho;
use super::search_result::{CountHits, Hits, PageRequest, SearchResult};
use super::search_rows::Projection;
use crate::args::numbers::{Count, Number, NumberFlag, Score, TokenBudget};
use crate::clock_reads::ReadClock;
use crate::commands::CommandOutput;
use crate::commands::filters::list_filters::{
    ContentArgs, Filters, SelectArgs, StatusArgs, WindowArgs,
};
use crate::commands::filters::rank_filters::split_values;
use crate::commands::listing::row_export;
use crate::ctx::Ctx;
use crate::failure::{CliError, Result, UsageKind};
use crate::progress::index_options;
use crate::read_output::envelope::to_object;
use crate::read_output::intent::ResolvedIntent;
use crate::read_output::{ReadMeta, Surface, finish_read, intent, query_fingerprint};
use crate::render::Format;

/// Search items by keyword with pm's weighted substring scoring
///
/// Every query token (whitespace-separated, lowercased) counts as a substring of title (48),
/// description (5), tags (6), status (2), body, comments, notes, learnings and plan text (1),
/// reminders and events (2) and dependency edges (3); exact title words add 10 each, a
/// multi-word query adds phrase bonuses, and an item id scores 1000 (900 without prefix).
/// Inline tag:/status:/type:/priority: tokens become filters. All statuses are searched.
#[derive(Debug, Default, clap::Args)]
pub struct SearchArgs {
    /// Keywords; inline tag:X, status:X, type:X and priority:N tokens become filters
    #[arg(value_name = "KEYWORDS", required = true, num_args = 1..)]
    pub keywords: Vec<String>,

    /// Search mode: keyword, the one mode this pm ranks with
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,

    /// pm-cli's semantic mode: parsed only to refuse it with unsupported_search_mode (no
    /// embedding provider here), so it is not shown in help
    #[arg(long, hide = true)]
    pub semantic: bool,

    /// pm-cli's hybrid mode: parsed only to refuse it with unsupported_search_mode, not shown
    #[arg(long, hide = true)]
    pub hybrid: bool,

    /// How tokens combine: or (default, all-terms bonus), and (all required), exact (phrase)
    #[arg(long, value_name = "and|or|exact")]
    pub match_mode: Option<String>,

    /// Drop hits scoring below this (default settings.search.score_threshold, 0)
    #[arg(long, value_name = "N")]
    pub min_score: Option<Number<Score>>,

    /// Print only the number of matches
    #[arg(long)]
    pub count: bool,

    /// Keep only items whose whole title equals the query
    #[arg(long)]
    pub title_exact: bool,

    /// Keep only items containing the query as a contiguous phrase
    #[arg(long)]
    pub phrase_exact: bool,

    /// The status scope (default: every status).
    #[command(flatten)]
    pub status: StatusArgs,

    /// Item filters.
    #[command(flatten)]
    pub filters: SelectArgs,

    /// Date windows.
    #[command(flatten)]
    pub windows: WindowArgs,

    /// Content presence.
    #[command(flatten)]
    pub content: ContentArgs,

    /// Compact rows: id, title, status, type, priority, updated_at, score, matched_fields
    #[arg(long, conflicts_with_all = ["full", "fields"])]
    pub compact: bool,

    /// Full rows: {item, score, matched_fields}
    #[arg(long, conflicts_with = "fields")]
    pub full: bool,

    /// Rows with these fields (item fields, item.<field>, score, matched_fields)
    #[arg(long, value_name = "CSV")]
    pub fields: Option<String>,

    /// Return at most N hits (default settings.search.max_results, 50)
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub limit: Option<Number<Count>>,

    /// Continue after a previous page's next_cursor
    #[arg(long, value_name = "CURSOR")]
    pub after: Option<String>,

    /// Add highlights per hit: each matched field's first token occurrence «marked» with up to
    /// 60 characters of context on each side
    #[arg(long)]
    pub highlight: bool,

    /// Output format for this read: toon or json (the envelope), or ndjson (one hit per line)
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<SearchFormat>,

    /// Context intent: discover (compact rows sized to its token budget)
    #[arg(long = "for", value_name = "INTENT")]
    pub for_intent: Option<String>,

    /// Token budget of the --for intent (at least 256)
    #[arg(long, value_name = "N")]
    pub token_budget: Option<Number<TokenBudget>>,
}

/// `search --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SearchFormat {
    /// TOON envelope
    Toon,
    /// JSON envelope
    Json,
    /// Rows only, one JSON object per hit and line
    Ndjson,
}

fn usage(message: &str) -> CliError {
    CliError::Usage {
        kind: UsageKind::InvalidValue,
        detail: message.into(),
        flag: None,
        value: None,
        suggestions: Box::default(),
        allowed: Box::default(),
    }
}

fn mode_of(args: &SearchArgs) -> Result<()> {
    let requested = match (&args.mode, args.semantic, args.hybrid) {
        (_, true, _) => Some("semantic".to_owned()),
        (_, _, true) => Some("hybrid".to_owned()),
        (Some(m), ..) => Some(m.trim().to_ascii_lowercase()),
        _ => None,
    };
    match requested.as_deref() {
        None | Some("keyword") => Ok(()),
        Some(m @ ("semantic" | "hybrid")) => {
            Err(Error::UnsupportedSearchMode { mode: m.into() }.into())
        }
        Some(other) => Err(Error::invalid_argument(
            "--mode",
            other,
            "Search mode must be one of keyword|semantic|hybrid",
            ["keyword", "semantic", "hybrid"].map(String::from).into(),
        )
        .into()),
    }
}

/// The query and options parsed from the arguments, before the tracker is read.
struct Parsed {
    raw_query: String,
    query_text: String,
    keyword: KeywordQuery,
    match_mode: MatchMode,
    min_score: Option<f64>,
    explicit_limit: Option<usize>,
}

impl Parsed {
    fn of(args: &SearchArgs) -> Result<(Self, Vec<(&'static str, String)>)> {
        let raw_query = args.keywords.join(" ");
        let inline = parse_inline_filters(&raw_query);
        if !inline.filters.is_empty() && inline.residual.trim().is_empty() {
            return Err(usage(
                "Inline field:value tokens consumed the entire query, leaving no search terms.",
            ));
        }
        let query_text = if inline.filters.is_empty() {
            raw_query.clone()
        } else {
            inline.residual.clone()
        };
        let keyword = KeywordQuery::new(&query_text)
            .ok_or_else(|| usage("Search query must not be empty"))?;
        let match_mode = match_mode_of(args.match_mode.as_deref())?;
        let min_score = args.min_score.value("--min-score")?.flatten();
        if args.after.is_some() && args.count {
            return Err(usage("Search --after cannot be combined with --count."));
        }
        let explicit_limit = args.limit.value("--limit")?;
        let parsed = Self {
            raw_query,
            query_text,
            keyword,
            match_mode,
            min_score,
            explicit_limit,
        };
        Ok((parsed, inline.filters))
    }
}

fn match_mode_of(raw: Option<&str>) -> Result<MatchMode> {
    let Some(raw) = raw else {
        return Ok(MatchMode::Or);
    };
    Ok(MatchMode::parse(raw).ok_or_else(|| {
        Error::invalid_argument(
            "--match-mode",
            raw,
            "Search --match-mode must be one of and|or|exact",
            ["and", "or", "exact"].map(String::from).into(),
        )
    })?)
}

/// Applies inline tokens where their flag is unset; the others become warnings.
fn apply_inline(
    args: &SearchArgs,
    inline: &[(&'static str, String)],
) -> (StatusArgs, SelectArgs, Vec<String>) {
    let mut warnings = Vec::new();
    let mut status = args.status.clone();
    let mut filters = args.filters.clone();
    for (field, value) in inline {
        let slot = match *field {
            "tag" => &mut filters.tags,
            "status" => &mut status.statuses,
            "type" => &mut filters.types,
            _ => &mut filters.priorities,
        };
        if split_values(slot).is_empty() {
            *slot = vec![value.clone()];
        } else {
            warnings.push(format!(
                "search_inline_filter_ignored:{field}:flag_takes_precedence"
            ));
        }
    }
    (status, filters, warnings)
}

/// Builds the scoring spec from the settings and the parsed options.
fn spec_of(args: &SearchArgs, parsed: Parsed, settings: &Settings) -> (SearchSpec, f64) {
    let tuning = SearchTuning::from_settings(
        settings
            .effective()
            .get("search")
            .and_then(|s| s.get("tuning"))
            .and_then(Value::as_object),
    );
    let threshold = (parsed.min_score).unwrap_or_else(|| settings.search_score_threshold());
    let options = SearchOptions {
        tuning,
        id_prefix: settings.id_prefix_raw().to_owned(),
        match_mode: parsed.match_mode,
        title_exact: args.title_exact,
        phrase_exact: args.phrase_exact,
        min_score: threshold,
    };
    (SearchSpec::new(parsed.keyword, options), threshold)
}

/// Runs the search and the read-output layer.
///
/// # Errors
/// `unsupported_search_mode`; `invalid_argument_value` for bad modes, filters, limits or
/// scores; `invalid_query_cursor`; `not_in_project`; the read-output refusals.
pub fn cmd_search(ctx: &Ctx, args: &SearchArgs) -> Result<CommandOutput> {
    mode_of(args)?;
    let rows_only = rows_only(ctx, args)?;
    let (parsed, inline) = Parsed::of(args)?;
    let resolved_intent = intent::resolve(
        Surface::Search,
        args.for_intent.as_deref(),
        args.token_budget.as_ref(),
        parsed.explicit_limit.map(|l| l as u64),
    )?;
    let (status, filters, warnings) = apply_inline(args, &inline);

    let tracker = ctx.tracker()?;
    let loaded = load(&tracker, &ctx.settings_env())?;
    let schema = &loaded.schema;
    let view = (Filters::new(&filters).with_windows(&args.windows)).with_content(&args.content);
    let window_base = ReadClock::new(&ctx.clock).window_base();
    let query = view.to_query(status.filter(schema)?, schema, &window_base)?;
    let settings = &loaded.settings;
    let (raw_query, query_text) = (parsed.raw_query.clone(), parsed.query_text.clone());
    let (match_mode, explicit_limit) = (parsed.match_mode, parsed.explicit_limit);
    let (spec, threshold) = spec_of(args, parsed, settings);

    // Score every candidate's searchable text; only the answered page reads documents.
    let index = Index::open(&tracker, schema, index_options(ctx));
    // Without a cursor the page is the first `limit` hits, and one more tells whether more
    // follow; a cursor may point anywhere, so it needs every hit in order.
    let limit = limit_of(resolved_intent.as_ref(), explicit_limit, settings);
    let keep = keep_of(args, limit);
    let found = index.search(&query, keep, |text| spec.hit(text))?;
    let (scored, total, found_notices) = (found.rows.hits, found.rows.total, found.notices);

    let compact = args.compact || resolved_intent.is_some();
    let projection = Projection::resolve(compact, args.full, args.fields.as_deref(), &query_text)?;
    let echo = SearchEcho {
        status: &status,
        filters: view,
        args,
        match_mode,
        threshold,
    };
    let compact_echo = projection.is_compact();
    let hits = if args.count {
        Hits::Count(CountHits::new(total))
    } else {
        let request = PageRequest {
            index: &index,
            spec: &spec,
            projection: &projection,
            after: args.after.as_deref(),
            fingerprint: &fingerprint(&query_text, &echo),
            limit,
            highlight: args.highlight,
        };
        let page = request.answer(&scored, total)?;
        if rows_only {
            return Ok(CommandOutput::Stream(page.into_rows()));
        }
        Hits::Page(page)
    };
    let result = SearchResult {
        query: query_text.trim(),
        mode: "keyword",
        mode_source: (!compact_echo).then_some(mode_source(args)),
        hits,
        filters: echo.for_rows(compact_echo),
        projection: (!compact_echo).then(|| projection.echo()),
        now: (!compact_echo).then(|| ReadClock::new(&ctx.clock).stamp()),
        warnings: (!warnings.is_empty()).then_some(warnings),
    };
    let mut env = to_object(&result);

    let meta = meta_of(args, resolved_intent, raw_query);
    let format = format_of(ctx, args);
    crate::read_output::skipped::report(&mut env, &found_notices);
    finish_read(Value::Object(env), &meta, &ctx.read_output, format).map(CommandOutput::Read)
}

/// Whether the read prints rows only (`--format ndjson`), refusing envelope-only controls.
fn rows_only(ctx: &Ctx, args: &SearchArgs) -> Result<bool> {
    let rows_only = args.format == Some(SearchFormat::Ndjson);
    if rows_only {
        let refused = [
            (args.count, "--count"),
            (args.for_intent.is_some(), "--for"),
            (args.token_budget.is_some(), "--token-budget"),
        ];
        row_export::refuse_envelope_controls(ctx, "--format ndjson", &refused)?;
    }
    Ok(rows_only)
}

/// How many hits the scan keeps: none for a count, one past the page without a cursor (to
/// tell whether more follow), every hit after a cursor.
fn keep_of(args: &SearchArgs, limit: usize) -> Option<usize> {
    match (args.count, args.after.is_none()) {
        (true, _) => Some(0),
        (false, true) => Some(limit.saturating_add(1)),
        (false, false) => None,
    }
}

fn mode_source(args: &SearchArgs) -> &'static str {
    if args.mode.is_some() {
        "explicit"
    } else {
        "auto"
    }
}

/// The read-output metadata of a search.
fn meta_of(args: &SearchArgs, resolved_intent: Option<ResolvedIntent>, raw: String) -> ReadMeta {
    let mut meta = ReadMeta::new(Surface::Search, "search")
        .legacy_switch("--compact", args.compact)
        .legacy_switch("--full", args.full)
        .legacy_value("--fields", args.fields.as_deref())
        .legacy_value("--limit", args.limit.raw())
        .legacy_value("--after", args.after.as_deref());
    meta.after = args.after.clone();
    meta.intent = resolved_intent;
    meta.operand = Some(raw);
    meta
}

/// The envelope format: `--format` (ndjson rows are JSON), else the read-output default.
fn format_of(ctx: &Ctx, args: &SearchArgs) -> Format {
    let local = args.format.map(|f| match f {
        SearchFormat::Toon => Format::Toon,
        SearchFormat::Json | SearchFormat::Ndjson => Format::Json,
    });
    ctx.read_output.resolve_format(ctx.format, local)
}

/// The page size: the intent's row ceiling, else `--limit`, else the settings' maximum.
fn limit_of(
    resolved: Option<&ResolvedIntent>,
    explicit: Option<usize>,
    settings: &Settings,
) -> usize {
    resolved
        .and_then(|i| i.ceiling.as_ref())
        .map(|c| c.limit as usize)
        .or(explicit)
        .unwrap_or(settings.search_max_results() as usize)
}

/// The cursor fingerprint of a search: its query, mode and hit-changing options.
fn fingerprint(query_text: &str, echo: &SearchEcho<'_>) -> String {
    let options = echo.semantic_options();
    let contract = json!({"query": query_text.trim(), "mode": "keyword", "options": options});
    query_fingerprint("search", &contract)
}
