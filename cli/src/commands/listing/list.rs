//! `pm list` and its hidden spellings `list-all`, `list-draft`, `list-open`,
//! `list-in-progress`, `list-blocked`, `list-closed`, `list-canceled`:
//! filters, order, projection, paging and pm's list envelope.

use pm_engine::Error;
use pm_engine::query::{AutoLimit, Page, PageStart, Sort, SortField, StatusFilter};
use pm_engine::schema::{RuntimeSchema, load};
use pm_index::Index;
use serde_json::{Map, Value};

use super::list_echo::{cursor_contract, echo_paging, echo_presentation, echo_status};
use super::list_envelope::ListEnvelope;
use super::list_page::{ListRead, Listed, read_page};
use super::list_rows::{Projection, parse_fields};
use super::list_stream;
use super::row_export::{self, ExportPage, ListFormat, conflict};
use crate::args::numbers::{Number, NumberFlag, StrictCount, TokenBudget};
use crate::clock_reads::ReadClock;
use crate::commands::CommandOutput;
use crate::commands::filters::list_filters::{ListFilterArgs, StatusScope};
use crate::ctx::Ctx;
use crate::failure::{CliError, ReadOutputRefusal, Result};
use crate::progress::index_options;
use crate::read_output::{
    QueryCursor, ReadMeta, Surface, finish_read, intent, leaves_rows_alone, query_fingerprint,
};

/// pm's automatic bound: at least this many matches without `--limit` return 20 rows.
pub const AUTO_LIMIT: AutoLimit = AutoLimit {
    threshold: 10_000,
    limit: 20,
};

/// The fields of `--for triage`.
const TRIAGE_FIELDS: [&str; 9] = [
    "id",
    "title",
    "status",
    "type",
    "priority",
    "parent",
    "assignee",
    "risk",
    "blocked_by",
];

/// List work items: active ones by default, every status with --all
///
/// Rows follow pm's order (active before terminal, then priority, most recently updated, id)
/// unless --sort is given. Projections: --brief (id, status, type, title; the default),
/// --compact, --full (the whole record) or --fields a,b. Every match is returned unless
/// --limit, --offset or --after page it; at 10,000 matches or more only 20 rows are returned
/// (applied_limit) unless --no-truncate.
#[derive(Debug, Default, clap::Args)]
pub struct ListArgs {
    /// Filters.
    #[command(flatten)]
    pub filters: ListFilterArgs,

    /// Include every status (same as --status all)
    #[arg(long)]
    pub all: bool,

    /// Print id, status, type and title per row
    #[arg(long)]
    pub brief: bool,

    /// Print id, title, status, type, priority, parent and updated_at per row
    #[arg(long)]
    pub compact: bool,

    /// Print the whole stored record per row
    #[arg(long)]
    pub full: bool,

    /// Print these fields per row (comma-separated; item.<field> accepted)
    #[arg(long, value_name = "CSV")]
    pub fields: Option<String>,

    /// Add the body to each row (full rows when no projection is given)
    #[arg(long)]
    pub include_body: bool,

    /// Sort by priority, deadline, updated_at, created_at, title or parent
    #[arg(long, value_name = "FIELD")]
    pub sort: Option<String>,

    /// Sort direction with --sort: asc or desc (desc reverses ties too)
    #[arg(long, value_name = "asc|desc")]
    pub order: Option<String>,

    /// Order rows as a parent/child tree and add tree_* fields
    #[arg(long)]
    pub tree: bool,

    /// With --tree, drop rows deeper than N below their root
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub tree_depth: Option<Number<StrictCount>>,

    /// Return at most N rows
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub limit: Option<Number<StrictCount>>,

    /// Skip the first N rows
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub offset: Option<Number<StrictCount>>,

    /// Continue after a previous page's next_cursor
    #[arg(long, value_name = "CURSOR")]
    pub after: Option<String>,

    /// Return every match, overriding --limit and the automatic bound
    #[arg(long)]
    pub no_truncate: bool,

    /// Fail (exit 1) instead of answering when item files cannot be read
    #[arg(long)]
    pub strict_read: bool,

    /// Output encoding: toon or json (the envelope), or csv, table or ndjson (rows only)
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<ListFormat>,

    /// With --json: print NDJSON records (meta, one per item, end) instead of the envelope
    #[arg(long)]
    pub stream: bool,

    /// Shape the read for an intent: triage
    #[arg(long = "for", value_name = "INTENT")]
    pub intent: Option<String>,

    /// Token budget of the --for intent
    #[arg(long, value_name = "TOKENS", allow_hyphen_values = true)]
    pub token_budget: Option<Number<TokenBudget>>,
}

