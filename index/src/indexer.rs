//! The full build: rayon parses every item file and history stream in parallel, chunk by chunk,
//! while one writer thread inserts them in a single transaction into a new generation file in
//! `runtime/index/`; `CURRENT` is switched to it only once it is complete and synced, so readers
//! never see a half-built index. Progress goes to a caller-supplied callback; nothing prints.

use crate::backlog::{Backlog, CloseOnDrop};
use crate::folder_handles::FolderHandles;
use crate::fresh::digest::DigestTotals;
use crate::fresh::source::{SourceFile, SourceKind, enumerate};
use crate::load::{Load, chunks, held_bytes};
use crate::project::{ProjectContext, Projected, project};
use crate::rows::{RowWriter, schema_fingerprint, set_meta};
use crate::schema::{PROJECTION_VERSION, apply};
use crate::store::{APP_ID, IndexPaths, WriterLock, current_db, register_functions};
use pm_engine::schema::RuntimeSchema;
use pm_engine::tracker::{HISTORY_FOLDER, Tracker};
use pm_engine::{Error, Result};
use rayon::prelude::*;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{SyncSender, sync_channel};

/// Files parsed per batch: bounds memory while keeping both cores busy.
pub(crate) const CHUNK: usize = 512;
/// Memory that parsed history streams waiting for the writer may hold (as estimated by
/// [`held_bytes`]) while it builds the item indexes.
const STREAM_BACKLOG_BYTES: u64 = 16 * 1024 * 1024;
/// Chunks written between two background writebacks of the new file.
pub(crate) const WRITEBACK_EVERY: usize = 64;
/// Page size of a new database (bytes): larger pages mean fewer B-tree pages to allocate,
/// balance and write during the bulk load, and fewer reads when the indexes are built.
const BUILD_PAGE_SIZE: i64 = 16_384;
/// Files whose ctime lies this close before the build start are racily clean (ns).
pub const RACY_WINDOW_NS: i64 = 1_000_000_000;

/// How far a build has got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildProgress {
    /// Source files written so far.
    pub done: usize,
    /// Source files in total.
    pub total: usize,
}

/// A callback told about build progress (the CLI draws a progress bar on a TTY).
pub type ProgressFn<'a> = &'a (dyn Fn(BuildProgress) + Sync);

/// What a build produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildReport {
    /// The new generation.
    pub generation: u64,
    /// The new database file.
    pub path: PathBuf,
    /// Readable items.
    pub items: usize,
    /// Unreadable item files.
    pub unreadable_items: usize,
    /// History streams.
    pub streams: usize,
    /// History events.
    pub events: usize,
}

/// Builds a new generation of the projection and makes it current. The caller holds `lock`.
///
/// # Errors
/// `Error::Index` for SQLite failures, `Error::Io` for file-system failures.
pub fn build(
    tracker: &Tracker,
    schema: &RuntimeSchema,
    lock: &WriterLock,
    progress: Option<ProgressFn<'_>>,
) -> Result<BuildReport> {
    let paths = IndexPaths::of(tracker);
    let fs_now = lock.touch().map_err(|e| io_error(&paths.lock, e))?;
    let sources = enumerate(tracker, schema)?;
    let generation = next_generation(&paths);
    let name = IndexPaths::db_name(generation);
    let db = paths.dir.join(&name);
    remove_db_files(&db);
    let total = sources.files.len();
    let folders = schema.types.folders().into_iter().map(|(folder, _)| folder);
    let ctx = ProjectContext::new(schema, fs_now - RACY_WINDOW_NS).with_folders(
        FolderHandles::open(tracker.root(), folders.chain([HISTORY_FOLDER])),
    );
    let report = write_database(
        &db,
        sources.files,
        &ctx,
        schema,
        generation,
        total,
        progress,
    )
    .map_err(|e| index_error(&db, &e))?;
    std::fs::File::open(&db)
        .and_then(|f| f.sync_all())
        .map_err(|e| io_error(&db, e))?;
    pm_engine::atomic::write(&paths.current, format!("{name}\n").as_bytes())?;
    remove_other_generations(&paths, generation);
    Ok(report)
}

