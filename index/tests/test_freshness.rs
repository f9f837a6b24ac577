//! Freshness: every kind of external change is seen by the next read, answered from the index
//! (repaired incrementally), and equal to a scan.

use crate::fixture::{
    Fixture, TestResult, assert_same_listing, history_line, ids, item, schema, seeded,
};
use pm_engine::query::{Page, Query, Sort, Source};
use pm_index::{DocumentParts, EventQuery};
use serde_json::json;
use std::fs::FileTimes;

fn list_ids(
    f: &Fixture,
    schema: &pm_engine::schema::RuntimeSchema,
) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let index = f.index(schema);
    let listing = index.list(&Query::all(), &Sort::default(), &Page::all())?;
    assert_eq!(listing.source(), Source::Index, "{:?}", listing.notices);
    let scan = f
        .scan_index(schema)
        .list(&Query::all(), &Sort::default(), &Page::all())?;
    assert_same_listing(&listing, &scan, "after change");
    Ok(ids(&listing))
}

#[test]
fn in_place_edit_with_same_size_and_restored_mtime_is_seen() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    assert_eq!(list_ids(&f, &schema)?, ["pm-a", "pm-b", "pm-c"]);
    let path = f.root().join("tasks/pm-c.toon");
    let before = std::fs::metadata(&path)?;
    let text = std::fs::read_to_string(&path)?;
    let edited = text.replace("priority: 3", "priority: 0");
    assert_eq!(edited.len(), text.len());
    pm_engine::atomic::write(&path, edited.as_bytes())?;
    // Restore the old mtime on the (renamed-over) file: only ctime/inode can tell.
    let file = std::fs::File::options().write(true).open(&path)?;
    file.set_times(FileTimes::new().set_modified(before.modified()?))?;
    assert_eq!(list_ids(&f, &schema)?, ["pm-c", "pm-a", "pm-b"]);
    Ok(())
}

#[test]
fn in_place_overwrite_without_rename_is_seen() -> TestResult {
    use std::io::{Seek, SeekFrom, Write};
    let schema = schema();
    let f = seeded()?;
    list_ids(&f, &schema)?;
    let path = f.root().join("tasks/pm-b.toon");
    let before = std::fs::metadata(&path)?;
    let text = std::fs::read_to_string(&path)?;
    let edited = text.replace("priority: 2", "priority: 0");
    let mut file = std::fs::File::options().write(true).open(&path)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(edited.as_bytes())?;
    file.set_times(FileTimes::new().set_modified(before.modified()?))?;
    drop(file);
    assert_eq!(std::fs::metadata(&path)?.len(), before.len());
    assert_eq!(list_ids(&f, &schema)?, ["pm-b", "pm-a", "pm-c"]);
    Ok(())
}

#[test]
fn added_removed_and_renamed_files_are_seen() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    list_ids(&f, &schema)?;
    f.write_item("tasks", item("pm-d", json!({"priority": 0})), "")?;
    assert_eq!(list_ids(&f, &schema)?, ["pm-d", "pm-a", "pm-b", "pm-c"]);
    std::fs::remove_file(f.root().join("tasks/pm-a.toon"))?;
    assert_eq!(list_ids(&f, &schema)?, ["pm-d", "pm-b", "pm-c"]);
    // Replace by rename (a `git checkout` style write) with different content.
    let tmp = f.root().join("tasks/.tmp-pm-b");
    let text = std::fs::read_to_string(f.root().join("tasks/pm-b.toon"))?
        .replace("priority: 2", "priority: 4");
    pm_engine::atomic::write(&tmp, text.as_bytes())?;
    pm_engine::atomic::write(&f.root().join("tasks/pm-b.toon"), text.as_bytes())?;
    std::fs::remove_file(tmp)?;
    assert_eq!(list_ids(&f, &schema)?, ["pm-d", "pm-c", "pm-b"]);
    Ok(())
}

#[test]
fn history_appended_by_another_process_is_seen() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    let index = f.index(&schema);
    let first = index.events(&EventQuery::default())?;
    assert_eq!(first.events.len(), 1);
    f.append_history(
        "pm-a",
        &[history_line("2026-01-02T00:00:00.000Z", "bob", "update")],
    )?;
    f.append_history(
        "pm-b",
        &[history_line("2026-01-03T00:00:00.000Z", "cid", "create")],
    )?;
    // A list depends on item files only: it answers from the index without sweeping history,
    // and the appended lines are still caught by the next read that uses events.
    assert_eq!(list_ids(&f, &schema)?, ["pm-a", "pm-b", "pm-c"]);
    let page = index.events(&EventQuery::default())?;
    assert_eq!(page.source(), Source::Index);
    let got: Vec<(String, i64, String)> = page
        .events
        .iter()
        .map(|e| (e.stream.clone(), e.position, e.author.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("pm-a".to_string(), 0, "ann".to_string()),
            ("pm-a".to_string(), 1, "bob".to_string()),
            ("pm-b".to_string(), 0, "cid".to_string()),
        ]
    );
    let scan = f.scan_index(&schema).events(&EventQuery::default())?;
    assert_eq!(page.events, scan.events);
    Ok(())
}

