//! The `pm health` verification memo (`runtime/health/memo`): a pure cache of the facts of each
//! id (its item files and stream), keyed by the files' stat signatures. Gathers the facts of a
//! tracker, reusing memo entries whose files did not change; a bad memo is silently ignored.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::codec;
use super::facts::{
    FileFacts, FileKey, FileSig, FolderProblem, GroupFacts, ItemFacts, ListedFile, ListedSources,
    StreamKey, compute_group, compute_loose, group, list_item_files, list_stream_files,
};
use super::hierarchy::{HierarchyFacts, input_digest, summarize};
use crate::error::Result;
use crate::hash::sha256_hex;
use crate::history::verify::{WorkspaceHistoryReport, read_small_file, verify_workspace};
use crate::read::view::TrackerView;
use crate::tracker::Tracker;

/// A file whose status changed less than this long (ns) before its facts were computed is kept
/// with a digest of its bytes: its timestamps alone cannot tell a later write of the same size
/// apart (timestamps are coarse, and some file systems keep only seconds).
const SETTLE_NS: i64 = 2_000_000_000;

/// What one health run did with the memo (a diagnostic for tests; never printed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoStats {
    /// Ids whose facts came from the memo.
    pub reused: usize,
    /// Ids whose facts were computed from the files.
    pub computed: usize,
    /// Whether the hierarchy analysis came from the memo.
    pub hierarchy_reused: bool,
    /// Whether the memo was (re)written.
    pub written: bool,
}

/// Called with the listing of a health run as soon as it is complete.
pub type OnListed<'a> = dyn Fn(&ListedSources<'_>) + Sync + 'a;

/// What the end of a run needs to keep the memo current.
pub(crate) struct Pending {
    path: PathBuf,
    fingerprint: String,
    /// The memo's hierarchy summary, if it had one.
    hierarchy: Option<HierarchyFacts>,
    /// Whether an entry changed (added, dropped or recomputed).
    changed: bool,
}

/// Where a listed item file's facts are.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Place {
    /// In group `.0`, file `.1`.
    Group(usize, usize),
    /// In the loose files (stem of the workspace stream), entry `.0`.
    Loose(usize),
}

/// Everything the storage, integrity and history-drift checks read.
pub(crate) struct Facts {
    /// The item files in listing order.
    pub files: Vec<ListedFile>,
    /// Per entry of `files`, where its facts are.
    pub places: Vec<Place>,
    /// One entry per id, sorted as the history verification sorts them.
    pub groups: Vec<GroupFacts>,
    /// Facts of the item files in no group.
    pub loose: Vec<FileFacts>,
    /// The workspace stream, verified on every run (it depends on documents anywhere).
    pub workspace: WorkspaceHistoryReport,
    /// Type folders that exist but could not be listed.
    pub unreadable_folders: Vec<FolderProblem>,
}

impl Facts {
    /// Returns the facts of listed file `index`.
    pub fn file(&self, index: usize) -> &FileFacts {
        match self.places[index] {
            Place::Group(g, k) => &self.groups[g].files[k],
            Place::Loose(j) => &self.loose[j],
        }
    }
}

/// Returns the memo's path.
pub fn memo_path(tracker: &Tracker) -> PathBuf {
    tracker.runtime_dir().join("health").join("memo")
}

/// Returns the digest of everything besides the files the facts depend on: this build's
/// version, the runtime schema and the settings (the memo header has its layout version).
fn fingerprint(view: &TrackerView) -> String {
    let text = format!(
        "{}\n{:?}\n{:?}",
        env!("CARGO_PKG_VERSION"),
        view.schema(),
        view.settings().effective()
    );
    sha256_hex(text.as_bytes())
}

