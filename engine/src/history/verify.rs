//! Whole-tracker history verification (`pm history --verify`, `pm validate
//! --check-history-drift`): every stream's chain, every item file's drift against its stream,
//! and the workspace stream with its document agreement, checked in parallel.

use std::borrow::Borrow;
use std::path::Path;

use rayon::prelude::*;
use serde::Serialize;

use super::entry::HistoryEntry;
use super::replay::{ChainIssue, ChainReport, DriftMismatch, check_drift, verify_chain_taking};
use super::stream::{StreamRead, TornTail, parse_stream, read_stream};
use super::workspace::{
    DocumentDisagreement, WORKSPACE_STREAM_ID, check_workspace_documents, replay_workspace,
};
use crate::error::Result;
use crate::hash::HashEpoch;
use crate::item::ItemDoc;
use crate::tracker::{ItemFileRef, Tracker};

/// The state of one history stream, as its replay classifies it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum StreamStatus {
    /// Every entry applied and matched both hashes.
    Ok,
    /// Absent, empty or whitespace-only (`missing_streams`).
    Missing,
    /// A line failed to parse, or conflict markers (`unreadable_streams`).
    Unreadable {
        /// The error code (`history_invalid_json`, `history_merge_conflict_markers_detected`, …).
        code: &'static str,
        /// The error message.
        message: String,
    },
    /// At least one chain issue (`chain_mismatches`).
    ChainMismatch,
}

/// The drift check of one item file against its stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum DriftStatus {
    /// Not checked: no item file, or the stream is missing or unreadable.
    NotChecked,
    /// The file hash equals the last `after_hash`.
    Ok,
    /// The file hash differs (`hash_mismatch`).
    HashMismatch(DriftMismatch),
    /// The item file could not be read or parsed.
    ItemUnreadable {
        /// The error code.
        code: &'static str,
        /// The error message.
        message: String,
    },
}

/// The verification result of one id: its stream and, per item file, its drift.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ItemHistoryReport {
    /// The item id (stream file stem).
    pub id: String,
    /// The stream's classification.
    pub stream: StreamStatus,
    /// The number of entries read.
    pub entries: usize,
    /// The op of the last entry (`delete` marks a deleted item).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_op: Option<String>,
    /// The stream's hash epoch (`1` or `2`), when it has entries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epoch: Option<u32>,
    /// Chain issues, in entry order.
    pub issues: Vec<ChainIssue>,
    /// An unterminated, unparseable last line that was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torn_tail: Option<TornTailReport>,
    /// One drift result per item file with this id (none for a stream without an item).
    pub files: Vec<FileDrift>,
    /// Whether `history/<id>.jsonl` is a file (what `Path::is_file` answers), learned from
    /// reading it.
    #[serde(skip)]
    pub stream_file: bool,
    /// Whether the stream's last entry leaves a live item (its `after_hash` is not the empty
    /// document's): with no item file, a delete was interrupted or the file removed by hand.
    #[serde(skip)]
    pub ends_live: bool,
}

/// A torn tail as reported.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TornTailReport {
    /// 1-based line number.
    pub line: usize,
    /// Byte offset of the line.
    pub offset: u64,
    /// Byte length of the line.
    pub len: usize,
}

impl From<&TornTail> for TornTailReport {
    fn from(tail: &TornTail) -> TornTailReport {
        TornTailReport {
            line: tail.line,
            offset: tail.offset,
            len: tail.len,
        }
    }
}

/// The drift check of one item file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileDrift {
    /// The item file.
    pub path: std::path::PathBuf,
    /// The result.
    pub drift: DriftStatus,
}

/// The verification result of `history/_workspace.jsonl`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkspaceHistoryReport {
    /// The stream's classification.
    pub stream: StreamStatus,
    /// The number of entries read.
    pub entries: usize,
    /// Chain issues, in entry order.
    pub issues: Vec<ChainIssue>,
    /// An unterminated, unparseable last line that was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torn_tail: Option<TornTailReport>,
    /// Recorded documents that disagree with the files on disk.
    pub disagreements: Vec<DocumentDisagreement>,
}

