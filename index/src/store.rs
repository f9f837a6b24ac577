//! Where the projection lives and how it is opened: `runtime/index/` with generation-named
//! database files behind a `CURRENT` pointer, connection pragmas (WAL, busy timeout,
//! `query_only` readers), the `pm_locale` collation, the writer lock, and the probe that names a
//! broken, foreign, outdated or unsafe database instead of failing on it.
//!
//! Why a pointer instead of renaming over one fixed file: SQLite's `-wal`/`-shm`/`-journal`
//! companions are found by name, so a reader still holding a replaced database could pair it
//! with the new file's companions. A fresh name per build never shares companions.

use crate::schema::PROJECTION_VERSION;
use pm_engine::collate::locale_compare;
use pm_engine::tracker::Tracker;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The folder of the projection under `runtime/`.
pub const INDEX_DIR: &str = "index";
/// The pointer file naming the current database.
pub const CURRENT_FILE: &str = "CURRENT";
/// The writer lock file (an advisory `flock`, held by builds and incremental applies).
pub const WRITER_LOCK_FILE: &str = "writer.lock";
/// Recorded folder listings, in `runtime/index/`.
pub const LISTING_DIR: &str = "listing";
/// `meta.app`: marks a database as ours.
pub const APP_ID: &str = "pm-index";
/// How long SQLite waits for a lock held by another connection.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(2);
/// The longest a read waits for a pooled connection (r2d2's `connection_timeout`, 30 s unless
/// set).
///
/// Opening a read connection to an existing file takes well under a millisecond; the wait runs
/// long only when the file is gone (a generation switch removed it after the read chose it)
/// and r2d2 retries the open until the timeout. [`checkout`] notices the missing file after
/// one [`CHECKOUT_POLL`] instead, so this bound matters only on a machine too loaded to open
/// an existing file in time; the read then answers from a scan.
pub const READ_CONNECT_TIMEOUT: Duration = Duration::from_millis(250);
/// How long one checkout attempt of [`checkout`] waits before it looks for the database file.
pub const CHECKOUT_POLL: Duration = Duration::from_millis(10);

/// The files of a tracker's projection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexPaths {
    /// `runtime/`.
    pub runtime: PathBuf,
    /// `runtime/index/`.
    pub dir: PathBuf,
    /// `runtime/index/CURRENT`.
    pub current: PathBuf,
    /// `runtime/index/writer.lock`.
    pub lock: PathBuf,
    /// `runtime/index/listing/`: recorded folder listings (`crate::fresh::listings`).
    pub listings: PathBuf,
}

impl IndexPaths {
    /// Returns the projection paths of `tracker`.
    pub fn of(tracker: &Tracker) -> IndexPaths {
        let runtime = tracker.runtime_dir();
        let dir = runtime.join(INDEX_DIR);
        IndexPaths {
            current: dir.join(CURRENT_FILE),
            lock: dir.join(WRITER_LOCK_FILE),
            listings: dir.join(LISTING_DIR),
            dir,
            runtime,
        }
    }

    /// Returns the database file name of a generation.
    pub fn db_name(generation: u64) -> String {
        format!("index-{generation:06}.sqlite")
    }

    /// Returns the generation of a database file name, if it is one.
    pub fn parse_db_name(name: &str) -> Option<u64> {
        let digits = name.strip_prefix("index-")?.strip_suffix(".sqlite")?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    }
}

/// Registers what every pm-index connection needs: the `pm_locale` collation (JavaScript
/// `localeCompare`, the order of ids and titles).
///
/// # Errors
/// SQLite refusing the registration.
pub fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_collation("pm_locale", locale_compare)
}

/// Opens a read connection: read-only, `query_only`, with a busy timeout.
///
/// # Errors
/// SQLite open or pragma failures.
pub fn open_read(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    configure_read(&conn)?;
    Ok(conn)
}

