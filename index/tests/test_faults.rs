//! Faults: deleted, truncated, zero-byte, wrong-version, foreign, read-only, directory and
//! symlinked databases, a writer killed mid-build, concurrent rebuilds. Reads always answer
//! correctly, the next writer repairs, `health` names the condition, and nothing outside
//! `runtime/` changes.

use crate::fixture::{Fixture, TestResult, assert_same_listing, item, schema};
use pm_engine::query::{Page, Query, Sort, Source};
use pm_engine::schema::RuntimeSchema;
use pm_index::internals::store::{IndexPaths, WriterLock};
use pm_index::{Index, IndexState};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

fn seeded() -> Result<Fixture, Box<dyn std::error::Error>> {
    let f = Fixture::new()?;
    for (id, p) in [("pm-a", 1), ("pm-b", 0), ("pm-c", 3)] {
        f.write_item("tasks", item(id, json!({"priority": p})), "body")?;
    }
    f.append_history(
        "pm-a",
        &[crate::fixture::history_line(
            "2026-01-01T00:00:00.000Z",
            "ann",
            "create",
        )],
    )?;
    Ok(f)
}

/// Every file outside `runtime/`, with its bytes.
fn authoritative(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .display()
                .to_string();
            if rel == "runtime" || rel.starts_with("runtime/") {
                continue;
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            } else {
                out.insert(rel, std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    out
}

/// Asserts a read is correct, then returns the source that answered.
fn read_is_correct(
    f: &Fixture,
    schema: &RuntimeSchema,
) -> Result<Source, Box<dyn std::error::Error>> {
    let index = f.index(schema);
    let a = index.list(&Query::all(), &Sort::default(), &Page::all())?;
    let b = f
        .scan_index(schema)
        .list(&Query::all(), &Sort::default(), &Page::all())?;
    assert_same_listing(&a, &b, "fault");
    assert_eq!(crate::fixture::ids(&a), ["pm-b", "pm-a", "pm-c"]);
    Ok(a.source())
}

fn current_db(f: &Fixture) -> Result<std::path::PathBuf, Box<dyn std::error::Error>> {
    let paths = IndexPaths::of(&f.tracker);
    let (db, _) = pm_index::internals::store::current_db(&paths).map_err(|c| format!("{c:?}"))?;
    Ok(db)
}

/// Damages the built index with `damage`, then checks health names `state` and the next read
/// answers correctly and repairs it.
fn fault_case(
    damage: impl FnOnce(&Fixture) -> Result<(), Box<dyn std::error::Error>>,
    state: IndexState,
) -> TestResult {
    let schema = schema();
    let f = seeded()?;
    assert_eq!(read_is_correct(&f, &schema)?, Source::Index);
    let before = authoritative(&f.root());
    damage(&f)?;
    let health = f.index(&schema).health();
    assert_eq!(health.state, state, "{health:?}");
    read_is_correct(&f, &schema)?;
    assert_eq!(read_is_correct(&f, &schema)?, Source::Index, "repaired");
    assert_eq!(f.index(&schema).health().state, IndexState::Fresh);
    assert_eq!(
        authoritative(&f.root()),
        before,
        "authoritative files changed"
    );
    Ok(())
}

#[test]
fn deleted_database() -> TestResult {
    fault_case(
        |f| Ok(std::fs::remove_file(current_db(f)?)?),
        IndexState::Missing,
    )
}

#[test]
fn zero_byte_database() -> TestResult {
    fault_case(
        |f| Ok(std::fs::File::create(current_db(f)?)?.set_len(0)?),
        IndexState::Corrupt,
    )
}

#[test]
fn truncated_database() -> TestResult {
    fault_case(
        |f| {
            let db = current_db(f)?;
            let len = std::fs::metadata(&db)?.len();
            std::fs::OpenOptions::new()
                .write(true)
                .open(&db)?
                .set_len(len / 3)?;
            Ok(())
        },
        IndexState::Corrupt,
    )
}

#[test]
fn garbage_database() -> TestResult {
    fault_case(
        |f| Ok(pm_engine::atomic::write(&current_db(f)?, &[0x42; 8192])?),
        IndexState::Corrupt,
    )
}

#[test]
fn wrong_version_database() -> TestResult {
    fault_case(
        |f| {
            let conn = rusqlite_open(&current_db(f)?)?;
            conn.execute(
                "UPDATE meta SET value = '0' WHERE key = 'projection_version'",
                [],
            )?;
            Ok(())
        },
        IndexState::WrongVersion,
    )
}

#[test]
fn foreign_database() -> TestResult {
    fault_case(
        |f| {
            let db = current_db(f)?;
            std::fs::remove_file(&db)?;
            let conn = rusqlite_open(&db)?;
            conn.execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);")?;
            Ok(())
        },
        IndexState::Foreign,
    )
}

#[test]
fn database_is_a_directory() -> TestResult {
    fault_case(
        |f| {
            let db = current_db(f)?;
            std::fs::remove_file(&db)?;
            std::fs::create_dir(&db)?;
            Ok(())
        },
        IndexState::NotAFile,
    )
}

#[test]
fn read_only_database() -> TestResult {
    use std::os::unix::fs::PermissionsExt;
    let schema = schema();
    let f = seeded()?;
    read_is_correct(&f, &schema)?;
    let db = current_db(&f)?;
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444))?;
    f.write_item("tasks", item("pm-d", json!({"priority": 4})), "")?;
    // The apply may fail (not as root); either way the answer is right.
    let index = f.index(&schema);
    let a = index.list(&Query::all(), &Sort::default(), &Page::all())?;
    let b = f
        .scan_index(&schema)
        .list(&Query::all(), &Sort::default(), &Page::all())?;
    assert_same_listing(&a, &b, "read-only");
    assert_eq!(crate::fixture::ids(&a), ["pm-b", "pm-a", "pm-c", "pm-d"]);
    Ok(())
}