/// The verification result of a whole tracker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TrackerHistoryReport {
    /// One report per id with an item file or an item stream, sorted by id.
    pub items: Vec<ItemHistoryReport>,
    /// The workspace stream.
    pub workspace: WorkspaceHistoryReport,
}

/// Ids per classification, in pm's summary vocabulary.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HistorySummary {
    /// Item files whose stream is absent, empty or whitespace-only.
    pub missing_streams: Vec<String>,
    /// Streams with an unparseable line.
    pub unreadable_streams: Vec<String>,
    /// Streams whose chain does not verify.
    pub chain_mismatches: Vec<String>,
    /// Item files whose hash differs from their stream's last `after_hash`.
    pub hash_mismatch: Vec<String>,
    /// Streams with a torn last line.
    pub torn_tails: Vec<String>,
}

impl TrackerHistoryReport {
    /// Returns the ids in each failure class (an id appears once per class).
    pub fn summary(&self) -> HistorySummary {
        let mut summary = HistorySummary::default();
        for item in &self.items {
            let id = || item.id.clone();
            match item.stream {
                StreamStatus::Missing if !item.files.is_empty() => {
                    summary.missing_streams.push(id());
                }
                StreamStatus::Unreadable { .. } => summary.unreadable_streams.push(id()),
                StreamStatus::ChainMismatch => summary.chain_mismatches.push(id()),
                StreamStatus::Ok | StreamStatus::Missing => {}
            }
            if item
                .files
                .iter()
                .any(|f| matches!(f.drift, DriftStatus::HashMismatch(_)))
            {
                summary.hash_mismatch.push(id());
            }
            if item.torn_tail.is_some() {
                summary.torn_tails.push(id());
            }
        }
        summary
    }

    /// Returns true when nothing is wrong (a deleted item's stream without a file is fine).
    pub fn is_ok(&self) -> bool {
        let summary = self.summary();
        summary == HistorySummary::default()
            && self.workspace.issues.is_empty()
            && self.workspace.disagreements.is_empty()
            && !matches!(self.workspace.stream, StreamStatus::Unreadable { .. })
            && self.workspace.torn_tail.is_none()
    }
}

/// Verifies every stream under `tracker.history_dir()` and every item file in `items`.
///
/// `load` parses and schema-canonicalizes an item file (the document pm would hash); it runs in
/// parallel and may return the document owned or borrowed. Ids are the stream stems and the
/// item files' stems.
///
/// # Errors
/// [`crate::Error::Io`] when the history directory exists but cannot be listed.
pub fn verify_tracker_history<F, D>(
    tracker: &Tracker,
    items: &[ItemFileRef],
    load: F,
) -> Result<TrackerHistoryReport>
where
    F: Fn(&ItemFileRef) -> Result<D> + Sync,
    D: Borrow<ItemDoc>,
{
    verify_tracker_history_indexed(tracker, items, |_, file| load(file))
}

/// [`verify_tracker_history`] with a `load` that also receives the file's index in `items`, so a
/// caller can hand out documents it keeps (each file is loaded at most once, in parallel).
///
/// # Errors
/// [`crate::Error::Io`] when the history directory exists but cannot be listed.
pub fn verify_tracker_history_indexed<F, D>(
    tracker: &Tracker,
    items: &[ItemFileRef],
    load: F,
) -> Result<TrackerHistoryReport>
where
    F: Fn(usize, &ItemFileRef) -> Result<D> + Sync,
    D: Borrow<ItemDoc>,
{
    let streams = list_streams(tracker)?;
    let items: Vec<&ItemFileRef> = items.iter().collect();
    Ok(verify_tracker_history_listed(
        tracker, &items, &streams, load,
    ))
}

