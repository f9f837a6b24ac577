//! The freshness sweep every read runs before answering from the projection: the digest of the
//! sources of a scope from one stat per file, without keeping the file list. Folders whose
//! recorded listing still holds (`folder_listings`) are not listed again; the others are listed with
//! their stats pipelined, and their listings recorded for the next sweep.

use crate::fresh::listings::{FolderListings, stat_names};
use crate::fresh::source::{Sig, SweepScope};
use pm_engine::notice::Notice;
use pm_engine::read::health::ListedSources;
use pm_engine::schema::RuntimeSchema;
use pm_engine::tracker::Tracker;
use pm_engine::{IoResultExt, Result};
use rayon::prelude::*;
use std::path::Path;

/// The digest of every source file of a scope (the fast path of the freshness check: bounded
/// memory at any tracker size).
#[derive(Clone, Debug, Default)]
pub struct DigestSweep {
    /// Wrapping sum of every file's [`Sig::contribution`].
    pub digest: u64,
    /// Files seen.
    pub count: usize,
    /// Type folders that could not be listed.
    pub unreadable_dirs: Vec<Notice>,
    /// Folders whose recorded listing was statted instead of reading the folder.
    pub recalled: usize,
}

impl DigestSweep {
    /// The digest of every source (scope `All`) from the listing of a `pm health` run, which
    /// selects the same item files and streams as [`digest_sweep`] and stats each once; `None`
    /// when a type folder could not be read (the sweep would report it). A listing that
    /// selected differently would only yield a digest the projection does not match, and the
    /// full comparison then decides.
    pub fn of_health_listing(sources: &ListedSources<'_>) -> Option<DigestSweep> {
        if !sources.every_folder_read() {
            return None;
        }
        let add = |a: (u64, usize), b: (u64, usize)| (a.0.wrapping_add(b.0), a.1 + b.1);
        let (item_sum, item_count) = sources
            .item_files()
            .map(|(folder, name, sig)| (Sig::from(sig).contribution_at(folder, name), 1))
            .reduce(|| (0, 0), add);
        let (stream_sum, stream_count) = sources
            .streams()
            .filter(|(id, _)| !id.is_empty())
            .map(|(id, sig)| {
                let name = format!("{id}.jsonl");
                (Sig::from(sig).contribution_at("history", &name), 1)
            })
            .reduce(|| (0, 0), add);
        Some(DigestSweep {
            digest: item_sum.wrapping_add(stream_sum),
            count: item_count + stream_count,
            ..DigestSweep::default()
        })
    }
}

/// Computes the sources digest of `scope` with the same file selection as
/// [`crate::fresh::source::enumerate`] and the same signatures as [`crate::fresh::source::sweep`], statting
/// each folder's entries in parallel relative to the folder. With `listings`, a folder whose
/// listing is recorded and still holds is not read again, and the folders read are recorded.
///
/// The directory listing is pipelined with the stats: while the pool stats one batch of
/// entries, another worker reads the next batch.
///
/// # Errors
/// `Error::Io` when `history/` or an entry cannot be inspected.
pub fn digest_sweep(
    tracker: &Tracker,
    schema: &RuntimeSchema,
    scope: SweepScope,
    listings: Option<&FolderListings>,
) -> Result<DigestSweep> {
    let mut folders: Vec<(String, bool)> = Vec::new();
    if scope.has_items() {
        folders.extend(
            schema
                .types
                .folders()
                .into_iter()
                .map(|(folder, _)| (folder.to_string(), true)),
        );
    }
    if scope.has_history() {
        folders.push(("history".to_string(), false));
    }
    let mut out = DigestSweep::default();
    let mut unlisted = Vec::new();
    for (index, (folder, _)) in folders.iter().enumerate() {
        let dir = tracker.root().join(folder);
        let recalled = listings.and_then(|l| l.recall(folder, &dir));
        match recalled.and_then(|names| stat_names(&dir, folder, &names)) {
            Some((sum, count)) => {
                out.digest = out.digest.wrapping_add(sum);
                out.count += count;
                out.recalled += 1;
            }
            None => unlisted.push(index),
        }
    }
    if unlisted.is_empty() {
        return Ok(out);
    }
    // Read before any folder's signature is taken: see `FolderListings::record`.
    let recording = listings.and_then(|l| Some((l, l.now()?)));
    let mut lister = Lister {
        root: tracker.root(),
        folders: &folders,
        pending: unlisted.into_iter(),
        open: None,
        unreadable_dirs: Vec::new(),
        records: recording.map(|_| Vec::new()),
    };
    // Two batches alternate: the memory of one is reused by the one after next (at 100k
    // files, fresh pages for every entry were a tenth of the sweep's time).
    let mut current = Vec::with_capacity(SWEEP_BATCH);
    let mut next = Vec::with_capacity(SWEEP_BATCH);
    lister.fill(&mut current)?;
    while !current.is_empty() {
        let ((sum, count), listed) = rayon::join(
            || sweep_batch(&current, &folders),
            || lister.fill(&mut next),
        );
        listed?;
        out.digest = out.digest.wrapping_add(sum);
        out.count += count;
        std::mem::swap(&mut current, &mut next);
    }
    if let (Some((listings, now_ns)), Some(records)) = (recording, &lister.records) {
        for record in records {
            listings.record(&folders[record.index].0, record.sig, &record.names, now_ns);
        }
    }
    out.unreadable_dirs = lister.unreadable_dirs;
    Ok(out)
}

