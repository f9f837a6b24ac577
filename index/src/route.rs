//! How a read is answered: the freshness check (once per command with `check_once`), repair
//! or rebuild of the projection, and the retreat to a scan when the index cannot answer (the
//! connection itself is `crate::connect`'s). A fresh projection answers while its sweep runs
//! (`Index::answer`).

use crate::answer::ScanReason;
use crate::connect::{Connected, PooledConn};
use crate::fresh::check::{self as freshness, Recorded, Report};
use crate::fresh::dirsig::{self, FolderSigs, Freshness};
use crate::fresh::source::SweepScope;
use crate::store::{self, Condition, WriterLock};
use crate::{Index, apply, duplicates, indexer, maintenance};
use pm_engine::notice::Notice;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::time::Duration;

impl Index<'_> {
    /// Answers `query` from the projection when it can, with the connection that answered
    /// (for follow-up reads of the same database: row keys are keys of that file); the error
    /// says why the read must scan instead.
    ///
    /// The query first runs speculatively, on one read snapshot, while the freshness sweep of
    /// `scope` runs on another thread; the answer is kept only when the sweep confirms the
    /// digest recorded in that same snapshot (nothing stale, no racily clean source). Otherwise
    /// the checked path runs (sweep, repair or rebuild, then the query) — so a fresh
    /// projection costs the longer of the two instead of their sum, and a stale one the same
    /// as before plus the discarded query.
    pub(crate) fn answer_on<T>(
        &self,
        scope: SweepScope,
        notices: &mut Vec<Notice>,
        query: impl Fn(&Connection) -> rusqlite::Result<T>,
    ) -> Result<(T, Box<PooledConn>), ScanReason> {
        // Item reads answer each id once; the projection holds every file, so while an id is
        // stored twice the scan (which keeps the first file) answers instead.
        let query = |conn: &Connection| match scope {
            SweepScope::History => query(conn).map(Some),
            SweepScope::Items | SweepScope::All if duplicates::any(conn)? => Ok(None),
            SweepScope::Items | SweepScope::All => query(conn).map(Some),
        };
        if let Some((answer, conn)) = self.trust_folders(scope, &query) {
            return answer.map(|a| (a, conn)).ok_or(ScanReason::DuplicateIds);
        }
        if let Some((answer, conn)) = self.speculate(scope, &query) {
            return answer.map(|a| (a, conn)).ok_or(ScanReason::DuplicateIds);
        }
        match self.prepare(scope, notices) {
            Route::Index(conn) => match in_snapshot(&conn, &query) {
                Ok(answer) => answer.map(|a| (a, conn)).ok_or(ScanReason::DuplicateIds),
                Err(e) => {
                    self.failed_query(&e, notices);
                    Err(ScanReason::QueryFailed)
                }
            },
            Route::Scan(reason) => Err(reason),
        }
    }

    /// The speculative half of [`Index::answer_on`]: `None` whenever the answer cannot be proven
    /// fresh without the checked path.
    fn speculate<T>(
        &self,
        scope: SweepScope,
        query: &dyn Fn(&Connection) -> rusqlite::Result<T>,
    ) -> Option<(T, Box<PooledConn>)> {
        if self.options.scan_only {
            return None;
        }
        let covered = *self.confirmed.lock().unwrap_or_else(|e| e.into_inner());
        if self.options.check_once && covered.is_some() {
            // An earlier check of this command may cover the scope; prepare() decides.
            return None;
        }
        let current = self.current_checked().ok()?;
        let Connected {
            conn, generation, ..
        } = self.connection(current, &mut Vec::new())?;
        let folders = self.folders_before_sweep();
        // One read transaction: the recorded digest and the answer come from one snapshot.
        conn.execute_batch("BEGIN").ok()?;
        let answer = self.speculate_in(&conn, scope, query);
        let _ = conn.execute_batch("COMMIT");
        if answer.is_some() {
            if let Some(sigs) = folders {
                dirsig::record(&self.paths, generation, scope, sigs);
            }
            self.speculated
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if self.options.check_once {
                *self.confirmed.lock().unwrap_or_else(|e| e.into_inner()) = Some(scope);
            }
        }
        answer.map(|a| (a, Box::new(conn)))
    }

    fn speculate_in<T>(
        &self,
        conn: &Connection,
        scope: SweepScope,
        query: &dyn Fn(&Connection) -> rusqlite::Result<T>,
    ) -> Option<T> {
        let recorded = Recorded::read(conn, scope).ok()?;
        let racy = freshness::racy_in_scope(conn, scope).ok()?;
        if !racy.is_empty() {
            return None;
        }
        let (tracker, schema) = (&self.tracker, self.schema);
        let listings = self.folder_listings();
        let listings = &listings;
        let (swept, answer) = std::thread::scope(|s| {
            let sweep = s.spawn(move || {
                crate::fresh::sweep::digest_sweep(tracker, schema, scope, Some(listings))
            });
            let answer = query(conn);
            (sweep.join(), answer)
        });
        let swept = swept.ok()?.ok()?;
        let answer = answer.ok()?;
        recorded.confirmed_by(&swept).then_some(answer)
    }

    /// Decides how the current read is answered: checks the projection and the freshness of
    /// the sources in `scope` (what the read depends on), repairing or rebuilding it when
    /// possible.
    fn prepare(&self, scope: SweepScope, notices: &mut Vec<Notice>) -> Route {
        if self.options.scan_only {
            return Route::Scan(ScanReason::NoIndex);
        }
        let path = self.prepare_checked(scope, notices);
        if self.options.check_once && matches!(path, Route::Index(_)) {
            let mut confirmed = self.confirmed.lock().unwrap_or_else(|e| e.into_inner());
            *confirmed = Some(confirmed.map_or(scope, |c| c.union(scope)));
        }
        path
    }

    /// [`Index::prepare`] without the `check_once` bookkeeping: skips the check when an
    /// earlier one of this facade covers `scope`.
    fn prepare_checked(&self, scope: SweepScope, notices: &mut Vec<Notice>) -> Route {
        let covered = *self.confirmed.lock().unwrap_or_else(|e| e.into_inner());
        let confirmed = self.options.check_once && covered.is_some_and(|c| c.covers(scope));
        if confirmed
            && let Ok(current) = self.current_checked()
            && let Some(connected) = self.connection(current, notices)
        {
            return Route::Index(Box::new(connected.conn));
        }
        let current = match self.current_checked() {
            Ok(current) => current,
            Err(condition) => {
                if let Err(reason) = self.try_rebuild(&condition, notices) {
                    return Route::Scan(reason);
                }
                match self.current_checked() {
                    Ok(current) => current,
                    Err(c) => {
                        notices.push(unavailable(&c));
                        return Route::Scan(ScanReason::Unavailable);
                    }
                }
            }
        };
        let Some(Connected {
            conn,
            db,
            generation,
        }) = self.connection(current, notices)
        else {
            return Route::Scan(ScanReason::Unavailable);
        };
        let folders = self.folders_before_sweep();
        let listings = self.folder_listings();
        let report =
            match freshness::check(&conn, &self.tracker, self.schema, scope, Some(&listings)) {
                Ok(report) => report,
                Err(e) => {
                    notices.push(Notice::new("index_check_failed", format!("{e:?}")));
                    return Route::Scan(ScanReason::Unavailable);
                }
            };
        if !report.unreadable_dirs.is_empty() {
            return Route::Scan(ScanReason::UnreadableFolder);
        }
        if report.is_fresh() && report.racy_unchanged == 0 {
            if let Some(sigs) = folders {
                dirsig::record(&self.paths, generation, scope, sigs);
            }
            return Route::Index(Box::new(conn));
        }
        drop(conn);
        if let Err(reason) = self.repair(&db, scope, report, notices) {
            return Route::Scan(reason);
        }
        match self.current_checked() {
            Ok(current) => {
                let Some(connected) = self.connection(current, notices) else {
                    return Route::Scan(ScanReason::Unavailable);
                };
                // The repaired (or rebuilt) projection holds the files as swept, after the
                // folders' signatures were taken (and a generation built after the repair
                // read them later still).
                if let Some(sigs) = folders {
                    dirsig::record(&self.paths, connected.generation, scope, sigs);
                }
                Route::Index(Box::new(connected.conn))
            }
            Err(c) => {
                notices.push(unavailable(&c));
                Route::Scan(ScanReason::Unavailable)
            }
        }
    }

    /// Brings a projection with `report`'s differences up to date; the error says why it
    /// cannot.
    fn repair(
        &self,
        db: &Path,
        scope: SweepScope,
        report: Report,
        notices: &mut Vec<Notice>,
    ) -> Result<(), ScanReason> {
        let wait = if report.changes.is_empty() {
            Duration::ZERO
        } else {
            self.options.lock_wait
        };
        // A generation switch while this read waits (`pm reindex`, another read's rebuild)
        // removes `db`; waiting on would queue behind the next writer for a file that is gone.
        let still_current =
            || store::current_db(&self.paths).is_ok_and(|(current, _)| current == db);
        let lock = match WriterLock::acquire_while(&self.paths, wait, still_current) {
            Ok(Some(lock)) => lock,
            Ok(None) if report.changes.is_empty() => return Ok(()),
            Ok(None) => {
                // A new generation with nothing to repair answers, as `db` would have.
                if let Some((_, report)) = self.switched_from(db, scope)
                    && report.unreadable_dirs.is_empty()
                    && report.changes.is_empty()
                {
                    return Ok(());
                }
                notices.push(Notice::new(
                    "index_busy",
                    "another pm process is writing the index; answered from a scan",
                ));
                return Err(ScanReason::Busy);
            }
            Err(e) => {
                notices.push(Notice::new("index_unavailable", e.to_string()));
                return Err(ScanReason::Unavailable);
            }
        };
        let (db, report) = match self.switched_from(db, scope) {
            Some((_, report)) if !report.unreadable_dirs.is_empty() => {
                return Err(ScanReason::UnreadableFolder);
            }
            Some((_, report)) if report.is_fresh() && report.racy_unchanged == 0 => return Ok(()),
            Some((db, report)) => (db, report),
            None => (db.to_path_buf(), report),
        };
        let many = report.changes.len() > 64 && report.changes.len() * 4 > report.source_count;
        if many {
            return self.build_locked(&lock, notices);
        }
        let changes = if report.changes.is_empty() {
            maintenance::settleable(self, &db, &lock)
        } else {
            report.changes
        };
        if changes.is_empty() {
            return Ok(());
        }
        let applied = store::open_write(&db)
            .map_err(|e| e.to_string())
            .and_then(|mut conn| {
                apply::apply_changes(&mut conn, &lock, self.schema, changes)
                    .map_err(|e| e.to_string())
            });
        match applied {
            Ok(_) => Ok(()),
            Err(e) => {
                notices.push(Notice::new("index_apply_failed", e));
                self.build_locked(&lock, notices)
            }
        }
    }

    /// Checks the generation that replaced `db`, if one did.
    ///
    /// A read that found `db` stale waits for the writer lock; meanwhile `pm reindex` (or
    /// another read's rebuild) may switch `CURRENT` and remove `db`. The new generation's build
    /// may have read a file before this read's sweep saw it change, so it is checked like any
    /// other: with the lock held, it is then repaired instead of rebuilt; without it (the read
    /// stopped waiting at the switch), it answers only when nothing needs repair. `None` when
    /// `db` is still current (or the new one cannot be opened: applying to `db` then fails and
    /// the read rebuilds, as before).
    fn switched_from(&self, db: &Path, scope: SweepScope) -> Option<(PathBuf, Report)> {
        let current = self.current_checked().ok()?;
        if current.0 == db {
            return None;
        }
        let connected = self.connection(current, &mut Vec::new())?;
        let listings = self.folder_listings();
        let report = freshness::check(
            &connected.conn,
            &self.tracker,
            self.schema,
            scope,
            Some(&listings),
        )
        .ok()?;
        Some((connected.db, report))
    }

    fn try_rebuild(
        &self,
        condition: &Condition,
        notices: &mut Vec<Notice>,
    ) -> Result<(), ScanReason> {
        if matches!(condition, Condition::Unsafe { path } if *path == self.paths.runtime) {
            notices.push(unavailable(condition));
            return Err(ScanReason::Unavailable);
        }
        match WriterLock::acquire(&self.paths, self.options.lock_wait) {
            Ok(Some(lock)) => {
                // Another writer may have rebuilt while we waited.
                if store::probe(&self.paths, &self.fingerprint).is_ok() {
                    return Ok(());
                }
                self.build_locked(&lock, notices)
            }
            Ok(None) => {
                notices.push(unavailable(condition));
                Err(ScanReason::Busy)
            }
            Err(e) => {
                notices.push(unavailable(condition));
                notices.push(Notice::new("index_unavailable", e.to_string()));
                Err(ScanReason::Unavailable)
            }
        }
    }

    fn build_locked(&self, lock: &WriterLock, notices: &mut Vec<Notice>) -> Result<(), ScanReason> {
        match indexer::build(&self.tracker, self.schema, lock, self.options.progress) {
            Ok(_) => {
                self.reset_pool();
                Ok(())
            }
            Err(e) => {
                notices.push(Notice::new("index_build_failed", e.to_string()));
                Err(ScanReason::Unavailable)
            }
        }
    }

    /// With [`Freshness::Directories`], answers without a sweep when the folders' signatures
    /// equal those recorded after a full sweep of `scope` (or a wider one) confirmed the current
    /// database; `None` sends the read down the usual paths.
    fn trust_folders<T>(
        &self,
        scope: SweepScope,
        query: &dyn Fn(&Connection) -> rusqlite::Result<T>,
    ) -> Option<(T, Box<PooledConn>)> {
        if self.options.scan_only || self.options.freshness != Freshness::Directories {
            return None;
        }
        let (db, generation) = self.current_checked().ok()?;
        let confirmation = dirsig::recorded(&self.paths)?;
        let now = dirsig::take(&self.tracker, self.schema, &self.paths, false)?;
        if !confirmation.covers(generation, scope, now.digest) {
            return None;
        }
        let connected = self.connection((db, generation), &mut Vec::new())?;
        if connected.generation != generation {
            // The folders confirmed the generation that was switched away, not this one.
            return None;
        }
        let conn = connected.conn;
        let answer = in_snapshot(&conn, query).ok()?;
        self.trusted
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some((answer, Box::new(conn)))
    }

    /// With [`Freshness::Directories`], the folders' signatures taken before a sweep, to be
    /// recorded if the sweep confirms the projection.
    fn folders_before_sweep(&self) -> Option<FolderSigs> {
        (self.options.freshness == Freshness::Directories)
            .then(|| dirsig::take(&self.tracker, self.schema, &self.paths, true))
            .flatten()
    }

    /// A query failed on a projection that passed its checks: answer from a scan and retire
    /// the projection so the next read rebuilds it.
    fn failed_query(&self, err: &rusqlite::Error, notices: &mut Vec<Notice>) {
        notices.push(Notice::new(
            "index_query_failed",
            format!("{err}; answered from a scan, the index will be rebuilt"),
        ));
        self.reset_pool();
        if let Ok(Some(_lock)) = WriterLock::acquire(&self.paths, Duration::ZERO) {
            let _ = pm_engine::atomic::remove(&self.paths.current);
        }
    }
}