/// Which spelling of the list family ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListSpelling {
    /// `list`.
    List,
    /// `list-all` (and `list --all`, `list --status all`).
    All,
    /// `list-draft`.
    Draft,
    /// `list-open`.
    Open,
    /// `list-in-progress`.
    InProgress,
    /// `list-blocked`: edge-aware blocked.
    Blocked,
    /// `list-closed`.
    Closed,
    /// `list-canceled`.
    Canceled,
}

impl ListSpelling {
    /// Returns the command name.
    pub fn name(self) -> &'static str {
        match self {
            ListSpelling::List => "list",
            ListSpelling::All => "list-all",
            ListSpelling::Draft => "list-draft",
            ListSpelling::Open => "list-open",
            ListSpelling::InProgress => "list-in-progress",
            ListSpelling::Blocked => "list-blocked",
            ListSpelling::Closed => "list-closed",
            ListSpelling::Canceled => "list-canceled",
        }
    }

    pub(super) fn status(self) -> Option<&'static str> {
        Some(match self {
            ListSpelling::List | ListSpelling::All => return None,
            ListSpelling::Draft => "draft",
            ListSpelling::Open => "open",
            ListSpelling::InProgress => "in_progress",
            ListSpelling::Blocked => "blocked",
            ListSpelling::Closed => "closed",
            ListSpelling::Canceled => "canceled",
        })
    }

    fn of_status(status: &str) -> Option<ListSpelling> {
        [
            ListSpelling::Draft,
            ListSpelling::Open,
            ListSpelling::InProgress,
            ListSpelling::Blocked,
            ListSpelling::Closed,
            ListSpelling::Canceled,
        ]
        .into_iter()
        .find(|s| s.status() == Some(status))
    }

    /// pm's default projection of the spelling (`LIST_COMMAND_DEFAULT_PROJECTIONS`).
    fn default_full(self) -> bool {
        matches!(
            self,
            ListSpelling::All | ListSpelling::Draft | ListSpelling::Closed | ListSpelling::Canceled
        )
    }
}

fn parse_sort(args: &ListArgs) -> Result<Sort> {
    let field = match args.sort.as_deref().map(|s| s.trim().to_lowercase()) {
        None => None,
        Some(raw) => Some(match raw.as_str() {
            "priority" => SortField::Priority,
            "deadline" => SortField::Deadline,
            "updated_at" | "updated" | "update" | "modified" => SortField::UpdatedAt,
            "created_at" | "created" | "create" => SortField::CreatedAt,
            "title" => SortField::Title,
            "parent" => SortField::Parent,
            _ => {
                let allowed = [
                    "priority",
                    "deadline",
                    "updated_at",
                    "created_at",
                    "title",
                    "parent",
                ];
                let reason = format!("Invalid --sort value \"{raw}\". Use {}.", allowed.join("|"));
                return Err(Error::invalid_argument(
                    "--sort",
                    &raw,
                    reason,
                    allowed.map(String::from).into(),
                )
                .into());
            }
        }),
    };
    let descending = match args.order.as_deref().map(|o| o.trim().to_lowercase()) {
        None => false,
        Some(_) if field.is_none() => {
            return Err(CliError::ReadOutput {
                kind: ReadOutputRefusal::MissingRequiredOption,
                message: "--order requires --sort.".into(),
                flag: "--order",
                value: args.order.clone(),
                allowed: Box::default(),
                suggestion: None,
            });
        }
        Some(o) if o == "asc" => false,
        Some(o) if o == "desc" => true,
        Some(o) => {
            let reason = format!("Invalid --order value \"{o}\". Use asc|desc.");
            return Err(Error::invalid_argument(
                "--order",
                &o,
                reason,
                ["asc", "desc"].map(String::from).into(),
            )
            .into());
        }
    };
    Ok(Sort { field, descending })
}

pub(super) fn sort_name(sort: &Sort) -> &'static str {
    match sort.field {
        None => "default",
        Some(SortField::Priority) => "priority",
        Some(SortField::Deadline) => "deadline",
        Some(SortField::UpdatedAt) => "updated_at",
        Some(SortField::CreatedAt) => "created_at",
        Some(SortField::Title) => "title",
        Some(SortField::Parent) => "parent",
    }
}