/// Directory entries statted per parallel batch.
const SWEEP_BATCH: usize = 4096;

/// A folder listed while recording: its signature taken before it was read, and the names of
/// its wanted entries.
struct Record {
    index: usize,
    sig: Sig,
    names: Vec<String>,
}

/// Lists the pending folders one after another, in batches of wanted entries tagged with their
/// folder.
struct Lister<'a> {
    root: &'a Path,
    folders: &'a [(String, bool)],
    pending: std::vec::IntoIter<usize>,
    open: Option<(usize, std::fs::ReadDir)>,
    unreadable_dirs: Vec<Notice>,
    /// The folders listed so far, when recording.
    records: Option<Vec<Record>>,
}

impl Lister<'_> {
    /// Replaces `batch` with up to [`SWEEP_BATCH`] next wanted entries (empty when all are
    /// listed).
    fn fill(&mut self, batch: &mut Vec<Wanted>) -> Result<()> {
        batch.clear();
        while batch.len() < SWEEP_BATCH {
            let Some((index, entries)) = self.open.as_mut() else {
                if !self.open_next()? {
                    break;
                }
                continue;
            };
            let index = *index;
            let (folder, is_items) = &self.folders[index];
            let mut exhausted = true;
            for entry in entries.by_ref() {
                let entry = entry.at(self.root.join(folder))?;
                if let Some(name) = wanted(&entry, *is_items) {
                    if let Some(record) = self.records.as_mut().and_then(|r| r.last_mut()) {
                        record.names.push(name.clone());
                    }
                    batch.push((index, entry, name));
                    if batch.len() == SWEEP_BATCH {
                        exhausted = false;
                        break;
                    }
                }
            }
            if exhausted {
                self.open = None;
            }
        }
        Ok(())
    }

    /// Opens the next existing pending folder; false when none is left.
    fn open_next(&mut self) -> Result<bool> {
        for index in self.pending.by_ref() {
            let (folder, is_items) = &self.folders[index];
            let dir = self.root.join(folder);
            // The signature comes before the listing: a change in between makes it stale.
            let sig = self
                .records
                .as_ref()
                .and_then(|_| std::fs::symlink_metadata(&dir).ok())
                .map(|meta| Sig::of(&meta));
            match pm_engine::confine::leaf::list_folder(&dir) {
                Ok(Some(entries)) => {
                    if let (Some(records), Some(sig)) = (self.records.as_mut(), sig) {
                        records.push(Record {
                            index,
                            sig,
                            names: Vec::new(),
                        });
                    }
                    self.open = Some((index, entries));
                    return Ok(true);
                }
                Ok(None) => {}
                // The same notices as `Tracker::item_files`.
                Err(e @ pm_engine::Error::PathUnsafe { .. }) if *is_items => {
                    self.unreadable_dirs.push(Notice::new(
                        format!("{}:{folder}", pm_engine::tracker::FOLDER_UNSAFE_NOTICE),
                        e.to_string(),
                    ));
                }
                Err(pm_engine::Error::Io { source, .. }) if *is_items => {
                    self.unreadable_dirs.push(Notice::new(
                        format!("{}:{folder}", pm_engine::tracker::FOLDER_READ_FAILED_NOTICE),
                        format!("{}: {source}", dir.display()),
                    ));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(false)
    }
}

/// The name of `entry` when the sweep wants it: not a directory, and named like an item file
/// (type folders) or a stream (`history/`).
fn wanted(entry: &std::fs::DirEntry, is_items: bool) -> Option<String> {
    let kind = entry.file_type().ok()?;
    let name = entry.file_name().into_string().ok()?;
    let wanted = !kind.is_dir()
        && if is_items {
            pm_engine::item::ItemFormat::split_file_name(&name).is_some()
        } else {
            name.len() > ".jsonl".len() && name.ends_with(".jsonl")
        };
    wanted.then_some(name)
}

/// A wanted entry: its folder's index, the entry and its name.
type Wanted = (usize, std::fs::DirEntry, String);

/// Returns the digest contribution and count of the regular files among `batch`.
fn sweep_batch(batch: &[Wanted], folders: &[(String, bool)]) -> (u64, usize) {
    batch
        .par_iter()
        .map(|(index, entry, name)| {
            // Never followed: a symlinked entry counts with its own status (as the
            // enumeration's sweep does), and reading it is refused.
            match entry.metadata() {
                Ok(m) if m.is_file() || m.is_symlink() => {
                    (Sig::of(&m).contribution_at(&folders[*index].0, name), 1)
                }
                _ => (0, 0),
            }
        })
        .reduce(|| (0, 0), |a, b| (a.0.wrapping_add(b.0), a.1 + b.1))
}
