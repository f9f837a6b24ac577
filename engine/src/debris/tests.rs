use std::fs::File;
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use super::*;

type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

/// Gives `path` (a file or a directory) a modification time of 2020-01-01: years old.
fn age(path: &Path) -> TestResult {
    File::open(path)?.set_modified(UNIX_EPOCH + Duration::from_secs(1_577_836_800))?;
    Ok(())
}

fn plant(root: &Path, rel: &str, old: bool) -> TestResult {
    let path = root.join(rel);
    crate::atomic::write(&path, b"partial")?;
    if old {
        age(&path)?;
    }
    Ok(())
}

#[test]
fn only_our_names_match() {
    assert!(is_lock_staging_name("pm-a.lock.4242-0123456789abcdef.tmp"));
    assert!(!is_lock_staging_name("pm-a.lock.4242-0123456789abcde.tmp"));
    assert!(!is_lock_staging_name(".lock.4242-0123456789abcdef.tmp"));
    assert!(!is_lock_staging_name("pm-a.lck.4242-0123456789abcdef.tmp"));
    assert!(!is_lock_staging_name("pm-a.lock.x42-0123456789abcdef.tmp"));
    assert!(!is_lock_staging_name("pm-a.lock"));
    assert!(is_gate_name("pm-a.lock.stale-cleanup"));
    assert!(!is_gate_name(".lock.stale-cleanup"));
    assert!(!is_gate_name("pm-a.stale-cleanup"));

    let file = EntryKind::File(1);
    let temp = ".pm-a.toon.123.4.deadbeef.tmp";
    let staging = "pm-a.lock.1-0123456789abcdef.tmp";
    assert_eq!(
        classify(Place::Folder, temp, file),
        Some(DebrisKind::WriteTemp)
    );
    assert_eq!(
        classify(Place::Locks, temp, file),
        Some(DebrisKind::WriteTemp)
    );
    assert_eq!(
        classify(Place::Locks, staging, file),
        Some(DebrisKind::LockStaging)
    );
    // Patterns of the locks folder mean nothing elsewhere, and only files are temp files.
    assert_eq!(classify(Place::Folder, staging, file), None);
    assert_eq!(classify(Place::Folder, temp, EntryKind::Directory), None);
    assert_eq!(classify(Place::Folder, temp, EntryKind::Symlink), None);
    assert_eq!(
        classify(
            Place::Locks,
            "pm-a.lock.stale-cleanup",
            EntryKind::Directory
        ),
        Some(DebrisKind::CleanupGate)
    );
    assert_eq!(
        classify(
            Place::Folder,
            "pm-a.lock.stale-cleanup",
            EntryKind::Directory
        ),
        None
    );
    for foreign in [
        ".notes.tmp",
        "notes.tmp",
        ".pm-a.toon.tmp",
        "pm-a.toon",
        "pm-a.lock",
    ] {
        assert_eq!(classify(Place::Folder, foreign, file), None, "{foreign}");
        assert_eq!(classify(Place::Locks, foreign, file), None, "{foreign}");
    }
}

#[test]
fn abandoned_means_strictly_older_than_ten_minutes() {
    assert_eq!(DEBRIS_MIN_AGE_MS, 600_000);
    assert!(!is_abandoned_age(0));
    assert!(!is_abandoned_age(-5_000));
    assert!(!is_abandoned_age(600_000));
    assert!(is_abandoned_age(600_001));
}