/// How the current read is answered: a connection to a checked projection, or a scan and why.
enum Route {
    Index(Box<PooledConn>),
    Scan(ScanReason),
}

/// Runs `query` in one read transaction: a query of several statements (search reads texts,
/// then the filter columns, joined by row key) must not see another process's apply commit in
/// between, since an apply gives re-projected items new row keys.
fn in_snapshot<T>(
    conn: &Connection,
    query: &dyn Fn(&Connection) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    let began = conn.is_autocommit();
    if began {
        conn.execute_batch("BEGIN")?;
    }
    let answer = query(conn);
    if began {
        let _ = conn.execute_batch("COMMIT");
    }
    answer
}

fn unavailable(condition: &Condition) -> Notice {
    Notice::new(
        "index_unavailable",
        format!(
            "index {}: {condition:?}; answered from a scan",
            condition.state()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_sees_one_snapshot_whatever_commits_meanwhile()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("db.sqlite");
        let writer = Connection::open(&path)?;
        writer.execute_batch(
            "PRAGMA journal_mode=WAL; CREATE TABLE t (k INTEGER PRIMARY KEY); INSERT INTO t VALUES (1);",
        )?;
        let reader = store::open_read(&path)?;
        let count =
            |c: &Connection| c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0));
        let query = |c: &Connection| -> rusqlite::Result<(i64, i64)> {
            let before = count(c)?;
            writer.execute("INSERT INTO t VALUES (2)", [])?;
            Ok((before, count(c)?))
        };
        assert_eq!(in_snapshot(&reader, &query)?, (1, 1));
        assert!(reader.is_autocommit());
        // Outside a snapshot the second statement would have seen the commit.
        assert_eq!(count(&reader)?, 2);
        Ok(())
    }
}
