//! The per-file facts `pm health` derives from the tracker (what the storage, integrity and
//! history-drift checks read of each item file and history stream), the listing with stat
//! signatures, and the fresh computation of one id's facts. No cross-item analysis here.

use std::borrow::Cow;
use std::path::Path;

use rayon::prelude::*;
use serde_json::Value;

use crate::error::{IoResultExt, Result};
use crate::hash::sha256_hex;
use crate::history::WORKSPACE_STREAM_ID;
use crate::history::verify::{
    DriftStatus, StreamStatus, read_small_file, read_stream_bytes, stream_from_read,
    verify_item_read,
};
use crate::item::ItemFormat;
use crate::item::codec::parse_item;
use crate::read::validate::CheckItem;
use crate::read::validate::hierarchy::{HierarchyItem, is_hierarchy_kind};
use crate::read::view::TrackerView;
use crate::tracker::ItemFileRef;

/// The stat signature of a file: a write changes at least one field (`ctime` cannot be set
/// back by tools that restore `mtime`; a replacement by rename changes the inode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileSig {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, ns since the epoch.
    pub mtime_ns: i64,
    /// Status-change time, ns since the epoch.
    pub ctime_ns: i64,
    /// Inode number.
    pub inode: u64,
}

impl FileSig {
    /// Returns the signature of stat results (`lstat`'s: a symlink is keyed by its own status,
    /// as the index sweep keys it), or `None` when they are neither a regular file's nor a
    /// symlink's.
    pub fn of(meta: &std::fs::Metadata) -> Option<FileSig> {
        use std::os::unix::fs::MetadataExt;
        (meta.is_file() || meta.file_type().is_symlink()).then(|| FileSig {
            size: meta.size(),
            mtime_ns: meta.mtime().saturating_mul(1_000_000_000) + meta.mtime_nsec(),
            ctime_ns: meta.ctime().saturating_mul(1_000_000_000) + meta.ctime_nsec(),
            inode: meta.ino(),
        })
    }
}

/// How the memo knows a file: its signature and, for a file whose status changed too close to
/// the moment it was read (its timestamps cannot tell a later same-size write apart), a digest
/// of the bytes that were read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FileKey {
    /// The stat signature taken before the file was read.
    pub sig: FileSig,
    /// SHA-256 of the bytes read, for a recently changed file.
    pub digest: Option<String>,
}

/// The classification of one history stream, as the checks read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum StreamState {
    /// Every entry verified.
    Ok,
    /// Absent, empty or whitespace-only.
    Missing,
    /// Unreadable, with the error code.
    Unreadable(String),
    /// The chain does not verify.
    ChainMismatch,
}

/// What the checks read of one history stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StreamFacts {
    /// Its classification.
    pub state: StreamState,
    /// Whether an unterminated, unparseable last line was skipped.
    pub torn: bool,
    /// Whether the last entry's op is `delete`.
    pub deleted: bool,
}

/// The drift of one item file against its stream (the detail the checks do not read is
/// dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DriftKind {
    /// Not checked (no stream, or the stream is unreadable).
    NotChecked,
    /// The file hash equals the stream's last `after_hash`.
    Ok,
    /// The file hash differs.
    HashMismatch,
    /// The item file could not be read or parsed.
    ItemUnreadable,
}

/// What the checks read of one parsed item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ItemFacts {
    /// The item id (`metadata.id`, else the file stem).
    pub id: String,
    /// Whether `pm_format_version` is ahead of this implementation.
    pub ahead: bool,
    /// Whether the status is terminal.
    pub terminal: bool,
    /// The scalar parent (trimmed, non-empty).
    pub parent: Option<String>,
    /// The dependency rows whose lower-cased kind makes a parent relation.
    pub dependencies: Vec<(String, String)>,
}

impl ItemFacts {
    /// Returns the facts of a parsed item.
    fn of(item: &CheckItem) -> ItemFacts {
        let version = item
            .doc
            .metadata
            .get("pm_format_version")
            .and_then(Value::as_u64)
            .unwrap_or(1);
        ItemFacts {
            id: item.id.clone(),
            ahead: version > 1,
            terminal: item.terminal,
            parent: item.text("parent").map(String::from),
            dependencies: item
                .dependencies()
                .filter(|(_, kind)| is_hierarchy_kind(&kind.to_lowercase()))
                .map(|(id, kind)| (id.to_string(), kind.to_string()))
                .collect(),
        }
    }
}

