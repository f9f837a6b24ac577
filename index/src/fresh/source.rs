//! The authoritative files the projection is built from (item files and history streams), their
//! stat signatures, and the order-independent digest that lets a read confirm in one comparison
//! that nothing changed since the last build or apply.

use crate::fresh::digest::signature;
use pm_engine::notice::Notice;
use pm_engine::schema::RuntimeSchema;
use pm_engine::summary::relative_path;
use pm_engine::tracker::{HISTORY_FOLDER, ItemFileRef, ItemFormat, Tracker};
use pm_engine::{IoResultExt, Result};
use rayon::prelude::*;
use std::fs::Metadata;
use std::path::Path;
use std::path::PathBuf;

/// What a source file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceKind {
    /// An item file in a registered type folder.
    Item,
    /// A history stream `history/<id>.jsonl`.
    History,
}

impl SourceKind {
    /// Returns the name stored in `sources.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Item => "item",
            SourceKind::History => "history",
        }
    }

    /// Parses a stored kind.
    pub fn parse(s: &str) -> Option<SourceKind> {
        match s {
            "item" => Some(SourceKind::Item),
            "history" => Some(SourceKind::History),
            _ => None,
        }
    }
}

/// The stat signature of a file: any write changes at least one field (`ctime` cannot be set
/// back by tools that restore `mtime`; `inode` changes when a file is replaced by rename).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sig {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, ns since the epoch.
    pub mtime_ns: i64,
    /// Status-change time, ns since the epoch.
    pub ctime_ns: i64,
    /// Inode number.
    pub inode: u64,
}

impl From<pm_engine::read::health::FileSig> for Sig {
    fn from(sig: pm_engine::read::health::FileSig) -> Sig {
        Sig {
            size: sig.size,
            mtime_ns: sig.mtime_ns,
            ctime_ns: sig.ctime_ns,
            inode: sig.inode,
        }
    }
}

impl Sig {
    /// Returns the signature of stat results.
    #[cfg(unix)]
    pub fn of(meta: &Metadata) -> Sig {
        use std::os::unix::fs::MetadataExt;
        Sig {
            size: meta.size(),
            mtime_ns: meta.mtime().saturating_mul(1_000_000_000) + meta.mtime_nsec(),
            ctime_ns: meta.ctime().saturating_mul(1_000_000_000) + meta.ctime_nsec(),
            inode: meta.ino(),
        }
    }

    /// Returns the signature of stat results (size and mtime only off Unix).
    #[cfg(not(unix))]
    pub fn of(meta: &Metadata) -> Sig {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        Sig {
            size: meta.len(),
            mtime_ns,
            ctime_ns: mtime_ns,
            inode: 0,
        }
    }

    /// Returns this file's contribution to the sources digest.
    pub fn contribution(&self, rel: &str) -> u64 {
        self.contribution_bytes(rel.as_bytes())
    }

    /// Returns the contribution of `folder/name` (the same value as [`Sig::contribution`]),
    /// without allocating the path for names of usual length: the sweep runs before every
    /// read, and a heap string per file was a measurable share of its user time.
    pub fn contribution_at(&self, folder: &str, name: &str) -> u64 {
        let mut buffer = [0u8; 256];
        let len = folder.len() + 1 + name.len();
        let Some(rel) = buffer.get_mut(..len) else {
            return self.contribution(&format!("{folder}/{name}"));
        };
        rel[..folder.len()].copy_from_slice(folder.as_bytes());
        rel[folder.len()] = b'/';
        rel[folder.len() + 1..].copy_from_slice(name.as_bytes());
        self.contribution_bytes(rel)
    }

    fn contribution_bytes(&self, rel: &[u8]) -> u64 {
        signature(
            rel,
            &[
                self.size,
                self.mtime_ns as u64,
                self.ctime_ns as u64,
                self.inode,
            ],
        )
    }
}

/// One authoritative file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    /// Tracker-relative path with `/` separators (the `sources` key).
    pub rel: String,
    /// Absolute path.
    pub abs: PathBuf,
    /// What it holds.
    pub kind: SourceKind,
    /// The item file reference (items only).
    pub item: Option<ItemFileRef>,
}

