//! Lock files (storage spec §9.2): `locks/<lock-id>.lock` created with `O_CREAT|O_EXCL`, pm's
//! JSON body, staleness by the acquirer's ttl, serialized stale removal through a
//! `.stale-cleanup` gate, bounded jittered waiting, and a guard that unlinks on drop.

mod gate;

use crate::clock::{Clock, EpochMs};
use crate::error::{Error, IoResultExt, Result};
use crate::json::to_pretty;
use crate::settings::Settings;
use crate::tracker::Tracker;
use gate::{Gate, random_u64};
use serde::Serialize;
use serde_json::{Value, json};
use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Suffix of the directory that serializes stale-lock removal.
pub const STALE_GATE_SUFFIX: &str = ".stale-cleanup";
/// Stale removals one acquisition may perform.
const MAX_STALE_REMOVALS: usize = 3;
const BACKOFF_INITIAL_MS: u64 = 25;
const BACKOFF_MAX_MS: u64 = 200;

/// How to take a lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockOptions {
    /// Owner written into the lock file (the mutation author).
    pub owner: String,
    /// The acquirer's `locks.ttl_seconds`; staleness is judged with it, not the file's ttl.
    pub ttl_seconds: u64,
    /// How long to wait for a held lock; 0 fails at once.
    pub wait_ms: u64,
    /// `--force`: allow removing a stale lock even when governance requires force.
    pub force: bool,
    /// `governance.force_required_for_stale_lock`.
    pub force_required_for_stale_lock: bool,
}

impl LockOptions {
    /// Returns the options settings imply (ttl, wait budget with `PM_LOCK_WAIT_MS` applied,
    /// governance), without `--force`.
    pub fn from_settings(settings: &Settings, owner: impl Into<String>) -> LockOptions {
        LockOptions {
            owner: owner.into(),
            ttl_seconds: settings.lock_ttl_seconds(),
            wait_ms: settings.lock_wait_ms(),
            force: false,
            force_required_for_stale_lock: settings.governance().force_required_for_stale_lock,
        }
    }
}

/// The body of a lock file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LockInfo {
    /// The lock id (the item id for item mutations).
    pub id: String,
    /// The holder's process id.
    pub pid: u32,
    /// The holder's owner string.
    pub owner: String,
    /// When the lock was taken (`toISOString` form).
    pub created_at: String,
    /// The holder's ttl.
    pub ttl_seconds: u64,
}

impl LockInfo {
    /// Returns the exact file content: pretty JSON (2 spaces) plus `\n`.
    pub fn to_file_text(&self) -> String {
        let value = json!({
            "id": self.id,
            "pid": self.pid,
            "owner": self.owner,
            "created_at": self.created_at,
            "ttl_seconds": self.ttl_seconds,
        });
        let mut text = to_pretty(&value);
        text.push('\n');
        text
    }
}

/// What reading a lock file found.
#[derive(Clone, Debug, PartialEq)]
pub enum LockRead {
    /// No lock file.
    Missing,
    /// A well-formed lock.
    Held(LockInfo),
    /// A lock file that cannot be read or parsed (counts as stale); the reason is pm's
    /// warning token (`lock_info_invalid_json`, `lock_info_invalid_shape`, `lock_info_read_failed`).
    Malformed(&'static str),
}

/// Reads and parses a lock file.
pub fn read_lock_info(path: &Path) -> LockRead {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == ErrorKind::NotFound => return LockRead::Missing,
        Err(_) => return LockRead::Malformed("lock_info_read_failed"),
    };
    let Ok(value) = serde_json::from_str::<Value>(&text) else {
        return LockRead::Malformed("lock_info_invalid_json");
    };
    let info = (|| {
        let obj = value.as_object()?;
        let pid = obj.get("pid")?.as_f64().filter(|p| p.is_finite())?;
        let ttl = obj.get("ttl_seconds")?.as_f64().filter(|t| t.is_finite())?;
        Some(LockInfo {
            id: obj.get("id")?.as_str()?.to_string(),
            pid: pid.clamp(0.0, f64::from(u32::MAX)) as u32,
            owner: obj.get("owner")?.as_str()?.to_string(),
            created_at: obj.get("created_at")?.as_str()?.to_string(),
            ttl_seconds: ttl.max(0.0) as u64,
        })
    })();
    match info {
        Some(info) => LockRead::Held(info),
        None => LockRead::Malformed("lock_info_invalid_shape"),
    }
}