/// Lists the ids of the streams in the history directory, in no particular order (a missing
/// directory has none); what [`verify_tracker_history_listed`] takes.
///
/// # Errors
/// [`crate::Error::Io`] when the history directory exists but cannot be listed.
/// A symlinked `history/` lists no stream: each item's stream read is then refused as
/// `path_unsafe`, and `validate` names the folder.
pub fn list_streams(tracker: &Tracker) -> Result<Vec<String>> {
    match stream_ids(&tracker.history_dir()) {
        Err(crate::Error::PathUnsafe { .. }) => Ok(Vec::new()),
        listed => listed,
    }
}

/// [`verify_tracker_history_indexed`] over streams listed beforehand with [`list_streams`], so
/// that a caller can list them while it lists the item files.
pub fn verify_tracker_history_listed<F, D>(
    tracker: &Tracker,
    items: &[&ItemFileRef],
    streams: &[String],
    load: F,
) -> TrackerHistoryReport
where
    F: Fn(usize, &ItemFileRef) -> Result<D> + Sync,
    D: Borrow<ItemDoc>,
{
    let ids = group_ids(items, streams);
    let (items, workspace) = rayon::join(
        || {
            ids.par_iter()
                .map(|(id, files)| verify_item(tracker, id, items, files, &load))
                .collect::<Vec<_>>()
        },
        || verify_workspace(tracker),
    );
    TrackerHistoryReport { items, workspace }
}

/// Every id with a stream or an item file (the workspace stream aside), sorted, with the
/// indexes in `items` of its files in ascending order.
fn group_ids<'a>(items: &[&'a ItemFileRef], streams: &'a [String]) -> Vec<(&'a str, Vec<usize>)> {
    // A stream sorts after the files of its id; ids compare as strings, as a `BTreeMap` does.
    const STREAM: usize = usize::MAX;
    let mut keys: Vec<(&str, usize)> = Vec::with_capacity(items.len() + streams.len());
    keys.extend(streams.iter().map(|id| (id.as_str(), STREAM)));
    keys.extend(items.iter().enumerate().map(|(i, f)| (f.stem.as_str(), i)));
    keys.par_sort_unstable();
    let mut ids: Vec<(&str, Vec<usize>)> = Vec::with_capacity(keys.len());
    for (id, index) in keys {
        if id == WORKSPACE_STREAM_ID {
            continue;
        }
        let files = match ids.last_mut() {
            Some((last, files)) if *last == id => files,
            _ => {
                ids.push((id, Vec::new()));
                &mut ids.last_mut().expect("just pushed").1
            }
        };
        if index != STREAM {
            files.push(index);
        }
    }
    ids
}

/// Lists the stems of `*.jsonl` files in the history directory (a missing directory is empty).
fn stream_ids(history_dir: &Path) -> Result<Vec<String>> {
    use crate::error::IoResultExt;
    let Some(entries) = crate::confine::leaf::list_folder(history_dir)? else {
        return Ok(Vec::new());
    };
    let mut ids = Vec::new();
    for entry in entries {
        let name = entry.at(history_dir)?.file_name();
        if let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".jsonl")) {
            ids.push(id.to_string());
        }
    }
    Ok(ids)
}

fn unreadable(err: &crate::Error) -> StreamStatus {
    StreamStatus::Unreadable {
        code: err.code().as_str(),
        message: err.to_string(),
    }
}

/// Reads a whole file as `std::fs::read` does, in fewer system calls and without zeroing a
/// fresh buffer per file: no size query first (the files read here are small), reads into a
/// per-thread buffer until end of file, and returns exactly the bytes read.
///
/// The file is opened without following a symlink (its folder is the listing's check).
///
/// # Errors
/// `path_unsafe` for a symlink; the I/O error of opening or reading the file.
pub(crate) fn read_small_file(path: &Path) -> Result<Vec<u8>> {
    use std::cell::RefCell;
    use std::io::{ErrorKind, Read};
    thread_local! {
        static BUFFER: RefCell<Vec<u8>> = RefCell::new(vec![0; 64 * 1024]);
    }
    use crate::error::IoResultExt;
    let Some(mut file) = crate::confine::leaf::open_nofollow(path)? else {
        return Err(std::io::Error::from(ErrorKind::NotFound)).at(path);
    };
    BUFFER
        .with_borrow_mut(|buffer| {
            let mut bytes = Vec::new();
            loop {
                match file.read(buffer) {
                    Ok(0) => return Ok(bytes),
                    Ok(n) => bytes.extend_from_slice(&buffer[..n]),
                    Err(err) if err.kind() == ErrorKind::Interrupted => {}
                    Err(err) => return Err(err),
                }
            }
        })
        .at(path)
}

