//! The projection's `duplicate_ids` table: the ids more than one item row holds. Item reads
//! consult it first (one lookup) and leave the answer to the scan, which answers each id once,
//! while it holds a row. A build fills it from scratch; an upkeep refreshes the ids it touched.

use rusqlite::{Connection, OptionalExtension, params};

/// Returns true when some id is held by more than one item row.
///
/// # Errors
/// SQLite failures.
pub fn any(conn: &Connection) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM duplicate_ids)")?
        .query_row([], |r| r.get(0))
}

/// Refills the table from the item rows (after a build).
///
/// # Errors
/// SQLite failures.
pub fn rebuild(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "DELETE FROM duplicate_ids;
         INSERT INTO duplicate_ids SELECT id FROM items GROUP BY id HAVING COUNT(*) > 1;",
    )
}

/// Returns the id of the item row at `path`, if there is one.
///
/// # Errors
/// SQLite failures.
pub fn id_at(conn: &Connection, path: &str) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached("SELECT id FROM items WHERE path = ?1")?
        .query_row([path], |r| r.get(0))
        .optional()
}

/// Re-decides each of `ids` from the item rows as they are now.
///
/// # Errors
/// SQLite failures.
pub fn refresh<'a>(
    conn: &Connection,
    ids: impl IntoIterator<Item = &'a str>,
) -> rusqlite::Result<()> {
    let mut count =
        conn.prepare_cached("SELECT COUNT(*) FROM (SELECT 1 FROM items WHERE id = ?1 LIMIT 2)")?;
    let mut insert = conn.prepare_cached("INSERT OR IGNORE INTO duplicate_ids (id) VALUES (?1)")?;
    let mut delete = conn.prepare_cached("DELETE FROM duplicate_ids WHERE id = ?1")?;
    for id in ids {
        let rows: i64 = count.query_row(params![id], |r| r.get(0))?;
        if rows > 1 {
            insert.execute(params![id])?;
        } else {
            delete.execute(params![id])?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn projection() -> Result<Connection, Box<dyn std::error::Error>> {
        let mut conn = Connection::open_in_memory()?;
        crate::store::register_functions(&conn)?;
        crate::schema::apply(&mut conn)?;
        Ok(conn)
    }

    fn put(conn: &Connection, path: &str, id: &str) -> rusqlite::Result<usize> {
        conn.execute(
            "INSERT INTO items (path, format, id, title, type, status, status_class, terminal,
                 priority, created_at, updated_at, has_confidence, has_estimate,
                 has_acceptance_criteria, has_resolution, has_reviewer, has_body,
                 has_linked_command, n_comments, n_notes, n_learnings, n_files, n_docs, n_tests,
                 n_test_runs, n_deps, light_json)
             VALUES (?1, 'toon', ?2, 't', 'Task', 'open', 'open', 0, 2, 'c', 'u',
                 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '{}')",
            params![path, id],
        )
    }

    #[test]
    fn rebuild_and_refresh_follow_the_item_rows() -> Result<(), Box<dyn std::error::Error>> {
        let conn = projection()?;
        put(&conn, "tasks/pm-a.toon", "pm-a")?;
        put(&conn, "tasks/pm-b.toon", "pm-b")?;
        rebuild(&conn)?;
        assert!(!any(&conn)?);
        put(&conn, "issues/pm-a.toon", "pm-a")?;
        assert!(!any(&conn)?, "only a build or a refresh decides");
        refresh(&conn, ["pm-a", "pm-b"])?;
        assert!(any(&conn)?);
        assert_eq!(id_at(&conn, "issues/pm-a.toon")?.as_deref(), Some("pm-a"));
        conn.execute("DELETE FROM items WHERE path = 'tasks/pm-a.toon'", [])?;
        refresh(&conn, ["pm-a"])?;
        assert!(!any(&conn)?);
        put(&conn, "epics/pm-b.md", "pm-b")?;
        rebuild(&conn)?;
        assert!(any(&conn)?);
        Ok(())
    }
}
