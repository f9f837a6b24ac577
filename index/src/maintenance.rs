//! Maintenance views of the projection: `pm health`'s index state (never repairing), `pm reindex
//! --check` (index versus scan, row by row), settling racily clean rows, and the scan path of
//! the events query.

use crate::events::{
    EventPage, EventQuery, EventRow, all_from_rows, page_from_rows, project_stream,
    unreadable_notice,
};
use crate::fresh::check::{self as freshness, Change};
use crate::fresh::source::source_for;
use crate::fresh::source::{SourceKind, SweepScope, enumerate};
use crate::fresh::sweep::DigestSweep;
use crate::indexer::RACY_WINDOW_NS;
use crate::store::{self, Condition, WriterLock, meta};
use crate::{Index, read};
use pm_engine::query::{Query, Sort};
use pm_engine::schema::RuntimeSchema;
use pm_engine::tracker::Tracker;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The condition of a tracker's projection, as `pm health` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IndexState {
    /// Matches the files.
    Fresh,
    /// Usable, but files changed since; the next read applies them.
    Stale,
    /// Not built yet; the next read builds it.
    Missing,
    /// Built by another projection version; the next read rebuilds it.
    WrongVersion,
    /// Built under other settings or schema files; the next read rebuilds it.
    SchemaChanged,
    /// Not a readable database; the next writer rebuilds it.
    Corrupt,
    /// Another application's database; the next writer replaces it.
    Foreign,
    /// A directory or other non-file where the database should be.
    NotAFile,
    /// A symlink where pm-index only uses real files and folders.
    UnsafeSymlink,
    /// Exists but cannot be opened (permissions).
    Unreadable,
    /// `--no-index` / `PM_NO_INDEX=1`.
    Disabled,
    /// `runtime/index/writer.lock` is not a regular file: no writer can update the projection
    /// (reads scan); `pm gc --scope index` removes it.
    WriterLockUnusable,
}

impl IndexState {
    /// Returns true for the states of a normal lifecycle (repaired by the next read).
    pub fn is_ok(self) -> bool {
        matches!(
            self,
            IndexState::Fresh
                | IndexState::Stale
                | IndexState::Missing
                | IndexState::WrongVersion
                | IndexState::SchemaChanged
                | IndexState::Disabled
        )
    }

    fn of(condition: &Condition) -> IndexState {
        match condition {
            Condition::Missing => IndexState::Missing,
            Condition::Ready { .. } => IndexState::Fresh,
            Condition::WrongVersion { .. } => IndexState::WrongVersion,
            Condition::SchemaChanged => IndexState::SchemaChanged,
            Condition::Foreign => IndexState::Foreign,
            Condition::Corrupt { .. } => IndexState::Corrupt,
            Condition::NotAFile { .. } => IndexState::NotAFile,
            Condition::Unsafe { .. } => IndexState::UnsafeSymlink,
            Condition::Unreadable { .. } => IndexState::Unreadable,
        }
    }
}

/// The index section of `pm health`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IndexHealth {
    /// The condition.
    pub state: IndexState,
    /// Whether the condition is part of the normal lifecycle.
    pub ok: bool,
    /// What was found, for abnormal states.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The projection version this pm builds.
    pub projection_version: u32,
    /// The current database file, tracker-relative.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// Its build generation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    /// Indexed items.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<usize>,
    /// Unreadable item files recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable_items: Option<usize>,
    /// History events indexed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<usize>,
    /// Files that changed since the last build or apply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_changes: Option<usize>,
    /// When the current generation was built (file-system clock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_build: Option<String>,
}