impl SourceFile {
    /// Returns the stream id of a history file (`history/<id>.jsonl` → `<id>`).
    pub fn stream_id(&self) -> Option<&str> {
        self.rel.strip_prefix("history/")?.strip_suffix(".jsonl")
    }
}

/// Every source file of a tracker, as the scan path enumerates them.
#[derive(Clone, Debug, Default)]
pub struct SourceSet {
    /// Item files (registry folder order, names sorted), then history streams (sorted).
    pub files: Vec<SourceFile>,
    /// Type folders that exist but cannot be listed.
    pub unreadable_dirs: Vec<Notice>,
}

/// Lists every item file (exactly the files `Tracker::item_files` gives the scan) and every
/// `history/*.jsonl` stream.
///
/// # Errors
/// `Error::Io` when an entry cannot be inspected or `history/` cannot be listed.
pub fn enumerate(tracker: &Tracker, schema: &RuntimeSchema) -> Result<SourceSet> {
    // The type folders and `history/` are listed at the same time (at 100,000 items each
    // listing is a few hundred milliseconds of directory reads and sorting).
    let (items, streams) = rayon::join(
        || tracker.item_files(&schema.types),
        || history_streams(tracker),
    );
    let (items, streams) = (items?, streams?);
    let mut files = Vec::with_capacity(items.files.len() + streams.len());
    items
        .files
        .into_par_iter()
        .map(|item| SourceFile {
            rel: relative_path(&item),
            abs: item.path.clone(),
            kind: SourceKind::Item,
            item: Some(item),
        })
        .collect_into_vec(&mut files);
    let history = tracker.history_dir();
    files.extend(streams.into_iter().map(|name| SourceFile {
        rel: format!("{HISTORY_FOLDER}/{name}"),
        abs: history.join(&name),
        kind: SourceKind::History,
        item: None,
    }));
    Ok(SourceSet {
        files,
        unreadable_dirs: items.notices,
    })
}

/// Lists the names of `history/*.jsonl` (sorted by their bytes; none when `history/` does not
/// exist). Names only: the source files are then built straight into the enumeration's one
/// vector, instead of growing a vector of 100k source files by doubling and copying it over
/// (tens of MB the allocator holds on to for a while, at the build's peak of memory).
fn history_streams(tracker: &Tracker) -> Result<Vec<String>> {
    let history = tracker.history_dir();
    // A symlinked `history/` is refused as `path_unsafe`, like one that cannot be listed.
    let Some(entries) = pm_engine::confine::leaf::list_folder(&history)? else {
        return Ok(Vec::new());
    };
    let mut streams = Vec::new();
    for entry in entries {
        let entry = entry.at(&history)?;
        if entry.file_type().at(entry.path())?.is_dir() {
            continue;
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if name.len() > ".jsonl".len() && name.ends_with(".jsonl") {
            streams.push(name);
        }
    }
    streams.sort_unstable();
    Ok(streams)
}

/// The result of a stat sweep.
#[derive(Clone, Debug, Default)]
pub struct Sweep {
    /// Every source that could be stat'ed, with its signature (enumeration order).
    pub files: Vec<(SourceFile, Sig)>,
    /// Type folders that could not be listed.
    pub unreadable_dirs: Vec<Notice>,
    /// Wrapping sum of every file's [`Sig::contribution`].
    pub digest: u64,
}

/// Enumerates the sources and stats them in parallel (a file that vanished in between is left
/// out, exactly as if it had not been listed).
///
/// # Errors
/// As [`enumerate`].
pub fn sweep(tracker: &Tracker, schema: &RuntimeSchema) -> Result<Sweep> {
    let set = enumerate(tracker, schema)?;
    let files: Vec<(SourceFile, Sig)> = set
        .files
        .into_par_iter()
        .filter_map(|file| {
            // A symlinked entry is a source too (its own status): reading it is refused.
            let meta = std::fs::symlink_metadata(&file.abs).ok()?;
            (meta.is_file() || meta.is_symlink()).then(|| {
                let sig = Sig::of(&meta);
                (file, sig)
            })
        })
        .collect();
    let digest = files
        .iter()
        .fold(0u64, |acc, (f, s)| acc.wrapping_add(s.contribution(&f.rel)));
    Ok(Sweep {
        files,
        unreadable_dirs: set.unreadable_dirs,
        digest,
    })
}

/// Which sources a read depends on, and so which ones its freshness check sweeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SweepScope {
    /// Item files only: reads answered from item metadata (list, search, context, next, …).
    Items,
    /// History streams only: reads answered from the event projection alone (events, activity).
    History,
    /// Item files and history streams: reads that use both (stats, health).
    All,
}

