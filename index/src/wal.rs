//! Keeping the write-ahead log short: every process's first connection to a database rebuilds
//! its WAL index by reading the whole log, so a log left at tens of megabytes (a settle or
//! repair of many rows) would cost every later one-shot read that much I/O.

use crate::store::BUSY_TIMEOUT;
use rusqlite::Connection;
use std::time::Duration;

/// A write-ahead log larger than this is folded back into the database after a write.
pub const WAL_TRIM_BYTES: u64 = 1 << 20;

/// Folds a large write-ahead log back into the database file and empties it, after a write on
/// `conn` committed. Skipped while the log is small; never waits for readers (a checkpoint
/// they keep busy is retried after the next write).
pub fn trim_wal(conn: &Connection) {
    let Some(db) = conn.path() else {
        return;
    };
    let wal = format!("{db}-wal");
    let large = std::fs::metadata(&wal).is_ok_and(|m| m.len() > WAL_TRIM_BYTES);
    if large && conn.busy_timeout(Duration::ZERO).is_ok() {
        let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        let _ = conn.busy_timeout(BUSY_TIMEOUT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wal_len(db: &std::path::Path) -> u64 {
        std::fs::metadata(format!("{}-wal", db.display())).map_or(0, |m| m.len())
    }

    #[test]
    fn a_large_log_is_emptied_and_a_small_one_kept() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let db = dir.path().join("t.sqlite");
        let conn = Connection::open(&db)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        conn.execute_batch("CREATE TABLE t (v BLOB); INSERT INTO t VALUES (zeroblob(1000));")?;
        trim_wal(&conn);
        let small = wal_len(&db);
        assert!(small > 0 && small <= WAL_TRIM_BYTES, "{small}");
        conn.execute(
            "INSERT INTO t VALUES (zeroblob(?1))",
            [i64::try_from(2 * WAL_TRIM_BYTES)?],
        )?;
        assert!(wal_len(&db) > WAL_TRIM_BYTES);
        trim_wal(&conn);
        assert_eq!(wal_len(&db), 0);
        assert_eq!(
            conn.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))?,
            2
        );
        Ok(())
    }
}