impl HierarchyItem for ItemFacts {
    fn item_id(&self) -> &str {
        &self.id
    }

    fn is_terminal(&self) -> bool {
        self.terminal
    }

    fn parent_text(&self) -> Option<&str> {
        self.parent.as_deref()
    }

    fn dependency_rows(&self) -> impl Iterator<Item = (&str, &str)> {
        self.dependencies
            .iter()
            .map(|(id, kind)| (id.as_str(), kind.as_str()))
    }
}

/// What the checks read of one item file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FileFacts {
    /// `<folder>/<file name>`: which file of the id this is.
    pub name: String,
    /// The memo key (`None`: the file could not be stat'ed, so its facts are not kept).
    pub key: Option<FileKey>,
    /// The parsed item, or the error code.
    pub parse: std::result::Result<ItemFacts, String>,
    /// The drift against the stream of its stem.
    pub drift: DriftKind,
}

/// Whether a stream file was listed, and its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum StreamKey {
    /// No `history/<id>.jsonl` entry was listed.
    NotListed,
    /// Listed; the key is `None` when it could not be stat'ed as a regular file.
    Listed(Option<FileKey>),
}

/// The facts of one id: its stream and its item files (listing order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GroupFacts {
    /// The id (stream and file stem).
    pub id: String,
    /// The stream's key.
    pub stream_key: StreamKey,
    /// The stream's facts.
    pub stream: StreamFacts,
    /// The item files with this stem.
    pub files: Vec<FileFacts>,
}

impl GroupFacts {
    /// Returns whether the facts may be kept: every file was stat'ed, and nothing failed to be
    /// read (an I/O failure may be transient, so it is always checked again).
    pub fn memoizable(&self) -> bool {
        let stream_ok = match &self.stream_key {
            StreamKey::NotListed => true,
            StreamKey::Listed(key) => key.is_some(),
        };
        stream_ok
            && self.stream.state != StreamState::Unreadable("io_error".into())
            && self
                .files
                .iter()
                .all(|f| f.key.is_some() && f.parse.as_ref().err().is_none_or(|c| c != "io_error"))
    }
}

/// One listed item file with its signature.
#[derive(Clone, Debug)]
pub(crate) struct ListedFile {
    /// The file.
    pub file: ItemFileRef,
    /// `<folder>/<file name>`.
    pub name: String,
    /// The signature (`None`: not a regular file, or the stat failed).
    pub sig: Option<FileSig>,
}

/// What a health run listed: every item file and history stream with its stat signature,
/// handed to the caller as soon as it is known (`pm health` confirms the projection's
/// freshness from it instead of statting every file a second time).
pub struct ListedSources<'a> {
    pub(crate) files: &'a [ListedFile],
    pub(crate) streams: &'a [(String, Option<FileSig>)],
    pub(crate) every_folder_read: bool,
}

/// A type folder that exists but could not be listed: its items are missing from every read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FolderProblem {
    /// The folder, relative to the tracker root.
    pub folder: String,
    /// Why it could not be listed.
    pub error: String,
}

impl ListedSources<'_> {
    /// Whether every existing type folder could be read (otherwise the listing is partial).
    pub fn every_folder_read(&self) -> bool {
        self.every_folder_read
    }

    /// The regular item files: `(folder, file name, signature)`, in listing order.
    pub fn item_files(&self) -> impl ParallelIterator<Item = (&str, &str, FileSig)> {
        self.files.par_iter().filter_map(|f| {
            let (folder, name) = f.name.split_once('/')?;
            Some((folder, name, f.sig?))
        })
    }

    /// The regular history streams: `(id, signature)`, in no particular order (the file name
    /// is the id followed by `.jsonl`).
    pub fn streams(&self) -> impl ParallelIterator<Item = (&str, FileSig)> {
        self.streams
            .par_iter()
            .filter_map(|(id, sig)| Some((id.as_str(), (*sig)?)))
    }
}

