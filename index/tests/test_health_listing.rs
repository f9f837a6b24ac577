//! `pm health` confirms the projection's freshness from its own listing of the tracker: the
//! digest of that listing equals the freshness sweep's over the same files, odd entries
//! included, so one stat per file serves both checks.

use crate::fixture::{Fixture, TestResult, history_line, item, seeded};
use pm_engine::read::TrackerView;
use pm_engine::read::health::{ListedSources, tracker_health_listed};
use pm_engine::settings::SettingsEnv;
use pm_index::IndexState;
use pm_index::internals::source::SweepScope;
use pm_index::internals::sweep::{DigestSweep, digest_sweep};
use pm_index::{Index, IndexOptions};
use serde_json::json;
use std::sync::Mutex;

/// The digest of a health run's listing (`None`: the listing was partial).
fn listed_digest(f: &Fixture) -> Result<Option<DigestSweep>, Box<dyn std::error::Error>> {
    let view = TrackerView::open(f.tracker.clone(), &SettingsEnv::default())?;
    let got = Mutex::new(None);
    let on_listed = |sources: &ListedSources<'_>| {
        *got.lock().expect("lock") = Some(DigestSweep::of_health_listing(sources));
    };
    tracker_health_listed(&view, 0, Some(&on_listed))?;
    let got = got.into_inner()?;
    Ok(got.ok_or("the listing was not handed out")?)
}

/// A tracker with entries the sweep must skip or key by their own status: a folder named like an item file, a
/// file that is not an item, a folder and a nameless file in `history/`, a stream without an
/// item, and (on Unix) an item file that is a symbolic link.
fn odd_tracker() -> Result<Fixture, Box<dyn std::error::Error>> {
    let f = seeded()?;
    let root = f.root();
    std::fs::create_dir_all(root.join("tasks/pm-dir.toon"))?;
    pm_engine::atomic::write(&root.join("tasks/notes.txt"), b"not an item")?;
    std::fs::create_dir_all(root.join("history/odd.jsonl"))?;
    pm_engine::atomic::write(&root.join("history/.jsonl"), b"")?;
    f.append_history(
        "pm-orphan",
        &[history_line("2026-01-02T00:00:00.000Z", "a", "create")],
    )?;
    #[cfg(unix)]
    {
        let target = f.write_item("issues", item("pm-z", json!({"type": "Issue"})), "")?;
        let moved = root.join("pm-z.toon.real");
        pm_engine::atomic::write(&moved, &std::fs::read(&target)?)?;
        std::fs::remove_file(&target)?;
        std::os::unix::fs::symlink(&moved, &target)?;
    }
    Ok(f)
}

#[test]
fn the_listing_digest_equals_the_sweep_digest() -> TestResult {
    let f = odd_tracker()?;
    let view = TrackerView::open(f.tracker.clone(), &SettingsEnv::default())?;
    let swept = digest_sweep(&f.tracker, view.schema(), SweepScope::All, None)?;
    let listed = listed_digest(&f)?.ok_or("partial listing")?;
    assert!(swept.count > 0);
    assert_eq!((listed.digest, listed.count), (swept.digest, swept.count));
    Ok(())
}

#[test]
fn health_from_the_listing_sees_fresh_and_stale() -> TestResult {
    let f = odd_tracker()?;
    let view = TrackerView::open(f.tracker.clone(), &SettingsEnv::default())?;
    let index = Index::open(&f.tracker, view.schema(), IndexOptions::default());
    index.rebuild(std::time::Duration::from_secs(10))?;
    let listed = listed_digest(&f)?;
    let health = index.health_swept(|| listed);
    assert_eq!(health.state, IndexState::Fresh);
    assert_eq!(health.pending_changes, Some(0));
    // An edit the listing sees: the digest no longer matches and the full comparison names it.
    let path = f.root().join("tasks/pm-b.toon");
    let text = std::fs::read_to_string(&path)?;
    pm_engine::atomic::write(&path, text.replace("priority: 2", "priority: 0").as_bytes())?;
    let listed = listed_digest(&f)?;
    let health = index.health_swept(|| listed);
    assert_eq!(health.state, IndexState::Stale);
    assert_eq!(health.pending_changes, Some(1));
    Ok(())
}

#[test]
fn an_unreadable_type_folder_makes_the_listing_partial() -> TestResult {
    let f = seeded()?;
    // A file where a type folder belongs cannot be listed (the sweep reports it too).
    pm_engine::atomic::write(&f.root().join("issues"), b"not a folder")?;
    let view = TrackerView::open(f.tracker.clone(), &SettingsEnv::default())?;
    let swept = digest_sweep(&f.tracker, view.schema(), SweepScope::All, None)?;
    assert_eq!(swept.unreadable_dirs.len(), 1);
    assert!(listed_digest(&f)?.is_none());
    Ok(())
}
