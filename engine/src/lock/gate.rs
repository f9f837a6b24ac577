//! The stale-cleanup gate of a lock: a `<lock>.stale-cleanup/` directory with `owner.json`
//! (`{pid, token}`); whoever creates it may remove the stale lock. Abandoned gates are broken.

use std::collections::hash_map::RandomState;
use std::ffi::{OsStr, OsString};
use std::hash::{BuildHasher, Hasher};

use serde_json::{Value, json};

use super::STALE_GATE_SUFFIX;
use super::owner::{OwnerState, owner_state};
use crate::clock::file_age_ms;
use crate::confine::{Dir, EntryKind};

const GATE_OWNER_FILE: &str = "owner.json";
/// A gate whose owner cannot be read may be broken once it is older than this.
const GATE_STALE_MS: i64 = 10_000;
/// A gate older than this may be broken even when its owner pid is alive (pid reuse).
const GATE_MAX_ACTIVE_MS: i64 = 5 * 60_000;

/// The `<lock>.stale-cleanup/` gate: whoever creates the directory may remove the stale lock.
pub(super) struct Gate<'d> {
    locks: &'d Dir,
    name: OsString,
    token: String,
}

/// Returns the gate directory's name for the lock file `lock_name`.
pub(super) fn gate_name(lock_name: &OsStr) -> OsString {
    let mut name = lock_name.to_os_string();
    name.push(STALE_GATE_SUFFIX);
    name
}

impl<'d> Gate<'d> {
    pub(super) fn acquire(locks: &'d Dir, lock_name: &OsStr) -> Option<Gate<'d>> {
        let name = gate_name(lock_name);
        if let Some(gate) = Gate::try_create(locks, &name) {
            return Some(gate);
        }
        if !break_if_expired(locks, &name) {
            return None;
        }
        Gate::try_create(locks, &name)
    }

    fn try_create(locks: &'d Dir, name: &OsStr) -> Option<Gate<'d>> {
        locks.make_dir(name).ok()?;
        let token = random_hex();
        let body = format!(
            "{}\n",
            crate::json::to_compact(&json!({"pid": std::process::id(), "token": token}))
        );
        let written = locks
            .subdir(name, false)
            .ok()
            .flatten()
            .map(|dir| dir.write_atomic(OsStr::new(GATE_OWNER_FILE), body.as_bytes()));
        if !matches!(written, Some(Ok(()))) {
            remove_gate(locks, name);
            return None;
        }
        Some(Gate {
            locks,
            name: name.to_os_string(),
            token,
        })
    }
}

impl Drop for Gate<'_> {
    fn drop(&mut self) {
        if read_gate_owner(self.locks, &self.name).is_some_and(|(_, token)| token == self.token) {
            remove_gate(self.locks, &self.name);
        }
    }
}

/// Removes an abandoned gate: at once when its owner process is gone, after 10 s when its
/// owner cannot be read (a gate being created has no owner file for a moment), after 5 min
/// regardless (a reused pid). Returns true when the gate is gone. Ages are real file ages.
fn break_if_expired(locks: &Dir, name: &OsStr) -> bool {
    match locks.kind(name) {
        Ok(EntryKind::Missing) => return true,
        Ok(EntryKind::Directory) => {}
        _ => return false,
    }
    let Some(age_ms) = gate_age_ms(locks, name) else {
        return false;
    };
    let abandoned = match read_gate_owner(locks, name) {
        Some((pid, _)) => {
            owner_state(None, pid, None) == OwnerState::PidNotRunning || age_ms > GATE_MAX_ACTIVE_MS
        }
        None => age_ms > GATE_STALE_MS,
    };
    if !abandoned {
        return false;
    }
    remove_gate(locks, name);
    matches!(locks.kind(name), Ok(EntryKind::Missing))
}

fn gate_age_ms(locks: &Dir, name: &OsStr) -> Option<i64> {
    let dir = locks.subdir(name, false).ok()??;
    Some(file_age_ms(dir.metadata().ok()?.modified().ok()?))
}

/// Removes the gate directory and its owner file (nothing else is ever inside).
pub(super) fn remove_gate(locks: &Dir, name: &OsStr) {
    if let Ok(Some(dir)) = locks.subdir(name, false) {
        if let Ok(names) = dir.names() {
            for entry in names {
                let _ = dir.remove(&entry);
            }
        }
        let _ = locks.remove_dir(name);
    }
}

fn read_gate_owner(locks: &Dir, name: &OsStr) -> Option<(u32, String)> {
    let dir = locks.subdir(name, false).ok()??;
    let bytes = dir.read(OsStr::new(GATE_OWNER_FILE)).ok()??;
    let value: Value = serde_json::from_slice(&bytes).ok()?;
    let pid = value.get("pid")?.as_u64().filter(|p| *p > 0)?;
    let token = value.get("token")?.as_str().filter(|t| !t.is_empty())?;
    Some((u32::try_from(pid).ok()?, token.to_string()))
}

pub(super) fn random_u64() -> u64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.finish()
}

/// Returns 32 random hex digits.
pub(super) fn random_hex() -> String {
    format!("{:016x}{:016x}", random_u64(), random_u64())
}
