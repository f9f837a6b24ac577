//! Crash-safe file primitives: atomic replace (temp file + fsync + rename + directory fsync),
//! removal, single-write appends, and the sweep of temp files a crash left behind.
//! This is the only module allowed to call `fs::write`/`fs::rename` (see `clippy.toml`).
#![allow(clippy::disallowed_methods)] // the one home of rename-based replacement

use crate::clock::EpochMs;
use crate::error::{IoResultExt, Result};
use std::collections::hash_map::RandomState;
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::UNIX_EPOCH;

/// Process-wide sequence number of temp files, so names never repeat within one process.
static TEMP_SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// How many temp names to try before giving up (a name clash needs another writer to pick the
/// same pid, sequence and 32 random bits).
pub(crate) const TEMP_NAME_ATTEMPTS: usize = 8;

/// Replaces `path` with `bytes` atomically: readers see the old or the new content, never a mix.
///
/// Steps: `mkdir -p` the parent; create a sibling temp file `.<basename>.<pid>.<seq>.<8 hex>.tmp`
/// with `O_EXCL`; `write_all`; `sync_data`; rename it over `path`; fsync the directory so the
/// rename itself survives a crash. pm puts `Date.now()` where we put `<seq>`, a process-wide
/// counter: the name only has to be unique among concurrent writers of one directory (pid
/// separates processes, the counter separates writes of one process, the random hex from the
/// standard library's `RandomState` keys guards against pid reuse across hosts or containers),
/// and nothing parses it. This keeps the wall clock out of the library.
///
/// # Errors
/// `Error::Io` naming the file that failed; the temp file is removed on failure.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let parent = parent_dir(path);
    fs::create_dir_all(&parent).at(&parent)?;
    let (temp_path, mut file) = create_temp_sibling(path, &parent)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_data())
        .at(&temp_path);
    drop(file);
    if let Err(err) = written.and_then(|()| fs::rename(&temp_path, path).at(path)) {
        let _ = fs::remove_file(&temp_path);
        return Err(err);
    }
    sync_dir(&parent)
}

/// Replaces `path` with `bytes` atomically like [`write`], without the two fsyncs: readers see
/// the old or the new content, but a crash may lose the new one.
///
/// For files whose durability git owns, not pm: a merge driver's result (git reads it back at
/// once and stores it as an object) and its receipts, which git itself writes to the worktree
/// without syncing. Each fsync costs milliseconds, and a driver runs once per conflicting file.
///
/// # Errors
/// `Error::Io` naming the file that failed; the temp file is removed on failure.
pub fn write_unsynced(path: &Path, bytes: &[u8]) -> Result<()> {
    let parent = parent_dir(path);
    fs::create_dir_all(&parent).at(&parent)?;
    let (temp_path, mut file) = create_temp_sibling(path, &parent)?;
    let written = file.write_all(bytes).at(&temp_path);
    drop(file);
    if let Err(err) = written.and_then(|()| fs::rename(&temp_path, path).at(path)) {
        let _ = fs::remove_file(&temp_path);
        return Err(err);
    }
    Ok(())
}

/// Removes `path` and fsyncs its directory; returns false when it did not exist.
///
/// # Errors
/// `Error::Io` for any failure other than the file being absent.
pub fn remove(path: &Path) -> Result<bool> {
    match fs::remove_file(path) {
        Ok(()) => {
            sync_dir(&parent_dir(path))?;
            Ok(true)
        }
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(false),
        Err(err) => Err(err).at(path),
    }
}

/// Appends `line + "\n"` to `path` with one `write_all` in `O_APPEND` mode, then `sync_data`.
///
/// Creates the file (and its parent directories) when missing. One write call in append mode
/// means concurrent appenders never interleave inside a line on local filesystems; callers hold
/// the item lock anyway.
///
/// # Errors
/// `Error::Io` naming the file.
pub fn append_line(path: &Path, line: &str) -> Result<()> {
    let parent = parent_dir(path);
    fs::create_dir_all(&parent).at(&parent)?;
    let mut buf = String::with_capacity(line.len() + 1);
    buf.push_str(line);
    buf.push('\n');
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .at(path)?;
    file.write_all(buf.as_bytes()).at(path)?;
    file.sync_data().at(path)
}

