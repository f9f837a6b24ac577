//! The freshness check every read runs before answering from the index: a parallel stat sweep
//! of the type folders and `history/`, compared with the `sources` table. Equal digests (and no
//! stale mark) mean nothing changed; otherwise the per-file comparison names what was added,
//! removed or edited, including in-place edits that keep size and mtime. Racily clean files
//! (changed too close to when they were indexed) are compared by content hash. A read that
//! depends on item files only confirms freshness from the item folders alone (`SweepScope`).

use crate::fresh::digest::from_sql;
use crate::fresh::listings::FolderListings;
use crate::fresh::source::{ALL_KEYS, ITEM_KEYS, Sig, SourceFile, Sweep, SweepScope, sweep};
use crate::fresh::sweep::{DigestSweep, digest_sweep};
use crate::rows::{SourceRow, read_source_row};
use crate::store::meta;
use pm_engine::notice::Notice;
use pm_engine::schema::RuntimeSchema;
use pm_engine::tracker::Tracker;
use rayon::prelude::*;
use rusqlite::Connection;
use std::collections::{HashMap, HashSet};

/// One difference between the tracker and the projection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// A file that is new or differs from its indexed state.
    Upsert(SourceFile),
    /// An indexed file that no longer exists.
    Remove(String),
}

impl Change {
    /// Returns the relative path concerned.
    pub fn path(&self) -> &str {
        match self {
            Change::Upsert(f) => &f.rel,
            Change::Remove(p) => p,
        }
    }
}

/// What the freshness check found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Differences to apply, in path order.
    pub changes: Vec<Change>,
    /// Racily clean files whose content still matches (candidates to settle).
    pub racy_unchanged: usize,
    /// Type folders that could not be listed (the index cannot answer for them).
    pub unreadable_dirs: Vec<Notice>,
    /// Sources seen by the sweep.
    pub source_count: usize,
    /// Whether the digest fast path confirmed the signatures.
    pub digest_matched: bool,
}

impl Report {
    /// Returns true when the projection matches the files.
    pub fn is_fresh(&self) -> bool {
        self.changes.is_empty() && self.unreadable_dirs.is_empty()
    }
}

/// Compares the tracker's files of `scope` with the projection open on `conn`. When the fast
/// path cannot confirm them, every source (both scopes) is compared, so the report lists all
/// differences and a repair brings the whole projection up to date. `listings` spares folders
/// unchanged since they were last listed a new listing (`crate::fresh::listings`).
///
/// # Errors
/// SQLite failures (the caller treats them as an unusable index) and enumeration I/O errors.
pub fn check(
    conn: &Connection,
    tracker: &Tracker,
    schema: &RuntimeSchema,
    scope: SweepScope,
    listings: Option<&FolderListings>,
) -> Result<Report, CheckError> {
    let quick = digest_sweep(tracker, schema, scope, listings).map_err(CheckError::Engine)?;
    check_swept(conn, tracker, schema, scope, &quick)
}

/// [`check`] with the digest sweep of `scope` already made (`quick`).
///
/// # Errors
/// SQLite failures and enumeration I/O errors.
pub fn check_swept(
    conn: &Connection,
    tracker: &Tracker,
    schema: &RuntimeSchema,
    scope: SweepScope,
    quick: &DigestSweep,
) -> Result<Report, CheckError> {
    let fast = if quick.unreadable_dirs.is_empty() {
        fast_path(conn, tracker, schema, quick, scope).map_err(CheckError::Sql)?
    } else {
        None
    };
    if let Some(report) = fast {
        return Ok(report);
    }
    let swept = sweep(tracker, schema).map_err(CheckError::Engine)?;
    compare(conn, swept).map_err(CheckError::Sql)
}

/// What the projection recorded about the sources of one scope: the inputs of the digest
/// fast path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Recorded {
    digest: Option<u64>,
    count: Option<usize>,
    stale: bool,
}

impl Recorded {
    /// Reads the digest, source count and stale mark of `scope` from `conn`.
    pub(crate) fn read(conn: &Connection, scope: SweepScope) -> rusqlite::Result<Recorded> {
        let totals = |(digest_key, count_key): (&str, &str)| -> rusqlite::Result<_> {
            Ok((
                meta(conn, digest_key)?
                    .and_then(|d| d.parse::<i64>().ok())
                    .map(from_sql),
                meta(conn, count_key)?.and_then(|c| c.parse::<usize>().ok()),
            ))
        };
        let (digest, count) = match scope {
            SweepScope::Items => totals(ITEM_KEYS)?,
            SweepScope::All => totals(ALL_KEYS)?,
            SweepScope::History => {
                let (all, all_count) = totals(ALL_KEYS)?;
                let (items, items_count) = totals(ITEM_KEYS)?;
                (
                    all.zip(items).map(|(a, i)| a.wrapping_sub(i)),
                    all_count
                        .zip(items_count)
                        .and_then(|(a, i)| a.checked_sub(i)),
                )
            }
        };
        Ok(Recorded {
            digest,
            count,
            stale: meta(conn, "stale")?.as_deref() == Some("1"),
        })
    }

    /// Returns true when `quick` saw exactly the sources recorded (and nothing is marked
    /// stale); racily clean files still need their content compared.
    pub(crate) fn confirmed_by(&self, quick: &DigestSweep) -> bool {
        !self.stale
            && quick.unreadable_dirs.is_empty()
            && self.digest == Some(quick.digest)
            && self.count == Some(quick.count)
    }
}

/// The racily clean sources of `scope`, by path.
pub(crate) fn racy_in_scope(
    conn: &Connection,
    scope: SweepScope,
) -> rusqlite::Result<HashMap<String, SourceRow>> {
    let mut racy = racy_rows(conn)?;
    let kind = match scope {
        SweepScope::All => return Ok(racy),
        SweepScope::Items => crate::fresh::source::SourceKind::Item,
        SweepScope::History => crate::fresh::source::SourceKind::History,
    };
    racy.retain(|_, row| row.kind == kind.as_str());
    Ok(racy)
}