fn write_database(
    db: &Path,
    files: Vec<SourceFile>,
    ctx: &ProjectContext<'_>,
    schema: &RuntimeSchema,
    generation: u64,
    total: usize,
    progress: Option<ProgressFn<'_>>,
) -> rusqlite::Result<BuildReport> {
    let mut conn = Connection::open(db)?;
    conn.pragma_update(None, "page_size", BUILD_PAGE_SIZE)?;
    let writeback = Writeback::start(db);
    register_functions(&conn)?;
    conn.pragma_update(None, "journal_mode", "OFF")?;
    conn.pragma_update(None, "synchronous", "OFF")?;
    conn.pragma_update(None, "cache_size", -16_000)?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    apply(&mut conn).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    // Secondary indexes (except those of `LIVE_DURING_LOAD`) are built after the bulk load
    // (a sort is much cheaper than 100k random B-tree inserts); their DDL is read back
    // from the migrated schema, so migrations stay the one definition.
    let deferred = secondary_indexes(&conn)?;
    for index in &deferred {
        conn.execute_batch(&format!("DROP INDEX \"{}\";", index.name))?;
    }
    let mut report = BuildReport {
        generation,
        path: db.to_path_buf(),
        items: 0,
        unreadable_items: 0,
        streams: 0,
        events: 0,
    };
    let tx = conn.transaction()?;
    let mut totals = DigestTotals::default();
    let (item_indexes, event_indexes): (Vec<_>, Vec<_>) =
        deferred.into_iter().partition(|d| d.table != "events");
    let mut load = Load {
        writer: RowWriter::new(&tx)?,
        report: &mut report,
        totals: &mut totals,
        writeback: &writeback,
        progress,
        done: 0,
        chunks: 0,
        total,
    };
    let backlog = Backlog::new(STREAM_BACKLOG_BYTES);
    std::thread::scope(|scope| -> rusqlite::Result<()> {
        let (send_items, items_parsed) = sync_channel::<Vec<Projected>>(2);
        let (send_streams, streams_parsed) = std::sync::mpsc::channel::<(Vec<Projected>, u64)>();
        // Written batches are freed on a thread of their own: freeing 512 parsed documents is
        // a tenth of the writer's time, and the writer is the one thread the build waits for.
        let (spent, to_free) = std::sync::mpsc::channel::<Vec<Projected>>();
        scope.spawn(move || to_free.into_iter().for_each(drop));
        let backlog = &backlog;
        scope.spawn(move || {
            // The item files come first, then the history streams.
            let mut files = files.into_iter().peekable();
            for chunk in chunks(&mut files, Some(SourceKind::Item)) {
                let parsed: Vec<Projected> =
                    chunk.into_par_iter().map(|f| project(f, ctx)).collect();
                if send_items.send(parsed).is_err() {
                    return;
                }
            }
            drop(send_items);
            // The rest: history streams (and any item file listed out of the usual order).
            for chunk in chunks(&mut files, None) {
                let parsed: Vec<Projected> =
                    chunk.into_par_iter().map(|f| project(f, ctx)).collect();
                let bytes = parsed.iter().map(held_bytes).sum();
                if !backlog.reserve(bytes) || send_streams.send((parsed, bytes)).is_err() {
                    return;
                }
            }
        });
        let _close = CloseOnDrop(backlog);
        for batch in items_parsed {
            load.write(batch, &spent)?;
        }
        // Every item is written: their indexes are built now, while the parsers go on with the
        // history streams (holding up to `STREAM_BACKLOG_BYTES` ahead), instead of after the
        // load with one core idle.
        for index in &item_indexes {
            tx.execute_batch(&index.sql)?;
        }
        for (batch, bytes) in streams_parsed {
            load.write(batch, &spent)?;
            backlog.release(bytes);
        }
        Ok(())
    })?;
    drop(load);
    writeback.kick();
    for index in &event_indexes {
        tx.execute_batch(&index.sql)?;
    }
    crate::duplicates::rebuild(&tx)?;
    set_meta(&tx, "app", APP_ID)?;
    set_meta(&tx, "projection_version", &PROJECTION_VERSION.to_string())?;
    set_meta(&tx, "fingerprint", &schema_fingerprint(schema))?;
    set_meta(&tx, "generation", &generation.to_string())?;
    totals.store(&tx)?;
    set_meta(
        &tx,
        "built_fs_ns",
        &(ctx.racy_from_ns + RACY_WINDOW_NS).to_string(),
    )?;
    set_meta(&tx, "stale", "0")?;
    tx.commit()?;
    conn.execute_batch("PRAGMA analysis_limit = 1000; ANALYZE;")?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    drop(conn);
    Ok(report)
}