/// Returns true when a lock is stale: `now − created_at > ttl × 1000`, or its body is
/// malformed or its timestamp unparseable.
pub fn is_stale(read: &LockRead, ttl_seconds: u64, now_ms: EpochMs) -> bool {
    let created = match read {
        LockRead::Held(info) => crate::timestamp::parse_timestamp(&info.created_at),
        _ => None,
    };
    match created {
        Some(created) => now_ms.saturating_sub(created) > (ttl_seconds as i64).saturating_mul(1000),
        None => true,
    }
}

/// Validates a lock id: non-empty, no `/`, `\`, NUL or `..`, not `.`.
///
/// # Errors
/// `Error::LockPathUnsafe` naming the would-be lock path.
pub fn validate_lock_id(lock_id: &str) -> Result<()> {
    let bad = lock_id.is_empty()
        || lock_id == "."
        || lock_id.contains("..")
        || lock_id.contains(['/', '\\', '\0']);
    if bad {
        return Err(Error::LockPathUnsafe {
            path: PathBuf::from(format!("locks/{lock_id}.lock")),
            reason: "lock ids must not be empty or contain '/', '\\', NUL or '..'".into(),
        });
    }
    Ok(())
}

/// A held lock; dropping it unlinks the lock file.
#[must_use = "the lock is released as soon as the guard is dropped"]
#[derive(Debug)]
pub struct LockGuard {
    path: PathBuf,
    info: LockInfo,
    released: bool,
}

impl LockGuard {
    /// Returns the lock file path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Returns what was written into the lock file.
    pub fn info(&self) -> &LockInfo {
        &self.info
    }