#[test]
fn survey_finds_our_leftovers_and_remove_takes_only_abandoned_ones() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let root = tmp.path();
    let old = [
        ".settings.json.7.1.0a1b2c3d.tmp",
        "schema/.types.json.7.2.0a1b2c3d.tmp",
        "history/.pm-a.jsonl.7.3.0a1b2c3d.tmp",
        "tasks/.pm-a.toon.7.4.deadbeef.tmp",
        "locks/pm-a.lock.7-0123456789abcdef.tmp",
    ];
    for rel in old {
        plant(root, rel, true)?;
    }
    plant(root, "tasks/.pm-b.toon.7.5.deadbeef.tmp", false)?;
    // Not ours, however old: a user's temp file, a lock, a staging name outside locks/.
    for rel in [
        "tasks/.notes.tmp",
        "locks/pm-c.lock",
        "tasks/pm-a.lock.7-0123456789abcdef.tmp",
    ] {
        plant(root, rel, true)?;
    }
    // An abandoned gate, and a gate-named directory holding someone else's file.
    plant(root, "locks/pm-a.lock.stale-cleanup/owner.json", true)?;
    age(&root.join("locks/pm-a.lock.stale-cleanup"))?;
    plant(root, "locks/pm-d.lock.stale-cleanup/mine.txt", true)?;
    age(&root.join("locks/pm-d.lock.stale-cleanup"))?;

    let tracker = Tracker::at(root);
    let types = TypeRegistry::builtin();
    let found = survey(&tracker, &types)?;
    let paths: Vec<(&str, DebrisKind, bool)> = found
        .iter()
        .map(|d| (d.path.as_str(), d.kind, d.abandoned()))
        .collect();
    assert_eq!(
        paths,
        vec![
            (
                ".settings.json.7.1.0a1b2c3d.tmp",
                DebrisKind::WriteTemp,
                true
            ),
            (
                "history/.pm-a.jsonl.7.3.0a1b2c3d.tmp",
                DebrisKind::WriteTemp,
                true
            ),
            (
                "locks/pm-a.lock.7-0123456789abcdef.tmp",
                DebrisKind::LockStaging,
                true
            ),
            (
                "locks/pm-a.lock.stale-cleanup",
                DebrisKind::CleanupGate,
                true
            ),
            (
                "schema/.types.json.7.2.0a1b2c3d.tmp",
                DebrisKind::WriteTemp,
                true
            ),
            (
                "tasks/.pm-a.toon.7.4.deadbeef.tmp",
                DebrisKind::WriteTemp,
                true
            ),
            (
                "tasks/.pm-b.toon.7.5.deadbeef.tmp",
                DebrisKind::WriteTemp,
                false
            ),
        ]
    );
    for debris in &found {
        assert_eq!(
            remove(&tracker, debris)?,
            debris.abandoned(),
            "{}",
            debris.path
        );
    }
    for rel in old {
        assert!(!root.join(rel).exists(), "{rel}");
    }
    assert!(!root.join("locks/pm-a.lock.stale-cleanup").exists());
    for rel in [
        "tasks/.pm-b.toon.7.5.deadbeef.tmp",
        "tasks/.notes.tmp",
        "locks/pm-c.lock",
        "tasks/pm-a.lock.7-0123456789abcdef.tmp",
        "locks/pm-d.lock.stale-cleanup/mine.txt",
    ] {
        assert!(root.join(rel).exists(), "{rel}");
    }
    // A second pass finds only the fresh temp file; a vanished entry is not removed twice.
    let again = survey(&tracker, &types)?;
    assert_eq!(again.len(), 1);
    assert!(!remove(&tracker, &found[0])?);
    Ok(())
}

#[cfg(unix)]
#[test]
fn symlinked_folders_and_entries_are_never_followed() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let root = tmp.path().join("tracker");
    let outside = tmp.path().join("outside");
    plant(&outside, ".pm-a.toon.7.4.deadbeef.tmp", true)?;
    std::fs::create_dir_all(&root)?;
    std::os::unix::fs::symlink(&outside, root.join("tasks"))?;
    std::fs::create_dir_all(root.join("history"))?;
    std::os::unix::fs::symlink(
        outside.join(".pm-a.toon.7.4.deadbeef.tmp"),
        root.join("history/.pm-a.jsonl.7.3.0a1b2c3d.tmp"),
    )?;
    let tracker = Tracker::at(&root);
    assert!(survey(&tracker, &TypeRegistry::builtin())?.is_empty());
    assert!(outside.join(".pm-a.toon.7.4.deadbeef.tmp").exists());
    Ok(())
}