/// Applies the read-connection settings to `conn`.
///
/// # Errors
/// SQLite pragma failures.
pub fn configure_read(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    register_functions(conn)?;
    conn.pragma_update(None, "query_only", true)
}

/// Opens the write connection of an existing database (WAL, `synchronous=NORMAL`).
///
/// # Errors
/// SQLite open or pragma failures.
pub fn open_write(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    register_functions(&conn)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(conn)
}

/// A pool of read connections to one database file.
pub type ReadPool = r2d2::Pool<r2d2_sqlite::SqliteConnectionManager>;

/// Returns a pool of up to `size` read connections, each opened when first needed and then
/// kept (no idle minimum: replenishing one would open a connection a one-shot command never
/// uses, parsing the schema again). A checkout waits at most [`READ_CONNECT_TIMEOUT`]; see
/// [`checkout`] for one that also notices a removed file.
///
/// # Errors
/// r2d2's initial fill failing; with no idle minimum it opens nothing, so a file that cannot
/// be opened shows at checkout instead.
pub fn read_pool(path: &Path, size: u32) -> Result<ReadPool, r2d2::Error> {
    let manager = r2d2_sqlite::SqliteConnectionManager::file(path)
        .with_flags(OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .with_init(|conn| configure_read(conn));
    r2d2::Pool::builder()
        .max_size(size.max(1))
        .min_idle(Some(0))
        .connection_timeout(READ_CONNECT_TIMEOUT)
        .build(manager)
}

/// Checks out a connection to `db` from `pool`, giving up as soon as `db` is gone and after
/// [`READ_CONNECT_TIMEOUT`] at most.
///
/// # Errors
/// r2d2's timeout, carrying the last open error ("unable to open database file").
pub fn checkout(
    pool: &ReadPool,
    db: &Path,
) -> Result<r2d2::PooledConnection<r2d2_sqlite::SqliteConnectionManager>, r2d2::Error> {
    let start = Instant::now();
    loop {
        match pool.get_timeout(CHECKOUT_POLL) {
            Ok(conn) => return Ok(conn),
            Err(e)
                if start.elapsed() >= READ_CONNECT_TIMEOUT
                    || !matches!(entry(db), Ok(Entry::File)) =>
            {
                return Err(e);
            }
            Err(_) => {}
        }
    }
}

/// What the probe found at the projection's location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Condition {
    /// No projection has been built (or `CURRENT` names a missing file).
    Missing,
    /// A database of ours, current version and schema fingerprint.
    Ready {
        /// The database file.
        path: PathBuf,
        /// Its build generation.
        generation: u64,
    },
    /// Built by another projection version.
    WrongVersion {
        /// The version found.
        found: String,
    },
    /// Built under another runtime schema (settings or schema files changed).
    SchemaChanged,
    /// An SQLite database that is not ours.
    Foreign,
    /// Not a readable database (zero bytes, truncated, garbage, bad pointer).
    Corrupt {
        /// What was wrong.
        detail: String,
    },
    /// The path is a directory or another non-file.
    NotAFile {
        /// The offending path.
        path: PathBuf,
    },
    /// A symlink where pm-index only uses real files and folders.
    Unsafe {
        /// The symlink.
        path: PathBuf,
    },
    /// The file exists but cannot be opened (permissions).
    Unreadable {
        /// What failed.
        detail: String,
    },
}

impl Condition {
    /// Returns the one-word state name `pm health` reports.
    pub fn state(&self) -> &'static str {
        match self {
            Condition::Missing => "missing",
            Condition::Ready { .. } => "ready",
            Condition::WrongVersion { .. } => "wrong_version",
            Condition::SchemaChanged => "schema_changed",
            Condition::Foreign => "foreign",
            Condition::Corrupt { .. } => "corrupt",
            Condition::NotAFile { .. } => "not_a_file",
            Condition::Unsafe { .. } => "unsafe_symlink",
            Condition::Unreadable { .. } => "unreadable",
        }
    }
}

