//! The projection's SQL schema: forward-only migrations embedded from `migrations/` and applied
//! with `PRAGMA user_version`, plus [`PROJECTION_VERSION`], which decides when to rebuild.

use rusqlite::Connection;
use rusqlite_migration::{M, Migrations};

/// Version of the derivation stored in the projection (`meta.projection_version`).
///
/// Bump it whenever `ItemSummary`, the typed columns, the events projection or the freshness
/// bookkeeping change meaning: a mismatch deletes and rebuilds the index (never migrates it).
pub const PROJECTION_VERSION: u32 = 13;

/// The migrations, oldest first. Never edit one that has shipped; add a new file instead.
pub fn migrations() -> Migrations<'static> {
    Migrations::new(vec![
        M::up(include_str!("../../migrations/0001_projection.sql")),
        M::up(include_str!("../../migrations/0002_event_lines.sql")),
        M::up(include_str!("../../migrations/0003_search_text.sql")),
        M::up(include_str!("../../migrations/0004_sources_by_path.sql")),
        M::up(include_str!("../../migrations/0005_unused_indexes.sql")),
        M::up(include_str!("../../migrations/0006_type_status_index.sql")),
        M::up(include_str!("../../migrations/0007_rank_columns.sql")),
        M::up(include_str!("../../migrations/0008_graph_lookup.sql")),
        M::up(include_str!("../../migrations/0009_duplicate_ids.sql")),
        M::up(include_str!("../../migrations/0010_drop_item_search.sql")),
    ])
}

/// Brings `conn` to the latest schema.
///
/// # Errors
/// Whatever the migration runner reports (an unknown future `user_version`, SQL errors).
pub fn apply(conn: &mut Connection) -> Result<(), rusqlite_migration::Error> {
    migrations().to_latest(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Migrations::validate` opens a bare connection, which lacks the `pm_locale` collation
    /// the indexes use; this is the same check (every migration applies to an empty database)
    /// on a connection configured like every pm-index connection.
    #[test]
    fn migrations_validate() -> Result<(), Box<dyn std::error::Error>> {
        let mut conn = Connection::open_in_memory()?;
        crate::store::register_functions(&conn)?;
        apply(&mut conn)?;
        let version: u32 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        assert_eq!(version, 10);
        Ok(())
    }
}
