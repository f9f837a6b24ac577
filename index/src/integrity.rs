//! `pm health`'s integrity check of the projection database (`PRAGMA quick_check`, which also
//! runs FTS5's own check), remembered per state of the database files: the check reads the
//! whole database, a tenth of a second per 20,000 items, so a run that finds the files as the
//! last passing check left them does not read them again.
//!
//! The state is the stat signature (size, modification and status-change times, inode) of the
//! database file and the size, modification time and inode of its write-ahead log (whose
//! status-change time every reader moves). Every SQLite write changes one of them, and so does
//! any outside write to the database file (status-change times cannot be set back). A state is only remembered once
//! it is older than [`SETTLE_NS`], so a later write within the same clock tick cannot hide
//! behind it. What the memo cannot see is damage that bypasses the file system (a failing disk
//! flipping bits in place); `pm reindex --check` compares the database with the files row by
//! row whatever the memo says, and `pm gc --scope index` forgets it.

use crate::fresh::source::Sig;
use crate::store::IndexPaths;
use rusqlite::Connection;
use std::path::Path;

/// The memo file in `runtime/index/`.
pub const CHECKED_FILE: &str = "checked";

/// How long (ns) a database state must be left alone before a passing check of it is kept.
const SETTLE_NS: i64 = 2_000_000_000;

/// Runs `PRAGMA quick_check` on `conn` (the database `db`) unless the memo says the database
/// files are as the last passing check left them; remembers a passing check of settled files.
///
/// # Errors
/// What the check found, or why it could not run.
pub fn quick_check(conn: &Connection, paths: &IndexPaths, db: &Path) -> Result<(), String> {
    let memo = paths.dir.join(CHECKED_FILE);
    // Taken before the check: a write during it leaves a state the memo does not match.
    let state = State::of(db);
    if let Some(state) = &state
        && std::fs::read_to_string(&memo).is_ok_and(|kept| kept == state.line)
    {
        return Ok(());
    }
    let found: String = conn
        .query_row("PRAGMA quick_check", [], |r| r.get(0))
        .map_err(|e| e.to_string())?;
    if found != "ok" {
        // A failed check is never remembered; drop a passing one of an earlier state.
        let _ = std::fs::remove_file(&memo);
        return Err(found);
    }
    if let Some(state) = state
        && state.settled(&paths.dir)
    {
        // Best effort: a memo that cannot be written only means the next run checks again.
        let _ = pm_engine::atomic::write(&memo, state.line.as_bytes());
    }
    Ok(())
}

/// The signatures of a database file and its write-ahead log.
struct State {
    /// One line: the file name, then each file's signature (`-` for a missing or empty log).
    line: String,
    /// When either file last changed.
    changed_ns: i64,
}

impl State {
    fn of(db: &Path) -> Option<State> {
        let main = Sig::of(&std::fs::symlink_metadata(db).ok()?);
        let mut wal_path = db.as_os_str().to_owned();
        wal_path.push("-wal");
        // The log's status-change time moves whenever a reader opens the database, so the log
        // is known by its size, modification time and inode (every write moves one of them);
        // an empty log holds nothing.
        let wal = std::fs::symlink_metadata(&wal_path)
            .ok()
            .map(|m| Sig::of(&m))
            .filter(|w| w.size > 0);
        let name = db.file_name()?.to_string_lossy();
        let wal_text = wal.map_or_else(
            || "-".to_string(),
            |w| format!("{} {} {}", w.size, w.mtime_ns, w.inode),
        );
        Some(State {
            line: format!(
                "{name} {} {} {} {} | {wal_text}\n",
                main.size, main.mtime_ns, main.ctime_ns, main.inode
            ),
            changed_ns: main.ctime_ns.max(wal.map_or(i64::MIN, |w| w.mtime_ns)),
        })
    }

    /// Whether the files were left alone long enough, by the file system's own clock (the
    /// one their timestamps come from); not when that clock cannot be read.
    fn settled(&self, dir: &Path) -> bool {
        crate::fresh::dirsig::filesystem_now(dir)
            .is_some_and(|now_ns| now_ns.saturating_sub(self.changed_ns) > SETTLE_NS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pm_engine::tracker::Tracker;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    /// A tracker's projection paths (kept alive by the temp dir) and a database of a few hundred
    /// rows with an index in its `runtime/index/`.
    fn database()
    -> Result<(tempfile::TempDir, IndexPaths, std::path::PathBuf), Box<dyn std::error::Error>> {
        let root = tempfile::tempdir()?;
        let paths = IndexPaths::of(&Tracker::at(root.path().join(".agents/pm")));
        std::fs::create_dir_all(&paths.dir)?;
        let db = paths.dir.join("index-000001.sqlite");
        let conn = Connection::open(&db)?;
        conn.execute_batch("PRAGMA page_size = 512; CREATE TABLE t (x TEXT);")?;
        let tx = conn.unchecked_transaction()?;
        for i in 0..400 {
            tx.execute(
                "INSERT INTO t VALUES (?1)",
                [format!("row {i} {}", "y".repeat(40))],
            )?;
        }
        tx.commit()?;
        conn.execute_batch("CREATE INDEX t_x ON t (x);")?;
        Ok((root, paths, db))
    }

    /// Scrambles the pages past the schema: the b-trees no longer hold together.
    fn damage(db: &Path) -> TestResult {
        let mut bytes = std::fs::read(db)?;
        let end = bytes.len() - 512;
        for b in &mut bytes[4 * 512..end] {
            *b = b.wrapping_mul(31).wrapping_add(7);
        }
        pm_engine::atomic::write(db, &bytes)?;
        Ok(())
    }

    #[test]
    fn a_fresh_passing_check_is_not_remembered() -> TestResult {
        let (_root, paths, db) = database()?;
        let conn = Connection::open(&db)?;
        assert_eq!(quick_check(&conn, &paths, &db), Ok(()));
        // Just written: a later write in the same clock tick could keep this state.
        assert!(!paths.dir.join(CHECKED_FILE).exists());
        Ok(())
    }

    #[test]
    fn the_memo_holds_only_for_the_state_it_names() -> TestResult {
        let (_root, paths, db) = database()?;
        damage(&db)?;
        let memo = paths.dir.join(CHECKED_FILE);
        // A memo naming the damaged files' very state is trusted: the check does not run.
        let state = State::of(&db).ok_or("no state")?;
        pm_engine::atomic::write(&memo, state.line.as_bytes())?;
        let conn = Connection::open(&db)?;
        assert_eq!(quick_check(&conn, &paths, &db), Ok(()));
        // The same bytes put in place again (a new file by rename): another state, so the check
        // runs, fails, and the memo goes.
        drop(conn);
        let bytes = std::fs::read(&db)?;
        pm_engine::atomic::write(&db, &bytes)?;
        assert_ne!(State::of(&db).ok_or("no state")?.line, state.line);
        let conn = Connection::open(&db)?;
        assert!(quick_check(&conn, &paths, &db).is_err());
        assert!(!memo.exists());
        Ok(())
    }
}
