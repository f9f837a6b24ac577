//! Answers that run while the freshness sweep does: taken when the projection is fresh and
//! settled, refused (and the change still seen) when the sweep disagrees with the snapshot.

use crate::fixture::{Fixture, TestResult, assert_same_listing, history_line, ids, schema, seeded};
use pm_engine::query::{Page, Query, Sort, Source};
use pm_index::internals::store::{IndexPaths, current_db, open_write};
use std::fs::FileTimes;

/// Builds the projection, then clears every racy mark, as settling does once files are older
/// than the racy window (tests cannot wait for the clock).
fn built_and_settled(f: &Fixture) -> TestResult {
    let schema = schema();
    let index = f.index(&schema);
    index.list(&Query::all(), &Sort::default(), &Page::all())?;
    let tracker = index.tracker().clone();
    let (db, _) = current_db(&IndexPaths::of(&tracker)).map_err(|c| format!("{c:?}"))?;
    open_write(&db)?.execute("UPDATE sources SET racy = 0", [])?;
    Ok(())
}

#[test]
fn a_fresh_settled_projection_answers_while_it_sweeps() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    built_and_settled(&f)?;
    let index = f.index(&schema);
    let listing = index.list(&Query::all(), &Sort::default(), &Page::all())?;
    assert_eq!(listing.source(), Source::Index);
    assert_eq!(ids(&listing), ["pm-a", "pm-b", "pm-c"]);
    let stats = index.stats(&Query::all())?.rows;
    let (counts, history) = (stats.counts, stats.history);
    assert_eq!(counts.iter().map(|r| r.count).sum::<usize>(), 3);
    assert_eq!((history.streams, history.entries), (1, 1));
    assert_eq!(
        index.speculative_answers(),
        2,
        "both reads ran beside their sweep"
    );
    Ok(())
}

#[test]
fn a_change_the_sweep_sees_discards_the_speculative_answer() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    built_and_settled(&f)?;
    // Same size, mtime restored: only ctime and inode tell the sweep.
    let path = f.root().join("tasks/pm-c.toon");
    let before = std::fs::metadata(&path)?;
    let text = std::fs::read_to_string(&path)?;
    let edited = text.replace("priority: 3", "priority: 0");
    assert_eq!(edited.len(), text.len());
    pm_engine::atomic::write(&path, edited.as_bytes())?;
    let file = std::fs::File::options().write(true).open(&path)?;
    file.set_times(FileTimes::new().set_modified(before.modified()?))?;
    drop(file);

    let index = f.index(&schema);
    let listing = index.list(&Query::all(), &Sort::default(), &Page::all())?;
    assert_eq!(
        index.speculative_answers(),
        0,
        "the stale snapshot was not used"
    );
    assert_eq!(ids(&listing), ["pm-c", "pm-a", "pm-b"]);
    let scan = f
        .scan_index(&schema)
        .list(&Query::all(), &Sort::default(), &Page::all())?;
    assert_same_listing(&listing, &scan, "after an in-place edit");
    Ok(())
}

#[test]
fn an_appended_history_line_discards_a_speculative_stats_answer() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    built_and_settled(&f)?;
    f.append_history(
        "pm-a",
        &[history_line("2026-01-02T00:00:00.000Z", "bob", "update")],
    )?;
    let index = f.index(&schema);
    // Items alone are unchanged: an item read may answer beside its sweep.
    index.list(&Query::all(), &Sort::default(), &Page::all())?;
    let history = index.stats(&Query::all())?.rows.history;
    assert_eq!((history.streams, history.entries), (1, 2));
    assert_eq!(
        index.speculative_answers(),
        1,
        "only the item read speculated"
    );
    Ok(())
}

#[test]
fn ranking_rows_answer_while_sweeping_and_keep_their_database_for_details() -> TestResult {
    let schema = schema();
    let f = seeded()?;
    built_and_settled(&f)?;
    let index = f.index(&schema);
    let corpus = index.rank_corpus(&Query::new())?;
    assert_eq!(corpus.source(), Source::Index);
    assert_eq!(index.speculative_answers(), 1);
    let rows: Vec<_> = corpus.matches.iter().map(|&i| &corpus.items[i]).collect();
    let details = index.rank_details(&corpus, &rows)?;
    let ids: Vec<String> = details
        .iter()
        .map(|d| d.as_ref().map_or_else(String::new, |s| s.id.clone()))
        .collect();
    let scan = f.scan_index(&schema);
    let scanned = scan.rank_corpus(&Query::new())?;
    let scan_rows: Vec<_> = scanned.matches.iter().map(|&i| &scanned.items[i]).collect();
    let want: Vec<String> = scan
        .rank_details(&scanned, &scan_rows)?
        .iter()
        .map(|d| d.as_ref().map_or_else(String::new, |s| s.id.clone()))
        .collect();
    assert_eq!(ids, want);
    assert_eq!(ids, ["pm-a", "pm-b", "pm-c"]);
    Ok(())
}