#[test]
fn deleting_runtime_changes_no_answer() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    let before = list_ids(&f, &schema)?;
    std::fs::remove_dir_all(f.tracker.runtime_dir())?;
    assert_eq!(list_ids(&f, &schema)?, before);
    Ok(())
}

#[test]
fn commit_observer_applies_exactly_the_committed_paths() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    let index = f.index(&schema);
    list_ids(&f, &schema)?;
    let written = f.write_item("tasks", item("pm-d", json!({"priority": 0})), "")?;
    let appended = f.append_history(
        "pm-d",
        &[history_line("2026-01-05T00:00:00.000Z", "ann", "create")],
    )?;
    std::fs::remove_file(f.root().join("tasks/pm-c.toon"))?;
    index.observe(&pm_engine::commit::Commit {
        ids: vec!["pm-d".into(), "pm-c".into()],
        written: vec![written],
        removed: vec![f.root().join("tasks/pm-c.toon")],
        appended: vec![appended],
    });
    let health = index.health();
    assert_eq!(health.pending_changes, Some(0), "{health:?}");
    assert_eq!(health.items, Some(3));
    assert_eq!(list_ids(&f, &schema)?, ["pm-d", "pm-a", "pm-b"]);
    Ok(())
}

#[test]
fn documents_come_from_the_index() -> TestResult {
    let schema = schema();
    let f = Fixture::new()?;
    f.write_item(
        "tasks",
        item(
            "pm-a",
            json!({"comments": [{"created_at": "2026-01-01T00:00:00.000Z", "author": "ann", "text": "zebra note"}]}),
        ),
        "A body about giraffes",
    )?;
    let index = f.index(&schema);
    let paths = vec![
        "tasks/pm-a.toon".to_string(),
        "tasks/missing.toon".to_string(),
    ];
    let found = index.documents(&paths, DocumentParts::Whole)?;
    let (source, docs) = (found.source(), found.rows);
    assert_eq!(source, Source::Index);
    let scanned = f
        .scan_index(&schema)
        .documents(&paths, DocumentParts::Whole)?
        .rows;
    assert_eq!(docs, scanned);
    assert!(docs[0].is_some() && docs[1].is_none());
    let heavy = index.documents(&paths, DocumentParts::Heavy)?.rows;
    let heavy_scanned = f
        .scan_index(&schema)
        .documents(&paths, DocumentParts::Heavy)?
        .rows;
    assert_eq!(heavy, heavy_scanned);
    let doc = heavy[0].as_ref().expect("pm-a is stored");
    let keys: Vec<&str> = doc.metadata.keys().map(String::as_str).collect();
    assert_eq!(keys, ["comments"]);
    assert_eq!(doc.body, "A body about giraffes");
    Ok(())
}

#[test]
fn incremental_repairs_keep_the_digests_of_a_fresh_build() -> TestResult {
    use pm_index::internals::digest::DigestTotals;
    use pm_index::internals::store::{IndexPaths, current_db, open_read};
    let schema = schema();
    let f = seeded()?;
    let totals = |f: &Fixture| -> Result<DigestTotals, Box<dyn std::error::Error>> {
        let (db, _) = current_db(&IndexPaths::of(&f.tracker)).map_err(|c| format!("{c:?}"))?;
        Ok(DigestTotals::load(&open_read(&db)?)?)
    };
    list_ids(&f, &schema)?;
    f.write_item("tasks", item("pm-d", json!({"priority": 0})), "")?;
    std::fs::remove_file(f.root().join("tasks/pm-b.toon"))?;
    f.append_history(
        "pm-a",
        &[history_line("2026-01-02T00:00:00.000Z", "bob", "update")],
    )?;
    f.append_history(
        "pm-d",
        &[history_line("2026-01-02T00:00:00.000Z", "bob", "create")],
    )?;
    list_ids(&f, &schema)?;
    f.index(&schema).events(&EventQuery::default())?;
    let repaired = totals(&f)?;
    assert_eq!((repaired.items_count, repaired.all_count), (3, 5));
    f.index(&schema)
        .rebuild(std::time::Duration::from_secs(5))?;
    assert_eq!(totals(&f)?, repaired);
    Ok(())
}

