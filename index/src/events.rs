//! The history-event projection behind `pm events`: streams parsed with the engine's history
//! parser into one row per entry (grown streams are projected from their old length onward),
//! the event query (since a cursor or a timestamp, filters, limit ≤ 1,000) and its scan
//! equivalent. Order is `(ts, stream, position)`, byte-wise.

use crate::fresh::digest::content_id;
use crate::fresh::source::SourceFile;
use pm_engine::history::{parse_stream, parse_stream_heads};
use pm_engine::notice::Notice;
use rusqlite::{Connection, ToSql};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::path::Path;

/// The most events one page may hold.
pub const MAX_EVENT_LIMIT: usize = 1000;
/// The page size when none is given.
pub const DEFAULT_EVENT_LIMIT: usize = 100;

/// One history entry as the event projection stores it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EventRow {
    /// The stream id (item id or `_workspace`).
    pub stream: String,
    /// 0-based index of the entry among the stream's parsed entries.
    pub position: i64,
    /// `ts`.
    pub ts: String,
    /// `author`.
    pub author: String,
    /// `op`.
    pub op: String,
    /// `agent_harness`.
    pub agent_harness: Option<String>,
    /// `agent_instance`.
    pub agent_instance: Option<String>,
    /// `message`.
    pub message: Option<String>,
    /// Number of patch operations.
    pub patch_count: i64,
    /// Byte offset of the entry's (trimmed) line in the stream file.
    pub line_offset: u64,
    /// Length of that line in bytes.
    pub line_len: u64,
    /// The line as written (valid JSON). Filled only for the rows of an answered page
    /// ([`fill_entry_lines`]); empty in projections, which keep only where the line is.
    pub entry_json: String,
}

/// A position in the event order (what a cursor continues after).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct EventPosition {
    /// `ts`.
    pub ts: String,
    /// Stream id.
    pub stream: String,
    /// Entry index in the stream.
    pub position: i64,
}

impl EventRow {
    /// Returns the row's position in the event order.
    pub fn key(&self) -> EventPosition {
        EventPosition {
            ts: self.ts.clone(),
            stream: self.stream.clone(),
            position: self.position,
        }
    }
}

/// What one projection of a stream produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamProjection {
    /// The stream id.
    pub stream: String,
    /// New rows, positions continuing the stream.
    pub events: Vec<EventRow>,
    /// Bytes projected: the file length, or the start of a torn last line.
    pub projected_len: u64,
    /// Entries projected in total.
    pub entry_count: i64,
    /// Hash of the projected bytes.
    pub prefix_hash: u64,
    /// `(code, message)` when the stream cannot be parsed (it then projects no events).
    pub error: Option<(String, String)>,
}

/// Projects `bytes` (a whole stream) from byte `from_len` onward, where the first `from_count`
/// entries were projected before; `(0, 0)` projects the whole stream.
///
/// A parse error in the new part re-parses the whole stream, so the error (line numbers
/// included) is the one a full read reports.
pub fn project_stream(
    file: &SourceFile,
    bytes: &[u8],
    from_len: u64,
    from_count: i64,
) -> StreamProjection {
    let stream = file.stream_id().unwrap_or_default().to_string();
    let start = usize::try_from(from_len)
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    // Clean streams (all of them, normally) are read without building patch values; the full
    // parser decides everything else, so errors and torn tails are reported exactly as before.
    if let Some(read) = parse_stream_heads(&bytes[start..]) {
        let events = read
            .heads
            .into_iter()
            .zip(&read.spans)
            .enumerate()
            .map(|(i, (e, span))| EventRow {
                line_offset: (start + span.start) as u64,
                line_len: span.len() as u64,
                stream: stream.clone(),
                position: from_count + i as i64,
                ts: e.ts.into_owned(),
                author: e.author.into_owned(),
                op: e.op.into_owned(),
                agent_harness: e.agent_harness.map(Cow::into_owned),
                agent_instance: e.agent_instance.map(Cow::into_owned),
                message: e.message.map(Cow::into_owned),
                patch_count: e.patch_len as i64,
                entry_json: String::new(),
            })
            .collect::<Vec<_>>();
        return StreamProjection {
            entry_count: from_count + events.len() as i64,
            events,
            projected_len: bytes.len() as u64,
            prefix_hash: content_id(bytes),
            error: None,
            stream,
        };
    }
    match parse_stream(&bytes[start..], &stream, &file.abs) {
        Ok(read) => {
            let events = read
                .entries
                .iter()
                .zip(&read.spans)
                .enumerate()
                .map(|(i, (e, span))| EventRow {
                    line_offset: (start + span.start) as u64,
                    line_len: span.len() as u64,
                    stream: stream.clone(),
                    position: from_count + i as i64,
                    ts: e.ts.clone(),
                    author: e.author.clone(),
                    op: e.op.clone(),
                    agent_harness: e.agent_harness.clone(),
                    agent_instance: e.agent_instance.clone(),
                    message: e.message.clone(),
                    patch_count: e.patch.len() as i64,
                    entry_json: String::new(),
                })
                .collect::<Vec<_>>();
            let end = read.torn_tail.map_or(bytes.len(), |t| {
                start + usize::try_from(t.offset).unwrap_or(0)
            });
            StreamProjection {
                entry_count: from_count + events.len() as i64,
                events,
                projected_len: end as u64,
                prefix_hash: content_id(&bytes[..end]),
                error: None,
                stream,
            }
        }
        Err(_) if start > 0 => project_stream(file, bytes, 0, 0),
        Err(err) => StreamProjection {
            stream,
            events: Vec::new(),
            projected_len: 0,
            entry_count: 0,
            prefix_hash: 0,
            error: Some((err.code().as_str().to_string(), err.to_string())),
        },
    }
}

