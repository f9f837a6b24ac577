//! `pm gc`: removal of derived and operational files by scope. `index` deletes this crate's
//! projection (readers rebuild it lazily); `locks` removes only locks whose owner is gone or
//! whose own ttl passed with the owner not provably alive (`pm_engine::lock::survey_locks`);
//! `debris` removes the abandoned temp files and gates of killed writers
//! (`pm_engine::debris`); `runtime` and `embeddings` remove pm's rebuildable artefacts. Never
//! follows a symlink and never touches item files or history.

use crate::store::{IndexPaths, WriterLock};
use pm_engine::clock::EpochMs;
use pm_engine::debris::{self, DEBRIS_MIN_AGE_MS};
use pm_engine::lock::{remove_surveyed, survey_locks};
use pm_engine::schema::TypeRegistry;
use pm_engine::tracker::Tracker;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A `pm gc` scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GcScope {
    /// The SQLite projection (`runtime/index/`) and pm-cli's `index/manifest.json`.
    Index,
    /// pm's search artefacts under `search/`.
    Embeddings,
    /// `runtime/test-runs/`, `runtime/history-drift-cache.json`, old snapshot temp entries.
    Runtime,
    /// Lock files whose owner is gone, or past their own ttl with no provably live owner.
    Locks,
    /// pm-cli rollback checkpoints (this pm writes none).
    Checkpoints,
    /// pm-cli SDK transaction journals (this pm writes none).
    Transactions,
    /// Our own writers' leftovers older than 10 minutes: atomic-write temp files, lock
    /// staging files and abandoned stale-cleanup gates (not a pm-cli scope).
    Debris,
}

impl GcScope {
    /// Every scope, in pm's order, then ours.
    pub const ALL: [GcScope; 7] = [
        GcScope::Index,
        GcScope::Embeddings,
        GcScope::Runtime,
        GcScope::Locks,
        GcScope::Checkpoints,
        GcScope::Transactions,
        GcScope::Debris,
    ];

    /// Returns the scope name.
    pub fn as_str(self) -> &'static str {
        match self {
            GcScope::Index => "index",
            GcScope::Embeddings => "embeddings",
            GcScope::Runtime => "runtime",
            GcScope::Locks => "locks",
            GcScope::Checkpoints => "checkpoints",
            GcScope::Transactions => "transactions",
            GcScope::Debris => "debris",
        }
    }

    /// Parses a scope name.
    pub fn parse(s: &str) -> Option<GcScope> {
        GcScope::ALL.into_iter().find(|g| g.as_str() == s)
    }
}

/// What one scope did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScopeReport {
    /// The scope.
    pub scope: GcScope,
    /// Entries examined.
    pub scanned: usize,
    /// Entries removed (or that would be, with `--dry-run`), tracker-relative.
    pub removed: Vec<String>,
    /// Entries kept, tracker-relative (locks still held or unusable, debris still fresh).
    pub retained: Vec<String>,
    /// Why each retained entry was kept, in the order of `retained` (locks and debris).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub retained_reasons: Vec<Retained>,
    /// Why the scope did nothing, when it did not apply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// A retained entry and why it was kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Retained {
    /// The entry, tracker-relative.
    pub path: String,
    /// Why: a lock class (`active`, `live_past_ttl`, `expired_pid_running`, `unreadable`,
    /// `unparseable`), `changed` (taken over while gc ran) or `younger_than_10_minutes`.
    pub reason: String,
    /// What to do about it, when something can be done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// The result of `pm gc`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GcReport {
    /// Nothing was removed; `removed` lists what would be.
    pub dry_run: bool,
    /// One report per scope, in pm's order.
    pub scopes: Vec<ScopeReport>,
}