#[test]
fn check_once_facades_answer_from_their_first_check() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    let options = pm_index::IndexOptions {
        check_once: true,
        ..pm_index::IndexOptions::default()
    };
    let once = pm_index::Index::open(&f.tracker, &schema, options);
    let first = once.list(&Query::all(), &Sort::default(), &Page::all())?;
    assert_eq!(ids(&first), ["pm-a", "pm-b", "pm-c"]);
    f.write_item("tasks", item("pm-d", json!({"priority": 0})), "")?;
    // The same facade (one CLI command) keeps the snapshot its first check confirmed …
    let again = once.list(&Query::all(), &Sort::default(), &Page::all())?;
    assert_eq!(ids(&again), ["pm-a", "pm-b", "pm-c"]);
    // … while the next command's facade checks again and sees the new file.
    assert_eq!(list_ids(&f, &schema)?, ["pm-d", "pm-a", "pm-b", "pm-c"]);
    Ok(())
}

#[test]
fn children_match_parent_case_and_spacing_like_the_scan() -> TestResult {
    let schema = schema();
    let f = Fixture::new()?;
    f.write_item("tasks", item("pm-a", json!({"parent": " PM-P "})), "")?;
    f.write_item("tasks", item("pm-b", json!({"parent": "pm-p"})), "")?;
    f.write_item("tasks", item("pm-c", json!({"parent": "pm-q"})), "")?;
    f.write_item("tasks", item("pm-p", json!({})), "")?;
    let child_ids = |found: (Vec<serde_json::Map<String, serde_json::Value>>, usize)| {
        let mut ids: Vec<String> = found
            .0
            .iter()
            .filter_map(|m| m.get("id").and_then(|v| v.as_str()).map(str::to_owned))
            .collect();
        ids.sort();
        (ids, found.1)
    };
    let indexed = child_ids(
        f.index(&schema)
            .children("pm-p")
            .map(|a| (a.rows.items, a.rows.inspected))?,
    );
    assert_eq!(indexed, (vec!["pm-a".to_string(), "pm-b".to_string()], 4));
    assert_eq!(
        child_ids(
            f.scan_index(&schema)
                .children("pm-p")
                .map(|a| (a.rows.items, a.rows.inspected))?
        ),
        indexed
    );
    Ok(())
}

#[test]
fn pipelined_digest_sweep_equals_the_enumerated_sweep_across_batches() -> TestResult {
    use pm_index::internals::source::{SweepScope, sweep};
    use pm_index::internals::sweep::digest_sweep;
    use std::io::Write;
    let schema = schema();
    let f = Fixture::new()?;
    // More entries than one sweep batch (4,096), split unevenly over folders so batches
    // straddle folder ends, with entries the sweep must skip in between.
    let mut written = 0usize;
    for (folder, count) in [("tasks", 3_000), ("epics", 0), ("issues", 2_500)] {
        let dir = f.root().join(folder);
        std::fs::create_dir_all(&dir)?;
        for n in 0..count {
            let mut file = std::fs::File::create(dir.join(format!("pm-{folder}-{n}.toon")))?;
            file.write_all(format!("id: pm-{folder}-{n}\n").as_bytes())?;
            written += 1;
        }
        std::fs::File::create(dir.join("notes.txt"))?;
        std::fs::create_dir_all(dir.join("pm-sub.toon"))?;
    }
    let history = f.root().join("history");
    std::fs::create_dir_all(&history)?;
    for n in 0..1_500 {
        std::fs::File::create(history.join(format!("pm-h{n}.jsonl")))?.write_all(b"{}\n")?;
    }
    let full = sweep(&f.tracker, &schema)?;
    let all = digest_sweep(&f.tracker, &schema, SweepScope::All, None)?;
    assert_eq!((all.digest, all.count), (full.digest, full.files.len()));
    assert_eq!(all.count, written + 1_500);
    let items = digest_sweep(&f.tracker, &schema, SweepScope::Items, None)?;
    let item_digest = full
        .files
        .iter()
        .filter(|(file, _)| file.item.is_some())
        .fold(0u64, |acc, (file, sig)| {
            acc.wrapping_add(sig.contribution(&file.rel))
        });
    assert_eq!((items.digest, items.count), (item_digest, written));
    let streams = digest_sweep(&f.tracker, &schema, SweepScope::History, None)?;
    assert_eq!(
        (streams.digest, streams.count),
        (all.digest.wrapping_sub(items.digest), 1_500)
    );
    Ok(())
}

