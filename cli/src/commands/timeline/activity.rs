//! `pm activity`: the tracker's history entries in a time window, as a
//! per-item digest (default) or as compact, full or provenance event rows, newest first. The
//! entries come from the history-event projection (`pm_index::Index::events_all`, the same
//! source and scan fallback as `pm events`); rows are built only for the returned page.

use std::collections::{BTreeMap, BTreeSet};

use pm_engine::Error;
use pm_engine::clock::format_iso_ms;
use pm_engine::query::parse_when;
use pm_engine::read::history_view::HistoryProjection;
use pm_engine::read::{FieldGroup, OmissionReceipt, TrackerView};
use pm_engine::schema::load;
use pm_engine::timestamp::parse_timestamp;
use pm_index::{EventQuery, EventRow, EventSince, Index};
use serde_json::{Value, json};

use super::activity_result::{
    ActivityResult, ActivityRows, ActivitySummary, AppliedBound, Warning, Window,
};
use super::activity_rows::{digest, digest_entry, event_key, event_rows};
use crate::args::numbers::{Number, NumberFlag, PageOrUnbounded};
use crate::clock_reads::ReadClock;
use crate::ctx::Ctx;
use crate::failure::{CliError, ReadOutputRefusal, Result};
use crate::progress::index_options;
use crate::read_output::{
    Finished, QueryCursor, ReadMeta, Surface, finish_read, query_fingerprint,
};
use crate::render::Format;

/// The default window: the last 24 hours.
const DEFAULT_WINDOW_MS: i64 = 24 * 3_600_000;

/// Show recent tracker activity: a per-item digest of the last 24 hours, or the raw events
///
/// The default digest lists one row per item changed in the window (newest first, 15 rows):
/// its type, status and title, how many entries it got, the first and last timestamps and its
/// operations (up to four op:count, then +N more kinds). --raw (or --compact) lists compact
/// event rows (20), --provenance the author and agent provenance of each event (20), --full
/// whole history entries with patches and hashes (5). The window is [--from, --to): ISO
/// instants or relative spans back from now (30m, 12h, 7d, 2w); it defaults to the last 24
/// hours. --id, --op, --author, --harness and --agent-instance filter the events. Continue a
/// page with --after <next_cursor>; the cursor pins the window it was issued for.
#[derive(Debug, clap::Args)]
pub struct ActivityArgs {
    /// Only these items (comma-separated ids; _workspace for tracker-wide entries)
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    pub id: Vec<String>,

    /// Only these operations (create, update, close, …; comma-separated)
    #[arg(long, value_name = "OP", value_delimiter = ',')]
    pub op: Vec<String>,

    /// Only entries by these authors (comma-separated)
    #[arg(long, value_name = "AUTHOR", value_delimiter = ',')]
    pub author: Vec<String>,

    /// Only entries recorded with these agent harnesses (comma-separated)
    #[arg(long, value_name = "HARNESS", value_delimiter = ',')]
    pub harness: Vec<String>,

    /// Only entries recorded with these agent instances (comma-separated)
    #[arg(long, value_name = "INSTANCE", value_delimiter = ',')]
    pub agent_instance: Vec<String>,

    /// Window start, inclusive: an ISO instant or a relative offset (30min, 12h, 7d, 2w, 1m = a month; unsigned means the past)
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub from: Option<String>,

    /// Window end, exclusive: an ISO instant or a relative offset (default: now)
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub to: Option<String>,

    /// Rows per page (default: digest 15, raw/provenance 20, full 5)
    #[arg(long, value_name = "N")]
    pub limit: Option<Number<PageOrUnbounded>>,

    /// Return every row of the window
    #[arg(long, conflicts_with = "limit")]
    pub unbounded: bool,

    /// Compact event rows instead of the digest (same as --raw)
    #[arg(long)]
    pub compact: bool,

    /// Compact event rows instead of the digest
    #[arg(long)]
    pub raw: bool,

    /// Whole history entries (patches, hashes and provenance)
    #[arg(long)]
    pub full: bool,

    /// Event rows with the author and agent provenance of each entry
    #[arg(long)]
    pub provenance: bool,