/// Resolves the projection: the flags, `--output-include` mode tokens, the intent, then the
/// spelling's default.
fn projection(
    ctx: &Ctx,
    args: &ListArgs,
    spelling: ListSpelling,
    schema: &RuntimeSchema,
    triage: bool,
) -> Result<Projection> {
    let modes = ctx.read_output.modes(Surface::List);
    let brief = args.brief || modes.contains(&"brief");
    let compact = args.compact || modes.contains(&"compact");
    let full = args.full || modes.contains(&"full");
    let chosen = [brief, compact, full, args.fields.is_some()]
        .into_iter()
        .filter(|on| *on)
        .count();
    if chosen > 1 {
        return Err(CliError::ReadOutput {
            kind: ReadOutputRefusal::ProjectionConflict,
            message:
                "Projection options --brief, --compact, --full and --fields are mutually exclusive."
                    .into(),
            flag: "--brief",
            value: None,
            allowed: ["--brief", "--compact", "--full", "--fields"]
                .map(str::to_owned)
                .into(),
            suggestion: None,
        });
    }
    let with_body = |mut fields: Vec<String>| {
        if args.include_body && !fields.iter().any(|f| f == "body") {
            fields.push("body".into());
        }
        Projection::Fields(fields)
    };
    Ok(if let Some(raw) = &args.fields {
        with_body(parse_fields(raw, schema)?)
    } else if full {
        Projection::Full {
            body: args.include_body,
        }
    } else if compact {
        match args.include_body {
            true => with_body(super::list_rows::COMPACT_FIELDS.map(str::to_owned).into()),
            false => Projection::Compact,
        }
    } else if brief {
        match args.include_body {
            true => with_body(super::list_rows::BRIEF_FIELDS.map(str::to_owned).into()),
            false => Projection::Brief,
        }
    } else if triage {
        with_body(TRIAGE_FIELDS.map(str::to_owned).into())
    } else if args.include_body || spelling.default_full() {
        Projection::Full {
            body: args.include_body,
        }
    } else {
        Projection::Brief
    })
}

/// Resolves the spelling and status filter from the invoked spelling, `--status` and `--all`.
fn resolve_status(
    spelled: ListSpelling,
    scope: &StatusScope,
    all: bool,
) -> Result<(ListSpelling, StatusFilter)> {
    if spelled != ListSpelling::List && *scope != StatusScope::Default {
        return Err(conflict(
            format!("pm {} cannot be combined with --status.", spelled.name()),
            "--status",
        ));
    }
    Ok(match (scope, all) {
        (_, true) | (StatusScope::All, _) => (ListSpelling::All, StatusFilter::All),
        (StatusScope::Single(id), _) => match ListSpelling::of_status(id) {
            Some(ListSpelling::Blocked) => (ListSpelling::Blocked, StatusFilter::EdgeAwareBlocked),
            Some(s) => (s, StatusFilter::Set(vec![id.clone()])),
            None => (ListSpelling::List, StatusFilter::Set(vec![id.clone()])),
        },
        (StatusScope::Many(ids), _) => (ListSpelling::List, StatusFilter::Set(ids.clone())),
        (StatusScope::Default, false) if spelled == ListSpelling::All => {
            (spelled, StatusFilter::All)
        }
        (StatusScope::Default, false) => match spelled.status() {
            Some("blocked") => (spelled, StatusFilter::EdgeAwareBlocked),
            Some(id) => (spelled, StatusFilter::Set(vec![id.to_owned()])),
            None => (spelled, StatusFilter::NonTerminal),
        },
    })
}

/// The parsed paging flags: `--limit`, `--offset`, `--tree-depth`.
struct Window {
    limit: Option<usize>,
    offset: Option<usize>,
    tree_depth: Option<usize>,
}

/// Parses the paging flags and refuses `--after` with `--offset`.
fn parse_window(args: &ListArgs) -> Result<Window> {
    let window = Window {
        limit: args.limit.value("--limit")?,
        offset: args.offset.value("--offset")?,
        tree_depth: args.tree_depth.value("--tree-depth")?,
    };
    if args.after.is_some() && window.offset.is_some() {
        return Err(conflict(
            "--after cannot be combined with --offset.".into(),
            "--after",
        ));
    }
    Ok(window)
}

/// The limit in force: none under `--no-truncate`, else the intent's ceiling or `--limit`.
fn effective_limit(
    intent: Option<&crate::read_output::ResolvedIntent>,
    no_truncate: bool,
    limit: Option<usize>,
) -> Option<usize> {
    match (intent, no_truncate) {
        (_, true) => None,
        (Some(i), false) => i
            .ceiling
            .as_ref()
            .map(|c| usize::try_from(c.limit).unwrap_or(usize::MAX))
            .or(limit),
        (None, false) => limit,
    }
}

/// The `filters` echo in pm's order: status, selectors, paging, switches, presentation.
fn echo_filters(
    args: &ListArgs,
    scope: &StatusScope,
    spelling: ListSpelling,
    sort: &Sort,
) -> Map<String, Value> {
    let mut filters = Map::new();
    echo_status(&mut filters, scope, args.all, spelling);
    args.filters.echo_selectors(&mut filters);
    echo_paging(&mut filters, args);
    args.filters.echo_switches(&mut filters);
    echo_presentation(&mut filters, args, sort);
    filters
}

