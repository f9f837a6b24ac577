//! The read connection of a facade: the database `CURRENT` names (its `meta` checked once per
//! file) and a pooled connection to it. A generation switch can remove the chosen file before
//! the connection opens; the read then reopens on the generation `CURRENT` names now, or
//! retreats to the scan, after a bounded wait ([`store::checkout`]).

use crate::Index;
use crate::store::{self, Condition};
use pm_engine::notice::Notice;
use std::path::{Path, PathBuf};

/// A read connection: from the facade's pool, or the one [`store::probe`] opened to check the
/// file (a one-shot read then opens no second connection, parses the schema once and starts no
/// pool threads).
pub(crate) enum PooledConn {
    /// Checked out of the pool.
    Pooled(r2d2::PooledConnection<r2d2_sqlite::SqliteConnectionManager>),
    /// The probe's own connection.
    Probed(rusqlite::Connection),
}

impl std::ops::Deref for PooledConn {
    type Target = rusqlite::Connection;

    fn deref(&self) -> &rusqlite::Connection {
        match self {
            PooledConn::Pooled(conn) => conn,
            PooledConn::Probed(conn) => conn,
        }
    }
}

/// A database file `CURRENT` named, and its generation.
pub(crate) type Current = (PathBuf, u64);

/// A read connection and the database it reads (after a generation switch, not necessarily
/// the one the read asked for).
pub(crate) struct Connected {
    /// The connection.
    pub(crate) conn: PooledConn,
    /// Its database file.
    pub(crate) db: PathBuf,
    /// That file's generation.
    pub(crate) generation: u64,
}

