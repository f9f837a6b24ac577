//! The `pm health` verification memo over the real corpus: a warm run (memo) answers exactly
//! what a cold run (no memo) answers after every kind of change, reuses the entries of files
//! that did not change, and ignores a damaged memo.

use std::error::Error;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use pm_engine::read::TrackerView;
use pm_engine::read::health::{MemoStats, memo_path, tracker_health_with_stats};
use pm_engine::settings::SettingsEnv;
use pm_engine::tracker::Tracker;

type TestResult = Result<(), Box<dyn Error>>;

/// Runs the health checks; returns the checks and findings as JSON, and the memo statistics.
fn run(root: &Path) -> Result<(String, MemoStats), Box<dyn Error>> {
    let view = TrackerView::open(Tracker::at(root), &SettingsEnv::default())?;
    let (checks, findings, stats) = tracker_health_with_stats(&view, 0)?;
    Ok((serde_json::to_string(&(checks, findings))?, stats))
}

/// Runs warm, then cold (memo removed); asserts both answers are equal and returns the warm
/// run's statistics.
fn warm_equals_cold(root: &Path) -> Result<MemoStats, Box<dyn Error>> {
    let (warm, stats) = run(root)?;
    std::fs::remove_file(memo_path(&Tracker::at(root)))?;
    let (cold, cold_stats) = run(root)?;
    assert_eq!(warm, cold);
    assert_eq!(cold_stats.reused, 0);
    assert!(cold_stats.written);
    Ok(stats)
}

/// Returns `(item file, stream)` of the first item (by path) of `folder` that has a stream.
fn item_with_stream(
    root: &Path,
    folder: &str,
    skip: usize,
) -> Result<(PathBuf, PathBuf), Box<dyn Error>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(folder))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.sort();
    let found = files
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "toon"))
        .filter_map(|p| {
            let stem = p.file_stem()?.to_str()?.to_string();
            let stream = root.join("history").join(format!("{stem}.jsonl"));
            stream.is_file().then_some((p, stream))
        })
        .nth(skip)
        .ok_or("no item with a stream")?;
    Ok(found)
}

/// Rewrites one byte of `path` in place (same size, same inode) and restores its mtime.
fn edit_in_place(path: &Path, at: &str, with: &str) -> TestResult {
    assert_eq!(at.len(), with.len());
    let bytes = std::fs::read(path)?;
    let text = String::from_utf8(bytes)?;
    let offset = text.find(at).ok_or("text to edit not found")?;
    let mtime = std::fs::metadata(path)?.modified()?;
    let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
    file.seek(SeekFrom::Start(offset as u64))?;
    file.write_all(with.as_bytes())?;
    file.set_modified(mtime)?;
    drop(file);
    assert_eq!(std::fs::metadata(path)?.modified()?, mtime);
    Ok(())
}

fn append(path: &Path, text: &str) -> TestResult {
    let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
    file.write_all(text.as_bytes())?;
    Ok(())
}

#[test]
fn warm_runs_answer_as_cold_runs_across_changes() -> TestResult {
    let dir = pm_testkit::extract_corpus()?;
    let root = dir.path().join(".agents/pm");
    let memo = memo_path(&Tracker::at(&root));

    let (first, cold) = run(&root)?;
    assert_eq!((cold.reused, cold.hierarchy_reused), (0, false));
    assert!(cold.computed > 2000, "{cold:?}");
    assert!(cold.written && memo.is_file());
    let (second, warm) = run(&root)?;
    assert_eq!(first, second);
    assert_eq!(
        warm,
        MemoStats {
            reused: cold.computed,
            computed: 0,
            hierarchy_reused: true,
            written: false
        }
    );

    // An appended history line and an in-place edit of an item file (same size, mtime
    // restored): exactly those two ids are computed again.
    let (item_a, stream_a) = item_with_stream(&root, "tasks", 0)?;
    let (item_b, _) = item_with_stream(&root, "tasks", 1)?;
    append(&stream_a, "{\"not\":\"an entry\"}\n")?;
    edit_in_place(&item_b, "title: ", "title:\t")?;
    let stats = warm_equals_cold(&root)?;
    assert_eq!((stats.computed, stats.written), (2, true), "{stats:?}");
    assert_eq!(stats.reused, cold.computed - 2);

    // Deleted, added, conflicted and unparseable files.
    let (item_c, _) = item_with_stream(&root, "tasks", 2)?;
    let (item_d, stream_d) = item_with_stream(&root, "tasks", 3)?;
    std::fs::remove_file(&item_c)?;
    std::fs::copy(&item_a, root.join("tasks/pm-zzzz.toon"))?;
    append(&item_d, "<<<<<<< ours\n=======\n>>>>>>> theirs\n")?;
    append(&stream_d, "not json\n")?;
    let item_e = item_with_stream(&root, "tasks", 4)?.0;
    std::fs::copy(&item_e, item_e.with_extension("md"))?;
    let stats = warm_equals_cold(&root)?;
    assert_eq!(stats.computed, 4, "{stats:?}");
    let (broken, _) = run(&root)?;
    assert!(
        broken.contains("integrity_item_conflict_markers"),
        "{broken}"
    );
    assert!(
        broken.contains("history_drift_unreadable_stream"),
        "{broken}"
    );
    assert_ne!(broken, first);

    // A damaged memo (one flipped byte, then a truncated one) is ignored, never an error.
    let total = run(&root)?.1.reused;
    let mut bytes = std::fs::read(&memo)?;
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x20;
    std::fs::File::create(&memo)?.write_all(&bytes)?;
    let stats = warm_equals_cold(&root)?;
    assert_eq!((stats.reused, stats.computed), (0, total));
    let bytes = std::fs::read(&memo)?;
    std::fs::File::create(&memo)?.write_all(&bytes[..bytes.len() - 3])?;
    let stats = warm_equals_cold(&root)?;
    assert_eq!(stats.reused, 0);
    std::fs::File::create(&memo)?.write_all(b"not a memo")?;
    assert_eq!(warm_equals_cold(&root)?.reused, 0);

    // Deleting runtime/ only costs time.
    let (before, _) = run(&root)?;
    std::fs::remove_dir_all(root.join("runtime"))?;
    let (after, stats) = run(&root)?;
    assert_eq!(before, after);
    assert_eq!(stats.reused, 0);
    Ok(())
}

#[test]
fn a_memo_for_other_settings_is_ignored() -> TestResult {
    let dir = pm_testkit::extract_corpus()?;
    let root = dir.path().join(".agents/pm");
    let (first, _) = run(&root)?;
    let settings = root.join("settings.json");
    let text = std::fs::read_to_string(&settings)?;
    let changed = text.replacen("\"ttl_seconds\": 1800", "\"ttl_seconds\": 1900", 1);
    assert_ne!(changed, text);
    std::fs::File::create(&settings)?.write_all(changed.as_bytes())?;
    let stats = warm_equals_cold(&root)?;
    assert_eq!(stats.reused, 0, "{stats:?}");
    std::fs::File::create(&settings)?.write_all(text.as_bytes())?;
    let (again, _) = run(&root)?;
    assert_eq!(first, again);
    Ok(())
}
