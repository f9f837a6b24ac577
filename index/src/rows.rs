//! Writing projected sources into the database: item rows with their tag, dependency, field,
//! link, content and full-text rows; source bookkeeping rows; history events. The full build and
//! incremental applies share these statements, so both store exactly the same thing.

use crate::events::StreamProjection;
use crate::fresh::digest::{signature, to_sql};
use crate::fresh::source::Sig;
use crate::project::{ItemRecord, Projected, Projection};
use pm_engine::scan::UnreadableFile;
use rusqlite::{Connection, OptionalExtension, Statement, params};

/// The stored bookkeeping row of a source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceRow {
    /// Relative path.
    pub path: String,
    /// `item` or `history`.
    pub kind: String,
    /// The signature recorded when it was projected.
    pub sig: Sig,
    /// Racily clean: re-hash on every read until cleared.
    pub racy: bool,
    /// Hash of the content projected.
    pub content_hash: u64,
    /// The item row (readable items).
    pub item_key: Option<i64>,
    /// Error code (unreadable items and streams).
    pub error_code: Option<String>,
    /// Error message.
    pub error_message: Option<String>,
    /// History: bytes projected (up to a torn tail).
    pub projected_len: Option<i64>,
    /// History: entries projected.
    pub entry_count: Option<i64>,
    /// History: hash of the projected bytes.
    pub prefix_hash: Option<u64>,
}

/// Reads a source row.
///
/// # Errors
/// SQLite failures.
pub fn source_row(conn: &Connection, path: &str) -> rusqlite::Result<Option<SourceRow>> {
    conn.prepare_cached(
        "SELECT path, kind, size, mtime_ns, ctime_ns, inode, racy, content_hash, item_key,
                error_code, error_message, projected_len, entry_count, prefix_hash
         FROM sources WHERE path = ?1",
    )?
    .query_row([path], read_source_row)
    .optional()
}

/// Maps a `SELECT path, kind, size, … prefix_hash FROM sources` row.
///
/// # Errors
/// Column type mismatches.
pub fn read_source_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SourceRow> {
    Ok(SourceRow {
        path: r.get(0)?,
        kind: r.get(1)?,
        sig: Sig {
            size: u64::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
            mtime_ns: r.get(3)?,
            ctime_ns: r.get(4)?,
            inode: crate::fresh::digest::from_sql(r.get(5)?),
        },
        racy: r.get(6)?,
        content_hash: r
            .get::<_, Option<i64>>(7)?
            .map_or(0, crate::fresh::digest::from_sql),
        item_key: r.get(8)?,
        error_code: r.get(9)?,
        error_message: r.get(10)?,
        projected_len: r.get(11)?,
        entry_count: r.get(12)?,
        prefix_hash: r
            .get::<_, Option<i64>>(13)?
            .map(crate::fresh::digest::from_sql),
    })
}

/// The prepared insert statements of one write transaction (a full build or an apply): each
/// statement is compiled once and kept, instead of being looked up by its SQL text in the
/// connection's statement cache for every row.
pub struct RowWriter<'c> {
    items: Statement<'c>,
    tags: Statement<'c>,
    deps: Statement<'c>,
    fields: Statement<'c>,
    files: Statement<'c>,
    docs: Statement<'c>,
    content: Statement<'c>,
    text: Statement<'c>,
    sources: Statement<'c>,
    events: Statement<'c>,
}

const INSERT_ITEM: &str = "INSERT INTO items (path, format, id, title, type, status, status_class,
         terminal, priority, parent, assignee, sprint, release, created_at, created_ms,
         updated_at, updated_ms, deadline, deadline_ms, closed_at, closed_ms, blocked_by, risk,
         has_confidence, has_estimate, has_acceptance_criteria, has_resolution, has_reviewer,
         has_body, has_linked_command, n_comments, n_notes, n_learnings, n_files, n_docs,
         n_tests, n_test_runs, n_deps, light_json, rank_order, has_schedule, light_len)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
         ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33,
         ?34, ?35, ?36, ?37, ?38, ?39, ?40, ?41, ?42)";