/// Returns the notice reported for an unreadable stream.
pub fn unreadable_notice(path: &str, code: &str, message: &str) -> Notice {
    Notice::new(
        "history_stream_unreadable",
        format!("{path}: {message} ({code})"),
    )
}

/// Where an event page starts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventSince {
    /// Strictly after this position (a cursor).
    After(EventPosition),
    /// Events with `ts >= this` (byte-wise; pass pm's `toISOString` form).
    Timestamp(String),
}

/// A `pm events` query. Empty sets are no filter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventQuery {
    /// Where to start.
    pub since: Option<EventSince>,
    /// Only events with `ts < this` (byte-wise, exclusive; pm's `toISOString` form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// `op IN`.
    pub ops: Vec<String>,
    /// `author IN`.
    pub authors: Vec<String>,
    /// Stream (item) ids.
    pub streams: Vec<String>,
    /// Recorded `agent_harness IN`.
    pub harnesses: Vec<String>,
    /// Recorded `agent_instance IN`.
    pub agent_instances: Vec<String>,
    /// Page size (clamped to 1..=1,000; 0 means the default 100).
    pub limit: usize,
}

impl EventQuery {
    /// Returns the page size in force.
    pub fn effective_limit(&self) -> usize {
        match self.limit {
            0 => DEFAULT_EVENT_LIMIT,
            n => n.min(MAX_EVENT_LIMIT),
        }
    }

    /// Returns true when `row` passes the filters and the `since` bound.
    pub fn matches(&self, row: &EventRow) -> bool {
        let within = |set: &[String], v: Option<&str>| {
            set.is_empty() || v.is_some_and(|v| set.iter().any(|s| s == v))
        };
        let after = match &self.since {
            None => true,
            Some(EventSince::After(pos)) => row.key().cmp(pos) == Ordering::Greater,
            Some(EventSince::Timestamp(ts)) => row.ts.as_str() >= ts.as_str(),
        };
        after
            && self.until.as_deref().is_none_or(|u| row.ts.as_str() < u)
            && within(&self.ops, Some(&row.op))
            && within(&self.authors, Some(&row.author))
            && within(&self.streams, Some(&row.stream))
            && within(&self.harnesses, row.agent_harness.as_deref())
            && within(&self.agent_instances, row.agent_instance.as_deref())
    }
}

/// One page of events.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EventPage {
    /// The events, in order.
    pub events: Vec<EventRow>,
    /// More events follow.
    pub has_more: bool,
    /// The position to continue after, when `has_more`.
    pub next: Option<EventPosition>,
}

/// Answers an event query from rows in memory (the scan path).
pub fn page_from_rows(rows: Vec<EventRow>, query: &EventQuery) -> EventPage {
    page_from_rows_bounded(rows, query, Some(query.effective_limit()))
}

/// Answers an event query from rows in memory with every match (the query's limit ignored).
pub fn all_from_rows(rows: Vec<EventRow>, query: &EventQuery) -> EventPage {
    page_from_rows_bounded(rows, query, None)
}