/// Returns the projection's state without changing anything.
pub fn health(
    index: &Index<'_>,
    fingerprint: &str,
    swept: impl FnOnce() -> Option<DigestSweep>,
) -> IndexHealth {
    let mut out = IndexHealth {
        state: IndexState::Missing,
        ok: true,
        detail: None,
        projection_version: crate::schema::PROJECTION_VERSION,
        database: None,
        generation: None,
        items: None,
        unreadable_items: None,
        events: None,
        pending_changes: None,
        last_build: None,
    };
    if index.options.scan_only {
        out.state = IndexState::Disabled;
        return out;
    }
    if let Some(problem) = store::writer_lock_problem(index.paths()) {
        out.state = IndexState::WriterLockUnusable;
        out.ok = false;
        out.detail = Some(problem);
        return out;
    }
    let (conn, generation, db) = match store::probe(index.paths(), fingerprint) {
        Ok(found) => found,
        Err(condition) => {
            out.state = IndexState::of(&condition);
            out.ok = out.state.is_ok();
            if condition != Condition::Missing {
                out.detail = Some(format!("{condition:?}"));
            }
            return out;
        }
    };
    out.database = db
        .strip_prefix(index.tracker().root())
        .ok()
        .map(|p| p.display().to_string());
    out.generation = Some(generation);
    if let Err(found) = crate::integrity::quick_check(&conn, index.paths(), &db) {
        out.state = IndexState::Corrupt;
        out.ok = false;
        out.detail = Some(found);
        return out;
    }
    let counted = (|| -> rusqlite::Result<(usize, usize, usize, Option<String>)> {
        let n = |sql: &str| -> rusqlite::Result<usize> {
            conn.query_row(sql, [], |r| r.get::<_, i64>(0))
                .map(|v| usize::try_from(v).unwrap_or(0))
        };
        let built = meta(&conn, "built_fs_ns")?
            .and_then(|ns| ns.parse::<i64>().ok())
            .map(|ns| pm_engine::clock::format_iso_ms(ns.div_euclid(1_000_000)));
        Ok((
            n("SELECT COUNT(*) FROM items")?,
            n("SELECT COUNT(*) FROM sources WHERE kind = 'item' AND error_code IS NOT NULL")?,
            n("SELECT COUNT(*) FROM events")?,
            built,
        ))
    })();
    match counted {
        Ok((items, unreadable, events, built)) => {
            out.items = Some(items);
            out.unreadable_items = Some(unreadable);
            out.events = Some(events);
            out.last_build = built;
        }
        Err(e) => {
            out.state = IndexState::Corrupt;
            out.ok = false;
            out.detail = Some(e.to_string());
            return out;
        }
    }
    let checked = match swept() {
        Some(quick) => freshness::check_swept(
            &conn,
            index.tracker(),
            index.schema(),
            SweepScope::All,
            &quick,
        ),
        None => freshness::check(
            &conn,
            index.tracker(),
            index.schema(),
            SweepScope::All,
            Some(&index.folder_listings()),
        ),
    };
    match checked {
        Ok(report) => {
            out.pending_changes = Some(report.changes.len());
            out.state = if report.is_fresh() {
                IndexState::Fresh
            } else {
                IndexState::Stale
            };
        }
        Err(e) => {
            out.state = IndexState::Stale;
            out.detail = Some(format!("{e:?}"));
        }
    }
    out
}

/// One disagreement between the projection and a scan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// The tracker-relative path (or `events`).
    pub path: String,
    /// `missing_from_index`, `extra_in_index` or `differs`.
    pub kind: String,
}

/// What `pm reindex --check` found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// The projection's condition.
    pub state: IndexState,
    /// Index and scan agree on every item and event.
    pub consistent: bool,
    /// Files changed since the last build or apply (a stale index differs by design).
    pub pending_changes: usize,
    /// Items in the index.
    pub index_items: usize,
    /// Items in a scan.
    pub scan_items: usize,
    /// Events in the index.
    pub index_events: usize,
    /// Events in a scan.
    pub scan_events: usize,
    /// The differences, path order (at most 100).
    pub differences: Vec<Difference>,
}

/// The report of `pm reindex`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReindexReport {
    /// The new generation.
    pub generation: u64,
    /// The database file, tracker-relative.
    pub database: String,
    /// Readable items.
    pub items: usize,
    /// Unreadable item files.
    pub unreadable_items: usize,
    /// History streams.
    pub streams: usize,
    /// History events.
    pub events: usize,
}

/// Compares the projection with a scan.
///
/// # Errors
/// Scan failures.
pub fn check(index: &Index<'_>, fingerprint: &str) -> pm_engine::Result<CheckReport> {
    let tracker = index.tracker();
    let schema = index.schema();
    let scan = pm_engine::scan::scan(tracker, schema)?;
    let scanned_events = scan_event_rows(tracker, schema)?.0;
    let mut report = CheckReport {
        state: IndexState::Missing,
        consistent: false,
        pending_changes: 0,
        index_items: 0,
        scan_items: scan.summaries.len(),
        index_events: 0,
        scan_events: scanned_events.len(),
        differences: Vec::new(),
    };
    let conn = match store::probe(index.paths(), fingerprint) {
        Ok((conn, _, _)) => conn,
        Err(condition) => {
            report.state = IndexState::of(&condition);
            return Ok(report);
        }
    };
    let compared = (|| -> rusqlite::Result<()> {
        // The thorough check lists every folder rather than trust a recorded listing.
        let fresh = freshness::check(&conn, tracker, schema, SweepScope::All, None).ok();
        report.pending_changes = fresh.as_ref().map_or(0, |r| r.changes.len());
        report.state = if fresh.is_some_and(|r| r.is_fresh()) {
            IndexState::Fresh
        } else {
            IndexState::Stale
        };
        let indexed = read::select(&conn, schema, &Query::all(), &Sort::default())?;
        report.index_items = indexed.len();
        let mut by_path: BTreeMap<&str, Option<&pm_engine::summary::ItemSummary>> =
            indexed.iter().map(|s| (s.path.as_str(), Some(s))).collect();
        let mut diffs: BTreeMap<String, &str> = BTreeMap::new();
        for s in &scan.summaries {
            match by_path.remove(s.path.as_str()) {
                Some(Some(i)) if i == s => {}
                Some(_) => {
                    diffs.insert(s.path.clone(), "differs");
                }
                None => {
                    diffs.insert(s.path.clone(), "missing_from_index");
                }
            }
        }
        for path in by_path.keys() {
            diffs.insert((*path).to_string(), "extra_in_index");
        }
        let indexed_events = crate::events::all_events(&conn)?;
        report.index_events = indexed_events.len();
        let mut sorted = scanned_events.clone();
        sorted.sort_by_key(EventRow::key);
        if indexed_events != sorted {
            diffs.insert("events".into(), "differs");
        }
        report.consistent = diffs.is_empty();
        report.differences = diffs
            .into_iter()
            .take(100)
            .map(|(path, kind)| Difference {
                path,
                kind: kind.to_string(),
            })
            .collect();
        Ok(())
    })();
    if compared.is_err() {
        report.state = IndexState::Corrupt;
        report.consistent = false;
    }
    Ok(report)
}