/// Reads a stream; also answers whether the path is a file (read, absent, or asked again).
fn read_stream_file(path: &Path, id: &str) -> (Result<StreamRead>, bool) {
    stream_from_read(read_stream_bytes(path), path, id)
}

/// Reads a stream file as [`read_small_file`] does, refusing a symlinked `history/` too.
///
/// # Errors
/// `path_unsafe` for a symlinked stream or folder; the I/O error of reading it.
pub(crate) fn read_stream_bytes(path: &Path) -> Result<Vec<u8>> {
    if let Some(folder) = path.parent() {
        crate::confine::leaf::check_folder(folder)?;
    }
    read_small_file(path)
}

/// Parses the outcome of reading a stream file as [`verify_item_read`] takes it; also answers
/// whether the path is a file (read, absent, or asked again).
pub(crate) fn stream_from_read(
    read: Result<Vec<u8>>,
    path: &Path,
    id: &str,
) -> (Result<StreamRead>, bool) {
    match read {
        Ok(bytes) => (parse_stream(&bytes, id, path), true),
        Err(crate::Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            (Ok(StreamRead::default()), false)
        }
        Err(err) => (Err(err), path.is_file()),
    }
}

fn verify_item<F, D>(
    tracker: &Tracker,
    id: &str,
    all: &[&ItemFileRef],
    files: &[usize],
    load: &F,
) -> ItemHistoryReport
where
    F: Fn(usize, &ItemFileRef) -> Result<D> + Sync,
    D: Borrow<ItemDoc>,
{
    let read = read_stream_file(&tracker.history_path(id), id);
    verify_item_read(id, read, all, files, load)
}

/// Verifies one id whose stream was already read (see [`stream_from_read`]): the stream's
/// chain and each of its item files (`files`, indexes into `all`) against it.
pub(crate) fn verify_item_read<F, D>(
    id: &str,
    (read, stream_file): (Result<StreamRead>, bool),
    all: &[&ItemFileRef],
    files: &[usize],
    load: &F,
) -> ItemHistoryReport
where
    F: Fn(usize, &ItemFileRef) -> Result<D> + Sync,
    D: Borrow<ItemDoc>,
{
    let mut report = ItemHistoryReport {
        id: id.to_string(),
        stream: StreamStatus::Missing,
        entries: 0,
        last_op: None,
        epoch: None,
        issues: Vec::new(),
        torn_tail: None,
        files: Vec::new(),
        stream_file: false,
        ends_live: false,
    };
    let not_checked = |index: &usize| FileDrift {
        path: all[*index].path.clone(),
        drift: DriftStatus::NotChecked,
    };
    report.stream_file = stream_file;
    let mut read: StreamRead = match read {
        Ok(read) => read,
        Err(err) => {
            report.stream = unreadable(&err);
            report.files = files.iter().map(not_checked).collect();
            return report;
        }
    };
    report.torn_tail = read.torn_tail.as_ref().map(TornTailReport::from);
    report.entries = read.entries.len();
    report.last_op = read.entries.last().map(|e| e.op.clone());
    report.ends_live = read
        .entries
        .last()
        .is_some_and(|e| e.after_hash != crate::hash::EMPTY_DOC_HASH);
    if read.is_empty() {
        report.files = files.iter().map(not_checked).collect();
        return report;
    }
    // The patch values are not read again: the replay takes them.
    let chain = verify_chain_taking(&mut read.entries);
    report.epoch = Some(match chain.epoch {
        HashEpoch::V1 => 1,
        HashEpoch::V2 => 2,
    });
    report.stream = if chain.is_ok() {
        StreamStatus::Ok
    } else {
        StreamStatus::ChainMismatch
    };
    report.files = files
        .iter()
        .map(|&index| {
            let file = &all[index];
            FileDrift {
                path: file.path.clone(),
                drift: match load(index, file) {
                    Ok(doc) => file_drift(doc.borrow(), &chain, &read.entries),
                    Err(err) => DriftStatus::ItemUnreadable {
                        code: err.code().as_str(),
                        message: err.to_string(),
                    },
                },
            }
        })
        .collect();
    report.issues = chain.issues;
    report
}