/// Lists every item file as [`crate::tracker::Tracker::item_files`] does (same files, same
/// order, same errors), stat'ing each one in parallel relative to its folder; also the type
/// folders that exist but could not be read (a symlinked one included).
///
/// # Errors
/// `io_error` when an entry of a readable folder cannot be inspected.
pub(crate) fn list_item_files(view: &TrackerView) -> Result<(Vec<ListedFile>, Vec<FolderProblem>)> {
    let root = view.tracker().root();
    let mut found: Vec<(std::fs::DirEntry, ItemFileRef, String)> = Vec::new();
    let mut unreadable = Vec::new();
    for (folder, type_name) in view.schema().types.folders() {
        let dir = root.join(folder);
        let entries = match crate::confine::leaf::list_folder(&dir) {
            Ok(Some(entries)) => entries,
            Ok(None) => continue,
            Err(err) => {
                unreadable.push(FolderProblem {
                    folder: folder.to_string(),
                    error: err.to_string().replace(&format!("{}/", root.display()), ""),
                });
                continue;
            }
        };
        let start = found.len();
        for entry in entries {
            let entry = entry.at(&dir)?;
            let kind = entry.file_type().at(entry.path())?;
            if kind.is_dir() {
                continue;
            }
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some((format, stem)) = ItemFormat::split_file_name(name) {
                let file = ItemFileRef {
                    type_name: type_name.to_string(),
                    folder: folder.to_string(),
                    path: entry.path(),
                    stem: stem.to_string(),
                    format,
                };
                let key = format!("{folder}/{name}");
                found.push((entry, file, key));
            }
        }
        // Same order as sorting the paths: one folder, so the names decide (byte order).
        found[start..].sort_unstable_by(|a, b| a.2.cmp(&b.2));
    }
    let files = found
        .into_par_iter()
        .map(|(entry, file, name)| ListedFile {
            sig: stat(&entry),
            file,
            name,
        })
        .collect();
    Ok((files, unreadable))
}

/// Lists the streams of the history directory (as `list_streams` does) with their keys'
/// signatures, in no particular order.
///
/// # Errors
/// `io_error` when the history directory exists but cannot be listed.
pub(crate) fn list_stream_files(history_dir: &Path) -> Result<Vec<(String, Option<FileSig>)>> {
    // A symlinked `history/` lists nothing (each stream read is refused, see `list_streams`).
    let entries = match crate::confine::leaf::list_folder(history_dir) {
        Ok(Some(entries)) => entries,
        Ok(None) | Err(crate::Error::PathUnsafe { .. }) => return Ok(Vec::new()),
        Err(err) => return Err(err),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.at(history_dir)?;
        let name = entry.file_name();
        if let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".jsonl")) {
            found.push((id.to_string(), entry));
        }
    }
    Ok(found
        .into_par_iter()
        .map(|(id, entry)| (id, stat(&entry)))
        .collect())
}

/// Stats a directory entry without following it (a symlink is never read, so its own status
/// is the key: reading it is refused as `path_unsafe`).
fn stat(entry: &std::fs::DirEntry) -> Option<FileSig> {
    entry.metadata().ok().as_ref().and_then(FileSig::of)
}

/// Returns the key of a file read with signature `sig`: with a digest of `bytes` when its
/// status changed at or after `settled_before` (ns; `None`: nothing is kept, so no digest).
fn key_of(sig: Option<FileSig>, bytes: &[u8], settled_before: Option<i64>) -> Option<FileKey> {
    let sig = sig?;
    let racy = settled_before.is_none_or(|t| sig.ctime_ns >= t);
    Some(FileKey {
        sig,
        digest: racy.then(|| sha256_hex(bytes)),
    })
}

