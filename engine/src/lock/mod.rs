//! Owned lock files: `locks/<lock-id>.lock`, created whole (staged and hard-linked) with pm's
//! JSON body plus the owner's identity (host, pid, process start, token). A waiter takes a lock
//! over only when its owner is provably gone, or its ttl passed and the owner cannot be proven
//! alive (see [`assess`]); a live owner's lock is never broken. The holder re-checks its token
//! before each write ([`LockGuard::check_held`]). Stale removal is serialized through a
//! `.stale-cleanup` gate; waiting is bounded and jittered; the guard unlinks on drop.

mod assess;
mod gate;
mod info;
mod owner;
mod survey;

pub use assess::{Assessment, MALFORMED_GRACE_MS, Verdict, assess};
pub use info::{LockFile, LockInfo, LockRead, read_lock_in, read_lock_info, validate_lock_id};
pub use owner::{OwnerState, ProcessIdentity, owner_state};
pub use survey::{LockClass, LockCounts, SurveyedLock, remove_surveyed, survey_locks, survey_one};

use std::ffi::{OsStr, OsString};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::clock::Clock;
use crate::confine::{Dir, Root};
use crate::error::{Error, Result};
use crate::settings::Settings;
use crate::tracker::Tracker;
use gate::{Gate, random_hex, random_u64};

/// Suffix of the directory that serializes stale-lock removal.
pub const STALE_GATE_SUFFIX: &str = ".stale-cleanup";
/// The folder, relative to the tracker root, that holds lock files.
pub const LOCKS_FOLDER: &str = "locks";
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
    ///
    /// # Errors
    /// `settings_invalid` when any setting is outside its legal domain (every write takes a
    /// lock through here, so no write runs on settings it cannot read), or `PM_LOCK_WAIT_MS`
    /// does not parse.
    pub fn from_settings(settings: &Settings, owner: impl Into<String>) -> Result<LockOptions> {
        settings.check_writable()?;
        Ok(LockOptions {
            owner: owner.into(),
            ttl_seconds: settings.checked_lock_ttl_seconds()?,
            wait_ms: settings.checked_lock_wait_ms()?,
            force: false,
            force_required_for_stale_lock: settings.governance().force_required_for_stale_lock,
        })
    }
}

/// A held lock; dropping it unlinks the lock file (when it still holds this guard's token).
#[must_use = "the lock is released as soon as the guard is dropped"]
#[derive(Debug)]
pub struct LockGuard {
    dir: Dir,
    name: OsString,
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

    /// Checks that the lock file still holds this guard's token (nobody took it over).
    ///
    /// # Errors
    /// `lock_lost` naming what the lock file holds instead; `path_unsafe` for a symlink.
    pub fn check_held(&self) -> Result<()> {
        let found = read_lock_in(&self.dir, &self.name)?;
        let detail = match &found.read {
            LockRead::Held(info) if info.token == self.info.token => return Ok(()),
            LockRead::Held(info) => format!(
                "it is now held by {} (pid {}, since {})",
                info.owner, info.pid, info.created_at
            ),
            LockRead::Missing => "the lock file was removed".to_string(),
            LockRead::Malformed(why) => format!("the lock file was replaced ({why})"),
        };
        Err(Error::LockLost {
            id: self.info.id.clone(),
            lock_path: self.path.clone(),
            detail,
        })
    }

    /// Releases the lock now, reporting a failure to unlink (dropping ignores it). A lock that
    /// another process took over is left to it.
    ///
    /// # Errors
    /// `Error::Io` when the lock file exists but cannot be removed.
    pub fn release(mut self) -> Result<()> {
        self.released = true;
        self.unlink_if_ours()
    }

    fn unlink_if_ours(&self) -> Result<()> {
        if self.check_held().is_ok() {
            self.dir.unlink(&self.name)?;
        }
        Ok(())
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if !self.released {
            let _ = self.unlink_if_ours();
        }
    }
}

