//! The opt-in `directories` freshness mode: a read trusts the projection without statting every
//! source file when the swept folders' own signatures equal the ones recorded after the last
//! full sweep that confirmed this database generation.
//!
//! A folder's signature changes whenever an entry is created, removed or renamed in it — every
//! atomic write (pm's, pm-cli's, git's checkout) — but not when a file is rewritten in place or
//! appended to. That is what this mode can miss; it is off unless asked for.

use crate::fresh::digest::name_hash;
use crate::fresh::source::{Sig, SweepScope};
use crate::store::IndexPaths;
use pm_engine::schema::RuntimeSchema;
use pm_engine::tracker::Tracker;
use std::io::{ErrorKind, Write};
use std::path::PathBuf;

/// How a read decides that the projection is fresh.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Freshness {
    /// Stat every item file (and history stream when the read uses events): sees every change.
    #[default]
    Full,
    /// Trust the projection while the folders' signatures are unchanged since a full sweep
    /// confirmed it; misses files rewritten in place or appended to (see the module docs).
    Directories,
}

impl Freshness {
    /// Parses `full` or `directories`.
    pub fn parse(text: &str) -> Option<Freshness> {
        match text {
            "full" => Some(Freshness::Full),
            "directories" => Some(Freshness::Directories),
            _ => None,
        }
    }
}

/// The record file, in `runtime/index/`.
const RECORD_FILE: &str = "dirsig";
/// Touched to read the filesystem clock before a signature is taken.
const STAMP_FILE: &str = "dirsig.stamp";

/// The folders' signatures at one moment, and whether they are safe to record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FolderSigs {
    /// Order-independent digest of every swept folder's name and signature.
    pub digest: u64,
    /// No folder changed at or after the filesystem time taken just before: a later change
    /// is then certain to give a folder a new change time.
    pub settled: bool,
}

/// Takes the signatures of the item folders and `history/` (every folder any read sweeps);
/// with `stamp`, reads the filesystem clock first to tell whether they are settled (else they
/// are not). `None` when a folder cannot be inspected or the clock cannot be read.
pub fn take(
    tracker: &Tracker,
    schema: &RuntimeSchema,
    paths: &IndexPaths,
    stamp: bool,
) -> Option<FolderSigs> {
    let now_ns = if stamp {
        filesystem_now(&paths.dir)?
    } else {
        i64::MIN
    };
    let mut folders: Vec<PathBuf> = schema
        .types
        .folders()
        .into_iter()
        .map(|(folder, _)| tracker.root().join(folder))
        .collect();
    folders.push(tracker.history_dir());
    let mut digest = 0u64;
    let mut settled = true;
    for dir in &folders {
        let rel = dir.strip_prefix(tracker.root()).unwrap_or(dir);
        let rel = rel.to_string_lossy();
        // The folder itself, never a symlink's target (no listing follows one).
        match std::fs::symlink_metadata(dir) {
            Ok(meta) => {
                let sig = Sig::of(&meta);
                settled &= sig.ctime_ns < now_ns && sig.mtime_ns < now_ns;
                digest = digest.wrapping_add(sig.contribution(&rel));
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                digest = digest.wrapping_add(name_hash(rel.as_bytes()));
            }
            Err(_) => return None,
        }
    }
    Some(FolderSigs { digest, settled })
}

/// A full sweep's confirmation: the database generation, the widest scope it covered and the
/// folders' digest taken before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Confirmation {
    /// The database generation confirmed.
    pub generation: u64,
    /// What the sweep covered (an items-only sweep says nothing about `history/`).
    pub scope: SweepScope,
    /// [`FolderSigs::digest`] taken before the sweep.
    pub digest: u64,
}

impl Confirmation {
    /// Whether it lets a read of `scope` trust `generation` with folders at `digest`.
    pub fn covers(&self, generation: u64, scope: SweepScope, digest: u64) -> bool {
        self.generation == generation && self.digest == digest && self.scope.covers(scope)
    }
}