/// Gathers the facts of the tracker of `view`, reusing the memo's entries whose files did not
/// change, and rewrites the memo when anything changed (a failed write is ignored).
///
/// # Errors
/// `io_error` when an item folder or the history directory cannot be listed.
pub(crate) fn gather(
    view: &TrackerView,
    on_listed: Option<&OnListed<'_>>,
) -> Result<(Facts, MemoStats, Pending)> {
    let tracker = view.tracker();
    let path = memo_path(tracker);
    let fingerprint = fingerprint(view);
    let (((files, streams), old), workspace) = rayon::join(
        || {
            rayon::join(
                || {
                    rayon::join(
                        || list_item_files(view),
                        || list_stream_files(&tracker.history_dir()),
                    )
                },
                || read_memo(&path, &fingerprint),
            )
        },
        || verify_workspace(tracker),
    );
    let ((files, unreadable_folders), streams) = (files?, streams?);
    if let Some(on_listed) = on_listed {
        on_listed(&ListedSources {
            files: &files,
            streams: &streams,
            every_folder_read: unreadable_folders.is_empty(),
        });
    }
    let (old, old_hierarchy) = old.map_or((Vec::new(), None), |(g, h)| (g, Some(h)));
    let (groups, loose) = group(&files, &streams);
    // Both are sorted by id (byte order): pair each group with the memo entry of its id.
    let old_len = old.len();
    let mut old = old.into_iter().peekable();
    let mut paired = Vec::with_capacity(groups.len());
    for (id, indexes, stream) in groups {
        while old.next_if(|g| g.id.as_str() < id).is_some() {}
        let candidate = old.next_if(|g| g.id == id);
        paired.push((id, indexes, stream, candidate));
    }
    let reused: Vec<Option<GroupFacts>> = paired
        .par_iter_mut()
        .map(|(_, indexes, stream, candidate)| {
            candidate
                .take()
                .filter(|c| still_valid(c, &files, indexes, *stream, tracker))
        })
        .collect();
    let misses = reused.iter().filter(|r| r.is_none()).count();
    let settled_before = if misses > 0 {
        reference_time(path.parent().unwrap_or(&path))
    } else {
        None
    };
    let computed: Vec<(GroupFacts, bool)> = paired
        .par_iter()
        .zip(reused)
        .map(|((id, indexes, stream, _), reused)| match reused {
            Some(facts) => (facts, false),
            None => {
                let listed: Vec<&ListedFile> = indexes.iter().map(|&i| &files[i]).collect();
                let facts = compute_group(view, id, &listed, *stream, settled_before);
                let kept = facts.memoizable();
                (facts, kept)
            }
        })
        .collect();
    let kept_new = computed.iter().filter(|(_, kept)| *kept).count();
    let groups: Vec<GroupFacts> = computed.into_iter().map(|(facts, _)| facts).collect();
    let stats = MemoStats {
        reused: groups.len() - misses,
        computed: misses,
        hierarchy_reused: false,
        written: false,
    };
    let pending = Pending {
        path,
        fingerprint,
        hierarchy: old_hierarchy,
        changed: kept_new > 0 || groups.len() - misses != old_len,
    };
    let mut places = vec![Place::Loose(0); files.len()];
    for (g, (_, indexes, ..)) in paired.iter().enumerate() {
        for (k, &index) in indexes.iter().enumerate() {
            places[index] = Place::Group(g, k);
        }
    }
    let loose_facts = loose
        .iter()
        .enumerate()
        .map(|(j, &index)| {
            places[index] = Place::Loose(j);
            compute_loose(view, &files[index])
        })
        .collect();
    drop(paired);
    Ok((
        Facts {
            files,
            places,
            groups,
            loose: loose_facts,
            workspace,
            unreadable_folders,
        },
        stats,
        pending,
    ))
}

/// Returns the hierarchy summary of `items` (sorted as `pm validate` sorts them): the memo's
/// when its inputs are the same, else a fresh analysis.
pub(crate) fn hierarchy(
    pending: &mut Pending,
    items: &[&ItemFacts],
    stats: &mut MemoStats,
) -> HierarchyFacts {
    let input = input_digest(items);
    match pending.hierarchy.take() {
        Some(kept) if kept.input == input => {
            stats.hierarchy_reused = true;
            pending.hierarchy = Some(kept.clone());
            kept
        }
        _ => summarize(items, input),
    }
}

