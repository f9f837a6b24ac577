//! The `pm health` verification memo (`runtime/health/memo`): a pure cache of the facts of each
//! id (its item files and stream), keyed by the files' stat signatures. Gathers the facts of a
//! tracker, reusing memo entries whose files did not change; a bad memo is silently ignored.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::facts::{
    DriftKind, FileFacts, FileKey, FileSig, GroupFacts, ItemFacts, ListedFile, StreamFacts,
    StreamKey, StreamState, compute_group, compute_loose, group, list_item_files,
    list_stream_files,
};
use crate::error::Result;
use crate::hash::sha256_hex;
use crate::history::verify::{WorkspaceHistoryReport, read_small_file, verify_workspace};
use crate::read::view::TrackerView;
use crate::tracker::Tracker;

/// The first bytes of a memo file.
const MAGIC: &[u8] = b"pm-health-memo\n";
/// The layout version; a memo of another layout is ignored.
const FORMAT: u32 = 1;
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
    /// Whether the memo was (re)written.
    pub written: bool,
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
/// version, the memo layout, the runtime schema and the settings.
fn fingerprint(view: &TrackerView) -> String {
    let text = format!(
        "{}\n{FORMAT}\n{:?}\n{:?}",
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
pub(crate) fn gather(view: &TrackerView) -> Result<(Facts, MemoStats)> {
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
    let (files, streams) = (files?, streams?);
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
        written: (kept_new > 0 || groups.len() - misses != old_len)
            && write_memo(&path, &fingerprint, &groups),
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
        },
        stats,
    ))
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

/// Reads the memo's entries (sorted by id); empty when it is missing, truncated, corrupt, of
/// another layout or build, or made for other settings or schema.
fn read_memo(path: &Path, fingerprint: &str) -> Vec<GroupFacts> {
    let Ok(bytes) = std::fs::read(path) else {
        return Vec::new();
    };
    decode(&bytes, fingerprint).unwrap_or_default()
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
fn write_memo(path: &Path, fingerprint: &str, groups: &[GroupFacts]) -> bool {
    if !writable(path) {
        return false;
    }
    let bytes = encode(fingerprint, groups.iter().filter(|g| g.memoizable()));
    crate::atomic::write(path, &bytes).is_ok()
}

/// A 64-bit checksum of the memo body (detects truncation and damage, not tampering).
fn checksum(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = K ^ bytes.len() as u64;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let w = u64::from_le_bytes(word.try_into().expect("chunks of 8 bytes"));
        h = (h ^ w).wrapping_mul(K).rotate_left(29);
    }
    for &b in words.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(K).rotate_left(29);
    }
    h ^ (h >> 31)
}

/// Encodes the memo: header, entries, checksum.
fn encode<'a>(fingerprint: &str, groups: impl Iterator<Item = &'a GroupFacts>) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    w.0.extend_from_slice(MAGIC);
    w.0.extend_from_slice(&FORMAT.to_le_bytes());
    w.str(env!("CARGO_PKG_VERSION"));
    w.str(fingerprint);
    let count_at = w.0.len();
    w.u64(0);
    let mut count = 0u64;
    for g in groups {
        count += 1;
        w.group(g);
    }
    w.0[count_at..count_at + 8].copy_from_slice(&count.to_le_bytes());
    let sum = checksum(&w.0);
    w.u64(sum);
    w.0
}

/// Decodes a memo; `None` when anything is off.
fn decode(bytes: &[u8], fingerprint: &str) -> Option<Vec<GroupFacts>> {
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
    if checksum(body) != u64::from_le_bytes(sum.try_into().ok()?) {
        return None;
    }
    let mut r = Reader { bytes: body, at: 0 };
    if r.take(MAGIC.len())? != MAGIC
        || u32::from_le_bytes(r.take(4)?.try_into().ok()?) != FORMAT
        || r.str()? != env!("CARGO_PKG_VERSION")
        || r.str()? != fingerprint
    {
        return None;
    }
    let count = usize::try_from(r.u64()?).ok()?;
    let mut groups = Vec::with_capacity(count.min(body.len() / 16));
    for _ in 0..count {
        let g = r.group()?;
        // Entries must be sorted and unique: pairing with the listing relies on it.
        if groups.last().is_some_and(|p: &GroupFacts| p.id >= g.id) {
            return None;
        }
        groups.push(g);
    }
    (r.at == body.len()).then_some(groups)
}