    /// Releases the lock now, reporting a failure to unlink (dropping ignores it).
    ///
    /// # Errors
    /// `Error::Io` when the lock file exists but cannot be removed.
    pub fn release(mut self) -> Result<()> {
        self.released = true;
        match fs::remove_file(&self.path) {
            Err(err) if err.kind() != ErrorKind::NotFound => Err(err).at(&self.path),
            _ => Ok(()),
        }
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if !self.released {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Takes `locks/<lock_id>.lock` in `tracker`.
///
/// Creates the lock file exclusively. If it exists and is stale (see [`is_stale`]), removes it
/// under the stale-cleanup gate (at most 3 times per call) and retries; removing needs
/// `opts.force` when `force_required_for_stale_lock` is set. A live lock is waited for up to
/// `opts.wait_ms` with jittered backoff from 25 ms to 200 ms (the wait budget is measured with
/// a monotonic timer; `clock` supplies `created_at` and the staleness "now").
///
/// # Errors
/// `LockHeld` (`lock_conflict`) when the budget runs out or too many stale removals were
/// needed; `LockStale` when a stale lock needs `--force`; `LockPathUnsafe` for a bad id, a
/// symlinked locks directory or lock file, or a locks directory outside the tracker root;
/// `Io` for other failures.
pub fn acquire(
    tracker: &Tracker,
    lock_id: &str,
    opts: &LockOptions,
    clock: &Clock,
) -> Result<LockGuard> {
    validate_lock_id(lock_id)?;
    let locks_dir = tracker.locks_dir();
    check_locks_dir(tracker.root(), &locks_dir)?;
    let path = tracker.lock_path(lock_id);
    let started = Instant::now();
    let mut stale_removals = 0usize;
    let mut backoff_ms = BACKOFF_INITIAL_MS;
    loop {
        refuse_symlink(&path)?;
        let info = LockInfo {
            id: lock_id.to_string(),
            pid: std::process::id(),
            owner: opts.owner.clone(),
            created_at: clock.now_iso(),
            ttl_seconds: opts.ttl_seconds,
        };
        match create_lock_file(&path, &info) {
            Ok(()) => {
                return Ok(LockGuard {
                    path,
                    info,
                    released: false,
                });
            }
            Err(err) if err.kind() == ErrorKind::AlreadyExists => {}
            Err(err) => return Err(err).at(&path),
        }
        let mut current = read_lock_info(&path);
        if current == LockRead::Missing {
            continue;
        }
        if is_stale(&current, opts.ttl_seconds, clock.now_ms()) {
            match remove_stale(&path, opts, clock, &mut stale_removals, started)? {
                StaleOutcome::Retry => continue,
                StaleOutcome::Kept(read) => current = read,
            }
        }
        let waited = started.elapsed().as_millis() as u64;
        if opts.wait_ms == 0 || waited >= opts.wait_ms {
            let waited = if opts.wait_ms == 0 { 0 } else { waited };
            return Err(held_error(&path, &current, waited));
        }
        std::thread::sleep(jittered(backoff_ms.min(opts.wait_ms - waited)));
        backoff_ms = (backoff_ms * 2).min(BACKOFF_MAX_MS);
    }
}

enum StaleOutcome {
    /// The lock is gone; try to create it again.
    Retry,
    /// The lock stays (gate busy, no longer stale, or unlink failed).
    Kept(LockRead),
}

fn remove_stale(
    path: &Path,
    opts: &LockOptions,
    clock: &Clock,
    removals: &mut usize,
    started: Instant,
) -> Result<StaleOutcome> {
    let Some(_gate) = Gate::acquire(path, clock) else {
        return Ok(StaleOutcome::Kept(read_lock_info(path)));
    };
    let current = read_lock_info(path);
    if current == LockRead::Missing {
        return Ok(StaleOutcome::Retry);
    }
    if !is_stale(&current, opts.ttl_seconds, clock.now_ms()) {
        return Ok(StaleOutcome::Kept(current));
    }
    if opts.force_required_for_stale_lock && !opts.force {
        return Err(Error::LockStale {
            lock_path: path.to_path_buf(),
            ttl_seconds: opts.ttl_seconds,
        });
    }
    if *removals >= MAX_STALE_REMOVALS {
        return Err(held_error(
            path,
            &current,
            started.elapsed().as_millis() as u64,
        ));
    }
    *removals += 1;
    match fs::remove_file(path) {
        Ok(()) => Ok(StaleOutcome::Retry),
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(StaleOutcome::Retry),
        Err(_) => Ok(StaleOutcome::Kept(current)),
    }
}

fn held_error(path: &Path, read: &LockRead, waited_ms: u64) -> Error {
    let (owner, pid) = match read {
        LockRead::Held(info) => (info.owner.clone(), info.pid),
        _ => (String::new(), 0),
    };
    Error::LockHeld {
        lock_path: path.to_path_buf(),
        owner,
        pid,
        waited_ms,
    }
}

/// Creates the lock file with its body in one step: the body is written and synced to a
/// private temp file that is then hard-linked to the lock path, which fails when the lock
/// exists. Another process therefore never sees an empty or half-written lock (which it would
/// judge stale and remove while its owner still works). Filesystems without hard links fall
/// back to exclusive creation followed by the write.
fn create_lock_file(path: &Path, info: &LockInfo) -> std::io::Result<()> {
    let body = info.to_file_text();
    let tmp = path.with_extension(format!(
        "lock.{}-{:016x}.tmp",
        std::process::id(),
        random_u64()
    ));
    let staged = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut file| {
            file.write_all(body.as_bytes())
                .and_then(|()| file.sync_data())
        });
    let linked = staged.and_then(|()| fs::hard_link(&tmp, path));
    let _ = fs::remove_file(&tmp);
    match linked {
        Err(err) if err.kind() != ErrorKind::AlreadyExists => create_in_place(path, &body),
        other => other,
    }
}

fn create_in_place(path: &Path, body: &str) -> std::io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).open(path)?;
    let written = file
        .write_all(body.as_bytes())
        .and_then(|()| file.sync_data());
    if written.is_err() {
        let _ = fs::remove_file(path);
    }
    written
}

