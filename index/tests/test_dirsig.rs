//! The opt-in `directories` freshness mode: reads trust the projection while the folders'
//! signatures equal those recorded after a confirming sweep, see every entry added, removed or
//! renamed, and — as documented — miss a file rewritten in place.

use crate::fixture::{Fixture, TestResult, assert_same_listing, ids, item, schema, seeded};
use pm_engine::query::{Page, Query, Sort};
use pm_engine::schema::RuntimeSchema;
use pm_index::Freshness;
use pm_index::{Answer, ListPage};
use pm_index::{EventQuery, Index, IndexOptions};
use serde_json::json;
use std::io::Write;

fn directories<'a>(f: &Fixture, schema: &'a RuntimeSchema) -> Index<'a> {
    Index::open(
        &f.tracker,
        schema,
        IndexOptions {
            freshness: Freshness::Directories,
            ..IndexOptions::default()
        },
    )
}

fn list(index: &Index<'_>) -> Result<Answer<ListPage>, Box<dyn std::error::Error>> {
    Ok(index.list(&Query::all(), &Sort::default(), &Page::all())?)
}

/// Waits (without sleeping) until the filesystem clock has moved past every change made so
/// far, so that the folders' signatures count as settled.
fn settle(f: &Fixture) -> TestResult {
    let probe = f.dir.path().join("clock-probe");
    let newest = ["tasks", "history", "runtime/index"]
        .iter()
        .filter_map(|d| std::fs::metadata(f.root().join(d)).ok())
        .filter_map(|m| m.modified().ok())
        .max()
        .ok_or("no folders")?;
    for _ in 0..1_000_000 {
        let mut file = std::fs::File::create(&probe)?;
        file.write_all(b"x")?;
        if file.metadata()?.modified()? > newest {
            return Ok(());
        }
    }
    Err("the filesystem clock did not advance".into())
}

#[test]
fn unchanged_folders_are_trusted_and_added_files_are_seen() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    let index = directories(&f, &schema);
    list(&index)?; // builds
    settle(&f)?;
    list(&index)?; // a full sweep confirms and records the folders (if the build did not)
    let before = index.trusted_answers();
    let trusted = list(&index)?;
    assert_eq!(index.trusted_answers(), before + 1);
    assert_eq!(ids(&trusted), ["pm-a", "pm-b", "pm-c"]);
    // A new file (written by rename, as every atomic write is) changes the folder.
    f.write_item("tasks", item("pm-d", json!({"priority": 0})), "")?;
    let seen = list(&index)?;
    assert_eq!(index.trusted_answers(), before + 1);
    assert_eq!(ids(&seen), ["pm-d", "pm-a", "pm-b", "pm-c"]);
    let scan = list(&f.scan_index(&schema))?;
    assert_same_listing(&seen, &scan, "after an added file");
    // So does a removal, even with the folder record in place.
    settle(&f)?;
    list(&index)?;
    std::fs::remove_file(f.root().join("tasks/pm-b.toon"))?;
    assert_eq!(ids(&list(&index)?), ["pm-d", "pm-a", "pm-c"]);
    Ok(())
}

#[test]
fn a_file_rewritten_in_place_is_missed_only_in_this_mode() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    let index = directories(&f, &schema);
    list(&index)?;
    settle(&f)?;
    list(&index)?;
    let before = index.trusted_answers();
    let path = f.root().join("tasks/pm-c.toon");
    let text = std::fs::read_to_string(&path)?;
    let edited = text.replace("priority: 3", "priority: 0");
    std::fs::File::options()
        .write(true)
        .open(&path)?
        .write_all(edited.as_bytes())?;
    assert_eq!(ids(&list(&index)?), ["pm-a", "pm-b", "pm-c"]);
    assert_eq!(index.trusted_answers(), before + 1);
    // The default mode stats every file and sees it.
    assert_eq!(ids(&list(&f.index(&schema))?), ["pm-c", "pm-a", "pm-b"]);
    Ok(())
}

#[test]
fn an_items_only_confirmation_does_not_cover_history_reads() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    let index = directories(&f, &schema);
    list(&index)?;
    settle(&f)?;
    list(&index)?; // records an items-only confirmation
    list(&index)?;
    let before = index.trusted_answers();
    assert!(before >= 1);
    let events = index.events(&EventQuery::default())?; // not covered: sweeps history
    assert_eq!(index.trusted_answers(), before);
    assert_eq!(events.events.len(), 1);
    index.events(&EventQuery::default())?; // covered by the record that sweep wrote
    assert_eq!(index.trusted_answers(), before + 1);
    list(&index)?; // the wider record covers item reads too
    assert_eq!(index.trusted_answers(), before + 2);
    Ok(())
}

#[test]
fn folders_not_older_than_the_filesystem_clock_are_never_recorded() -> TestResult {
    use pm_index::internals::dirsig;
    use pm_index::internals::store::IndexPaths;
    let schema = schema();
    let f = seeded()?;
    let index = directories(&f, &schema);
    list(&index)?;
    settle(&f)?;
    let paths = IndexPaths::of(&f.tracker);
    let sigs = dirsig::take(&f.tracker, &schema, &paths, true).ok_or("take")?;
    assert!(sigs.settled);
    // A folder changed in the current tick of the filesystem clock (here: dated ahead of it)
    // could change again unseen within that tick, so its signature must not be recorded.
    let tasks = std::fs::File::open(f.root().join("tasks"))?;
    let ahead = std::time::UNIX_EPOCH + std::time::Duration::from_secs(4_102_444_800);
    tasks.set_times(std::fs::FileTimes::new().set_modified(ahead))?;
    let racing = dirsig::take(&f.tracker, &schema, &paths, true).ok_or("take")?;
    assert!(!racing.settled);
    list(&index)?;
    assert_eq!(dirsig::recorded(&paths), None);
    list(&index)?;
    assert_eq!(index.trusted_answers(), 0);
    Ok(())
}