fn page_from_rows_bounded(
    mut rows: Vec<EventRow>,
    query: &EventQuery,
    limit: Option<usize>,
) -> EventPage {
    rows.retain(|r| query.matches(r));
    rows.sort_by_key(EventRow::key);
    let limit = limit.unwrap_or(usize::MAX);
    let has_more = rows.len() > limit;
    rows.truncate(limit);
    EventPage {
        next: if has_more {
            rows.last().map(EventRow::key)
        } else {
            None
        },
        events: rows,
        has_more,
    }
}

/// Answers an event query from the projection.
///
/// # Errors
/// SQLite failures.
pub fn query_events(
    conn: &Connection,
    query: &EventQuery,
) -> rusqlite::Result<(EventPage, Vec<Notice>)> {
    query_events_bounded(conn, query, Some(query.effective_limit()))
}

/// Answers an event query from the projection with every match (the query's limit ignored);
/// `entry_json` is left empty (see [`fill_entry_lines`]).
///
/// # Errors
/// SQLite failures.
pub fn query_all_events(
    conn: &Connection,
    query: &EventQuery,
) -> rusqlite::Result<(EventPage, Vec<Notice>)> {
    query_events_bounded(conn, query, None)
}

fn query_events_bounded(
    conn: &Connection,
    query: &EventQuery,
    limit: Option<usize>,
) -> rusqlite::Result<(EventPage, Vec<Notice>)> {
    let mut sql = String::from(
        "SELECT stream, position, ts, author, op, agent_harness, agent_instance, message,
                patch_count, line_offset, line_len FROM events WHERE 1",
    );
    let mut args: Vec<Box<dyn ToSql>> = Vec::new();
    match &query.since {
        None => {}
        Some(EventSince::After(pos)) => {
            sql.push_str(" AND (ts, stream, position) > (?, ?, ?)");
            args.push(Box::new(pos.ts.clone()));
            args.push(Box::new(pos.stream.clone()));
            args.push(Box::new(pos.position));
        }
        Some(EventSince::Timestamp(ts)) => {
            sql.push_str(" AND ts >= ?");
            args.push(Box::new(ts.clone()));
        }
    }
    if let Some(until) = &query.until {
        sql.push_str(" AND ts < ?");
        args.push(Box::new(until.clone()));
    }
    for (column, set) in [
        ("op", &query.ops),
        ("author", &query.authors),
        ("stream", &query.streams),
        ("agent_harness", &query.harnesses),
        ("agent_instance", &query.agent_instances),
    ] {
        if set.is_empty() {
            continue;
        }
        sql.push_str(&format!(" AND {column} IN ({})", placeholders(set.len())));
        args.extend(set.iter().map(|v| Box::new(v.clone()) as Box<dyn ToSql>));
    }
    sql.push_str(" ORDER BY ts, stream, position");
    if let Some(limit) = limit {
        sql.push_str(" LIMIT ?");
        args.push(Box::new(limit as i64 + 1));
    }
    let limit = limit.unwrap_or(usize::MAX);
    let mut stmt = conn.prepare(&sql)?;
    let refs: Vec<&dyn ToSql> = args.iter().map(|a| a.as_ref()).collect();
    let mut rows: Vec<EventRow> = stmt
        .query_map(refs.as_slice(), event_row)?
        .collect::<rusqlite::Result<_>>()?;
    let has_more = rows.len() > limit;
    rows.truncate(limit);
    let notices = stream_notices(conn)?;
    let page = EventPage {
        next: if has_more {
            rows.last().map(EventRow::key)
        } else {
            None
        },
        events: rows,
        has_more,
    };
    Ok((page, notices))
}

/// Returns every projected event in order (for `pm reindex --check`).
///
/// # Errors
/// SQLite failures.
pub fn all_events(conn: &Connection) -> rusqlite::Result<Vec<EventRow>> {
    let mut stmt = conn.prepare(
        "SELECT stream, position, ts, author, op, agent_harness, agent_instance, message,
                patch_count, line_offset, line_len FROM events ORDER BY ts, stream, position",
    )?;
    stmt.query_map([], event_row)?.collect()
}