impl Index<'_> {
    /// Returns a read connection to `current`, or to the generation that replaced it.
    ///
    /// `pm reindex`, or a rebuild by another read, switches `CURRENT` and then removes the old
    /// generation: a read that chose the old file just before has nothing left to open. The
    /// checkout ([`store::checkout`]) gives up once the file is gone, where r2d2 alone would
    /// retry the open for 30 s; `CURRENT` is read once more, and a new generation it names gets
    /// one attempt. `None`, with an `index_unavailable` notice, sends the read to the scan.
    pub(crate) fn connection(
        &self,
        current: Current,
        notices: &mut Vec<Notice>,
    ) -> Option<Connected> {
        let first = match self.pooled(&current.0) {
            Ok(conn) => return Some(Connected::new(conn, current)),
            Err(e) => e,
        };
        let next = match self.current_checked() {
            Ok(next) if next != current => next,
            Ok(_) => {
                notices.push(no_connection(&format!("{}: {first}", name(&current.0))));
                return None;
            }
            Err(condition) => {
                notices.push(no_connection(&format!(
                    "{}: {first}; then index {}: {condition:?}",
                    name(&current.0),
                    condition.state()
                )));
                return None;
            }
        };
        match self.pooled(&next.0) {
            Ok(conn) => Some(Connected::new(conn, next)),
            Err(e) => {
                notices.push(no_connection(&format!(
                    "{}: {first}; then {} (after a generation switch): {e}",
                    name(&current.0),
                    name(&next.0)
                )));
                None
            }
        }
    }

    /// Checks out a connection to `db` from the facade's pool, replacing a pool of another
    /// file. The pool of a file that is gone is dropped, which also ends r2d2's background
    /// retries of the open.
    fn pooled(&self, db: &Path) -> Result<PooledConn, String> {
        let spare = self.spare.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((path, conn)) = spare
            && path == db
        {
            return Ok(PooledConn::Probed(conn));
        }
        let mut guard = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        let pool = match guard.as_ref() {
            Some((path, pool)) if path == db => pool.clone(),
            _ => {
                let pool =
                    store::read_pool(db, self.options.pool_size).map_err(|e| e.to_string())?;
                *guard = Some((db.to_path_buf(), pool.clone()));
                pool
            }
        };
        drop(guard);
        store::checkout(&pool, db)
            .map(PooledConn::Pooled)
            .map_err(|e| {
                let mut guard = self.pool.lock().unwrap_or_else(|p| p.into_inner());
                let gone = !std::fs::symlink_metadata(db).is_ok_and(|m| m.is_file());
                if gone && guard.as_ref().is_some_and(|(path, _)| path == db) {
                    *guard = None;
                }
                e.to_string()
            })
    }

    /// The database `CURRENT` names, checked by [`store::probe`] once per file: a database is
    /// never rewritten under another projection version or fingerprint (a rebuild writes a new
    /// generation file), so its check stands for as long as `CURRENT` names it, and a read
    /// opens no connection of its own to repeat it.
    ///
    /// A file removed by a generation switch between reading `CURRENT` and opening the file
    /// reads as missing, unopenable or empty; `CURRENT` is then read once more.
    pub(crate) fn current_checked(&self) -> Result<Current, Condition> {
        match self.check_current() {
            Err(Condition::Missing | Condition::Unreadable { .. } | Condition::Corrupt { .. }) => {
                self.check_current()
            }
            checked => checked,
        }
    }

    fn check_current(&self) -> Result<Current, Condition> {
        let current = store::current_db(&self.paths)?;
        let mut checked = self.checked.lock().unwrap_or_else(|p| p.into_inner());
        if checked.as_ref() == Some(&current) {
            return Ok(current);
        }
        let (conn, generation, db) = store::probe(&self.paths, &self.fingerprint)?;
        *checked = Some((db.clone(), generation));
        *self.spare.lock().unwrap_or_else(|p| p.into_inner()) = Some((db.clone(), conn));
        Ok((db, generation))
    }

    /// Forgets the pool, the checked database and the confirmed scope (after a rebuild).
    pub(crate) fn reset_pool(&self) {
        *self.pool.lock().unwrap_or_else(|p| p.into_inner()) = None;
        *self.checked.lock().unwrap_or_else(|p| p.into_inner()) = None;
        *self.spare.lock().unwrap_or_else(|p| p.into_inner()) = None;
        *self.confirmed.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

impl Connected {
    fn new(conn: PooledConn, (db, generation): Current) -> Connected {
        Connected {
            conn,
            db,
            generation,
        }
    }
}

/// The file name of a database, for notices.
fn name(db: &Path) -> String {
    db.file_name()
        .map_or_else(|| db.display().to_string(), |n| n.to_string_lossy().into())
}

fn no_connection(detail: &str) -> Notice {
    Notice::new(
        "index_unavailable",
        format!("no read connection ({detail}); answered from a scan"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IndexOptions;
    use pm_engine::item::codec::serialize_item;
    use pm_engine::item::{ItemDoc, ItemFormat};
    use pm_engine::schema::RuntimeSchema;
    use pm_engine::tracker::Tracker;
    use std::time::{Duration, Instant};

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    /// A stall bound: r2d2's default checkout wait was 30 s.
    const BOUND: Duration = Duration::from_secs(1);

    /// A tracker with one item and a built projection (generation 1).
    fn tracker() -> Result<(tempfile::TempDir, Tracker), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let tracker = Tracker::at(dir.path().join(".agents/pm"));
        let metadata = serde_json::json!({
            "id": "pm-a", "title": "A", "description": "", "type": "Task", "status": "open",
            "priority": 1, "tags": [], "created_at": "2026-01-01T00:00:00.000Z",
            "updated_at": "2026-01-01T00:00:00.000Z"
        });
        let doc = ItemDoc {
            metadata: metadata.as_object().cloned().ok_or("object")?,
            body: String::new(),
        };
        let path = tracker.root().join("tasks/pm-a.toon");
        std::fs::create_dir_all(path.parent().ok_or("parent")?)?;
        pm_engine::atomic::write(&path, &serialize_item(&doc, ItemFormat::Toon)?)?;
        Ok((dir, tracker))
    }

    fn current(tracker: &Tracker) -> Result<Current, Box<dyn std::error::Error>> {
        store::current_db(&store::IndexPaths::of(tracker)).map_err(|c| format!("{c:?}").into())
    }

    #[test]
    fn a_generation_removed_before_its_connection_reopens_on_the_new_one() -> TestResult {
        let (_dir, tracker) = tracker()?;
        let schema = RuntimeSchema::builtin();
        let index = Index::open(&tracker, &schema, IndexOptions::default());
        index.rebuild(Duration::ZERO)?;
        let chosen = current(&tracker)?;
        // Another process's `pm reindex`: switches `CURRENT`, removes the chosen file.
        Index::open(&tracker, &schema, IndexOptions::default()).rebuild(Duration::ZERO)?;
        assert!(!chosen.0.exists());

        let mut notices = Vec::new();
        let start = Instant::now();
        let connected = index.connection(chosen.clone(), &mut notices);
        let waited = start.elapsed();
        let connected = connected.ok_or("no connection")?;
        assert!(waited < BOUND, "waited {waited:?}");
        assert_eq!((connected.db, connected.generation), current(&tracker)?);
        assert_eq!(connected.generation, chosen.1 + 1);
        let items: i64 = connected
            .conn
            .query_row("SELECT count(*) FROM items", [], |r| r.get(0))?;
        assert_eq!(items, 1);
        assert!(notices.is_empty(), "{notices:?}");
        Ok(())
    }

    #[test]
    fn a_removed_generation_without_a_successor_falls_back_to_the_scan_quickly() -> TestResult {
        let (_dir, tracker) = tracker()?;
        let schema = RuntimeSchema::builtin();
        let index = Index::open(&tracker, &schema, IndexOptions::default());
        index.rebuild(Duration::ZERO)?;
        let chosen = current(&tracker)?;
        std::fs::remove_file(&chosen.0)?;

        let mut notices = Vec::new();
        let start = Instant::now();
        let connected = index.connection(chosen, &mut notices);
        let waited = start.elapsed();
        assert!(connected.is_none());
        assert!(waited < BOUND, "waited {waited:?}");
        let codes: Vec<&str> = notices.iter().map(|n| n.code.as_str()).collect();
        assert_eq!(codes, ["index_unavailable"]);
        Ok(())
    }

    #[test]
    fn a_facade_whose_pool_holds_a_removed_generation_reads_the_new_one() -> TestResult {
        use pm_engine::query::{Page, Query, Sort, Source};
        let (_dir, tracker) = tracker()?;
        let schema = RuntimeSchema::builtin();
        let index = Index::open(&tracker, &schema, IndexOptions::default());
        let list = || index.list(&Query::all(), &Sort::default(), &Page::all());
        assert_eq!(list()?.source(), Source::Index);
        let before = current(&tracker)?;
        Index::open(&tracker, &schema, IndexOptions::default()).rebuild(Duration::ZERO)?;
        assert!(!before.0.exists());

        let start = Instant::now();
        let listing = list()?;
        assert!(start.elapsed() < BOUND, "waited {:?}", start.elapsed());
        assert_eq!(listing.source(), Source::Index);
        assert_eq!(listing.items.len(), 1);
        let pool = index.pool.lock().unwrap_or_else(|p| p.into_inner());
        let pooled = pool.as_ref().map(|(db, _)| db.clone());
        assert_eq!(pooled, Some(current(&tracker)?.0));
        Ok(())
    }
}