#[test]
fn recorded_listings_give_the_listed_digest_and_see_every_change() -> TestResult {
    use pm_index::internals::folder_listings::FolderListings;
    use pm_index::internals::source::{SweepScope, sweep};
    use pm_index::internals::sweep::{DigestSweep, digest_sweep};
    let schema = schema();
    let f = seeded()?;
    let listed = |f: &Fixture| -> Result<DigestSweep, Box<dyn std::error::Error>> {
        Ok(digest_sweep(&f.tracker, &schema, SweepScope::All, None)?)
    };
    std::fs::create_dir_all(f.root().join("runtime/index"))?;
    let listings = FolderListings::settled_before(f.root().join("runtime/index/listing"), i64::MAX);
    let recorded = digest_sweep(&f.tracker, &schema, SweepScope::All, Some(&listings))?;
    assert_eq!(recorded.recalled, 0);
    let expect = |f: &Fixture, got: &DigestSweep| -> TestResult {
        let full = sweep(&f.tracker, &schema)?;
        assert_eq!((got.digest, got.count), (full.digest, full.files.len()));
        Ok(())
    };
    expect(&f, &recorded)?;
    // Every existing folder (tasks and history here) now answers from its listing.
    let recalled = digest_sweep(&f.tracker, &schema, SweepScope::All, Some(&listings))?;
    assert_eq!(recalled.recalled, 2, "{recalled:?}");
    expect(&f, &recalled)?;
    // An in-place edit keeping size and mtime: the folder keeps its signature, the file's
    // change time moves, and the recalled sweep sees it.
    let path = f.root().join("tasks/pm-a.toon");
    let before = std::fs::read(&path)?;
    let modified = std::fs::metadata(&path)?.modified()?;
    let mut edited = before.clone();
    let last = edited.len() - 2;
    edited[last] = if edited[last] == b'x' { b'y' } else { b'x' };
    let file = std::fs::OpenOptions::new().write(true).open(&path)?;
    std::io::Write::write_all(&mut &file, &edited)?;
    file.set_modified(modified)?;
    drop(file);
    let after = digest_sweep(&f.tracker, &schema, SweepScope::All, Some(&listings))?;
    assert_eq!(after.recalled, 2);
    assert_ne!(after.digest, recalled.digest);
    expect(&f, &after)?;
    // A new item file and a removed stream change their folders: both are listed again, and
    // the listings recorded then serve the next sweep.
    f.write_item("tasks", item("pm-new", json!({})), "")?;
    std::fs::remove_file(f.root().join("history/pm-a.jsonl"))?;
    let relisted = digest_sweep(&f.tracker, &schema, SweepScope::All, Some(&listings))?;
    assert_eq!(relisted.recalled, 0);
    expect(&f, &relisted)?;
    assert_eq!(relisted.digest, listed(&f)?.digest);
    let again = digest_sweep(&f.tracker, &schema, SweepScope::All, Some(&listings))?;
    assert_eq!((again.recalled, again.digest), (2, relisted.digest));
    // Scopes share the listings: an items sweep recalls the item folder alone.
    let items = digest_sweep(&f.tracker, &schema, SweepScope::Items, Some(&listings))?;
    assert_eq!(items.recalled, 1);
    assert_eq!(
        items.digest,
        digest_sweep(&f.tracker, &schema, SweepScope::Items, None)?.digest
    );
    Ok(())
}

#[test]
fn history_scope_is_confirmed_by_the_history_streams_alone() -> TestResult {
    use pm_index::internals::freshness::check;
    use pm_index::internals::source::SweepScope;
    use pm_index::internals::store::{IndexPaths, current_db, open_read};
    let schema = schema();
    let f = seeded()?;
    list_ids(&f, &schema)?;
    let (db, _) = current_db(&IndexPaths::of(&f.tracker)).map_err(|c| format!("{c:?}"))?;
    let conn = open_read(&db)?;
    let checked =
        |scope| check(&conn, &f.tracker, &schema, scope, None).map_err(|e| format!("{e:?}"));
    // A new item file is a change for item reads, none for reads of the event projection.
    f.write_item("tasks", item("pm-d", json!({"priority": 0})), "")?;
    let streams = checked(SweepScope::History)?;
    assert!(streams.digest_matched && streams.is_fresh(), "{streams:?}");
    let items = checked(SweepScope::Items)?;
    assert!(!items.digest_matched && !items.is_fresh());
    assert!(!checked(SweepScope::All)?.digest_matched);
    // An appended line is a change for the history scope.
    f.append_history(
        "pm-a",
        &[history_line("2026-01-02T00:00:00.000Z", "bob", "update")],
    )?;
    let streams = checked(SweepScope::History)?;
    assert!(!streams.digest_matched && !streams.is_fresh());
    drop(conn);
    // The events read repairs the projection and answers with the new line.
    let page = f.index(&schema).events(&EventQuery::default())?;
    assert_eq!(page.source(), Source::Index);
    assert_eq!(page.events.len(), 2);
    Ok(())
}