/// Takes `locks/<lock_id>.lock` in `tracker`.
///
/// Creates the lock file whole and exclusively. If one exists, it is judged ([`assess`]): a
/// lock whose owner is gone is taken over at once; an expired lock whose owner cannot be proven
/// alive is removed (needing `opts.force` when governance requires it, or when its pid runs
/// here); a held lock is waited for up to `opts.wait_ms` with jittered backoff from 25 ms to
/// 200 ms (measured with a monotonic timer; `clock` supplies `created_at` and the ttl's "now").
/// Removals go through the stale-cleanup gate, at most 3 per call.
///
/// # Errors
/// `LockHeld` (`lock_conflict`) when the budget runs out or too many removals were needed;
/// `LockStale` when an expired lock needs `--force`; `LockPathUnsafe` for a bad id;
/// `PathUnsafe` for a symlinked locks directory or lock file; `Io` for other failures.
pub fn acquire(
    tracker: &Tracker,
    lock_id: &str,
    opts: &LockOptions,
    clock: &Clock,
) -> Result<LockGuard> {
    validate_lock_id(lock_id)?;
    let root = Root::open(tracker.root())?;
    let dir = root
        .dir(Path::new(LOCKS_FOLDER), true)?
        .ok_or_else(|| Error::internal("the locks folder was not created"))?;
    let name = OsString::from(format!("{lock_id}.lock"));
    let path = tracker.lock_path(lock_id);
    let me = ProcessIdentity::current();
    let started = Instant::now();
    let mut removals = 0usize;
    let mut backoff_ms = BACKOFF_INITIAL_MS;
    loop {
        let info = LockInfo {
            id: lock_id.to_string(),
            pid: me.pid,
            owner: opts.owner.clone(),
            created_at: clock.now_iso(),
            ttl_seconds: opts.ttl_seconds,
            host: Some(me.host.clone()),
            process_start: me.start.clone(),
            token: Some(random_hex()),
        };
        if create_lock_file(&dir, &name, &info)? {
            return Ok(LockGuard {
                dir,
                name,
                path,
                info,
                released: false,
            });
        }
        let found = read_lock_in(&dir, &name)?;
        let Some(judged) = assess(&found, opts.ttl_seconds, clock.now_ms()) else {
            continue;
        };
        let mut current = found.read;
        if judged.verdict != Verdict::Held {
            let ctx = Removal {
                dir: &dir,
                name: &name,
                path: &path,
                opts,
                clock,
                started,
            };
            match ctx.remove(&mut removals)? {
                Removed::Retry => continue,
                Removed::Kept(read) => current = read,
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

enum Removed {
    /// The lock is gone; try to create it again.
    Retry,
    /// The lock stays (gate busy, no longer removable, or unlink failed).
    Kept(LockRead),
}

struct Removal<'a> {
    dir: &'a Dir,
    name: &'a OsStr,
    path: &'a Path,
    opts: &'a LockOptions,
    clock: &'a Clock,
    started: Instant,
}

impl Removal<'_> {
    /// Removes the lock under the gate after judging it again there.
    fn remove(&self, removals: &mut usize) -> Result<Removed> {
        let Some(_gate) = Gate::acquire(self.dir, self.name) else {
            return Ok(Removed::Kept(read_lock_in(self.dir, self.name)?.read));
        };
        let found = read_lock_in(self.dir, self.name)?;
        let Some(judged) = assess(&found, self.opts.ttl_seconds, self.clock.now_ms()) else {
            return Ok(Removed::Retry);
        };
        let governance = self.opts.force_required_for_stale_lock;
        let Some(needs_force) = judged.verdict.needs_force(governance) else {
            return Ok(Removed::Kept(found.read));
        };
        if needs_force && !self.opts.force {
            return Err(Error::LockStale {
                lock_path: self.path.to_path_buf(),
                ttl_seconds: self.opts.ttl_seconds,
            });
        }
        if *removals >= MAX_STALE_REMOVALS {
            let waited = self.started.elapsed().as_millis() as u64;
            return Err(held_error(self.path, &found.read, waited));
        }
        *removals += 1;
        match self.dir.unlink(self.name) {
            Ok(_) => Ok(Removed::Retry),
            Err(_) => Ok(Removed::Kept(found.read)),
        }
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

/// Creates the lock file with its body in one step; false when a lock file exists. The body is
/// written and synced to a private temp file that is then hard-linked to the lock name, which
/// fails when the lock exists, so another process never sees an empty or half-written lock.
/// Filesystems without hard links fall back to exclusive creation followed by the write.
fn create_lock_file(dir: &Dir, name: &OsStr, info: &LockInfo) -> Result<bool> {
    let body = info.to_file_text();
    let tmp = OsString::from(format!(
        "{}.{}-{:016x}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        random_u64()
    ));
    dir.create_new(&tmp, body.as_bytes())?;
    let linked = dir.hard_link(&tmp, name);
    let _ = dir.unlink(&tmp);
    match linked {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == ErrorKind::AlreadyExists => Ok(false),
        Err(_) => match dir.create_new(name, body.as_bytes()) {
            Ok(()) => Ok(true),
            Err(Error::Io { source, .. }) if source.kind() == ErrorKind::AlreadyExists => Ok(false),
            Err(err) => Err(err),
        },
    }
}

/// Returns `base × [0.5, 1.5)`, at least 1 ms.
fn jittered(base_ms: u64) -> Duration {
    let unit = (random_u64() % 1000) as f64 / 1000.0;
    Duration::from_millis(((base_ms as f64) * (0.5 + unit)).round().max(1.0) as u64)
}

#[cfg(test)]
mod tests;