fn check_locks_dir(root: &Path, locks_dir: &Path) -> Result<()> {
    let unsafe_path = |reason: &str| Error::LockPathUnsafe {
        path: locks_dir.to_path_buf(),
        reason: reason.to_string(),
    };
    match fs::symlink_metadata(locks_dir) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(unsafe_path("the locks directory is a symlink"));
        }
        Ok(meta) if !meta.is_dir() => return Err(unsafe_path("the locks path is not a directory")),
        Ok(_) => {}
        Err(err) if err.kind() == ErrorKind::NotFound => {
            fs::create_dir_all(locks_dir).at(locks_dir)?
        }
        Err(err) => return Err(err).at(locks_dir),
    }
    let root = root.canonicalize().at(root)?;
    let resolved = locks_dir.canonicalize().at(locks_dir)?;
    if !resolved.starts_with(&root) {
        return Err(unsafe_path(
            "the locks directory resolves outside the tracker root",
        ));
    }
    Ok(())
}

fn refuse_symlink(path: &Path) -> Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(Error::LockPathUnsafe {
            path: path.to_path_buf(),
            reason: "the lock file is a symlink".into(),
        }),
        _ => Ok(()),
    }
}

/// Returns `base × [0.5, 1.5)`, at least 1 ms.
fn jittered(base_ms: u64) -> Duration {
    let unit = (random_u64() % 1000) as f64 / 1000.0;
    Duration::from_millis(((base_ms as f64) * (0.5 + unit)).round().max(1.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Barrier};

    type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;
    const T0: EpochMs = 1_788_220_800_000; // 2026-09-01T00:00:00.000Z

    fn opts(wait_ms: u64) -> LockOptions {
        LockOptions {
            owner: "tester".into(),
            ttl_seconds: 1800,
            wait_ms,
            force: false,
            force_required_for_stale_lock: true,
        }
    }

    fn plant(tracker: &Tracker, id: &str, created_at: &str, owner: &str) -> std::io::Result<()> {
        let info = LockInfo {
            id: id.into(),
            pid: 4242,
            owner: owner.into(),
            created_at: created_at.into(),
            ttl_seconds: 1800,
        };
        fs::create_dir_all(tracker.locks_dir())?;
        fs::File::create(tracker.lock_path(id))?.write_all(info.to_file_text().as_bytes())
    }

    /// A reader racing with lock creation must never see an empty or partial body (it would
    /// judge such a lock stale and remove it from under its owner).
    #[test]
    fn a_lock_is_never_visible_without_its_body() -> TestResult {
        let tmp = tempfile::tempdir()?;
        let path = tmp.path().join("pm-race.lock");
        let info = LockInfo {
            id: "pm-race".into(),
            pid: 7,
            owner: "writer".into(),
            created_at: "2026-09-01T00:00:00.000Z".into(),
            ttl_seconds: 1800,
        };
        let done = std::sync::atomic::AtomicBool::new(false);
        let torn = std::thread::scope(|scope| {
            let reader = scope.spawn(|| {
                let mut torn = 0usize;
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    if matches!(read_lock_info(&path), LockRead::Malformed(_)) {
                        torn += 1;
                    }
                }
                torn
            });
            for _ in 0..300 {
                create_lock_file(&path, &info).expect("create");
                fs::remove_file(&path).expect("remove");
            }
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            reader.join().expect("reader")
        });
        assert_eq!(torn, 0, "a reader saw a lock without its body");
        let leftovers = fs::read_dir(tmp.path())?.count();
        assert_eq!(leftovers, 0, "no staging files are left behind");
        Ok(())
    }

    #[test]
    fn lock_file_body_and_release() -> TestResult {
        let tmp = tempfile::tempdir()?;
        let tracker = Tracker::at(tmp.path());
        let clock = Clock::pinned(T0, 0);
        let guard = acquire(&tracker, "pm-48nj", &opts(0), &clock)?;
        let text = fs::read_to_string(guard.path())?;
        let expected = format!(
            "{{\n  \"id\": \"pm-48nj\",\n  \"pid\": {},\n  \"owner\": \"tester\",\n  \"created_at\": \"2026-09-01T00:00:00.000Z\",\n  \"ttl_seconds\": 1800\n}}\n",
            std::process::id()
        );
        assert_eq!(text, expected);
        let path = guard.path().to_path_buf();
        drop(guard);
        assert!(!path.exists());
        let guard = acquire(&tracker, "pm-48nj", &opts(0), &clock)?;
        guard.release()?;
        assert!(!path.exists());
        Ok(())
    }

    #[test]
    fn live_lock_fails_fast_with_owner() -> TestResult {
        let tmp = tempfile::tempdir()?;
        let tracker = Tracker::at(tmp.path());
        plant(&tracker, "pm-a", "2026-09-01T00:00:00.000Z", "someone")?;
        let clock = Clock::pinned(T0 + 1000, 0);
        match acquire(&tracker, "pm-a", &opts(0), &clock) {
            Err(Error::LockHeld {
                owner,
                pid,
                waited_ms,
                ..
            }) => {
                assert_eq!((owner.as_str(), pid, waited_ms), ("someone", 4242, 0));
            }
            other => panic!("expected LockHeld, got {other:?}"),
        }
        assert!(
            tracker.lock_path("pm-a").exists(),
            "a live lock is never removed"
        );
        Ok(())
    }

    #[test]
    fn second_holder_in_another_thread_is_refused() -> TestResult {
        let tmp = tempfile::tempdir()?;
        let tracker = Arc::new(Tracker::at(tmp.path()));
        let held = Arc::new(Barrier::new(2));
        let tried = Arc::new(Barrier::new(2));
        let holder = {
            let (tracker, held, tried) =
                (Arc::clone(&tracker), Arc::clone(&held), Arc::clone(&tried));
            std::thread::spawn(move || -> Result<()> {
                let guard = acquire(&tracker, "pm-t", &opts(0), &Clock::pinned(T0, 0))?;
                held.wait();
                tried.wait();
                guard.release()
            })
        };
        held.wait();
        let clock = Clock::pinned(T0, 0);
        let refused = acquire(&tracker, "pm-t", &opts(0), &clock);
        assert_eq!(
            refused.map(|_| ()).map_err(|e| e.code().as_str()),
            Err("lock_conflict")
        );
        tried.wait();
        holder.join().map_err(|_| "holder panicked")??;
        let guard = acquire(&tracker, "pm-t", &opts(0), &clock)?;
        assert_eq!(guard.info().owner, "tester");
        Ok(())
    }

    #[test]
    fn stale_locks_need_force_when_governance_says_so() -> TestResult {
        let tmp = tempfile::tempdir()?;
        let tracker = Tracker::at(tmp.path());
        let clock = Clock::pinned(T0, 0);
        plant(&tracker, "pm-s", "2026-08-31T23:29:59.999Z", "ghost")?; // 1800.001 s old
        match acquire(&tracker, "pm-s", &opts(0), &clock) {
            Err(Error::LockStale { ttl_seconds, .. }) => assert_eq!(ttl_seconds, 1800),
            other => panic!("expected LockStale, got {other:?}"),
        }
        let forced = LockOptions {
            force: true,
            ..opts(0)
        };
        let guard = acquire(&tracker, "pm-s", &forced, &clock)?;
        assert_eq!(guard.info().owner, "tester");
        assert!(
            !tmp.path().join("locks/pm-s.lock.stale-cleanup").exists(),
            "gate removed"
        );
        drop(guard);
        plant(&tracker, "pm-s", "garbage", "ghost")?;
        let relaxed = LockOptions {
            force_required_for_stale_lock: false,
            ..opts(0)
        };
        acquire(&tracker, "pm-s", &relaxed, &clock)?.release()?;
        fs::File::create(tracker.lock_path("pm-s"))?.write_all(b"{not json")?;
        acquire(&tracker, "pm-s", &relaxed, &clock)?.release()?;
        Ok(())
    }

    #[test]
    fn exactly_ttl_old_is_not_stale() {
        let held = LockRead::Held(LockInfo {
            id: "x".into(),
            pid: 1,
            owner: String::new(),
            created_at: "2026-08-31T23:30:00.000Z".into(),
            ttl_seconds: 1,
        });
        assert!(!is_stale(&held, 1800, T0));
        assert!(is_stale(&held, 1800, T0 + 1));
        assert!(is_stale(
            &LockRead::Malformed("lock_info_invalid_json"),
            1800,
            T0
        ));
    }

    #[test]
    fn busy_gate_blocks_stale_removal() -> TestResult {
        let tmp = tempfile::tempdir()?;
        let tracker = Tracker::at(tmp.path());
        plant(&tracker, "pm-g", "2020-01-01T00:00:00.000Z", "ghost")?;
        let gate = tmp.path().join("locks/pm-g.lock.stale-cleanup");
        fs::create_dir(&gate)?;
        let owner = format!("{{\"pid\":{},\"token\":\"t\"}}\n", std::process::id());
        fs::File::create(gate.join("owner.json"))?.write_all(owner.as_bytes())?;
        let mtime = fs::metadata(&gate)?
            .modified()?
            .duration_since(std::time::UNIX_EPOCH)?
            .as_millis() as i64;
        let forced = LockOptions {
            force: true,
            ..opts(0)
        };
        // A fresh gate held by a live process: the stale lock stays and we report it held.
        let err = acquire(&tracker, "pm-g", &forced, &Clock::pinned(mtime + 1000, 0))
            .expect_err("gate busy");
        assert_eq!(err.code().as_str(), "lock_conflict");
        // After five minutes the gate is broken even though its owner is alive.
        acquire(
            &tracker,
            "pm-g",
            &forced,
            &Clock::pinned(mtime + 6 * 60_000, 0),
        )?
        .release()?;
        assert!(!gate.exists());
        Ok(())
    }

    #[test]
    fn unsafe_paths_are_refused() -> TestResult {
        let tmp = tempfile::tempdir()?;
        let clock = Clock::pinned(T0, 0);
        let tracker = Tracker::at(tmp.path().join("t"));
        for bad in ["", "a/b", "..", "x..y", "a\\b", "."] {
            let err = acquire(&tracker, bad, &opts(0), &clock).expect_err(bad);
            assert_eq!(err.code().as_str(), "lock_path_unsafe", "{bad:?}");
        }
        #[cfg(unix)]
        {
            let outside = tmp.path().join("outside");
            fs::create_dir_all(&outside)?;
            fs::create_dir_all(tracker.root())?;
            std::os::unix::fs::symlink(&outside, tracker.locks_dir())?;
            let err = acquire(&tracker, "pm-a", &opts(0), &clock).expect_err("symlinked dir");
            assert_eq!(err.code().as_str(), "lock_path_unsafe");
            fs::remove_file(tracker.locks_dir())?;
            fs::create_dir_all(tracker.locks_dir())?;
            std::os::unix::fs::symlink(outside.join("x"), tracker.lock_path("pm-a"))?;
            let err = acquire(&tracker, "pm-a", &opts(0), &clock).expect_err("symlinked lock");
            assert_eq!(err.code().as_str(), "lock_path_unsafe");
            assert!(!outside.join("x").exists());
        }
        Ok(())
    }
}