/// Computes the facts of id `id` exactly as `pm validate` derives them: each of its item files
/// read and parsed, its stream read and verified, each file compared with the stream.
/// `stream` is the stream's listing (`None`: not listed).
pub(crate) fn compute_group(
    view: &TrackerView,
    id: &str,
    files: &[&ListedFile],
    stream: Option<Option<FileSig>>,
    settled_before: Option<i64>,
) -> GroupFacts {
    let canon = view.canon_schema();
    let schema = view.schema();
    let mut keys = Vec::with_capacity(files.len());
    let parsed: Vec<Result<CheckItem>> = files
        .iter()
        .map(|listed| {
            let file = &listed.file;
            let read = read_small_file(&file.path);
            keys.push(
                read.as_ref()
                    .ok()
                    .and_then(|bytes| key_of(listed.sig, bytes, settled_before)),
            );
            let bytes = read?;
            let doc = parse_item(&bytes, file.format, &file.path, &canon)?;
            Ok(CheckItem::new(doc, &file.stem, schema))
        })
        .collect();
    let path = view.tracker().history_path(id);
    let read = read_stream_bytes(&path);
    let stream_key = match stream {
        None => StreamKey::NotListed,
        Some(sig) => StreamKey::Listed(match &read {
            Ok(bytes) => key_of(sig, bytes, settled_before),
            Err(_) => None,
        }),
    };
    let refs: Vec<&ItemFileRef> = files.iter().map(|f| &f.file).collect();
    let indexes: Vec<usize> = (0..files.len()).collect();
    let report = verify_item_read(
        id,
        stream_from_read(read, &path, id),
        &refs,
        &indexes,
        &|index: usize, file: &ItemFileRef| match &parsed[index] {
            Ok(item) => Ok(Cow::Borrowed(&item.doc)),
            // The error is not `Clone`: reading the file again reproduces it (rare).
            Err(_) => view.load(file).map(Cow::Owned),
        },
    );
    let state = match &report.stream {
        StreamStatus::Ok => StreamState::Ok,
        StreamStatus::Missing => StreamState::Missing,
        StreamStatus::Unreadable { code, .. } => StreamState::Unreadable((*code).to_string()),
        StreamStatus::ChainMismatch => StreamState::ChainMismatch,
    };
    let files = files
        .iter()
        .zip(parsed)
        .zip(keys)
        .zip(&report.files)
        .map(|(((listed, parsed), key), drift)| FileFacts {
            name: listed.name.clone(),
            key,
            parse: match parsed {
                Ok(item) => Ok(ItemFacts::of(&item)),
                Err(err) => Err(err.code().as_str().to_string()),
            },
            drift: match drift.drift {
                DriftStatus::NotChecked => DriftKind::NotChecked,
                DriftStatus::Ok => DriftKind::Ok,
                DriftStatus::HashMismatch(_) => DriftKind::HashMismatch,
                DriftStatus::ItemUnreadable { .. } => DriftKind::ItemUnreadable,
            },
        })
        .collect();
    GroupFacts {
        id: id.to_string(),
        stream_key,
        stream: StreamFacts {
            state,
            torn: report.torn_tail.is_some(),
            deleted: report.last_op.as_deref() == Some("delete"),
        },
        files,
    }
}

/// Parses an item file that belongs to no id group (its stem is the workspace stream's).
pub(crate) fn compute_loose(view: &TrackerView, listed: &ListedFile) -> FileFacts {
    let file = &listed.file;
    let parse = view
        .load(file)
        .map(|doc| ItemFacts::of(&CheckItem::new(doc, &file.stem, view.schema())))
        .map_err(|err| err.code().as_str().to_string());
    FileFacts {
        name: listed.name.clone(),
        key: None,
        parse,
        drift: DriftKind::NotChecked,
    }
}

/// Every id with a stream or an item file (the workspace stream aside), sorted as
/// `verify_tracker_history_listed` sorts them, with the listing indexes of its files in
/// ascending order and its stream's listing (`None`: not listed).
pub(crate) type Groups<'a> = Vec<(&'a str, Vec<usize>, Option<Option<FileSig>>)>;

/// Groups the listed files and streams by id; the second value lists the files whose stem is
/// the workspace stream's (in no group).
pub(crate) fn group<'a>(
    files: &'a [ListedFile],
    streams: &'a [(String, Option<FileSig>)],
) -> (Groups<'a>, Vec<usize>) {
    const STREAM: usize = usize::MAX;
    let mut keys: Vec<(&str, usize, usize)> = Vec::with_capacity(files.len() + streams.len());
    keys.extend(
        streams
            .iter()
            .enumerate()
            .map(|(i, (id, _))| (id.as_str(), STREAM, i)),
    );
    keys.extend(
        files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.file.stem.as_str(), i, 0)),
    );
    keys.par_sort_unstable();
    let mut groups: Groups<'a> = Vec::with_capacity(keys.len());
    let mut loose = Vec::new();
    for (id, index, stream) in keys {
        if id == WORKSPACE_STREAM_ID {
            if index != STREAM {
                loose.push(index);
            }
            continue;
        }
        let at = match groups.last() {
            Some((last, _, _)) if *last == id => groups.len() - 1,
            _ => {
                groups.push((id, Vec::new(), None));
                groups.len() - 1
            }
        };
        let entry = &mut groups[at];
        if index == STREAM {
            // Two listings of one name cannot happen; the first wins.
            entry.2.get_or_insert(streams[stream].1);
        } else {
            entry.1.push(index);
        }
    }
    (groups, loose)
}