#[test]
fn index_dir_symlinked_out_of_the_tracker() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    let outside = tempfile::tempdir()?;
    pm_engine::atomic::write(&outside.path().join("keep.txt"), b"outside")?;
    let paths = IndexPaths::of(&f.tracker);
    std::fs::create_dir_all(&paths.runtime)?;
    std::os::unix::fs::symlink(outside.path(), &paths.dir)?;
    assert_eq!(f.index(&schema).health().state, IndexState::UnsafeSymlink);
    // The next writer replaces the symlink with a real directory and never writes through it.
    assert_eq!(read_is_correct(&f, &schema)?, Source::Index);
    let entries: Vec<_> = std::fs::read_dir(outside.path())?
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(entries, ["keep.txt"]);
    assert!(
        !std::fs::symlink_metadata(&paths.dir)?
            .file_type()
            .is_symlink()
    );
    Ok(())
}

#[test]
fn runtime_symlinked_out_of_the_tracker_is_never_written() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    let outside = tempfile::tempdir()?;
    std::os::unix::fs::symlink(outside.path(), f.tracker.runtime_dir())?;
    assert_eq!(f.index(&schema).health().state, IndexState::UnsafeSymlink);
    assert_eq!(read_is_correct(&f, &schema)?, Source::Scan);
    assert_eq!(std::fs::read_dir(outside.path())?.count(), 0);
    Ok(())
}

#[test]
fn writer_killed_mid_build() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    read_is_correct(&f, &schema)?;
    let paths = IndexPaths::of(&f.tracker);
    // A crashed build leaves an unreferenced, half-written generation behind.
    let orphan = paths.dir.join(IndexPaths::db_name(99));
    pm_engine::atomic::write(&orphan, b"SQLite format 3\0 half")?;
    assert_eq!(read_is_correct(&f, &schema)?, Source::Index);
    f.index(&schema).rebuild(Duration::from_secs(5))?;
    assert!(!orphan.exists(), "the next build removes it");
    assert_eq!(f.index(&schema).health().state, IndexState::Fresh);
    Ok(())
}

#[test]
fn a_held_writer_lock_means_scan_not_wait() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    let paths = IndexPaths::of(&f.tracker);
    let held = WriterLock::acquire(&paths, Duration::ZERO)?.ok_or("lock")?;
    let index = Index::open(
        &f.tracker,
        &schema,
        pm_index::IndexOptions {
            lock_wait: Duration::from_millis(10),
            ..pm_index::IndexOptions::default()
        },
    );
    let a = index.list(&Query::all(), &Sort::default(), &Page::all())?;
    assert_eq!(a.source(), Source::Scan);
    assert!(
        a.notices.iter().any(|n| n.code == "index_unavailable"),
        "{:?}",
        a.notices
    );
    drop(held);
    assert_eq!(read_is_correct(&f, &schema)?, Source::Index);
    Ok(())
}

#[test]
fn concurrent_rebuilds_serialize() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|_| {
                s.spawn(|| {
                    f.index(&schema)
                        .rebuild(Duration::from_secs(20))
                        .map(|r| r.generation)
                })
            })
            .collect();
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().map_err(|_| "rebuild panicked".to_string()))
            .collect();
        let mut generations: Vec<u64> = Vec::new();
        for result in &results {
            match result {
                Ok(Ok(generation)) => generations.push(*generation),
                other => panic!("a rebuild failed: {other:?}"),
            }
        }
        generations.sort_unstable();
        generations.dedup();
        assert_eq!(
            generations.len(),
            3,
            "each rebuild made its own generation: {results:?}"
        );
    });
    assert_eq!(read_is_correct(&f, &schema)?, Source::Index);
    assert!(f.index(&schema).check()?.consistent);
    Ok(())
}

fn rusqlite_open(path: &Path) -> Result<rusqlite::Connection, Box<dyn std::error::Error>> {
    let conn = rusqlite::Connection::open(path)?;
    pm_index::internals::store::register_functions(&conn)?;
    Ok(conn)
}