fn event_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<EventRow> {
    Ok(EventRow {
        stream: r.get(0)?,
        position: r.get(1)?,
        ts: r.get(2)?,
        author: r.get(3)?,
        op: r.get(4)?,
        agent_harness: r.get(5)?,
        agent_instance: r.get(6)?,
        message: r.get(7)?,
        patch_count: r.get(8)?,
        line_offset: u64::try_from(r.get::<_, i64>(9)?).unwrap_or(0),
        line_len: u64::try_from(r.get::<_, i64>(10)?).unwrap_or(0),
        entry_json: String::new(),
    })
}

/// Fills [`EventRow::entry_json`] of `rows` from their stream files in `history_dir` (each file
/// read once). Every line must still be a JSON object with the row's `ts`, so a stream
/// rewritten since it was projected is noticed rather than misread.
///
/// # Errors
/// A description of the first line that could not be read or no longer matches.
pub fn fill_entry_lines(rows: &mut [EventRow], history_dir: &Path) -> Result<(), String> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| rows[a].stream.cmp(&rows[b].stream));
    let mut loaded: Option<(String, Vec<u8>)> = None;
    for i in order {
        let row = &mut rows[i];
        if loaded.as_ref().is_none_or(|(s, _)| *s != row.stream) {
            let path = history_dir.join(format!("{}.jsonl", row.stream));
            let bytes =
                pm_engine::confine::leaf::read_existing(&path).map_err(|e| e.to_string())?;
            loaded = Some((row.stream.clone(), bytes));
        }
        let bytes = loaded.as_ref().map_or(&[][..], |(_, b)| b.as_slice());
        let start = usize::try_from(row.line_offset).unwrap_or(usize::MAX);
        let end = start.saturating_add(usize::try_from(row.line_len).unwrap_or(usize::MAX));
        let line = bytes
            .get(start..end)
            .and_then(|b| std::str::from_utf8(b).ok())
            .filter(|text| {
                serde_json::from_str::<serde_json::Value>(text)
                    .is_ok_and(|v| v.get("ts").and_then(|t| t.as_str()) == Some(row.ts.as_str()))
            })
            .ok_or_else(|| {
                format!(
                    "history/{}.jsonl changed since it was read: entry {} is no longer at byte {}",
                    row.stream, row.position, row.line_offset
                )
            })?;
        row.entry_json = line.to_string();
    }
    Ok(())
}

/// Returns the notices of unreadable streams recorded in `sources`, in path order.
///
/// # Errors
/// SQLite failures.
pub fn stream_notices(conn: &Connection) -> rusqlite::Result<Vec<Notice>> {
    let mut stmt = conn.prepare_cached(
        "SELECT path, error_code, error_message FROM sources
         WHERE kind = 'history' AND error_code IS NOT NULL ORDER BY path",
    )?;
    stmt.query_map([], |r| {
        Ok(unreadable_notice(
            &r.get::<_, String>(0)?,
            &r.get::<_, String>(1)?,
            &r.get::<_, String>(2)?,
        ))
    })?
    .collect()
}

/// Returns `?, ?, …` for `n` parameters.
pub fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(stream: &str, ts: &str, line_offset: u64, line_len: u64) -> EventRow {
        EventRow {
            stream: stream.to_string(),
            position: 0,
            ts: ts.to_string(),
            author: "ann".to_string(),
            op: "create".to_string(),
            agent_harness: None,
            agent_instance: None,
            message: None,
            patch_count: 0,
            line_offset,
            line_len,
            entry_json: String::new(),
        }
    }

    #[test]
    fn lines_are_fetched_from_the_stream_and_a_moved_line_is_refused()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let first = r#"{"ts":"t1","op":"create"}"#;
        let second = r#"  {"ts":"t2","op":"update"}"#;
        pm_engine::atomic::write(
            &dir.path().join("pm-a.jsonl"),
            format!("{first}\n{second}\n").as_bytes(),
        )?;
        let at = first.len() as u64 + 3;
        let mut rows = vec![row("pm-a", "t2", at, 25), row("pm-a", "t1", 0, 25)];
        fill_entry_lines(&mut rows, dir.path())?;
        assert_eq!(rows[0].entry_json, second.trim());
        assert_eq!(rows[1].entry_json, first);
        // The stream was rewritten: the same bytes now hold another entry.
        pm_engine::atomic::write(
            &dir.path().join("pm-a.jsonl"),
            format!("{second}\n{first}\n").as_bytes(),
        )?;
        let err = fill_entry_lines(&mut rows, dir.path()).err();
        assert!(err.is_some_and(|e| e.contains("changed since it was read")));
        Ok(())
    }
}