    /// Continue after this cursor (a previous page's next_cursor)
    #[arg(long, value_name = "CURSOR")]
    pub after: Option<String>,

    /// Output format for this read: toon or json
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
}

/// The `activity` result after the read-output layer.
pub type ActivityOutput = Finished;

/// The row shape of an activity read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    Digest,
    Compact,
    Provenance,
    Full,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Digest => "digest",
            Mode::Compact => "compact",
            Mode::Provenance => "provenance",
            Mode::Full => "full",
        }
    }

    fn row_key(self) -> &'static str {
        match self {
            Mode::Digest => "activity_digest",
            Mode::Compact => "compact_activity",
            Mode::Provenance => "provenance_activity",
            Mode::Full => "activity",
        }
    }

    fn default_limit(self) -> usize {
        match self {
            Mode::Digest => 15,
            Mode::Compact | Mode::Provenance => 20,
            Mode::Full => 5,
        }
    }

    fn receipt(self) -> OmissionReceipt {
        match self {
            Mode::Digest => OmissionReceipt::omitted(vec![FieldGroup::new("event_rows", "--raw")]),
            Mode::Compact => {
                OmissionReceipt::omitted(vec![FieldGroup::new("provenance", "--full")])
            }
            Mode::Provenance => {
                OmissionReceipt::omitted(vec![FieldGroup::new("patch_and_hashes", "--full")])
            }
            Mode::Full => OmissionReceipt::complete(),
        }
    }
}

/// Reads the activity of the window and runs it through the read-output layer.
///
/// # Errors
/// `not_in_project`; `item_not_found` for an `--id` with neither an item nor a history
/// stream; `invalid_argument_value` for a bad `--from`/`--to`/`--limit`;
/// `projection_options_mutually_exclusive` for two row modes; `invalid_query_cursor` for a
/// bad `--after`; the read-output refusals.
pub fn cmd_activity(ctx: &Ctx, args: &ActivityArgs) -> Result<ActivityOutput> {
    let mode = mode(ctx, args)?;
    let limit = match args.unbounded {
        true => None,
        false => Some(args.limit.value("--limit")?.unwrap_or(mode.default_limit())),
    };
    let tracker = ctx.tracker()?;
    let view = TrackerView::open(tracker.clone(), &ctx.settings_env())?;
    let ids = resolve_ids(&view, &args.id)?;
    let fingerprint = query_fingerprint("activity", &contract(mode, &ids, args));
    let cursor = args
        .after
        .as_deref()
        .map(|raw| QueryCursor::decode(raw, &fingerprint).map(|c| (raw, c)))
        .transpose()?;
    let (from_ms, to_ms) = match cursor
        .as_ref()
        .and_then(|(raw, c)| window_of(c, raw).transpose())
    {
        Some(window) => window?,
        None => window(ctx, args)?,
    };
    let loaded = load(&tracker, &ctx.settings_env())?;
    let index = Index::open(&tracker, &loaded.schema, index_options(ctx));
    let page = index.events_all(&event_query(args, ids, from_ms, to_ms), false)?;
    let mut events = page.rows.events;
    events.reverse();
    let paging = Paging {
        mode,
        limit,
        cursor: cursor.as_ref().map(|(raw, c)| (*raw, c)),
        fingerprint,
        window: (from_ms, to_ms),
    };
    let paged = paging.page(&view, &events)?;
    let result = ActivityResult {
        rows: paged.rows,
        compact: mode == Mode::Compact,
        projection: HistoryProjection {
            mode: mode.name(),
            row_key: mode.row_key(),
        },
        omission_receipt: mode.receipt(),
        count: paged.end - paged.start,
        total_count: paged.total,
        page_start: paged.start,
        limit,
        omitted_count: paged.total - paged.end,
        has_more: paged.end < paged.total,
        next_cursor: paged.next_cursor,
        activity_summary: summary(&events, from_ms, to_ms),
        applied_bound: limit.map(|value| AppliedBound {
            kind: "limit",
            source: if args.limit.is_some() {
                "explicit"
            } else {
                "default"
            },
            value,
        }),
        warnings: Warning::of(&page.notices),
    };
    finish(ctx, args, result)
}

