//! How a read is answered: the freshness check (once per command with `check_once`), repair
//! or rebuild of the projection, the pooled read connection, and the retreat to a scan when the
//! index cannot answer.

use crate::freshness::{self, Report};
use crate::source::SweepScope;
use crate::store::{self, Condition, WriterLock};
use crate::{Index, Path2, apply, indexer, maintenance};
use pm_engine::notice::Notice;
use std::path::Path;
use std::time::Duration;

impl Index<'_> {
    /// Decides how the current read is answered: checks the projection and the freshness of
    /// the sources in `scope` (what the read depends on), repairing or rebuilding it when
    /// possible.
    pub(crate) fn prepare(&self, scope: SweepScope, notices: &mut Vec<Notice>) -> Path2 {
        if self.options.scan_only {
            return Path2::Scan;
        }
        let path = self.prepare_checked(scope, notices);
        if self.options.check_once && matches!(path, Path2::Index(_)) {
            let mut confirmed = self.confirmed.lock().unwrap_or_else(|e| e.into_inner());
            if *confirmed != Some(SweepScope::All) {
                *confirmed = Some(scope);
            }
        }
        path
    }

    /// [`Index::prepare`] without the `check_once` bookkeeping: skips the check when an
    /// earlier one of this facade covers `scope`.
    fn prepare_checked(&self, scope: SweepScope, notices: &mut Vec<Notice>) -> Path2 {
        let covered = *self.confirmed.lock().unwrap_or_else(|e| e.into_inner());
        let confirmed = self.options.check_once
            && matches!(
                (covered, scope),
                (Some(SweepScope::All), _) | (Some(SweepScope::Items), SweepScope::Items)
            );
        if confirmed
            && let Ok((_, _, db)) = store::probe(&self.paths, &self.fingerprint)
            && let Some(conn) = self.connection(&db, notices)
        {
            return Path2::Index(Box::new(conn));
        }
        let db = match store::probe(&self.paths, &self.fingerprint) {
            Ok((_, _, db)) => db,
            Err(condition) => {
                if !self.try_rebuild(&condition, notices) {
                    return Path2::Scan;
                }
                match store::probe(&self.paths, &self.fingerprint) {
                    Ok((_, _, db)) => db,
                    Err(c) => {
                        notices.push(unavailable(&c));
                        return Path2::Scan;
                    }
                }
            }
        };
        let Some(conn) = self.connection(&db, notices) else {
            return Path2::Scan;
        };
        let report = match freshness::check(&conn, &self.tracker, self.schema, scope) {
            Ok(report) => report,
            Err(e) => {
                notices.push(Notice::new("index_check_failed", format!("{e:?}")));
                return Path2::Scan;
            }
        };
        if !report.unreadable_dirs.is_empty() {
            return Path2::Scan;
        }
        if report.is_fresh() && report.racy_unchanged == 0 {
            return Path2::Index(Box::new(conn));
        }
        drop(conn);
        if !self.repair(&db, report, notices) {
            return Path2::Scan;
        }
        match store::probe(&self.paths, &self.fingerprint) {
            Ok((_, _, db)) => self
                .connection(&db, notices)
                .map_or(Path2::Scan, |c| Path2::Index(Box::new(c))),
            Err(c) => {
                notices.push(unavailable(&c));
                Path2::Scan
            }
        }
    }

    /// Brings a projection with `report`'s differences up to date; false when it cannot.
    fn repair(&self, db: &Path, report: Report, notices: &mut Vec<Notice>) -> bool {
        let wait = if report.changes.is_empty() {
            Duration::ZERO
        } else {
            self.options.lock_wait
        };
        let lock = match WriterLock::acquire(&self.paths, wait) {
            Ok(Some(lock)) => lock,
            Ok(None) if report.changes.is_empty() => return true,
            Ok(None) => {
                notices.push(Notice::new(
                    "index_busy",
                    "another pm process is writing the index; answered from a scan",
                ));
                return false;
            }
            Err(e) => {
                notices.push(Notice::new("index_unavailable", e.to_string()));
                return false;
            }
        };
        let many = report.changes.len() > 64 && report.changes.len() * 4 > report.source_count;
        if many {
            return self.build_locked(&lock, notices);
        }
        let changes = if report.changes.is_empty() {
            maintenance::settleable(self, db, &lock)
        } else {
            report.changes
        };
        if changes.is_empty() {
            return true;
        }
        let applied = store::open_write(db)
            .map_err(|e| e.to_string())
            .and_then(|mut conn| {
                apply::apply_changes(&mut conn, &lock, self.schema, changes)
                    .map_err(|e| e.to_string())
            });
        match applied {
            Ok(_) => true,
            Err(e) => {
                notices.push(Notice::new("index_apply_failed", e));
                self.build_locked(&lock, notices)
            }
        }
    }

    fn try_rebuild(&self, condition: &Condition, notices: &mut Vec<Notice>) -> bool {
        if matches!(condition, Condition::Unsafe { path } if *path == self.paths.runtime) {
            notices.push(unavailable(condition));
            return false;
        }
        match WriterLock::acquire(&self.paths, self.options.lock_wait) {
            Ok(Some(lock)) => {
                // Another writer may have rebuilt while we waited.
                if store::probe(&self.paths, &self.fingerprint).is_ok() {
                    return true;
                }
                self.build_locked(&lock, notices)
            }
            Ok(None) => {
                notices.push(unavailable(condition));
                false
            }
            Err(e) => {
                notices.push(unavailable(condition));
                notices.push(Notice::new("index_unavailable", e.to_string()));
                false
            }
        }
    }

    fn build_locked(&self, lock: &WriterLock, notices: &mut Vec<Notice>) -> bool {
        match indexer::build(&self.tracker, self.schema, lock, self.options.progress) {
            Ok(_) => {
                self.reset_pool();
                true
            }
            Err(e) => {
                notices.push(Notice::new("index_build_failed", e.to_string()));
                false
            }
        }
    }

    fn connection(
        &self,
        db: &Path,
        notices: &mut Vec<Notice>,
    ) -> Option<r2d2::PooledConnection<r2d2_sqlite::SqliteConnectionManager>> {
        let mut guard = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        if guard.as_ref().is_none_or(|(path, _)| path != db) {
            match store::read_pool(db, self.options.pool_size) {
                Ok(pool) => *guard = Some((db.to_path_buf(), pool)),
                Err(e) => {
                    notices.push(Notice::new("index_unavailable", e.to_string()));
                    return None;
                }
            }
        }
        let pool = guard.as_ref().map(|(_, p)| p.clone())?;
        drop(guard);
        match pool.get() {
            Ok(conn) => Some(conn),
            Err(e) => {
                notices.push(Notice::new("index_unavailable", e.to_string()));
                None
            }
        }
    }

    pub(crate) fn reset_pool(&self) {
        *self.pool.lock().unwrap_or_else(|p| p.into_inner()) = None;
        *self.confirmed.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// A query failed on a projection that passed its checks: answer from a scan and retire
    /// the projection so the next read rebuilds it.
    pub(crate) fn failed_query(&self, err: &rusqlite::Error, notices: &mut Vec<Notice>) {
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

fn unavailable(condition: &Condition) -> Notice {
    Notice::new(
        "index_unavailable",
        format!(
            "index {}: {condition:?}; answered from a scan",
            condition.state()
        ),
    )
}