/// Confirms freshness from the digest alone (re-hashing only racily clean files); `None` when
/// the digest, the file count or the stale mark says something changed.
fn fast_path(
    conn: &Connection,
    tracker: &Tracker,
    schema: &RuntimeSchema,
    quick: &DigestSweep,
    scope: SweepScope,
) -> rusqlite::Result<Option<Report>> {
    if !Recorded::read(conn, scope)?.confirmed_by(quick) {
        return Ok(None);
    }
    let racy = racy_in_scope(conn, scope)?;
    let candidates: Vec<(SourceFile, Sig)> = racy
        .keys()
        .filter_map(|rel| {
            let file =
                crate::fresh::source::source_for(tracker, schema, &tracker.root().join(rel))?;
            // The link's own status, as the sweeps key it.
            let meta = std::fs::symlink_metadata(&file.abs).ok()?;
            Some((file, Sig::of(&meta)))
        })
        .collect();
    let (mut changes, racy_unchanged) = verify_racy(candidates, &racy);
    changes.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(Some(Report {
        changes,
        racy_unchanged,
        unreadable_dirs: Vec::new(),
        source_count: quick.count,
        digest_matched: true,
    }))
}

/// Why a freshness check could not finish.
#[derive(Debug)]
pub enum CheckError {
    /// Listing the tracker failed.
    Engine(pm_engine::Error),
    /// The projection could not be read.
    Sql(rusqlite::Error),
}

/// Compares a sweep with the projection.
///
/// # Errors
/// SQLite failures.
pub fn compare(conn: &Connection, swept: Sweep) -> rusqlite::Result<Report> {
    let stored_digest = meta(conn, "digest")?
        .and_then(|d| d.parse::<i64>().ok())
        .map(from_sql);
    let stored_count = meta(conn, "source_count")?.and_then(|c| c.parse::<usize>().ok());
    let stale = meta(conn, "stale")?.as_deref() == Some("1");
    let mut report = Report {
        source_count: swept.files.len(),
        unreadable_dirs: swept.unreadable_dirs.clone(),
        ..Report::default()
    };
    let fast =
        !stale && stored_digest == Some(swept.digest) && stored_count == Some(swept.files.len());
    report.digest_matched = fast;
    if fast {
        let racy = racy_rows(conn)?;
        if racy.is_empty() {
            return Ok(report);
        }
        let wanted: HashSet<&str> = racy.keys().map(String::as_str).collect();
        let candidates: Vec<(SourceFile, Sig)> = swept
            .files
            .into_iter()
            .filter(|(f, _)| wanted.contains(f.rel.as_str()))
            .collect();
        let (changed, unchanged) = verify_racy(candidates, &racy);
        report.changes = changed;
        report.racy_unchanged = unchanged;
        report.changes.sort_by(|a, b| a.path().cmp(b.path()));
        return Ok(report);
    }
    let mut stored = all_rows(conn)?;
    let mut suspects: Vec<(SourceFile, Sig)> = Vec::new();
    let mut racy: HashMap<String, SourceRow> = HashMap::new();
    for (file, sig) in swept.files {
        match stored.remove(&file.rel) {
            None => report.changes.push(Change::Upsert(file)),
            Some(row) if row.sig != sig || row.kind != file.kind.as_str() => {
                report.changes.push(Change::Upsert(file));
            }
            Some(row) if row.racy => {
                racy.insert(row.path.clone(), row);
                suspects.push((file, sig));
            }
            Some(_) => {}
        }
    }
    report
        .changes
        .extend(stored.into_keys().map(Change::Remove));
    let (changed, unchanged) = verify_racy(suspects, &racy);
    report.changes.extend(changed);
    report.racy_unchanged = unchanged;
    report.changes.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(report)
}

/// Re-hashes racily clean files; returns those whose content differs from what was indexed,
/// and how many still match.
fn verify_racy(
    candidates: Vec<(SourceFile, Sig)>,
    racy: &HashMap<String, SourceRow>,
) -> (Vec<Change>, usize) {
    let verdicts: Vec<(SourceFile, bool)> = candidates
        .into_par_iter()
        .map(|(file, sig)| {
            let same = racy.get(&file.rel).is_some_and(|row| {
                row.sig == sig
                    && crate::fresh::digest::content_hash(&file.abs) == Some(row.content_hash)
            });
            (file, same)
        })
        .collect();
    let unchanged = verdicts.iter().filter(|(_, same)| *same).count();
    let changed = verdicts
        .into_iter()
        .filter(|(_, same)| !same)
        .map(|(f, _)| Change::Upsert(f))
        .collect();
    (changed, unchanged)
}

const SOURCE_COLUMNS: &str = "path, kind, size, mtime_ns, ctime_ns, inode, racy, content_hash,
    item_key, error_code, error_message, projected_len, entry_count, prefix_hash";

fn racy_rows(conn: &Connection) -> rusqlite::Result<HashMap<String, SourceRow>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {SOURCE_COLUMNS} FROM sources WHERE racy = 1"
    ))?;
    stmt.query_map([], read_source_row)?
        .map(|r| r.map(|row| (row.path.clone(), row)))
        .collect()
}

fn all_rows(conn: &Connection) -> rusqlite::Result<HashMap<String, SourceRow>> {
    let mut stmt = conn.prepare_cached(&format!("SELECT {SOURCE_COLUMNS} FROM sources"))?;
    stmt.query_map([], read_source_row)?
        .map(|r| r.map(|row| (row.path.clone(), row)))
        .collect()
}