/// Returns racily clean sources that are now old enough to settle (re-projected, they come out
/// clean), after touching the lock to learn the file-system time.
pub fn settleable(index: &Index<'_>, db: &Path, lock: &WriterLock) -> Vec<Change> {
    let Ok(fs_now) = lock.touch() else {
        return Vec::new();
    };
    let Ok(conn) = store::open_read(db) else {
        return Vec::new();
    };
    let rows: rusqlite::Result<Vec<String>> = conn
        .prepare("SELECT path FROM sources WHERE racy = 1 AND ctime_ns < ?1 ORDER BY path")
        .and_then(|mut stmt| {
            stmt.query_map([fs_now - RACY_WINDOW_NS], |r| r.get(0))?
                .collect()
        });
    rows.unwrap_or_default()
        .into_iter()
        .map(|rel| {
            let abs = index.tracker().root().join(&rel);
            match source_for(index.tracker(), index.schema(), &abs) {
                Some(file) if abs.is_file() => Change::Upsert(file),
                _ => Change::Remove(rel),
            }
        })
        .collect()
}

/// Reads every history stream and returns its event rows and the unreadable-stream notices
/// (path order).
///
/// # Errors
/// Listing failures.
pub fn scan_event_rows(
    tracker: &Tracker,
    schema: &RuntimeSchema,
) -> pm_engine::Result<(Vec<EventRow>, Vec<pm_engine::notice::Notice>)> {
    let set = enumerate(tracker, schema)?;
    let projected: Vec<_> = set
        .files
        .into_par_iter()
        .filter(|f| f.kind == SourceKind::History)
        .filter_map(|f| {
            let bytes = pm_engine::confine::leaf::read_file(&f.abs).ok()??;
            Some((f.rel.clone(), project_stream(&f, &bytes, 0, 0)))
        })
        .collect();
    let mut rows = Vec::new();
    let mut notices = Vec::new();
    for (rel, stream) in projected {
        if let Some((code, message)) = &stream.error {
            notices.push(unreadable_notice(&rel, code, message));
        }
        rows.extend(stream.events);
    }
    Ok((rows, notices))
}

/// Answers an events query by reading every stream (the scan path).
///
/// # Errors
/// Listing failures.
pub fn scan_events(
    tracker: &Tracker,
    schema: &RuntimeSchema,
    query: &EventQuery,
) -> pm_engine::Result<(EventPage, Vec<pm_engine::notice::Notice>)> {
    let (rows, mut notices) = scan_event_rows(tracker, schema)?;
    let mut page = page_from_rows(rows, query);
    // The streams were read a moment ago; a line moved since is reported, not misread.
    let history = tracker.history_dir();
    if let Err(e) = crate::events::fill_entry_lines(&mut page.events, &history) {
        notices.push(pm_engine::notice::Notice::new(
            "history_changed_during_read",
            e,
        ));
    }
    Ok((page, notices))
}

/// Answers an event query by scanning every history stream, with every match.
///
/// # Errors
/// Failures listing `history/`.
pub fn scan_all_events(
    tracker: &Tracker,
    schema: &RuntimeSchema,
    query: &EventQuery,
) -> pm_engine::Result<(EventPage, Vec<pm_engine::notice::Notice>)> {
    let (rows, notices) = scan_event_rows(tracker, schema)?;
    Ok((all_from_rows(rows, query), notices))
}
