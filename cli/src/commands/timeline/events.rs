//! `pm events`: committed mutations as an NDJSON stream (the history event projection), one
//! line per history entry in `(ts, stream, position)` order, then one trailer line. The rows come
//! from `pm_index::Index::events`, which re-projects grown history files (lines appended outside
//! pm included) or falls back to scanning them.

use pm_engine::clock::format_iso_ms;
use pm_engine::schema::load;
use pm_engine::timestamp::parse_timestamp;
use pm_index::{EventPosition, EventQuery, EventRow, EventSince, Index};
use serde_json::{Map, Value, json};

use crate::args::numbers::{EventPage, Number, NumberFlag};
use crate::ctx::Ctx;
use crate::failure::{CliError, ReadOutputRefusal, Result};
use crate::progress::index_options;
use crate::read_output::codec;

/// Version of the cursor payload.
const CURSOR_VERSION: u64 = 1;
/// Hex characters of the filter fingerprint a cursor carries.
const FINGERPRINT_LEN: usize = 24;

/// Stream committed mutations as NDJSON: one line per history entry, then a trailer line
///
/// Each line is {item_id, version, ts, author, type, [message], patch_count}; the trailer is
/// {count, has_more, next_cursor, source, record_type: "pm.stream.trailer"}. Continue with
/// --since <next_cursor>; a cursor only continues the filters it was issued under.
#[derive(Debug, clap::Args)]
pub struct EventsArgs {
    /// Start after this cursor (a trailer's next_cursor), or at this ISO instant (inclusive)
    #[arg(long, value_name = "CURSOR|ISO")]
    pub since: Option<String>,

    /// Only these mutation types (history op: create, update, close, …; comma-separated)
    #[arg(long = "type", value_name = "OP", value_delimiter = ',')]
    pub types: Vec<String>,

    /// Only mutations by these authors (comma-separated)
    #[arg(long, value_name = "AUTHOR", value_delimiter = ',')]
    pub author: Vec<String>,

    /// Only these items (comma-separated ids; _workspace for tracker-wide entries)
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    pub item: Vec<String>,

    /// Only mutations recorded with these agent harnesses (comma-separated)
    #[arg(long, value_name = "HARNESS", value_delimiter = ',')]
    pub harness: Vec<String>,

    /// Only mutations recorded with these agent instances (comma-separated)
    #[arg(long, value_name = "INSTANCE", value_delimiter = ',')]
    pub agent_instance: Vec<String>,

    /// Events per page, 1 to 1000 (default 100)
    #[arg(long, value_name = "N")]
    pub limit: Option<Number<EventPage>>,

    /// Where cursors go: batch (the trailer only) or row (every event line too)
    #[arg(long, value_enum, value_name = "MODE", default_value = "batch")]
    pub cursor_mode: CursorMode,

    /// Add the whole history entry (patch included) to every line
    #[arg(long)]
    pub full: bool,
}

/// Where `pm events` prints continuation cursors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CursorMode {
    /// One cursor, in the trailer
    Batch,
    /// A cursor on every event line as well
    Row,
}

/// Answers the events query and returns the NDJSON lines (events, then the trailer).
///
/// # Errors
/// `not_in_project`; `invalid_argument_value` for a bad `--limit`; `invalid_query_cursor` for a
/// `--since` that is neither an instant nor a cursor of the same filters.
pub fn cmd_events(ctx: &Ctx, args: &EventsArgs) -> Result<Vec<Value>> {
    // Absent is 0: the index's default page size.
    let limit = args.limit.value("--limit")?.unwrap_or(0);
    let tracker = ctx.tracker()?;
    let loaded = load(&tracker, &ctx.settings_env())?;
    let fingerprint = filter_fingerprint(args);
    let since = match args.since.as_deref() {
        None => None,
        Some(raw) => Some(parse_since(raw, &fingerprint)?),
    };
    let query = EventQuery {
        since,
        until: None,
        ops: args.types.clone(),
        authors: args.author.clone(),
        streams: args.item.clone(),
        harnesses: args.harness.clone(),
        agent_instances: args.agent_instance.clone(),
        limit,
    };
    let index = Index::open(&tracker, &loaded.schema, index_options(ctx));
    let page = index.events(&query)?;
    let mut lines: Vec<Value> = page
        .events
        .iter()
        .map(|row| {
            let cursor = (args.cursor_mode == CursorMode::Row)
                .then(|| encode_cursor(&row.key(), &fingerprint));
            event_line(row, args.full, cursor)
        })
        .collect();
    let mut trailer = Map::new();
    trailer.insert("count".into(), json!(page.events.len()));
    trailer.insert("has_more".into(), json!(page.has_more));
    trailer.insert(
        "next_cursor".into(),
        json!(
            page.next
                .as_ref()
                .map(|next| encode_cursor(next, &fingerprint))
        ),
    );
    trailer.insert(
        "source".into(),
        json!(match page.source() {
            pm_engine::query::Source::Index => "history_event_index",
            _ => "authoritative_history",
        }),
    );
    trailer.insert("record_type".into(), json!("pm.stream.trailer"));
    if !page.notices.is_empty() {
        trailer.insert(
            "warnings".into(),
            page.notices
                .iter()
                .map(|n| json!({"code": n.code, "message": n.message}))
                .collect(),
        );
    }
    lines.push(Value::Object(trailer));
    Ok(lines)
}