/// Which leftover temp files [`sweep_temp_files`] removes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SweepPolicy {
    /// Every temp file (safe only while no writer can be running, e.g. under a tracker lock).
    All,
    /// Temp files whose mtime is at least `min_age_ms` before `now_ms`.
    OlderThan {
        /// The current instant (from the caller's clock).
        now_ms: EpochMs,
        /// Minimum age in milliseconds.
        min_age_ms: u64,
    },
}

/// Removes the temp files a crashed [`write`] left in `dir` and returns their paths, sorted.
///
/// Only names of the form `.<basename>.<digits>.<digits>.<8 hex>.tmp` are touched (the names
/// pm and [`write`] create), so other dotfiles ending in `.tmp` survive. A missing `dir` yields
/// an empty list. Not recursive.
///
/// # Errors
/// `Error::Io` when the directory cannot be listed or a file cannot be removed.
pub fn sweep_temp_files(dir: &Path, policy: SweepPolicy) -> Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(err).at(dir),
    };
    let mut removed = Vec::new();
    for entry in entries {
        let entry = entry.at(dir)?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !is_temp_name(name) || !entry.file_type().at(entry.path())?.is_file() {
            continue;
        }
        let path = entry.path();
        if let SweepPolicy::OlderThan { now_ms, min_age_ms } = policy {
            let modified = entry.metadata().and_then(|m| m.modified()).at(&path)?;
            let mtime_ms = modified
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0);
            if now_ms.saturating_sub(mtime_ms) < min_age_ms as i64 {
                continue;
            }
        }
        match fs::remove_file(&path) {
            Ok(()) => removed.push(path),
            Err(err) if err.kind() == ErrorKind::NotFound => {}
            Err(err) => return Err(err).at(&path),
        }
    }
    if !removed.is_empty() {
        sync_dir(dir)?;
    }
    removed.sort();
    Ok(removed)
}