const UPSERT_SOURCE: &str = "INSERT OR REPLACE INTO sources (path, kind, size, mtime_ns, ctime_ns,
         inode, racy, content_hash, item_key, error_code, error_message, projected_len,
         entry_count, prefix_hash)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";

const INSERT_EVENT: &str = "INSERT OR REPLACE INTO events (stream, position, ts, author, op,
         agent_harness, agent_instance, message, patch_count, line_offset, line_len)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";

impl<'c> RowWriter<'c> {
    /// Prepares the statements on `conn` (inside the caller's transaction).
    ///
    /// # Errors
    /// SQLite failures.
    pub fn new(conn: &'c Connection) -> rusqlite::Result<RowWriter<'c>> {
        let link = |table: &str| {
            conn.prepare(&format!(
                "INSERT INTO {table} (item_key, position, path, scope, note)
                 VALUES (?1, ?2, ?3, ?4, ?5)"
            ))
        };
        Ok(RowWriter {
            items: conn.prepare(INSERT_ITEM)?,
            tags: conn
                .prepare("INSERT OR IGNORE INTO item_tags (item_key, tag) VALUES (?1, ?2)")?,
            deps: conn.prepare(
                "INSERT INTO item_deps (item_key, position, target_id, kind)
                 VALUES (?1, ?2, ?3, ?4)",
            )?,
            fields: conn.prepare(
                "INSERT OR IGNORE INTO item_fields (item_key, key, value) VALUES (?1, ?2, ?3)",
            )?,
            files: link("item_files")?,
            docs: link("item_docs")?,
            content: conn.prepare(
                "INSERT INTO item_content (item_key, body, heavy_json) VALUES (?1, ?2, ?3)",
            )?,
            text: conn.prepare(crate::search::INSERT_TEXT)?,
            sources: conn.prepare(UPSERT_SOURCE)?,
            events: conn.prepare(INSERT_EVENT)?,
        })
    }

    /// Writes one projected source (its rows and its bookkeeping row). The caller has removed
    /// any previous rows of the same path, except history events kept for an append.
    ///
    /// Returns the digest contribution of the source.
    ///
    /// # Errors
    /// SQLite failures.
    pub fn write(&mut self, p: &Projected) -> rusqlite::Result<u64> {
        let mut item_key = None;
        let mut error: Option<(&str, &str)> = None;
        let mut stream_row = None;
        match &p.projection {
            Projection::Vanished => return Ok(0),
            Projection::Item(record) => item_key = Some(self.insert_item(record)?),
            Projection::Unreadable(UnreadableFile { code, message, .. }) => {
                error = Some((code, message));
            }
            Projection::History(stream) => {
                self.insert_events(stream)?;
                stream_row = Some((
                    i64::try_from(stream.projected_len).unwrap_or(i64::MAX),
                    stream.entry_count,
                    to_sql(stream.prefix_hash),
                ));
                error = stream.error.as_ref().map(|(c, m)| (c.as_str(), m.as_str()));
            }
        }
        // The columns of `SourceRow`, bound from borrowed values.
        self.sources.execute(params![
            p.file.rel,
            p.file.kind.as_str(),
            i64::try_from(p.sig.size).unwrap_or(i64::MAX),
            p.sig.mtime_ns,
            p.sig.ctime_ns,
            to_sql(p.sig.inode),
            p.racy,
            to_sql(p.content_hash),
            item_key,
            error.map(|e| e.0),
            error.map(|e| e.1),
            stream_row.map(|r| r.0),
            stream_row.map(|r| r.1),
            stream_row.map(|r| r.2),
        ])?;
        Ok(p.sig.contribution(&p.file.rel))
    }

    fn insert_item(&mut self, record: &ItemRecord) -> rusqlite::Result<i64> {
        let s = &record.summary;
        let c = &s.facts.counts;
        let key = self.items.insert(params![
            s.path,
            format_name(s.format),
            s.id,
            s.title,
            s.item_type,
            s.status,
            s.status_class.as_str(),
            s.is_terminal(),
            s.priority,
            s.parent,
            s.assignee,
            s.sprint,
            s.release,
            s.created_at,
            s.created_ms,
            s.updated_at,
            s.updated_ms,
            s.deadline,
            s.deadline_ms,
            s.closed_at,
            s.closed_ms,
            s.blocked_by,
            s.risk,
            s.confidence.is_some(),
            s.estimated_minutes.is_some(),
            s.has_acceptance_criteria,
            s.has_resolution,
            s.has_reviewer,
            s.facts.has_body,
            s.facts.has_linked_command,
            c.comments,
            c.notes,
            c.learnings,
            c.files,
            c.docs,
            c.tests,
            c.test_runs,
            i64::try_from(s.dependencies.len()).unwrap_or(i64::MAX),
            record.light_json,
            record.rank_order,
            record.has_schedule,
            // The byte length of exactly the stored text (`RankItem::light_len`).
            i64::try_from(record.light_json.len()).unwrap_or(i64::MAX),
        ])?;
        for t in &record.tag_keys {
            self.tags.execute(params![key, t])?;
        }
        for (i, d) in s.dependencies.iter().enumerate() {
            self.deps.execute(params![key, i as i64, d.id, d.kind])?;
        }
        for (k, values) in &record.field_values {
            for value in values {
                self.fields.execute(params![key, k, value])?;
            }
        }
        for (stmt, links) in [
            (&mut self.files, &record.files),
            (&mut self.docs, &record.docs),
        ] {
            for (i, l) in links.iter().enumerate() {
                stmt.execute(params![key, i as i64, l.path, l.scope, l.note])?;
            }
        }
        self.content
            .execute(params![key, record.body, record.heavy])?;
        self.text.execute(params![key, record.search])?;
        Ok(key)
    }

    fn insert_events(&mut self, stream: &StreamProjection) -> rusqlite::Result<()> {
        for e in &stream.events {
            self.events.execute(params![
                e.stream,
                e.position,
                e.ts,
                e.author,
                e.op,
                e.agent_harness,
                e.agent_instance,
                e.message,
                e.patch_count,
                i64::try_from(e.line_offset).unwrap_or(i64::MAX),
                i64::try_from(e.line_len).unwrap_or(i64::MAX),
            ])?;
        }
        Ok(())
    }
}

/// Removes a source and everything projected from it (its item rows, or its events).
///
/// Returns the digest contribution the removed row had.
///
/// # Errors
/// SQLite failures.
pub fn remove_source(
    conn: &Connection,
    row: &SourceRow,
    keep_events: bool,
) -> rusqlite::Result<u64> {
    if let Some(key) = row.item_key {
        delete_item(conn, key)?;
    }
    let stream = row
        .path
        .strip_prefix("history/")
        .and_then(|p| p.strip_suffix(".jsonl"));
    if let Some(stream) = stream.filter(|_| row.kind == "history" && !keep_events) {
        conn.prepare_cached("DELETE FROM events WHERE stream = ?1")?
            .execute([stream])?;
    }
    conn.prepare_cached("DELETE FROM sources WHERE path = ?1")?
        .execute([&row.path])?;
    Ok(row.sig.contribution(&row.path))
}

fn delete_item(conn: &Connection, key: i64) -> rusqlite::Result<()> {
    for table in [
        "items",
        "item_tags",
        "item_deps",
        "item_fields",
        "item_files",
        "item_docs",
        "item_content",
        "item_text",
    ] {
        conn.prepare_cached(&format!("DELETE FROM {table} WHERE item_key = ?1"))?
            .execute([key])?;
    }
    Ok(())
}

/// Returns the stored name of a format.
pub fn format_name(format: pm_engine::item::ItemFormat) -> &'static str {
    format.extension()
}

/// Sets a `meta` value.
///
/// # Errors
/// SQLite failures.
pub fn set_meta(conn: &Connection, key: &str, value: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?
        .execute([key, value])?;
    Ok(())
}

/// Returns the fingerprint of a runtime schema: what a projection was derived under.
pub fn schema_fingerprint(schema: &pm_engine::schema::RuntimeSchema) -> String {
    let version = u64::from(crate::schema::PROJECTION_VERSION);
    format!(
        "{:016x}",
        signature(format!("{schema:?}").as_bytes(), &[version])
    )
}