/// Returns one event line.
fn event_line(row: &EventRow, full: bool, cursor: Option<String>) -> Value {
    let mut line = Map::new();
    line.insert("item_id".into(), json!(row.stream));
    line.insert("version".into(), json!(row.position + 1));
    line.insert("ts".into(), json!(row.ts));
    line.insert("author".into(), json!(row.author));
    line.insert("type".into(), json!(row.op));
    if let Some(message) = &row.message {
        line.insert("message".into(), json!(message));
    }
    line.insert("patch_count".into(), json!(row.patch_count));
    if full {
        let entry = serde_json::from_str(&row.entry_json).unwrap_or(Value::Null);
        line.insert("entry".into(), entry);
    }
    if let Some(cursor) = cursor {
        line.insert("cursor".into(), json!(cursor));
    }
    Value::Object(line)
}

/// Returns the first 24 hex characters of SHA-256 over the sorted, normalised filters: a cursor
/// continues only the query it was issued for.
fn filter_fingerprint(args: &EventsArgs) -> String {
    let sorted = |values: &[String]| {
        let mut v: Vec<String> = values
            .iter()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let filters = json!({
        "agent_instance": sorted(&args.agent_instance),
        "author": sorted(&args.author),
        "harness": sorted(&args.harness),
        "item": sorted(&args.item),
        "type": sorted(&args.types),
    });
    let digest = codec::sha256(pm_engine::json::to_stable(&filters).as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    hex[..FINGERPRINT_LEN].to_owned()
}

/// Returns the cursor that continues strictly after `position`.
fn encode_cursor(position: &EventPosition, fingerprint: &str) -> String {
    codec::encode_json(&json!({
        "version": CURSOR_VERSION,
        "fingerprint": fingerprint,
        "ts": position.ts,
        "stream_id": position.stream,
        "stream_offset": position.position,
    }))
}

/// Parses `--since`: an instant (any form pm's timestamps accept, date-only included) is an
/// inclusive `ts >=` bound; anything else must be a cursor issued under the same filters.
fn parse_since(raw: &str, fingerprint: &str) -> Result<EventSince> {
    if let Some(ms) = parse_timestamp(raw.trim()) {
        return Ok(EventSince::Timestamp(format_iso_ms(ms)));
    }
    let refuse = |message: &str| CliError::ReadOutput {
        kind: ReadOutputRefusal::InvalidQueryCursor,
        message: message.into(),
        flag: "--since",
        value: Some(raw.into()),
        allowed: Box::default(),
        suggestion: None,
    };
    let text = raw.trim();
    if !codec::is_strict_base64url(text) {
        return Err(refuse(
            "--since is neither an ISO instant nor an events cursor.",
        ));
    }
    let payload = codec::decode_json(text).ok_or_else(|| refuse("Events cursor is malformed."))?;
    let field = |key: &str| payload.get(key).and_then(Value::as_str);
    let (Some(ts), Some(stream), Some(offset), Some(version)) = (
        field("ts"),
        field("stream_id"),
        payload.get("stream_offset").and_then(Value::as_i64),
        payload.get("version").and_then(Value::as_u64),
    ) else {
        return Err(refuse("Events cursor is malformed."));
    };
    if version != CURSOR_VERSION {
        return Err(refuse("Events cursor has an unsupported version."));
    }
    if field("fingerprint") != Some(fingerprint) {
        return Err(refuse(
            "Events cursor was issued for different filters; rerun without --since or with the same filters.",
        ));
    }
    Ok(EventSince::After(EventPosition {
        ts: ts.to_owned(),
        stream: stream.to_owned(),
        position: offset,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> EventsArgs {
        EventsArgs {
            since: None,
            types: Vec::new(),
            author: Vec::new(),
            item: Vec::new(),
            harness: Vec::new(),
            agent_instance: Vec::new(),
            limit: None,
            cursor_mode: CursorMode::Batch,
            full: false,
        }
    }

    #[test]
    fn cursor_round_trips_under_the_same_filters() -> Result<()> {
        let fingerprint = filter_fingerprint(&args());
        let position = EventPosition {
            ts: "2026-09-01T00:00:00.000Z".into(),
            stream: "pm-a".into(),
            position: 3,
        };
        let cursor = encode_cursor(&position, &fingerprint);
        assert_eq!(
            parse_since(&cursor, &fingerprint)?,
            EventSince::After(position)
        );
        let mut other = args();
        other.types = vec!["close".into()];
        let refused = parse_since(&cursor, &filter_fingerprint(&other)).err();
        assert_eq!(
            refused.map(|e| e.code().as_str()),
            Some("invalid_query_cursor")
        );
        Ok(())
    }

    #[test]
    fn filter_order_does_not_change_the_fingerprint() {
        let mut a = args();
        a.author = vec!["x".into(), "y".into()];
        let mut b = args();
        b.author = vec!["y".into(), " x ".into(), "y".into()];
        assert_eq!(filter_fingerprint(&a), filter_fingerprint(&b));
        assert_eq!(filter_fingerprint(&a).len(), 24);
    }

    #[test]
    fn since_accepts_dates_and_instants() -> Result<()> {
        assert_eq!(
            parse_since("2026-01-01", "f")?,
            EventSince::Timestamp("2026-01-01T00:00:00.000Z".into())
        );
        assert_eq!(
            parse_since("2026-01-01T02:00:00+02:00", "f")?,
            EventSince::Timestamp("2026-01-01T00:00:00.000Z".into())
        );
        assert!(parse_since("not a cursor!", "f").is_err());
        assert!(parse_since("abc", "f").is_err());
        Ok(())
    }
}