/// The memo encoder (little-endian integers, length-prefixed strings).
struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }

    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }

    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            None => self.u8(0),
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
        }
    }

    fn key(&mut self, key: &FileKey) {
        self.u64(key.sig.size);
        self.u64(key.sig.mtime_ns as u64);
        self.u64(key.sig.ctime_ns as u64);
        self.u64(key.sig.inode);
        self.opt_str(key.digest.as_deref());
    }

    fn group(&mut self, g: &GroupFacts) {
        self.str(&g.id);
        match &g.stream_key {
            StreamKey::Listed(Some(key)) => {
                self.u8(1);
                self.key(key);
            }
            // Not memoizable when listed without a key; written as not listed it could never
            // match a listed stream either way.
            StreamKey::Listed(None) | StreamKey::NotListed => self.u8(0),
        }
        match &g.stream.state {
            StreamState::Ok => self.u8(0),
            StreamState::Missing => self.u8(1),
            StreamState::Unreadable(code) => {
                self.u8(2);
                self.str(code);
            }
            StreamState::ChainMismatch => self.u8(3),
        }
        self.u8(u8::from(g.stream.torn) | u8::from(g.stream.deleted) << 1);
        self.u64(g.files.len() as u64);
        for f in &g.files {
            self.str(&f.name);
            // Only memoizable entries are written: every file has a key.
            if let Some(key) = &f.key {
                self.key(key);
            }
            match &f.parse {
                Err(code) => {
                    self.u8(0);
                    self.str(code);
                }
                Ok(item) => {
                    self.u8(1);
                    self.str(&item.id);
                    self.u8(u8::from(item.ahead) | u8::from(item.terminal) << 1);
                    self.opt_str(item.parent.as_deref());
                    self.u64(item.dependencies.len() as u64);
                    for (id, kind) in &item.dependencies {
                        self.str(id);
                        self.str(kind);
                    }
                }
            }
            self.u8(match f.drift {
                DriftKind::NotChecked => 0,
                DriftKind::Ok => 1,
                DriftKind::HashMismatch => 2,
                DriftKind::ItemUnreadable => 3,
            });
        }
    }
}

