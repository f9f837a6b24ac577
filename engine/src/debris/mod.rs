//! Writer debris: the temp files and stale-cleanup gates that killed writers leave behind,
//! recognised only by our own name patterns and judged by real file age. One definition for
//! `pm health`, `pm validate` and `pm gc --scope debris`; no other name is ever reported or
//! removed (a user's `.notes.tmp` is not ours).

use std::ffi::OsStr;
use std::path::Path;

use serde::Serialize;

use crate::atomic::is_temp_name;
use crate::clock::{EpochMs, file_age_ms};
use crate::confine::{Dir, EntryKind, Root};
use crate::error::{Error, Result};
use crate::lock::{LOCKS_FOLDER, STALE_GATE_SUFFIX};
use crate::schema::TypeRegistry;
use crate::tracker::{HISTORY_FOLDER, Tracker};

/// Debris younger than this (real file age) may belong to a writer still at work; it is
/// reported as fresh and never removed. Twice the stale-cleanup gate's 5-minute bound.
pub const DEBRIS_MIN_AGE_MS: EpochMs = 10 * 60 * 1000;

/// The folder (relative to the tracker root) of the schema files.
const SCHEMA_FOLDER: &str = "schema";
/// The one file a stale-cleanup gate holds.
const GATE_OWNER_FILE: &str = "owner.json";

/// Which of our patterns a leftover matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DebrisKind {
    /// `.<base>.<pid>.<seq>.<8 hex>.tmp`: the temp file of an atomic write (items, settings,
    /// schema files, gate owner files) that was never renamed.
    WriteTemp,
    /// `<id>.lock.<pid>-<16 hex>.tmp` in `locks/`: a lock body staged before its hard link.
    LockStaging,
    /// `locks/<id>.lock.stale-cleanup/` holding nothing but its `owner.json`: an abandoned
    /// stale-cleanup gate.
    CleanupGate,
}

impl DebrisKind {
    /// Returns the kind's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            DebrisKind::WriteTemp => "write_temp",
            DebrisKind::LockStaging => "lock_staging",
            DebrisKind::CleanupGate => "cleanup_gate",
        }
    }
}

/// Where a name was found: the locks folder has patterns of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The tracker root, `schema/`, `history/` or a type folder.
    Folder,
    /// `locks/`.
    Locks,
}

/// One leftover that matches our patterns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Debris {
    /// The path relative to the tracker root, `/`-separated.
    pub path: String,
    /// Which pattern it matches.
    pub kind: DebrisKind,
    /// Milliseconds since it was last modified (real time, whatever the command's clock).
    pub age_ms: EpochMs,
}

impl Debris {
    /// Whether it is old enough to be abandoned ([`DEBRIS_MIN_AGE_MS`]).
    pub fn abandoned(&self) -> bool {
        is_abandoned_age(self.age_ms)
    }
}

/// Whether a leftover of this real age (ms) counts as abandoned: strictly older than 10 min.
pub fn is_abandoned_age(age_ms: EpochMs) -> bool {
    age_ms > DEBRIS_MIN_AGE_MS
}

