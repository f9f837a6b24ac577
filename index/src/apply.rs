//! Incremental upkeep: re-stat and re-parse exactly the given paths and apply them in one
//! transaction (freshness repairs and mutations' `CommitObserver` use this). A grown history
//! stream whose projected prefix is unchanged is projected from its old length onward; a shrunk
//! or rewritten one is re-projected whole. A failure marks the index stale, never the caller.

use crate::duplicates;
use crate::events::project_stream;
use crate::fresh::check::Change;
use crate::fresh::digest::{DigestTotals, content_id};
use crate::fresh::source::{Sig, SourceFile, SourceKind};
use crate::indexer::RACY_WINDOW_NS;
use crate::project::{ProjectContext, Projected, Projection, project};
use crate::rows::{RowWriter, SourceRow, remove_source, set_meta, source_row};
use crate::store::WriterLock;
use pm_engine::commit::Commit;
use pm_engine::schema::RuntimeSchema;
use pm_engine::tracker::Tracker;
use rayon::prelude::*;
use rusqlite::Connection;
use std::collections::BTreeSet;

/// What an apply did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApplyReport {
    /// Sources re-projected.
    pub upserted: usize,
    /// Sources removed.
    pub removed: usize,
    /// History streams projected from their old length onward.
    pub appended_streams: usize,
}

/// Applies `changes` to the projection open for writing on `conn`. The caller holds `lock`.
///
/// # Errors
/// SQLite failures (the transaction is rolled back) and I/O failures touching the lock.
pub fn apply_changes(
    conn: &mut Connection,
    lock: &WriterLock,
    schema: &pm_engine::schema::RuntimeSchema,
    changes: Vec<Change>,
) -> Result<ApplyReport, ApplyError> {
    let fs_now = lock.touch().map_err(ApplyError::Io)?;
    let ctx = ProjectContext::new(schema, fs_now - RACY_WINDOW_NS);
    let paths: Vec<String> = changes.iter().map(|c| c.path().to_string()).collect();
    let mut old_rows = Vec::with_capacity(changes.len());
    for change in &changes {
        old_rows.push(source_row(conn, change.path()).map_err(ApplyError::Sql)?);
    }
    let projected: Vec<Option<(Projected, bool)>> = changes
        .into_par_iter()
        .zip(old_rows.par_iter())
        .map(|(change, old)| match change {
            Change::Upsert(file) => Some(project_update(file, old.as_ref(), &ctx)),
            Change::Remove(_) => None,
        })
        .collect();
    let tx = conn.transaction().map_err(ApplyError::Sql)?;
    let mut touched_ids = ids_at(&tx, &paths)?;
    let mut totals = DigestTotals::load(&tx).map_err(ApplyError::Sql)?;
    let mut report = ApplyReport::default();
    let mut writer = RowWriter::new(&tx).map_err(ApplyError::Sql)?;
    for (old, new) in old_rows.iter().zip(projected) {
        let appending = new.as_ref().is_some_and(|(_, append)| *append);
        if let Some(old) = old {
            let removed = remove_source(&tx, old, appending).map_err(ApplyError::Sql)?;
            totals.remove(SourceKind::parse(&old.kind), removed);
        }
        match new {
            Some((p, append)) if !matches!(p.projection, Projection::Vanished) => {
                let added = writer.write(&p).map_err(ApplyError::Sql)?;
                totals.add(p.file.kind, added);
                report.upserted += 1;
                report.appended_streams += usize::from(append);
            }
            _ => report.removed += usize::from(old.is_some()),
        }
    }
    drop(writer);
    touched_ids.extend(ids_at(&tx, &paths)?);
    duplicates::refresh(&tx, touched_ids.iter().map(String::as_str)).map_err(ApplyError::Sql)?;
    totals.store(&tx).map_err(ApplyError::Sql)?;
    set_meta(&tx, "stale", "0").map_err(ApplyError::Sql)?;
    tx.commit().map_err(ApplyError::Sql)?;
    crate::wal::trim_wal(conn);
    Ok(report)
}

/// The ids of the item rows at `paths` (the ids an apply may make or unmake duplicates).
fn ids_at(conn: &Connection, paths: &[String]) -> Result<BTreeSet<String>, ApplyError> {
    let mut ids = BTreeSet::new();
    for path in paths {
        if let Some(id) = duplicates::id_at(conn, path).map_err(ApplyError::Sql)? {
            ids.insert(id);
        }
    }
    Ok(ids)
}

/// Why an apply failed.
#[derive(Debug)]
pub enum ApplyError {
    /// SQLite refused a statement.
    Sql(rusqlite::Error),
    /// The lock file could not be touched.
    Io(std::io::Error),
}

impl std::fmt::Display for ApplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApplyError::Sql(e) => write!(f, "{e}"),
            ApplyError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Projects a changed file; for a history stream that only grew, only the new lines. Returns
/// the projection and whether it appends to the stream's existing events.
fn project_update(
    file: SourceFile,
    old: Option<&SourceRow>,
    ctx: &ProjectContext<'_>,
) -> (Projected, bool) {
    let appendable = old.filter(|o| {
        file.kind == SourceKind::History && o.error_code.is_none() && o.projected_len.is_some()
    });
    let Some(old) = appendable else {
        return (project(file, ctx), false);
    };
    let (Ok(meta), Ok(Some(bytes))) = (
        std::fs::symlink_metadata(&file.abs),
        pm_engine::confine::leaf::read_file(&file.abs),
    ) else {
        return (project(file, ctx), false);
    };
    let sig = Sig::of(&meta);
    let from = u64::try_from(old.projected_len.unwrap_or(0)).unwrap_or(0);
    let prefix_intact = from > 0
        && (bytes.len() as u64) >= from
        && old.prefix_hash == Some(content_id(&bytes[..from as usize]));
    if !prefix_intact {
        return (project(file, ctx), false);
    }
    let stream = project_stream(&file, &bytes, from, old.entry_count.unwrap_or(0));
    // A parse error re-projects the whole stream (and then yields no events).
    let append = stream.error.is_none();
    let projected = Projected {
        racy: sig.ctime_ns >= ctx.racy_from_ns,
        content_hash: content_id(&bytes),
        sig,
        projection: Projection::History(stream),
        file,
    };
    (projected, append)
}

/// Marks the projection stale so the next read re-checks every file; best effort.
pub fn mark_stale(conn: &Connection) {
    let _ = set_meta(conn, "stale", "1");
}

/// Returns the changes a mutation's commit names: every written, removed or appended source
/// file, as an upsert when it exists now and a removal otherwise.
pub fn commit_changes(tracker: &Tracker, schema: &RuntimeSchema, commit: &Commit) -> Vec<Change> {
    let mut changes: Vec<Change> = commit
        .written
        .iter()
        .chain(&commit.removed)
        .chain(&commit.appended)
        .filter_map(|abs| crate::fresh::source::source_for(tracker, schema, abs))
        .map(|file| {
            if file.abs.is_file() {
                Change::Upsert(file)
            } else {
                Change::Remove(file.rel)
            }
        })
        .collect();
    changes.sort_by(|a, b| a.path().cmp(b.path()));
    changes.dedup_by(|a, b| a.path() == b.path());
    changes
}