/// How a page is cut from the window's events: the mode, the row limit, the `--after`
/// cursor and what the next page's cursor pins.
struct Paging<'a> {
    mode: Mode,
    limit: Option<usize>,
    cursor: Option<(&'a str, &'a QueryCursor)>,
    fingerprint: String,
    window: (i64, i64),
}

/// One page: its rows, where it starts and ends among `total` rows, and the next cursor.
struct Paged {
    rows: ActivityRows,
    total: usize,
    start: usize,
    end: usize,
    next_cursor: Option<String>,
}

impl Paging<'_> {
    /// Returns the page of `events` (newest first): digest rows or event rows.
    fn page(self, view: &TrackerView, events: &[EventRow]) -> Result<Paged> {
        let digest = (self.mode == Mode::Digest).then(|| digest(events));
        let keys: Vec<String> = match &digest {
            Some(rows) => rows.iter().map(|r| r.id.clone()).collect(),
            None => events.iter().map(event_key).collect(),
        };
        let total = keys.len();
        let start = match self.cursor {
            Some((raw, c)) => c.resume_index(keys.iter().map(String::as_str), total, raw)?,
            None => 0,
        };
        let end = self
            .limit
            .map_or(total, |n| start.saturating_add(n).min(total));
        let rows = match &digest {
            Some(digest) => ActivityRows::Digest(
                digest[start..end]
                    .iter()
                    .map(|row| digest_entry(view, row))
                    .collect(),
            ),
            None => event_rows(self.mode, view, &events[start..end]),
        };
        let (from_ms, to_ms) = self.window;
        let next_cursor = (end < total && end > start).then(|| {
            QueryCursor {
                fingerprint: self.fingerprint,
                after_id: keys[end - 1].clone(),
                after_index: Some(end as u64),
                snapshot: Some(format!(
                    "{}|{}",
                    format_iso_ms(from_ms),
                    format_iso_ms(to_ms)
                )),
            }
            .encode()
        });
        Ok(Paged {
            rows,
            total,
            start,
            end,
            next_cursor,
        })
    }
}

/// Runs the typed result through the read-output layer.
fn finish(ctx: &Ctx, args: &ActivityArgs, result: ActivityResult) -> Result<Finished> {
    let mut meta = ReadMeta::new(Surface::Activity, "activity")
        .legacy_switch("--compact", args.compact)
        .legacy_switch("--full", args.full)
        .legacy_value("--limit", args.limit.raw())
        .legacy_switch("--unbounded", args.unbounded);
    meta.after.clone_from(&args.after);
    let format = ctx.read_output.resolve_format(ctx.format, args.format);
    finish_read(result.into_value()?, &meta, &ctx.read_output, format)
}

/// The query a cursor is bound to: the mode and the sorted filters and window flags.
fn contract(mode: Mode, ids: &[String], args: &ActivityArgs) -> Value {
    json!({
        "mode": mode.name(),
        "id": sorted(ids),
        "op": sorted(&args.op),
        "author": sorted(&args.author),
        "harness": sorted(&args.harness),
        "agent_instance": sorted(&args.agent_instance),
        "from": args.from,
        "to": args.to,
    })
}

/// Every event of the window `[from_ms, to_ms)` that passes the filters.
fn event_query(args: &ActivityArgs, streams: Vec<String>, from_ms: i64, to_ms: i64) -> EventQuery {
    EventQuery {
        since: Some(EventSince::Timestamp(format_iso_ms(from_ms))),
        until: Some(format_iso_ms(to_ms)),
        ops: args.op.clone(),
        authors: args.author.clone(),
        streams,
        harnesses: args.harness.clone(),
        agent_instances: args.agent_instance.clone(),
        limit: 0,
    }
}