/// The memo decoder: every read answers `None` past the end or on a bad value.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn len(&mut self) -> Option<usize> {
        usize::try_from(self.u64()?).ok()
    }

    fn str(&mut self) -> Option<String> {
        let n = self.len()?;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }

    fn opt_str(&mut self) -> Option<Option<String>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(self.str()?)),
            _ => None,
        }
    }

    fn key(&mut self) -> Option<FileKey> {
        Some(FileKey {
            sig: FileSig {
                size: self.u64()?,
                mtime_ns: self.u64()? as i64,
                ctime_ns: self.u64()? as i64,
                inode: self.u64()?,
            },
            digest: self.opt_str()?,
        })
    }

    fn group(&mut self) -> Option<GroupFacts> {
        let id = self.str()?;
        let stream_key = match self.u8()? {
            0 => StreamKey::NotListed,
            1 => StreamKey::Listed(Some(self.key()?)),
            _ => return None,
        };
        let state = match self.u8()? {
            0 => StreamState::Ok,
            1 => StreamState::Missing,
            2 => StreamState::Unreadable(self.str()?),
            3 => StreamState::ChainMismatch,
            _ => return None,
        };
        let flags = self.u8()?;
        let count = self.len()?;
        let mut files = Vec::with_capacity(count.min(16));
        for _ in 0..count {
            let name = self.str()?;
            let key = Some(self.key()?);
            let parse = match self.u8()? {
                0 => Err(self.str()?),
                1 => {
                    let id = self.str()?;
                    let item_flags = self.u8()?;
                    let parent = self.opt_str()?;
                    let n = self.len()?;
                    let mut dependencies = Vec::with_capacity(n.min(16));
                    for _ in 0..n {
                        dependencies.push((self.str()?, self.str()?));
                    }
                    Ok(ItemFacts {
                        id,
                        ahead: item_flags & 1 != 0,
                        terminal: item_flags & 2 != 0,
                        parent,
                        dependencies,
                    })
                }
                _ => return None,
            };
            let drift = match self.u8()? {
                0 => DriftKind::NotChecked,
                1 => DriftKind::Ok,
                2 => DriftKind::HashMismatch,
                3 => DriftKind::ItemUnreadable,
                _ => return None,
            };
            files.push(FileFacts {
                name,
                key,
                parse,
                drift,
            });
        }
        Some(GroupFacts {
            id,
            stream_key,
            stream: StreamFacts {
                state,
                torn: flags & 1 != 0,
                deleted: flags & 2 != 0,
            },
            files,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<GroupFacts> {
        let key = |n: u64, digest: Option<&str>| FileKey {
            sig: FileSig {
                size: n,
                mtime_ns: -5,
                ctime_ns: 7,
                inode: n * 3,
            },
            digest: digest.map(String::from),
        };
        let item = ItemFacts {
            id: "pm-a".into(),
            ahead: true,
            terminal: false,
            parent: Some("pm-b".into()),
            dependencies: vec![("pm-c".into(), "Child_Of".into())],
        };
        vec![
            GroupFacts {
                id: "pm-a".into(),
                stream_key: StreamKey::Listed(Some(key(1, Some("ab")))),
                stream: StreamFacts {
                    state: StreamState::Unreadable("history_invalid_json".into()),
                    torn: true,
                    deleted: false,
                },
                files: vec![
                    FileFacts {
                        name: "tasks/pm-a.toon".into(),
                        key: Some(key(2, None)),
                        parse: Ok(item),
                        drift: DriftKind::HashMismatch,
                    },
                    FileFacts {
                        name: "tasks/pm-a.md".into(),
                        key: Some(key(3, None)),
                        parse: Err("item_merge_conflict".into()),
                        drift: DriftKind::ItemUnreadable,
                    },
                ],
            },
            GroupFacts {
                id: "pm-b".into(),
                stream_key: StreamKey::NotListed,
                stream: StreamFacts {
                    state: StreamState::Missing,
                    torn: false,
                    deleted: true,
                },
                files: Vec::new(),
            },
        ]
    }

    #[test]
    fn entries_round_trip_and_damage_is_rejected() {
        let groups = sample();
        let bytes = encode("fp", groups.iter());
        assert_eq!(decode(&bytes, "fp"), Some(groups));
        assert_eq!(decode(&bytes, "other"), None);
        for cut in [0, 1, 8, bytes.len() / 2, bytes.len() - 1] {
            assert_eq!(decode(&bytes[..cut], "fp"), None, "cut at {cut}");
        }
        for at in [0, MAGIC.len(), bytes.len() / 2, bytes.len() - 1] {
            let mut damaged = bytes.clone();
            damaged[at] ^= 1;
            assert_eq!(decode(&damaged, "fp"), None, "flip at {at}");
        }
        let mut unsorted = sample();
        unsorted.reverse();
        assert_eq!(decode(&encode("fp", unsorted.iter()), "fp"), None);
    }

    #[test]
    fn io_failures_and_unstat_files_are_not_kept() {
        let mut groups = sample();
        assert!(groups.iter().all(GroupFacts::memoizable));
        groups[0].files[1].parse = Err("io_error".into());
        groups[1].stream.state = StreamState::Unreadable("io_error".into());
        assert!(!groups[0].memoizable() && !groups[1].memoizable());
        let mut g = sample().remove(0);
        g.files[0].key = None;
        assert!(!g.memoizable());
        let mut g = sample().remove(0);
        g.stream_key = StreamKey::Listed(None);
        assert!(!g.memoizable());
    }
}