/// Kind of a path without following symlinks.
enum Entry {
    Absent,
    File,
    Dir,
    Symlink,
    Other,
}

fn entry(path: &Path) -> std::io::Result<Entry> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Ok(Entry::Symlink),
        Ok(m) if m.is_dir() => Ok(Entry::Dir),
        Ok(m) if m.is_file() => Ok(Entry::File),
        Ok(_) => Ok(Entry::Other),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(Entry::Absent),
        Err(e) => Err(e),
    }
}

/// Reads `CURRENT` and returns the database it names, or the condition that prevents it.
///
/// # Errors
/// Returns the [`Condition`] describing why there is no usable pointer.
pub fn current_db(paths: &IndexPaths) -> Result<(PathBuf, u64), Condition> {
    for dir in [&paths.runtime, &paths.dir] {
        match entry(dir) {
            Ok(Entry::Absent) => return Err(Condition::Missing),
            Ok(Entry::Dir) => {}
            Ok(Entry::Symlink) => return Err(Condition::Unsafe { path: dir.clone() }),
            Ok(_) => return Err(Condition::NotAFile { path: dir.clone() }),
            Err(e) => {
                return Err(Condition::Unreadable {
                    detail: format!("{}: {e}", dir.display()),
                });
            }
        }
    }
    match entry(&paths.current) {
        Ok(Entry::Absent) => return Err(Condition::Missing),
        Ok(Entry::File) => {}
        Ok(Entry::Symlink) => {
            return Err(Condition::Unsafe {
                path: paths.current.clone(),
            });
        }
        Ok(_) => {
            return Err(Condition::NotAFile {
                path: paths.current.clone(),
            });
        }
        Err(e) => {
            return Err(Condition::Unreadable {
                detail: e.to_string(),
            });
        }
    }
    let text = std::fs::read_to_string(&paths.current).map_err(|e| Condition::Corrupt {
        detail: format!("{CURRENT_FILE}: {e}"),
    })?;
    let name = text.trim();
    let generation = IndexPaths::parse_db_name(name).ok_or_else(|| Condition::Corrupt {
        detail: format!("{CURRENT_FILE} does not name a database: {name:?}"),
    })?;
    let db = paths.dir.join(name);
    match entry(&db) {
        Ok(Entry::File) => Ok((db, generation)),
        Ok(Entry::Absent) => Err(Condition::Missing),
        Ok(Entry::Symlink) => Err(Condition::Unsafe { path: db }),
        Ok(_) => Err(Condition::NotAFile { path: db }),
        Err(e) => Err(Condition::Unreadable {
            detail: e.to_string(),
        }),
    }
}

/// Reads one `meta` value.
///
/// # Errors
/// SQLite failures (a missing `meta` table included).
pub fn meta(conn: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()
}

/// Opens the current database for reading and checks that it is ours, of this projection
/// version and built under `fingerprint`.
///
/// # Errors
/// The [`Condition`] that makes it unusable.
pub fn probe(
    paths: &IndexPaths,
    fingerprint: &str,
) -> Result<(Connection, u64, PathBuf), Condition> {
    let (db, generation) = current_db(paths)?;
    let size = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
    if size == 0 {
        return Err(Condition::Corrupt {
            detail: "zero-byte database".into(),
        });
    }
    let conn = open_read(&db).map_err(|e| classify(&e))?;
    check_meta(&conn, fingerprint)?;
    Ok((conn, generation, db))
}