/// Rewrites the memo when anything changed (a failed write is ignored).
pub(crate) fn finish(
    pending: Pending,
    groups: &[GroupFacts],
    hierarchy: &HierarchyFacts,
    stats: &mut MemoStats,
) {
    let same_hierarchy = pending
        .hierarchy
        .as_ref()
        .is_some_and(|kept| kept.input == hierarchy.input);
    if pending.changed || !same_hierarchy {
        stats.written = write_memo(&pending.path, &pending.fingerprint, groups, hierarchy);
    }
}

/// Returns whether a memo entry still describes the listed files of its id: same files with
/// the same signatures, and for a recently changed file the same bytes.
fn still_valid(
    entry: &GroupFacts,
    files: &[ListedFile],
    indexes: &[usize],
    stream: Option<Option<FileSig>>,
    tracker: &Tracker,
) -> bool {
    let same_bytes = |key: &FileKey, path: &Path| match &key.digest {
        None => true,
        Some(digest) => read_small_file(path).is_ok_and(|bytes| sha256_hex(&bytes) == *digest),
    };
    let stream_ok = match (&entry.stream_key, stream) {
        (StreamKey::NotListed, None) => true,
        (StreamKey::Listed(Some(key)), Some(Some(sig))) => {
            key.sig == sig && same_bytes(key, &tracker.history_path(&entry.id))
        }
        _ => false,
    };
    stream_ok
        && entry.files.len() == indexes.len()
        && entry.files.iter().zip(indexes).all(|(facts, &index)| {
            let listed = &files[index];
            facts.name == listed.name
                && facts.key.as_ref().is_some_and(|key| {
                    Some(key.sig) == listed.sig && same_bytes(key, &listed.file.path)
                })
        })
}

/// Returns the time (ns) before which a file's status must have changed for its signature to be
/// trusted alone: a fresh file's status-change time, taken before any file is read, less
/// [`SETTLE_NS`]. `None` when no file can be created there (every key then gets a digest).
fn reference_time(dir: &Path) -> Option<i64> {
    if !writable(&dir.join("memo")) {
        return None;
    }
    std::fs::create_dir_all(dir).ok()?;
    let probe = tempfile::Builder::new()
        .prefix(".settle")
        .tempfile_in(dir)
        .ok()?;
    let meta = probe.as_file().metadata().ok()?;
    use std::os::unix::fs::MetadataExt;
    Some(meta.ctime().saturating_mul(1_000_000_000) + meta.ctime_nsec() - SETTLE_NS)
}

/// Reads the memo's entries (sorted by id) and hierarchy summary; `None` when it is missing, truncated, corrupt, of
/// another layout or build, or made for other settings or schema.
fn read_memo(path: &Path, fingerprint: &str) -> Option<(Vec<GroupFacts>, HierarchyFacts)> {
    codec::decode(&std::fs::read(path).ok()?, fingerprint)
}

/// Returns whether the memo may be written under `runtime/`: neither `runtime/` nor its
/// `health/` folder is a symbolic link (the index never writes through one either).
fn writable(path: &Path) -> bool {
    let health = path.parent();
    let runtime = health.and_then(Path::parent);
    [health, runtime]
        .into_iter()
        .flatten()
        .all(|dir| !std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()))
}

/// Writes the memo atomically; returns whether it was written.
fn write_memo(
    path: &Path,
    fingerprint: &str,
    groups: &[GroupFacts],
    hierarchy: &HierarchyFacts,
) -> bool {
    if !writable(path) {
        return false;
    }
    let bytes = codec::encode(
        fingerprint,
        groups.iter().filter(|g| g.memoizable()),
        hierarchy,
    );
    crate::atomic::write(path, &bytes).is_ok()
}
