//! The byte layout of the `pm health` memo: a header (magic, layout version, pm version,
//! fingerprint), the per-id entries sorted by id, the hierarchy summary, and a checksum.
//! Decoding answers `None` for anything unexpected; nothing here touches files.

use serde_json::Value;

use super::facts::{
    DriftKind, FileFacts, FileKey, FileSig, GroupFacts, ItemFacts, StreamFacts, StreamKey,
    StreamState,
};
use super::hierarchy::HierarchyFacts;

/// The first bytes of a memo file.
const MAGIC: &[u8] = b"pm-health-memo\n";
/// The layout version; a memo of another layout is ignored.
const FORMAT: u32 = 2;

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

/// Encodes the memo: header, entries, hierarchy summary, checksum.
pub(crate) fn encode<'a>(
    fingerprint: &str,
    groups: impl Iterator<Item = &'a GroupFacts>,
    hierarchy: &HierarchyFacts,
) -> Vec<u8> {
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
    w.hierarchy(hierarchy);
    let sum = checksum(&w.0);
    w.u64(sum);
    w.0
}

/// Decodes a memo; `None` when anything is off.
pub(crate) fn decode(bytes: &[u8], fingerprint: &str) -> Option<(Vec<GroupFacts>, HierarchyFacts)> {
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
    let hierarchy = r.hierarchy()?;
    (r.at == body.len()).then_some((groups, hierarchy))
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

    fn rows(&mut self, rows: &[(String, bool)]) {
        self.u64(rows.len() as u64);
        for (row, legacy) in rows {
            self.str(row);
            self.u8(u8::from(*legacy));
        }
    }

    fn hierarchy(&mut self, h: &HierarchyFacts) {
        self.str(&h.input);
        self.u64(h.cycles.len() as u64);
        for (ids, legacy) in &h.cycles {
            self.u64(ids.len() as u64);
            for id in ids {
                self.str(id);
            }
            self.u8(u8::from(*legacy));
        }
        self.rows(&h.cardinality);
        self.rows(&h.divergence);
        self.u64(h.relations as u64);
        self.str(&crate::json::to_compact(&Value::Array(h.sample.clone())));
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

    fn bool(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }

    fn rows(&mut self) -> Option<Vec<(String, bool)>> {
        let n = self.len()?;
        let mut rows = Vec::with_capacity(n.min(64));
        for _ in 0..n {
            rows.push((self.str()?, self.bool()?));
        }
        Some(rows)
    }

    fn hierarchy(&mut self) -> Option<HierarchyFacts> {
        let input = self.str()?;
        let n = self.len()?;
        let mut cycles = Vec::with_capacity(n.min(64));
        for _ in 0..n {
            let m = self.len()?;
            let mut ids = Vec::with_capacity(m.min(64));
            for _ in 0..m {
                ids.push(self.str()?);
            }
            cycles.push((ids, self.bool()?));
        }
        let cardinality = self.rows()?;
        let divergence = self.rows()?;
        let relations = self.len()?;
        let Value::Array(sample) = serde_json::from_str(&self.str()?).ok()? else {
            return None;
        };
        Some(HierarchyFacts {
            input,
            cycles,
            cardinality,
            divergence,
            relations,
            sample,
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
        let hierarchy = HierarchyFacts {
            input: "abc".into(),
            cycles: vec![(vec!["pm-a".into(), "pm-b".into()], true)],
            cardinality: vec![("pm-a:pm-b,pm-c:active".into(), false)],
            divergence: Vec::new(),
            relations: 3,
            sample: vec![serde_json::json!({"parent_id": "pm-b", "child_id": "pm-a"})],
        };
        let bytes = encode("fp", groups.iter(), &hierarchy);
        assert_eq!(decode(&bytes, "fp"), Some((groups, hierarchy.clone())));
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
        assert_eq!(
            decode(&encode("fp", unsorted.iter(), &hierarchy), "fp"),
            None
        );
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