/// Checks `meta` of an open database.
///
/// # Errors
/// `Foreign`, `WrongVersion`, `SchemaChanged` or `Corrupt`.
pub fn check_meta(conn: &Connection, fingerprint: &str) -> Result<(), Condition> {
    let app = match meta(conn, "app") {
        Ok(app) => app,
        Err(e) if e.to_string().contains("no such table") => return Err(Condition::Foreign),
        Err(e) => return Err(classify(&e)),
    };
    if app.as_deref() != Some(APP_ID) {
        return Err(Condition::Foreign);
    }
    let version = meta(conn, "projection_version").map_err(|e| classify(&e))?;
    if version.as_deref() != Some(PROJECTION_VERSION.to_string().as_str()) {
        return Err(Condition::WrongVersion {
            found: version.unwrap_or_default(),
        });
    }
    let stored = meta(conn, "fingerprint").map_err(|e| classify(&e))?;
    if stored.as_deref() != Some(fingerprint) {
        return Err(Condition::SchemaChanged);
    }
    Ok(())
}

/// Names the condition behind an SQLite error on open or first query.
pub fn classify(err: &rusqlite::Error) -> Condition {
    let text = err.to_string();
    if text.contains("unable to open") || text.contains("readonly") {
        Condition::Unreadable { detail: text }
    } else {
        Condition::Corrupt { detail: text }
    }
}

/// What is wrong with the writer lock path when it exists but is not a regular file (a
/// directory, a symlink, a device), or cannot be inspected: no writer can take the lock then,
/// so the projection is never updated and every read scans.
pub fn writer_lock_problem(paths: &IndexPaths) -> Option<String> {
    let name = format!("runtime/index/{WRITER_LOCK_FILE}");
    match entry(&paths.lock) {
        Ok(Entry::Absent | Entry::File) => None,
        Ok(Entry::Dir) => Some(format!("{name} is a directory, not the writer lock file")),
        Ok(Entry::Symlink) => Some(format!("{name} is a symlink, not the writer lock file")),
        Ok(Entry::Other) => Some(format!("{name} is not a regular file")),
        Err(e) => Some(format!("{name} cannot be inspected: {e}")),
    }
}

/// The writer lock: an exclusive advisory lock on `runtime/index/writer.lock`, released on drop.
///
/// Builds, incremental applies and mutations' index updates hold it; readers never do.
#[derive(Debug)]
pub struct WriterLock {
    file: File,
}

impl WriterLock {
    /// Takes the lock, waiting up to `wait`; `Ok(None)` when another writer kept it.
    ///
    /// # Errors
    /// I/O failures creating `runtime/index/` or the lock file.
    pub fn acquire(paths: &IndexPaths, wait: Duration) -> std::io::Result<Option<WriterLock>> {
        WriterLock::acquire_while(paths, wait, || true)
    }

    /// Takes the lock as [`WriterLock::acquire`] does, but stops waiting, with `Ok(None)`, as
    /// soon as `keep_waiting` (asked after each failed attempt) returns false.
    ///
    /// # Errors
    /// I/O failures creating `runtime/index/` or the lock file.
    pub fn acquire_while(
        paths: &IndexPaths,
        wait: Duration,
        keep_waiting: impl Fn() -> bool,
    ) -> std::io::Result<Option<WriterLock>> {
        ensure_dir(paths)?;
        if let Some(problem) = writer_lock_problem(paths) {
            return Err(std::io::Error::other(format!(
                "{problem}; remove it (`pm gc --scope index` deletes the derived index, which the \
                 next read rebuilds)"
            )));
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&paths.lock)?;
        let start = Instant::now();
        let mut pause = Duration::from_millis(2);
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Some(WriterLock { file })),
                Err(std::fs::TryLockError::WouldBlock)
                    if start.elapsed() < wait && keep_waiting() =>
                {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
                Err(std::fs::TryLockError::Error(e)) => return Err(e),
            }
        }
    }
}

impl WriterLock {
    /// Writes to the lock file and returns its new mtime: the file system's current time (ns),
    /// read from the same clock that stamps the source files. Files changed at or after this
    /// instant cannot be told apart from their indexed state by signature alone.
    ///
    /// # Errors
    /// I/O failures.
    pub fn touch(&self) -> std::io::Result<i64> {
        use std::io::{Seek, SeekFrom, Write};
        let mut file = &self.file;
        file.seek(SeekFrom::Start(0))?;
        file.write_all(b"pm-index writer\n")?;
        let meta = file.metadata()?;
        Ok(crate::fresh::source::Sig::of(&meta).mtime_ns)
    }
}