/// Returns true for `.<basename>.<pid>.<n>.<8 hex>.tmp`.
pub fn is_temp_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) else {
        return false;
    };
    let mut parts = rest.rsplitn(4, '.');
    let (Some(hex), Some(seq), Some(pid), Some(base)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    !base.is_empty()
        && digits(pid)
        && digits(seq)
        && hex.len() == 8
        && hex.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Returns a fresh temp name for a sibling of `base`: `.<base>.<pid>.<seq>.<8 hex>.tmp`, the
/// form [`is_temp_name`] recognizes.
pub(crate) fn temp_name(base: &str) -> String {
    let pid = std::process::id();
    let seq = TEMP_SEQUENCE.fetch_add(1, Ordering::Relaxed);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(seq);
    hasher.write_u32(pid);
    let random = hasher.finish() as u32;
    format!(".{base}.{pid}.{seq}.{random:08x}.tmp")
}

fn create_temp_sibling(path: &Path, parent: &Path) -> Result<(PathBuf, File)> {
    let base = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_string());
    let mut last_err = None;
    for _ in 0..TEMP_NAME_ATTEMPTS {
        let temp_path = parent.join(temp_name(&base));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp_path)
        {
            Ok(file) => return Ok((temp_path, file)),
            Err(err) if err.kind() == ErrorKind::AlreadyExists => last_err = Some((temp_path, err)),
            Err(err) => return Err(err).at(&temp_path),
        }
    }
    let (temp_path, err) = last_err.expect("the loop ran at least once");
    Err(err).at(temp_path)
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Flushes a directory entry change (create, rename, unlink) to disk. A no-op off Unix, where
/// directories cannot be opened as files.
fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        File::open(dir).and_then(|d| d.sync_all()).at(dir)?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_replaces_and_creates_parents() -> Result<(), Box<dyn std::error::Error>> {
        let tmp = tempfile::tempdir()?;
        let target = tmp.path().join("a/b/item.toon");
        write(&target, b"one\n")?;
        write(&target, b"two\n")?;
        assert_eq!(fs::read_to_string(&target)?, "two\n");
        let names: Vec<_> = fs::read_dir(target.parent().ok_or("no parent")?)?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()?;
        assert_eq!(names, vec![std::ffi::OsString::from("item.toon")]);
        Ok(())
    }

    #[test]
    fn append_adds_one_line_per_call() -> Result<(), Box<dyn std::error::Error>> {
        let tmp = tempfile::tempdir()?;
        let path = tmp.path().join("history/pm-a.jsonl");
        append_line(&path, "{\"a\":1}")?;
        append_line(&path, "{\"b\":2}")?;
        assert_eq!(fs::read_to_string(&path)?, "{\"a\":1}\n{\"b\":2}\n");
        Ok(())
    }

    #[test]
    fn remove_reports_absence() -> Result<(), Box<dyn std::error::Error>> {
        let tmp = tempfile::tempdir()?;
        let path = tmp.path().join("x");
        write(&path, b"x")?;
        assert!(remove(&path)?);
        assert!(!remove(&path)?);
        Ok(())
    }

    #[test]
    fn temp_names_are_recognized() {
        assert!(is_temp_name(".pm-a.toon.123.4.deadbeef.tmp"));
        assert!(is_temp_name(".settings.json.1.1712345678901.0a1b2c3d.tmp"));
        assert!(!is_temp_name(".pm-a.toon.123.tmp"));
        assert!(!is_temp_name("pm-a.toon.1.2.deadbeef.tmp"));
        assert!(!is_temp_name(".notes.tmp"));
        assert!(!is_temp_name(".x.1.2.xyz12345.tmp"));
    }

    #[test]
    fn simulated_crash_before_rename_leaves_only_a_sweepable_temp()
    -> Result<(), Box<dyn std::error::Error>> {
        let tmp = tempfile::tempdir()?;
        let target = tmp.path().join("tasks/pm-a.toon");
        write(&target, b"old\n")?;
        // The crash: the new content reached a temp file, the rename never happened.
        let (temp_path, mut file) = create_temp_sibling(&target, &parent_dir(&target))?;
        file.write_all(b"new, half written")?;
        drop(file);
        let temp_name = temp_path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or("name")?;
        assert!(is_temp_name(temp_name), "{temp_name}");
        assert!(crate::item::ItemFormat::split_file_name(temp_name).is_none());
        assert_eq!(fs::read_to_string(&target)?, "old\n");
        let tracker = crate::tracker::Tracker::at(tmp.path());
        let listed = tracker.item_files(&crate::schema::TypeRegistry::builtin())?;
        assert_eq!(listed.files.len(), 1);
        assert_eq!(listed.files[0].path, target);
        assert_eq!(
            sweep_temp_files(&tmp.path().join("tasks"), SweepPolicy::All)?,
            vec![temp_path]
        );
        assert_eq!(fs::read_dir(tmp.path().join("tasks"))?.count(), 1);
        Ok(())
    }

    #[test]
    fn crash_leftovers_are_swept() -> Result<(), Box<dyn std::error::Error>> {
        let tmp = tempfile::tempdir()?;
        // A crash between write and rename leaves the temp file behind, target untouched.
        let leftover = tmp.path().join(".pm-a.toon.999.7.0badc0de.tmp");
        File::create(&leftover)?.write_all(b"partial")?;
        let keep = tmp.path().join(".keep.tmp");
        File::create(&keep)?;
        let none = sweep_temp_files(
            tmp.path(),
            SweepPolicy::OlderThan {
                now_ms: 0,
                min_age_ms: 60_000,
            },
        )?;
        assert!(
            none.is_empty(),
            "a fresh temp file is younger than the threshold"
        );
        assert_eq!(
            sweep_temp_files(tmp.path(), SweepPolicy::All)?,
            vec![leftover.clone()]
        );
        assert!(!leftover.exists());
        assert!(keep.exists());
        assert!(sweep_temp_files(&tmp.path().join("missing"), SweepPolicy::All)?.is_empty());
        Ok(())
    }
}
