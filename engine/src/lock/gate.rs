//! The stale-cleanup gate of a lock: a `<lock>.stale-cleanup/` directory with `owner.json`
//! (`{pid, token}`); whoever creates it may remove the stale lock. Abandoned gates are broken.

use super::STALE_GATE_SUFFIX;
use crate::clock::Clock;
use serde_json::{Value, json};
use std::collections::hash_map::RandomState;
use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

const GATE_OWNER_FILE: &str = "owner.json";
/// A gate older than this may be broken when its owner is dead.
const GATE_STALE_MS: i64 = 10_000;
/// A gate older than this may be broken even when its owner pid is alive (pid reuse).
const GATE_MAX_ACTIVE_MS: i64 = 5 * 60_000;

/// The `<lock>.stale-cleanup/` gate: whoever creates the directory may remove the stale lock.
pub(super) struct Gate {
    dir: PathBuf,
    token: String,
}

impl Gate {
    pub(super) fn acquire(lock_path: &Path, clock: &Clock) -> Option<Gate> {
        let mut dir = lock_path.as_os_str().to_owned();
        dir.push(STALE_GATE_SUFFIX);
        let dir = PathBuf::from(dir);
        if let Some(gate) = Gate::try_create(&dir) {
            return Some(gate);
        }
        if !Gate::break_if_expired(&dir, clock) {
            return None;
        }
        Gate::try_create(&dir)
    }

    fn try_create(dir: &Path) -> Option<Gate> {
        fs::create_dir(dir).ok()?;
        let token = random_hex();
        let body = format!(
            "{}\n",
            crate::json::to_compact(&json!({"pid": std::process::id(), "token": token}))
        );
        if crate::atomic::write(&dir.join(GATE_OWNER_FILE), body.as_bytes()).is_err() {
            let _ = fs::remove_dir_all(dir);
            return None;
        }
        Some(Gate {
            dir: dir.to_path_buf(),
            token,
        })
    }

    /// Removes an abandoned gate: older than 10 s with a dead (or unknown) owner, or older
    /// than 5 min regardless. Returns true when the gate is gone.
    fn break_if_expired(dir: &Path, clock: &Clock) -> bool {
        let modified = match fs::metadata(dir).and_then(|m| m.modified()) {
            Ok(modified) => modified,
            Err(err) => return err.kind() == ErrorKind::NotFound,
        };
        let mtime_ms = modified
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        let age_ms = clock.now_ms().saturating_sub(mtime_ms);
        if age_ms <= GATE_STALE_MS {
            return false;
        }
        if let Some((pid, _)) = read_gate_owner(dir)
            && process_alive(pid)
            && age_ms <= GATE_MAX_ACTIVE_MS
        {
            return false;
        }
        fs::remove_dir_all(dir).is_ok()
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        if read_gate_owner(&self.dir).is_some_and(|(_, token)| token == self.token) {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

fn read_gate_owner(dir: &Path) -> Option<(u32, String)> {
    let text = fs::read_to_string(dir.join(GATE_OWNER_FILE)).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    let pid = value.get("pid")?.as_u64().filter(|p| *p > 0)?;
    let token = value.get("token")?.as_str().filter(|t| !t.is_empty())?;
    Some((u32::try_from(pid).ok()?, token.to_string()))
}

/// Returns whether a process exists: `/proc/<pid>` on Linux; elsewhere every pid counts as
/// alive, so gates are only broken after the 5-minute bound.
fn process_alive(pid: u32) -> bool {
    let proc_root = Path::new("/proc");
    if proc_root.join("self").exists() {
        proc_root.join(pid.to_string()).exists()
    } else {
        true
    }
}

pub(super) fn random_u64() -> u64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.finish()
}

fn random_hex() -> String {
    format!("{:016x}{:016x}", random_u64(), random_u64())
}