/// The drift of one item file against a verified chain. When every entry verified, the last
/// `after_hash` is the hash of the replayed document at the chain's epoch, so a file equal to
/// that document cannot drift (unless the hash took the legacy replay fallback) and is not
/// hashed again.
fn file_drift(doc: &ItemDoc, chain: &ChainReport, entries: &[HistoryEntry]) -> DriftStatus {
    let item_hash_path = chain.doc.metadata.is_empty()
        || chain
            .doc
            .metadata
            .get("tags")
            .is_some_and(serde_json::Value::is_array);
    if chain.is_ok() && item_hash_path && *doc == chain.doc {
        return DriftStatus::Ok;
    }
    match check_drift(doc, entries, chain.epoch) {
        None => DriftStatus::Ok,
        Some(mismatch) => DriftStatus::HashMismatch(mismatch),
    }
}

/// Verifies the workspace stream and the documents it records.
pub(crate) fn verify_workspace(tracker: &Tracker) -> WorkspaceHistoryReport {
    let mut report = WorkspaceHistoryReport {
        stream: StreamStatus::Missing,
        entries: 0,
        issues: Vec::new(),
        torn_tail: None,
        disagreements: Vec::new(),
    };
    let read = match read_stream(
        &tracker.history_path(WORKSPACE_STREAM_ID),
        WORKSPACE_STREAM_ID,
    ) {
        Ok(read) => read,
        Err(err) => {
            report.stream = unreadable(&err);
            return report;
        }
    };
    report.torn_tail = read.torn_tail.as_ref().map(TornTailReport::from);
    report.entries = read.entries.len();
    if read.is_empty() {
        return report;
    }
    let replay = replay_workspace(&read.entries);
    report.disagreements = check_workspace_documents(tracker.root(), &replay.documents());
    report.stream = if replay.chain.is_ok() {
        StreamStatus::Ok
    } else {
        StreamStatus::ChainMismatch
    };
    report.issues = replay.chain.issues;
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::history::point::replay_to;
    use crate::history::stream::parse_stream;
    use crate::tracker::ItemFormat;
    use std::collections::BTreeMap;

    const D001: &str = include_str!("../../../testdata/history/pm-d001.jsonl");

    fn file(root: &Path, id: &str) -> ItemFileRef {
        ItemFileRef {
            type_name: "Decision".into(),
            folder: "decisions".into(),
            path: root.join("decisions").join(format!("{id}.toon")),
            stem: id.into(),
            format: ItemFormat::Toon,
        }
    }

    #[test]
    fn small_file_reads_match_fs_read() -> std::result::Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        for len in [0usize, 1, 4096, 64 * 1024, 200_000] {
            let path = dir.path().join(format!("f{len}"));
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            crate::atomic::write(&path, &bytes)?;
            assert_eq!(read_small_file(&path)?, std::fs::read(&path)?, "{len}");
        }
        let missing = read_small_file(&dir.path().join("none")).expect_err("missing");
        assert!(
            matches!(&missing, crate::Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound),
            "{missing}"
        );
        Ok(())
    }

    #[test]
    fn classifies_every_stream_and_file() -> std::result::Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let root = dir.path();
        let history = root.join("history");
        let write =
            |name: &str, text: &str| crate::atomic::write(&history.join(name), text.as_bytes());
        let lines: Vec<&str> = D001.lines().collect();
        write("pm-ok.jsonl", D001)?;
        write("pm-drift.jsonl", D001)?;
        write("pm-unparsable.jsonl", D001)?;
        write("pm-torn.jsonl", &format!("{D001}{}", &lines[1][..30]))?;
        write("pm-gone.jsonl", &format!("{}\n{}\n", lines[0], lines[1]))?;
        write("pm-bad.jsonl", &format!("{}\nnot json\n", lines[0]))?;
        write(
            "pm-chain.jsonl",
            &D001.replacen("Decision withdrawn", "Decision kept", 1),
        )?;
        write("pm-blank.jsonl", "\n  \n")?;
        write("_workspace.jsonl", "")?;
        let tracker = Tracker::at(root.to_path_buf());
        let ids = [
            "pm-ok",
            "pm-drift",
            "pm-torn",
            "pm-bad",
            "pm-chain",
            "pm-blank",
            "pm-none",
            "pm-unparsable",
        ];
        let files: Vec<ItemFileRef> = ids.iter().map(|id| file(root, id)).collect();
        let entries = parse_stream(D001.as_bytes(), "pm-ok", Path::new("x"))?.entries;
        let current = replay_to(&entries, 4).map_err(|e| format!("{e:?}"))?.doc;
        let report = verify_tracker_history(&tracker, &files, |f| match f.stem.as_str() {
            "pm-drift" => replay_to(&entries, 3)
                .map(|s| s.doc)
                .map_err(|e| Error::internal(format!("{e:?}"))),
            "pm-unparsable" => Err(Error::internal("bad item")),
            _ => Ok(current.clone()),
        })?;
        let by_id: BTreeMap<&str, &ItemHistoryReport> =
            report.items.iter().map(|i| (i.id.as_str(), i)).collect();
        assert_eq!(by_id.len(), 9);
        assert_eq!(by_id["pm-ok"].stream, StreamStatus::Ok);
        assert_eq!(by_id["pm-ok"].files[0].drift, DriftStatus::Ok);
        assert_eq!(by_id["pm-ok"].epoch, Some(2));
        assert!(matches!(
            by_id["pm-drift"].files[0].drift,
            DriftStatus::HashMismatch(_)
        ));
        assert_eq!(by_id["pm-torn"].stream, StreamStatus::Ok);
        assert_eq!(by_id["pm-torn"].torn_tail.as_ref().map(|t| t.line), Some(5));
        assert_eq!(by_id["pm-gone"].last_op.as_deref(), Some("delete"));
        assert!(by_id["pm-gone"].files.is_empty());
        assert!(matches!(
            &by_id["pm-bad"].stream,
            StreamStatus::Unreadable {
                code: "history_invalid_json",
                ..
            }
        ));
        assert_eq!(by_id["pm-chain"].stream, StreamStatus::ChainMismatch);
        assert_eq!(
            by_id["pm-chain"].issues[0].code(),
            "after_hash_mismatch:entry_4"
        );
        assert_eq!(by_id["pm-blank"].stream, StreamStatus::Missing);
        assert_eq!(by_id["pm-none"].files[0].drift, DriftStatus::NotChecked);
        assert!(matches!(
            by_id["pm-unparsable"].files[0].drift,
            DriftStatus::ItemUnreadable { .. }
        ));
        assert_eq!(report.workspace.stream, StreamStatus::Missing);
        let summary = report.summary();
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(summary.missing_streams, s(&["pm-blank", "pm-none"]));
        assert_eq!(summary.unreadable_streams, s(&["pm-bad"]));
        assert_eq!(summary.chain_mismatches, s(&["pm-chain"]));
        assert_eq!(summary.hash_mismatch, s(&["pm-drift"]));
        assert_eq!(summary.torn_tails, s(&["pm-torn"]));
        assert!(!report.is_ok());
        Ok(())
    }
}