/// Writes the new database file's dirty pages to disk on a background thread while the build
/// goes on (the disk is idle while the build is busy computing), so the final sync before the
/// switch to the new generation finds little left to write. Dropping it waits for the thread.
pub(crate) struct Writeback {
    kick: Option<SyncSender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Writeback {
    /// Starts the thread for `db` (a no-op writeback if the file cannot be opened: the final
    /// sync still covers everything).
    fn start(db: &Path) -> Writeback {
        let Ok(file) = std::fs::File::open(db) else {
            return Writeback {
                kick: None,
                thread: None,
            };
        };
        let (kick, kicked) = sync_channel::<()>(1);
        let thread = std::thread::spawn(move || {
            for () in kicked {
                // Best effort: the final `sync_all` reports failures.
                let _ = file.sync_data();
            }
        });
        Writeback {
            kick: Some(kick),
            thread: Some(thread),
        }
    }

    /// Asks for a writeback of what has been written so far, unless one is already pending.
    pub(crate) fn kick(&self) {
        if let Some(kick) = &self.kick {
            let _ = kick.try_send(());
        }
    }
}

impl Drop for Writeback {
    fn drop(&mut self) {
        self.kick = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Indexes kept up to date during the load instead of built after it.
///
/// * Partial indexes that hold a minority of their table's rows (normally none) behind a plain
///   column test: keeping them costs one cheap test per row.
/// * Narrow indexes of `items` and `item_deps`: their keys are few (status, type, kind) or
///   short (ids, parents, targets; in the generated corpus they even arrive in key order), so
///   at 100k items each is a few MB that stays in the build's 16 MB page cache and an insert
///   touches cached pages only.
///
/// Keeping them costs the writer thread, which waits for parsed batches for much of the load
/// anyway; building them afterwards is one more pass over the whole (wide) table each, on the
/// writer thread while the other threads parse. Measured at 100k items (when the deferred
/// indexes were all built after the load): the build is 87–382 ms
/// (median about 190 ms) shorter in 8 of 8 paired runs. Not listed: the `*_untrimmed` indexes
/// (their `trim(…, char(…))` condition, evaluated for every inserted row, costs more than the
/// pass), the wide `items_default_order` and the `events_*` indexes (keys in no useful order;
/// keeping them did not shorten the build).
const LIVE_DURING_LOAD: [&str; 11] = [
    "item_deps_blocking",
    "item_deps_kind",
    "item_deps_target",
    "items_assignee",
    "items_blocked_by",
    "items_id",
    "items_parent",
    "items_status",
    "items_type_status",
    "sources_racy",
    "sources_unreadable",
];

/// An index built after (part of) the load.
struct Deferred {
    name: String,
    /// The table it indexes.
    table: String,
    /// Its `CREATE INDEX` statement.
    sql: String,
}

/// Returns every explicitly created index except [`LIVE_DURING_LOAD`].
fn secondary_indexes(conn: &Connection) -> rusqlite::Result<Vec<Deferred>> {
    let mut stmt = conn.prepare(
        "SELECT name, tbl_name, sql FROM sqlite_master
         WHERE type = 'index' AND sql IS NOT NULL ORDER BY name",
    )?;
    let all: Vec<Deferred> = stmt
        .query_map([], |r| {
            Ok(Deferred {
                name: r.get(0)?,
                table: r.get(1)?,
                sql: r.get(2)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(all
        .into_iter()
        .filter(|d| !LIVE_DURING_LOAD.contains(&d.name.as_str()))
        .collect())
}

impl BuildReport {
    pub(crate) fn tally(&mut self, p: &Projected) {
        match &p.projection {
            crate::project::Projection::Item(_) => self.items += 1,
            crate::project::Projection::Unreadable(_) => self.unreadable_items += 1,
            crate::project::Projection::History(s) => {
                self.streams += 1;
                self.events += s.events.len();
            }
            crate::project::Projection::Vanished => {}
        }
    }
}

/// Returns a generation number above every database file in `runtime/index/`.
fn next_generation(paths: &IndexPaths) -> u64 {
    let mut highest = current_db(paths).map(|(_, g)| g).unwrap_or(0);
    if let Ok(entries) = std::fs::read_dir(&paths.dir) {
        for entry in entries.flatten() {
            if let Some(g) = entry.file_name().to_str().and_then(generation_of) {
                highest = highest.max(g);
            }
        }
    }
    highest + 1
}

/// Returns the generation of a database file or one of its companions.
fn generation_of(name: &str) -> Option<u64> {
    let base = name
        .strip_suffix("-wal")
        .or_else(|| name.strip_suffix("-shm"))
        .or_else(|| name.strip_suffix("-journal"))
        .unwrap_or(name);
    IndexPaths::parse_db_name(base)
}

/// Removes a database file and its companions (regular files only).
pub fn remove_db_files(db: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut path = db.as_os_str().to_owned();
        path.push(suffix);
        let path = PathBuf::from(path);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_dir()) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Removes every generation other than `keep` (readers holding an old file keep their open
/// handle; the file is freed when they close it). Entries that are not regular files are left
/// for `pm gc --scope index`.
pub fn remove_other_generations(paths: &IndexPaths, keep: u64) {
    let Ok(entries) = std::fs::read_dir(&paths.dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(g) = name.to_str().and_then(generation_of) else {
            continue;
        };
        if g != keep && entry.file_type().is_ok_and(|t| !t.is_dir()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Wraps an SQLite error as `Error::Index`.
pub fn index_error(path: &Path, err: &rusqlite::Error) -> Error {
    Error::Index {
        path: path.to_path_buf(),
        detail: err.to_string(),
    }
}

/// Wraps an I/O error on an index file as `Error::Index`.
pub fn io_error(path: &Path, err: std::io::Error) -> Error {
    Error::Index {
        path: path.to_path_buf(),
        detail: err.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(name, sql)` of every explicitly created index of `conn`, by name.
    fn indexes(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
        let mut stmt = conn.prepare(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL
             ORDER BY name",
        )?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect()
    }

    #[test]
    fn a_built_database_has_exactly_the_migrated_indexes() -> Result<(), Box<dyn std::error::Error>>
    {
        let mut migrated = Connection::open_in_memory()?;
        register_functions(&migrated)?;
        apply(&mut migrated)?;
        let expected = indexes(&migrated)?;
        // Every index kept live during the load is one the migrations create.
        for name in LIVE_DURING_LOAD {
            assert!(
                expected.iter().any(|(n, _)| n == name),
                "{name} is not in the schema"
            );
        }
        let dir = tempfile::tempdir()?;
        let tracker = Tracker::at(dir.path().join(".agents/pm"));
        std::fs::create_dir_all(tracker.root().join("tasks"))?;
        let schema = RuntimeSchema::builtin();
        let paths = IndexPaths::of(&tracker);
        std::fs::create_dir_all(&paths.dir)?;
        let lock = WriterLock::acquire(&paths, std::time::Duration::from_secs(5))?
            .ok_or("writer lock held")?;
        let report = build(&tracker, &schema, &lock, None)?;
        let built = Connection::open(&report.path)?;
        // Live or deferred, each index ends up with the DDL the migrations give it.
        assert_eq!(indexes(&built)?, expected);
        Ok(())
    }
}