/// The `meta` keys of the digest and source count over every source.
pub const ALL_KEYS: (&str, &str) = ("digest", "source_count");
/// The `meta` keys of the digest and source count over item files (history streams have no
/// keys of their own: their totals are the overall ones minus these).
pub const ITEM_KEYS: (&str, &str) = ("digest_item", "source_count_item");

impl SweepScope {
    /// Returns true when a confirmed sweep of `self` also confirms `other`.
    pub fn covers(self, other: SweepScope) -> bool {
        self == SweepScope::All || self == other
    }

    /// The narrowest scope that covers both.
    pub fn union(self, other: SweepScope) -> SweepScope {
        if self.covers(other) {
            self
        } else if other.covers(self) {
            other
        } else {
            SweepScope::All
        }
    }

    /// Whether the scope's sweep lists the item folders.
    pub fn has_items(self) -> bool {
        self != SweepScope::History
    }

    /// Whether the scope's sweep lists `history/`.
    pub fn has_history(self) -> bool {
        self != SweepScope::Items
    }

    /// The stored name (`items`, `history`, `all`).
    pub fn as_str(self) -> &'static str {
        match self {
            SweepScope::Items => "items",
            SweepScope::History => "history",
            SweepScope::All => "all",
        }
    }

    /// Parses a stored name.
    pub fn parse(name: &str) -> Option<SweepScope> {
        [SweepScope::Items, SweepScope::History, SweepScope::All]
            .into_iter()
            .find(|s| s.as_str() == name)
    }
}

/// Returns the source file of a tracker-relative item path, if it is one.
pub fn item_ref(tracker: &Tracker, schema: &RuntimeSchema, rel: &str) -> Option<ItemFileRef> {
    let (folder, name) = rel.rsplit_once('/')?;
    let (format, stem) = ItemFormat::split_file_name(name)?;
    let type_name = schema
        .types
        .folders()
        .into_iter()
        .find(|(f, _)| *f == folder)?
        .1
        .to_string();
    Some(ItemFileRef {
        type_name,
        folder: folder.to_string(),
        path: tracker.root().join(folder).join(name),
        stem: stem.to_string(),
        format,
    })
}

/// Returns the source file of an absolute path inside the tracker, if it is one.
pub fn source_for(tracker: &Tracker, schema: &RuntimeSchema, abs: &Path) -> Option<SourceFile> {
    let rel = abs.strip_prefix(tracker.root()).ok()?;
    let rel = rel
        .components()
        .map(|c| c.as_os_str().to_str())
        .collect::<Option<Vec<_>>>()?
        .join("/");
    if let Some(name) = rel.strip_prefix("history/") {
        return (name.ends_with(".jsonl") && !name.contains('/')).then(|| SourceFile {
            rel: rel.clone(),
            abs: abs.to_path_buf(),
            kind: SourceKind::History,
            item: None,
        });
    }
    let item = item_ref(tracker, schema, &rel)?;
    Some(SourceFile {
        rel,
        abs: abs.to_path_buf(),
        kind: SourceKind::Item,
        item: Some(item),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contribution_at_equals_contribution_of_the_joined_path() {
        let sig = Sig {
            size: 12,
            mtime_ns: 3,
            ctime_ns: -4,
            inode: 99,
        };
        let long = "n".repeat(300);
        for (folder, name) in [("tasks", "pm-a.toon"), ("history", "x.jsonl"), ("t", &long)] {
            assert_eq!(
                sig.contribution_at(folder, name),
                sig.contribution(&format!("{folder}/{name}"))
            );
        }
    }
}