/// Returns the recorded confirmation, if any.
pub fn recorded(paths: &IndexPaths) -> Option<Confirmation> {
    let text = std::fs::read_to_string(paths.dir.join(RECORD_FILE)).ok()?;
    let mut parts = text.split_whitespace();
    if parts.next()? != "v1" {
        return None;
    }
    let generation = parts.next()?.parse().ok()?;
    let scope = SweepScope::parse(parts.next()?)?;
    let digest = u64::from_str_radix(parts.next()?, 16).ok()?;
    Some(Confirmation {
        generation,
        scope,
        digest,
    })
}

/// Records that a sweep of `scope` confirmed `generation` with the folders at `sigs` (taken
/// before it) when they are settled; otherwise removes any record, so none outlives a change.
/// A record of the same generation and folders is kept when it covers more, widened when it
/// covers another scope. Failures only cost the next read a full sweep.
pub fn record(paths: &IndexPaths, generation: u64, scope: SweepScope, sigs: FolderSigs) {
    let path = paths.dir.join(RECORD_FILE);
    if !sigs.settled {
        let _ = pm_engine::atomic::remove(&path);
        return;
    }
    let mut scope = scope;
    if let Some(r) = recorded(paths)
        && r.generation == generation
        && r.digest == sigs.digest
    {
        if r.scope.covers(scope) {
            return;
        }
        // The same folders confirmed for another scope earlier: both hold.
        scope = r.scope.union(scope);
    }
    let text = format!("v1 {generation} {} {:016x}\n", scope.as_str(), sigs.digest);
    let _ = pm_engine::atomic::write(&path, text.as_bytes());
}

/// Reads the filesystem's clock: the change time of a file written just now in `dir`, in ns.
pub(crate) fn filesystem_now(dir: &std::path::Path) -> Option<i64> {
    let mut stamp = std::fs::File::create(dir.join(STAMP_FILE)).ok()?;
    stamp.write_all(b"\n").ok()?;
    Some(Sig::of(&stamp.metadata().ok()?).ctime_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_records_round_trip() -> Result<(), Box<dyn std::error::Error>> {
        assert_eq!(Freshness::parse("full"), Some(Freshness::Full));
        assert_eq!(
            Freshness::parse("directories"),
            Some(Freshness::Directories)
        );
        assert_eq!(Freshness::parse("dirs"), None);
        let dir = tempfile::tempdir()?;
        let tracker = Tracker::at(dir.path().join(".agents/pm"));
        let paths = IndexPaths::of(&tracker);
        std::fs::create_dir_all(&paths.dir)?;
        let sigs = FolderSigs {
            digest: 0xabc,
            settled: true,
        };
        record(&paths, 7, SweepScope::All, sigs);
        let all = recorded(&paths).ok_or("recorded")?;
        assert!(all.covers(7, SweepScope::Items, 0xabc) && all.covers(7, SweepScope::All, 0xabc));
        assert!(!all.covers(8, SweepScope::Items, 0xabc) && !all.covers(7, SweepScope::All, 1));
        // An items-only confirmation of the same folders keeps the wider record ...
        record(&paths, 7, SweepScope::Items, sigs);
        assert_eq!(recorded(&paths), Some(all));
        // ... and on its own covers no read of history.
        record(&paths, 9, SweepScope::Items, sigs);
        let items = recorded(&paths).ok_or("recorded")?;
        assert!(items.covers(9, SweepScope::Items, 0xabc));
        assert!(!items.covers(9, SweepScope::All, 0xabc));
        assert!(!items.covers(9, SweepScope::History, 0xabc));
        // A history confirmation of the same folders adds to it: both scopes are covered.
        record(&paths, 9, SweepScope::History, sigs);
        let both = recorded(&paths).ok_or("recorded")?;
        assert_eq!(both.scope, SweepScope::All);
        // A history confirmation alone covers no read of item files.
        record(&paths, 10, SweepScope::History, sigs);
        let streams = recorded(&paths).ok_or("recorded")?;
        assert!(streams.covers(10, SweepScope::History, 0xabc));
        assert!(!streams.covers(10, SweepScope::Items, 0xabc));
        record(
            &paths,
            9,
            SweepScope::Items,
            FolderSigs {
                settled: false,
                ..sigs
            },
        );
        assert_eq!(recorded(&paths), None);
        Ok(())
    }
}