/// Runs `pm gc` over `scopes` (all when empty) at `now_ms` (the command's clock, against which
/// each lock's own ttl is measured; debris ages are real file ages). `types` names the type
/// folders searched for debris.
///
/// # Errors
/// `Error::Io` when an entry cannot be removed or listed; `Error::PathUnsafe` for a symlinked
/// `locks/`.
pub fn gc(
    tracker: &Tracker,
    types: &TypeRegistry,
    scopes: &[GcScope],
    dry_run: bool,
    now_ms: EpochMs,
) -> pm_engine::Result<GcReport> {
    let mut wanted: Vec<GcScope> = if scopes.is_empty() {
        GcScope::ALL.to_vec()
    } else {
        scopes.to_vec()
    };
    wanted.sort();
    wanted.dedup();
    let mut out = GcReport {
        dry_run,
        scopes: Vec::new(),
    };
    for scope in wanted {
        let mut report = ScopeReport {
            scope,
            scanned: 0,
            removed: Vec::new(),
            retained: Vec::new(),
            retained_reasons: Vec::new(),
            skipped: None,
        };
        let root = tracker.root();
        match scope {
            GcScope::Index => {
                let paths = IndexPaths::of(tracker);
                // Wait for a writer in progress so a half-written generation is not cut short.
                let _lock = if dry_run {
                    None
                } else {
                    WriterLock::acquire(&paths, Duration::from_secs(5))
                        .ok()
                        .flatten()
                };
                for path in [paths.dir.clone(), root.join("index/manifest.json")] {
                    remove(root, &path, dry_run, &mut report)?;
                }
            }
            GcScope::Embeddings => {
                for rel in [
                    "search/embeddings.jsonl",
                    "search/vectorization-status.json",
                    "search/lancedb",
                    "search/pending-refresh.json",
                    "search/pending-refresh.gate.lock",
                ] {
                    remove(root, &root.join(rel), dry_run, &mut report)?;
                }
            }
            GcScope::Runtime => {
                let runtime = tracker.runtime_dir();
                for path in [
                    runtime.join("test-runs"),
                    runtime.join("history-drift-cache.json"),
                ] {
                    remove(root, &path, dry_run, &mut report)?;
                }
                let day_ms = 24 * 3600 * 1000;
                for (dir, prefix) in [
                    ("workspace-snapshots/objects", ".create-"),
                    ("workspace-snapshots/refs", ".ref-"),
                ] {
                    let dir = runtime.join(dir);
                    pm_engine::confine::leaf::check_beneath(root, &dir.join("x"))?;
                    for path in entries(&dir)? {
                        let name = file_name(&path);
                        if name.starts_with(prefix) && age_ms(&path, now_ms) > day_ms {
                            remove(root, &path, dry_run, &mut report)?;
                        }
                    }
                }
            }
            GcScope::Locks => locks(tracker, dry_run, now_ms, &mut report)?,
            GcScope::Debris => debris(tracker, types, dry_run, &mut report)?,
            GcScope::Checkpoints | GcScope::Transactions => {
                report.skipped = Some(format!(
                    "this pm writes no {}; pm-cli's are left in place",
                    scope.as_str()
                ));
            }
        }
        out.scopes.push(report);
    }
    Ok(out)
}

/// Removes the locks whose owner is gone or that expired (never a live owner's lock, however
/// old, nor a pm-cli lock whose pid runs here: that one needs a mutation's `--force`).
fn locks(
    tracker: &Tracker,
    dry_run: bool,
    now_ms: EpochMs,
    report: &mut ScopeReport,
) -> pm_engine::Result<()> {
    for lock in survey_locks(tracker, now_ms)? {
        report.scanned += 1;
        let reason = if !lock.removable {
            lock.class.as_str()
        } else if dry_run || remove_surveyed(tracker, &lock, now_ms)? {
            report.removed.push(lock.path.clone());
            continue;
        } else {
            "changed"
        };
        let fix = if reason == "changed" {
            None
        } else {
            lock.fix()
        };
        report.retained.push(lock.path.clone());
        report.retained_reasons.push(Retained {
            path: lock.path,
            reason: reason.into(),
            fix,
        });
    }
    Ok(())
}

/// Removes the abandoned leftovers of killed writers; fresh ones may belong to a writer at
/// work and are kept.
fn debris(
    tracker: &Tracker,
    types: &TypeRegistry,
    dry_run: bool,
    report: &mut ScopeReport,
) -> pm_engine::Result<()> {
    for found in debris::survey(tracker, types)? {
        report.scanned += 1;
        let reason = if !found.abandoned() {
            "younger_than_10_minutes"
        } else if dry_run || debris::remove(tracker, &found)? {
            report.removed.push(found.path);
            continue;
        } else {
            "changed"
        };
        let fix = (reason != "changed").then(|| {
            format!(
                "kept until it is older than {} minutes",
                DEBRIS_MIN_AGE_MS / 60_000
            )
        });
        report.retained.push(found.path.clone());
        report.retained_reasons.push(Retained {
            path: found.path,
            reason: reason.into(),
            fix,
        });
    }
    Ok(())
}

fn entries(dir: &Path) -> pm_engine::Result<Vec<PathBuf>> {
    use pm_engine::IoResultExt;
    match std::fs::read_dir(dir) {
        Ok(read) => {
            let mut out: Vec<PathBuf> = read
                .map(|e| e.map(|e| e.path()))
                .collect::<std::io::Result<_>>()
                .at(dir)?;
            out.sort();
            Ok(out)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).at(dir),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn age_ms(path: &Path, now_ms: EpochMs) -> i64 {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| {
            crate::fresh::source::Sig::of(&m)
                .mtime_ns
                .div_euclid(1_000_000)
        })
        .map_or(0, |mtime| now_ms.saturating_sub(mtime))
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Removes `path` (a symlink itself, never its target; a directory with its contents).
fn remove(
    root: &Path,
    path: &Path,
    dry_run: bool,
    report: &mut ScopeReport,
) -> pm_engine::Result<()> {
    use pm_engine::IoResultExt;
    // Never through a symlinked folder (`runtime/` linked elsewhere, say).
    pm_engine::confine::leaf::check_beneath(root, path)?;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    report.scanned += 1;
    report.removed.push(relative(root, path));
    if dry_run {
        return Ok(());
    }
    if meta.is_dir() {
        std::fs::remove_dir_all(path).at(path)
    } else {
        std::fs::remove_file(path).at(path)
    }
}