/// Makes `runtime/index/` a real directory: a symlink there is removed (never followed), so
/// nothing outside the tracker is ever written. A symlinked `runtime/` is left alone and
/// refused.
///
/// # Errors
/// `runtime/` being a symlink or not a directory, or I/O failures.
pub fn ensure_dir(paths: &IndexPaths) -> std::io::Result<()> {
    match entry(&paths.runtime)? {
        Entry::Symlink => {
            return Err(std::io::Error::other(format!(
                "{} is a symlink; pm-index does not write through it",
                paths.runtime.display()
            )));
        }
        Entry::Absent => std::fs::create_dir_all(&paths.runtime)?,
        Entry::Dir => {}
        Entry::File | Entry::Other => {
            return Err(std::io::Error::other(format!(
                "{} is not a directory",
                paths.runtime.display()
            )));
        }
    }
    match entry(&paths.dir)? {
        Entry::Dir => Ok(()),
        Entry::Absent => create_dir_raced(&paths.dir),
        Entry::Symlink | Entry::File | Entry::Other => {
            std::fs::remove_file(&paths.dir)?;
            create_dir_raced(&paths.dir)
        }
    }
}

/// Creates `dir`; another process creating the same directory at the same moment is success
/// (two readers may both find the index missing and race to build it).
fn create_dir_raced(dir: &Path) -> std::io::Result<()> {
    match std::fs::create_dir(dir) {
        Err(e)
            if e.kind() == std::io::ErrorKind::AlreadyExists
                && std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) =>
        {
            Ok(())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn db_names_round_trip() {
        assert_eq!(IndexPaths::db_name(7), "index-000007.sqlite");
        assert_eq!(IndexPaths::parse_db_name("index-000007.sqlite"), Some(7));
        for bad in [
            "index-.sqlite",
            "index-1.db",
            "../index-1.sqlite",
            "index-1a.sqlite",
        ] {
            assert_eq!(IndexPaths::parse_db_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_checkout_of_a_removed_file_gives_up_quickly() -> Result<(), Box<dyn std::error::Error>> {
        let tmp = tempfile::tempdir()?;
        let db = tmp.path().join("index-000001.sqlite");
        let pool = read_pool(&db, 1)?;
        let start = Instant::now();
        assert!(checkout(&pool, &db).is_err());
        // The file is missing from the first attempt on: one poll, not the whole timeout.
        assert!(
            start.elapsed() < READ_CONNECT_TIMEOUT,
            "{:?}",
            start.elapsed()
        );
        Ok(())
    }

    #[test]
    fn a_lock_wait_stops_when_told() -> Result<(), Box<dyn std::error::Error>> {
        let tmp = tempfile::tempdir()?;
        let paths = IndexPaths::of(&Tracker::at(tmp.path()));
        let _held = WriterLock::acquire(&paths, Duration::ZERO)?.ok_or("lock")?;
        let start = Instant::now();
        let waited = WriterLock::acquire_while(&paths, Duration::from_secs(60), || false)?;
        assert!(waited.is_none());
        assert!(
            start.elapsed() < Duration::from_secs(1),
            "{:?}",
            start.elapsed()
        );
        Ok(())
    }

    #[test]
    fn writer_lock_is_exclusive() -> Result<(), Box<dyn std::error::Error>> {
        let tmp = tempfile::tempdir()?;
        let paths = IndexPaths::of(&Tracker::at(tmp.path()));
        let first = WriterLock::acquire(&paths, Duration::ZERO)?;
        assert!(first.is_some());
        assert!(WriterLock::acquire(&paths, Duration::ZERO)?.is_none());
        drop(first);
        assert!(WriterLock::acquire(&paths, Duration::ZERO)?.is_some());
        Ok(())
    }
}