/// Resolves the row mode from the flags and `--output-include` mode tokens.
fn mode(ctx: &Ctx, args: &ActivityArgs) -> Result<Mode> {
    let modes = ctx.read_output.modes(Surface::Activity);
    let compact = args.compact || args.raw || modes.contains(&"compact");
    let full = args.full || modes.contains(&"full");
    let chosen: Vec<Mode> = [
        (compact, Mode::Compact),
        (full, Mode::Full),
        (args.provenance, Mode::Provenance),
    ]
    .into_iter()
    .filter_map(|(on, m)| on.then_some(m))
    .collect();
    match chosen.as_slice() {
        [] => Ok(Mode::Digest),
        [one] => Ok(*one),
        _ => Err(CliError::ReadOutput {
            kind: ReadOutputRefusal::ProjectionConflict,
            message: "Choose one activity projection: --raw/--compact, --provenance or --full."
                .into(),
            flag: "--full",
            value: None,
            allowed: Box::new([
                "--raw".into(),
                "--compact".into(),
                "--provenance".into(),
                "--full".into(),
            ]),
            suggestion: None,
        }),
    }
}

/// Resolves `--id` values to stream ids: an item's id, or a deleted item's remaining stream;
/// `_workspace` names the tracker-wide stream.
fn resolve_ids(view: &TrackerView, raw: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for raw in raw.iter().map(|r| r.trim()).filter(|r| !r.is_empty()) {
        if raw == "_workspace" {
            out.push(raw.to_owned());
            continue;
        }
        match view.locate(raw) {
            Ok(file) => out.push(file.stem),
            Err(Error::ItemNotFound { .. }) => match view.stream_id_without_file(raw) {
                Some(id) => out.push(id),
                None => return Err(view.not_found(raw).into()),
            },
            Err(err) => return Err(err.into()),
        }
    }
    Ok(out)
}

fn sorted(values: &[String]) -> Vec<String> {
    let set: BTreeSet<String> = values
        .iter()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .collect();
    set.into_iter().collect()
}

/// Returns the window `[from, to)` of the flags, in epoch ms.
fn window(ctx: &Ctx, args: &ActivityArgs) -> Result<(i64, i64)> {
    let now = ReadClock::new(&ctx.clock).instant();
    let to = match args.to.as_deref() {
        Some(raw) => parse_when("--to", raw, now)?,
        None => now,
    };
    let from = match args.from.as_deref() {
        Some(raw) => parse_when("--from", raw, now)?,
        None => to - DEFAULT_WINDOW_MS,
    };
    if from >= to {
        return Err(Error::InvalidArgument {
            field: "--from".into(),
            value: args.from.clone().unwrap_or_default(),
            reason: format!(
                "the window is empty: --from {} is not before --to {}",
                format_iso_ms(from),
                format_iso_ms(to)
            ),
            allowed: Vec::new(),
        }
        .into());
    }
    Ok((from, to))
}

/// Returns the window a cursor pinned (`snapshot` = `from|to`), `None` for a cursor without
/// one.
fn window_of(cursor: &QueryCursor, raw: &str) -> Result<Option<(i64, i64)>> {
    let Some(snapshot) = &cursor.snapshot else {
        return Ok(None);
    };
    let parsed = snapshot
        .split_once('|')
        .and_then(|(f, t)| Some((parse_timestamp(f)?, parse_timestamp(t)?)));
    match parsed {
        Some(window) => Ok(Some(window)),
        None => Err(CliError::ReadOutput {
            kind: ReadOutputRefusal::InvalidQueryCursor,
            message: "Query cursor version or payload is unsupported.".into(),
            flag: "--after",
            value: Some(raw.to_owned()),
            allowed: Box::default(),
            suggestion: None,
        }),
    }
}

/// Returns `activity_summary`: the window and counts over every matching event.
fn summary(events: &[EventRow], from: i64, to: i64) -> ActivitySummary {
    let items: BTreeSet<&str> = events.iter().map(|e| e.stream.as_str()).collect();
    let authors: BTreeSet<&str> = events.iter().map(|e| e.author.as_str()).collect();
    let mut ops: BTreeMap<String, usize> = BTreeMap::new();
    for e in events {
        *ops.entry(e.op.clone()).or_default() += 1;
    }
    ActivitySummary {
        window: Window {
            from: format_iso_ms(from),
            to: format_iso_ms(to),
        },
        event_count: events.len(),
        item_count: items.len(),
        author_count: authors.len(),
        operation_counts: ops,
    }
}
