//! History totals for `pm stats`: how many history streams the tracker holds and how many
//! entries they contain, from the `sources` table or, without a usable index, from the files.

use pm_engine::Result;
use pm_engine::history::stream::read_stream;
use pm_engine::tracker::Tracker;
use rayon::prelude::*;
use rusqlite::Connection;

/// Counts over every history stream (`history/*.jsonl`), deleted items' streams included.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HistoryTotals {
    /// Stream files.
    pub streams: usize,
    /// Parsed entries over all streams (unreadable streams count none).
    pub entries: usize,
}

/// Returns the totals recorded in the projection.
///
/// # Errors
/// SQLite failures.
pub fn from_index(conn: &Connection) -> rusqlite::Result<HistoryTotals> {
    let (streams, entries): (i64, i64) = conn.query_row(
        "SELECT COUNT(*), COALESCE(SUM(entry_count), 0) FROM sources WHERE kind = 'history'",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(HistoryTotals {
        streams: usize::try_from(streams).unwrap_or(0),
        entries: usize::try_from(entries).unwrap_or(0),
    })
}

/// Returns the totals by reading every stream of `tracker` (in parallel).
///
/// # Errors
/// `io_error` when `history/` exists but cannot be listed.
pub fn from_scan(tracker: &Tracker) -> Result<HistoryTotals> {
    let dir = tracker.history_dir();
    let Some(listing) = pm_engine::confine::leaf::list_folder(&dir)? else {
        return Ok(HistoryTotals::default());
    };
    let streams: Vec<(std::path::PathBuf, String)> = listing
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|entry| {
            let path = entry.path();
            let id = path
                .file_name()?
                .to_str()?
                .strip_suffix(".jsonl")?
                .to_owned();
            Some((path, id))
        })
        .collect();
    let entries = streams
        .par_iter()
        .map(|(path, id)| read_stream(path, id).map_or(0, |s| s.entries.len()))
        .sum();
    Ok(HistoryTotals {
        streams: streams.len(),
        entries,
    })
}