/// Refuses a partial read under `--strict-read`.
fn check_strict(args: &ListArgs, listed: &Listed) -> Result<()> {
    if args.strict_read && listed.unreadable() {
        return Err(Error::SourceIncomplete {
            unreadable_items: listed.completeness.unreadable_item_count,
            unreadable_directories: listed.completeness.unreadable_directory_count,
        }
        .into());
    }
    Ok(())
}

/// Lists the items `args` select.
///
/// # Errors
/// `invalid_argument_value` for bad filter, sort, order or paging values;
/// `projection_options_mutually_exclusive`, `unknown_field_projection`, `invalid_query_cursor`,
/// `list_source_incomplete` (with `--strict-read`), the read-output refusals, and
/// `not_in_project`.
pub fn cmd_list(ctx: &Ctx, args: &ListArgs, spelled: ListSpelling) -> Result<CommandOutput> {
    let tracker = ctx.tracker()?;
    let export = row_export::resolve(ctx, args)?;
    let loaded = load(&tracker, &ctx.settings_env())?;
    let schema = &loaded.schema;
    let now = ReadClock::new(&ctx.clock).instant();
    let scope = args.filters.status_scope(schema)?;
    let (spelling, status) = resolve_status(spelled, &scope, args.all)?;
    let query = args.filters.to_query(status, schema, now)?;
    let sort = parse_sort(args)?;
    let window = parse_window(args)?;
    let resolved_intent = intent::resolve(
        Surface::List,
        args.intent.as_deref(),
        args.token_budget.as_ref(),
        window.limit.map(|l| l as u64),
    )?;
    let projection = projection(ctx, args, spelling, schema, resolved_intent.is_some())?;
    let limit = effective_limit(resolved_intent.as_ref(), args.no_truncate, window.limit);
    let filters = echo_filters(args, &scope, spelling, &sort);
    let fingerprint = query_fingerprint("list", &cursor_contract(&filters, &sort, args));
    let page = Page {
        limit,
        start: window.offset.map_or(PageStart::First, PageStart::Offset),
        auto_limit: (!args.no_truncate).then_some(AUTO_LIMIT),
    };
    let after = args
        .after
        .as_deref()
        .map(|raw| QueryCursor::decode(raw, &fingerprint).map(|c| (raw, c)))
        .transpose()?;
    let index = Index::open(&tracker, schema, index_options(ctx));
    let read = ListRead {
        query: &query,
        sort: &sort,
        page,
        after,
        tree: args.tree.then_some(window.tree_depth),
        projection: &projection,
        fingerprint: &fingerprint,
    };
    let meta = read_meta(args, spelling, resolved_intent);
    let local = args.format.and_then(ListFormat::envelope);
    let format = ctx.read_output.resolve_format(ctx.format, local);
    let alone = export.is_none() && leaves_rows_alone(&meta, &ctx.read_output, format);
    let (mut listed, streamed) = if list_stream::applies(&read, format, alone) {
        list_stream::read(&index, &read).map(|(listed, rows)| (listed, Some(rows)))?
    } else {
        (read_page(&index, &read)?, None)
    };
    check_strict(args, &listed)?;
    let now = pm_engine::clock::format_iso_ms(now);
    if let Some(export) = export {
        let page = ExportPage {
            command: spelled.name(),
            declared: projection.fields().unwrap_or_default(),
            rows: listed.rows,
            now,
            filters,
        };
        return Ok(row_export::output(export, page));
    }
    let notices = std::mem::take(&mut listed.notices);
    let mut env = ListEnvelope::new(listed, filters, &projection, &sort, now).into_object();
    crate::read_output::skipped::report(&mut env, &notices);
    let finished = finish_read(Value::Object(env), &meta, &ctx.read_output, format)?;
    Ok(match streamed {
        Some(rows) => CommandOutput::Streamed(Box::new(rows.with(finished))),
        None => CommandOutput::Read(finished),
    })
}

fn read_meta(
    args: &ListArgs,
    spelling: ListSpelling,
    intent: Option<crate::read_output::ResolvedIntent>,
) -> ReadMeta {
    let mut meta = ReadMeta::new(Surface::List, spelling.name())
        .legacy_switch("--brief", args.brief)
        .legacy_switch("--compact", args.compact)
        .legacy_value("--fields", args.fields.as_deref())
        .legacy_switch("--full", args.full)
        .legacy_value("--after", args.after.as_deref())
        .legacy_value("--limit", args.limit.raw())
        .legacy_switch("--no-truncate", args.no_truncate)
        .legacy_value("--token-budget", args.token_budget.raw());
    if let Some(format) = args.format {
        meta = meta.legacy_value("--format", Some(format.name()));
    }
    meta.after.clone_from(&args.after);
    meta.intent = intent;
    meta
}