/// Returns true for `<id>.lock.<pid>-<16 hex>.tmp`, the staging name of a lock body.
pub fn is_lock_staging_name(name: &str) -> bool {
    let Some((lock, tag)) = name
        .strip_suffix(".tmp")
        .and_then(|rest| rest.rsplit_once('.'))
    else {
        return false;
    };
    let Some((pid, hex)) = tag.split_once('-') else {
        return false;
    };
    lock.strip_suffix(".lock").is_some_and(|id| !id.is_empty())
        && !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && hex.len() == 16
        && hex.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Returns true for `<id>.lock.stale-cleanup`, the name of a stale-cleanup gate.
pub fn is_gate_name(name: &str) -> bool {
    name.strip_suffix(STALE_GATE_SUFFIX)
        .and_then(|n| n.strip_suffix(".lock"))
        .is_some_and(|id| !id.is_empty())
}

/// Returns which of our patterns the entry `name` (of `kind`, found in `place`) matches; `None`
/// for every other name, which is never debris.
pub fn classify(place: Place, name: &str, kind: EntryKind) -> Option<DebrisKind> {
    match kind {
        EntryKind::File(_) if is_temp_name(name) => Some(DebrisKind::WriteTemp),
        EntryKind::File(_) if place == Place::Locks && is_lock_staging_name(name) => {
            Some(DebrisKind::LockStaging)
        }
        EntryKind::Directory if place == Place::Locks && is_gate_name(name) => {
            Some(DebrisKind::CleanupGate)
        }
        _ => None,
    }
}

/// The folders searched, each once: the root (settings temps), `schema/`, `history/`, every
/// type folder, `locks/`.
fn folders(types: &TypeRegistry) -> Vec<(String, Place)> {
    let mut out: Vec<(String, Place)> = vec![
        (String::new(), Place::Folder),
        (SCHEMA_FOLDER.into(), Place::Folder),
        (HISTORY_FOLDER.into(), Place::Folder),
    ];
    for (folder, _) in types.folders() {
        if folder != LOCKS_FOLDER && !out.iter().any(|(f, _)| f == folder) {
            out.push((folder.to_string(), Place::Folder));
        }
    }
    out.push((LOCKS_FOLDER.into(), Place::Locks));
    out
}

/// Opens a folder below the root; `None` when it is missing or not safe to enter (a symlink:
/// other checks report that, and nothing is ever read or removed through it).
fn open_folder(root: &Root, folder: &str) -> Result<Option<Dir>> {
    match root.dir(Path::new(folder), false) {
        Ok(dir) => Ok(dir),
        Err(Error::PathUnsafe { .. }) => Ok(None),
        Err(err) => Err(err),
    }
}

fn relative(folder: &str, name: &str) -> String {
    if folder.is_empty() {
        name.to_string()
    } else {
        format!("{folder}/{name}")
    }
}

/// Whether the gate directory `name` holds only what a gate holds (`owner.json` and the temp
/// files of writing it), so removing it cannot remove anything of anyone else's.
fn gate_holds_only_ours(locks: &Dir, name: &OsStr) -> Result<bool> {
    let Some(gate) = locks.subdir(name, false)? else {
        return Ok(false);
    };
    Ok(gate.names()?.iter().all(|entry| {
        entry
            .to_str()
            .is_some_and(|e| e == GATE_OWNER_FILE || is_temp_name(e))
            && matches!(gate.kind(entry), Ok(EntryKind::File(_)))
    }))
}

/// Judges the entry `name` of `dir`: its debris record, or `None` when it is not ours.
fn judge(dir: &Dir, folder: &str, place: Place, name: &OsStr) -> Result<Option<Debris>> {
    let Some(text) = name.to_str() else {
        return Ok(None);
    };
    // The name decides first, so an item folder of 100,000 files costs no stat per file.
    let ours = is_temp_name(text)
        || (place == Place::Locks && (is_lock_staging_name(text) || is_gate_name(text)));
    if !ours {
        return Ok(None);
    }
    let Some(kind) = classify(place, text, dir.kind(name)?) else {
        return Ok(None);
    };
    if kind == DebrisKind::CleanupGate && !gate_holds_only_ours(dir, name)? {
        return Ok(None);
    }
    let Some(modified) = dir.modified(name)? else {
        return Ok(None);
    };
    Ok(Some(Debris {
        path: relative(folder, text),
        kind,
        age_ms: file_age_ms(modified),
    }))
}

/// Lists every entry of the tracker that matches our debris patterns, fresh or abandoned,
/// sorted by path. Never follows a symlink; missing or symlinked folders are skipped.
///
/// # Errors
/// `Error::Io` when a folder cannot be listed or an entry cannot be inspected.
pub fn survey(tracker: &Tracker, types: &TypeRegistry) -> Result<Vec<Debris>> {
    let root = match Root::open(tracker.root()) {
        Ok(root) => root,
        Err(_) if !tracker.root().is_dir() => return Ok(Vec::new()),
        Err(err) => return Err(err),
    };
    let mut out = Vec::new();
    for (folder, place) in folders(types) {
        let Some(dir) = open_folder(&root, &folder)? else {
            continue;
        };
        for name in dir.names()? {
            if let Some(found) = judge(&dir, &folder, place, &name)? {
                out.push(found);
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Removes one abandoned leftover that [`survey`] reported, after judging it again (same
/// pattern, still older than [`DEBRIS_MIN_AGE_MS`], a gate still holding only its owner file).
/// Returns false when it is gone, fresh again or no longer ours (then nothing is removed).
///
/// # Errors
/// `Error::Io` when the entry cannot be inspected or removed.
pub fn remove(tracker: &Tracker, debris: &Debris) -> Result<bool> {
    let (folder, name) = debris.path.rsplit_once('/').unwrap_or(("", &debris.path));
    let place = if folder == LOCKS_FOLDER {
        Place::Locks
    } else {
        Place::Folder
    };
    let root = Root::open(tracker.root())?;
    let Some(dir) = open_folder(&root, folder)? else {
        return Ok(false);
    };
    let name = OsStr::new(name);
    match judge(&dir, folder, place, name)? {
        Some(now) if now.kind == debris.kind && now.abandoned() => {}
        _ => return Ok(false),
    }
    if debris.kind != DebrisKind::CleanupGate {
        return dir.unlink(name);
    }
    if let Some(gate) = dir.subdir(name, false)? {
        for entry in gate.names()? {
            gate.unlink(&entry)?;
        }
    }
    dir.remove_dir(name)
}

#[cfg(test)]
mod tests;
