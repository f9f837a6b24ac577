//! Replaying a stream from the empty document: strict patch application, hash-epoch
//! selection, `before_hash`/`after_hash` verification per entry, and the drift check of an item
//! file against its stream.

use serde::Serialize;

use super::anchor;
use super::entry::HistoryEntry;
use super::replay_state::{HashCache, State};
use crate::hash::{HashEpoch, item_hash};
use crate::item::ItemDoc;

/// What failed at one entry of a chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChainIssueKind {
    /// The patch did not apply strictly, or left something other than `{metadata, body}`.
    PatchApplyFailed,
    /// `before_hash` differs from the hash of the replayed prior state.
    BeforeHashMismatch,
    /// `after_hash` differs from the hash of the replayed new state.
    AfterHashMismatch,
}

impl ChainIssueKind {
    /// Returns pm's name for the failure.
    pub fn as_str(self) -> &'static str {
        match self {
            ChainIssueKind::PatchApplyFailed => "patch_apply_failed",
            ChainIssueKind::BeforeHashMismatch => "before_hash_mismatch",
            ChainIssueKind::AfterHashMismatch => "after_hash_mismatch",
        }
    }
}

/// One chain failure, at a 1-based entry number.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChainIssue {
    /// 1-based entry number (the N of `entry_N`).
    pub entry: usize,
    /// What failed.
    pub kind: ChainIssueKind,
    /// The recorded hash (hash mismatches only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// The replayed hash, at the first epoch tried (hash mismatches only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<String>,
    /// Which operation failed and why (patch failures only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl ChainIssue {
    /// Returns pm's issue code, e.g. `after_hash_mismatch:entry_3`.
    pub fn code(&self) -> String {
        format!("{}:entry_{}", self.kind.as_str(), self.entry)
    }

    pub(super) fn patch_failed(entry: usize, detail: String) -> ChainIssue {
        ChainIssue {
            entry,
            kind: ChainIssueKind::PatchApplyFailed,
            expected: None,
            found: None,
            detail: Some(detail),
        }
    }
}

/// The result of verifying a whole stream.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainReport {
    /// The replayed state after the last applied entry.
    pub doc: ItemDoc,
    /// How many entries were applied (all of them unless a patch failed).
    pub applied: usize,
    /// The stream's hash epoch: the last explicit `item_hash_version`, else the epoch that
    /// verified the last entry (v1 when both do or neither does).
    pub epoch: HashEpoch,
    /// Every failure, in entry order; empty when the chain verifies.
    pub issues: Vec<ChainIssue>,
    /// Failures a later re-anchor marker acknowledges (they do not fail the chain).
    pub acknowledged: Vec<ChainIssue>,
}

impl ChainReport {
    /// Returns true when every entry applied and matched both hashes.
    pub fn is_ok(&self) -> bool {
        self.issues.is_empty()
    }
}

/// The file hash differs from the stream's last `after_hash` (pm's `hash_mismatch`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DriftMismatch {
    /// The stream's last `after_hash`.
    pub expected: String,
    /// The item hash of the file at the stream's epoch.
    pub found: String,
}

/// Returns the epoch an `item_hash_version` value denotes.
pub fn epoch_of(version: u32) -> HashEpoch {
    if version >= 2 {
        HashEpoch::V2
    } else {
        HashEpoch::V1
    }
}

/// Replays `entries` from `{metadata: {}, body: ""}` and verifies every hash.
///
/// Each patch is applied strictly. The epoch of an entry is its explicit `item_hash_version`,
/// else the last explicit one before it, else v1 or v2, whichever verifies. Hash mismatches are
/// collected and replay goes on; a patch that fails stops the replay.
pub fn verify_chain(entries: &[HistoryEntry]) -> ChainReport {
    replay_chain(entries)
}

/// [`verify_chain`] for a caller done with the patch values: they are moved into the replayed
/// state instead of cloned, and every `value` of `entries` is `None` afterwards (the report
/// is the same).
pub fn verify_chain_taking(entries: &mut [HistoryEntry]) -> ChainReport {
    replay_chain(entries)
}

/// The entries a chain replays, shared or given up.
trait ChainEntries {
    fn count(&self) -> usize;
    fn entry(&self, index: usize) -> &HistoryEntry;
    fn apply(&mut self, index: usize, state: &mut State) -> Result<(), ChainIssue>;
}

impl ChainEntries for &[HistoryEntry] {
    fn count(&self) -> usize {
        self.len()
    }
    fn entry(&self, index: usize) -> &HistoryEntry {
        &self[index]
    }
    fn apply(&mut self, index: usize, state: &mut State) -> Result<(), ChainIssue> {
        state.apply(index + 1, &self[index])
    }
}

impl ChainEntries for &mut [HistoryEntry] {
    fn count(&self) -> usize {
        self.len()
    }
    fn entry(&self, index: usize) -> &HistoryEntry {
        &self[index]
    }
    fn apply(&mut self, index: usize, state: &mut State) -> Result<(), ChainIssue> {
        state.apply_taking(index + 1, &mut self[index])
    }
}

fn replay_chain(mut entries: impl ChainEntries) -> ChainReport {
    let mut state = State::empty();
    let mut cache = HashCache::default();
    let mut issues = Vec::new();
    let mut acknowledged = Vec::new();
    let mut inherited: Option<HashEpoch> = None;
    let mut last_epoch = HashEpoch::V1;
    let mut applied = 0;
    let count = entries.count();
    let anchors = anchor::anchors((0..count).map(|i| entries.entry(i)));
    // After a failed patch inside an acknowledged break, replay resumes at the marker.
    let mut resume_at: Option<usize> = None;
    for index in 0..count {
        let number = index + 1;
        if resume_at.is_some_and(|marker| number < marker) {
            continue;
        }
        resume_at = None;
        let anchor = anchor::covering(&anchors, number);
        let entry = entries.entry(index);
        if let Some(version) = entry.item_hash_version {
            inherited = Some(epoch_of(version));
        }
        // Unversioned entries may use either epoch; the one that verified the previous entry
        // is tried first (an entry passes if any candidate verifies, so the order only saves
        // work).
        let other = match last_epoch {
            HashEpoch::V1 => HashEpoch::V2,
            HashEpoch::V2 => HashEpoch::V1,
        };
        let candidates: Vec<HashEpoch> = match inherited {
            Some(epoch) => vec![epoch],
            None => vec![last_epoch, other],
        };
        let mut check =
            EntryCheck::new(&mut state, &mut cache, &candidates, entry.patch.is_empty());
        // The state after the last entry is hashed here only: caching its pieces is waste.
        state.rehashed = number < count;
        if let Err(issue) = entries.apply(index, &mut state) {
            match anchor {
                Some(a) if number < a.marker => {
                    acknowledged.push(issue);
                    state = State::empty();
                    cache = HashCache::default();
                    resume_at = Some(a.marker);
                    continue;
                }
                _ => {
                    issues.push(issue);
                    break;
                }
            }
        }
        applied = number;
        match check.verify(&mut state, &mut cache, entries.entry(index)) {
            Ok(epoch) => last_epoch = epoch,
            Err(found) => {
                for (kind, expected, found) in found {
                    let issue = ChainIssue {
                        entry: number,
                        kind,
                        expected: Some(expected),
                        found: Some(found),
                        detail: None,
                    };
                    // A marker acknowledges everything before it in its range, and its own
                    // before-hash (which chains from the broken state by construction).
                    let acked = anchor.is_some_and(|a| {
                        number < a.marker || kind == ChainIssueKind::BeforeHashMismatch
                    });
                    if acked {
                        acknowledged.push(issue);
                    } else {
                        issues.push(issue);
                    }
                }
            }
        }
    }
    ChainReport {
        doc: state.into_doc(),
        applied,
        epoch: inherited.unwrap_or(last_epoch),
        issues,
        acknowledged,
    }
}

/// The before-side of one entry's verification: the prior state's hashes for every candidate
/// epoch, taken before the patch applies (cheap: the epochs differ only in the `tests` piece).
struct EntryCheck<'c> {
    candidates: &'c [HashEpoch],
    /// Hashes of the prior state (`None` when the patch is empty and the state is unchanged).
    prior: Option<HashCache>,
}

type Mismatch = (ChainIssueKind, String, String);

impl<'c> EntryCheck<'c> {
    fn new(
        state: &mut State,
        cache: &mut HashCache,
        candidates: &'c [HashEpoch],
        patch_is_empty: bool,
    ) -> EntryCheck<'c> {
        if patch_is_empty {
            return EntryCheck {
                candidates,
                prior: None,
            };
        }
        let mut prior = std::mem::take(cache);
        for epoch in candidates {
            prior.get(state, *epoch);
        }
        EntryCheck {
            candidates,
            prior: Some(prior),
        }
    }

    fn before(&mut self, k: usize, state: &mut State, cache: &mut HashCache) -> String {
        let epoch = self.candidates[k];
        match &mut self.prior {
            None => cache.get(state, epoch),
            Some(prior) => prior
                .peek(epoch)
                .cloned()
                .expect("the prior hash of every candidate was taken before the patch"),
        }
    }

    /// Returns the epoch that verifies both hashes, or the mismatches against the epoch that
    /// explains the most (one whose before hash matches, else one whose after hash matches,
    /// else the first).
    fn verify(
        &mut self,
        state: &mut State,
        cache: &mut HashCache,
        entry: &HistoryEntry,
    ) -> Result<HashEpoch, Vec<Mismatch>> {
        let n = self.candidates.len();
        let mut before_ok = Vec::with_capacity(n);
        for k in 0..n {
            let ok = self.before(k, state, cache) == entry.before_hash;
            before_ok.push(ok);
            if ok && cache.get(state, self.candidates[k]) == entry.after_hash {
                return Ok(self.candidates[k]);
            }
        }
        let k = (0..n)
            .find(|&k| before_ok[k])
            .or_else(|| (0..n).find(|&k| cache.get(state, self.candidates[k]) == entry.after_hash))
            .unwrap_or(0);
        let mut found = Vec::new();
        if !before_ok[k] {
            let before = self.before(k, state, cache);
            found.push((
                ChainIssueKind::BeforeHashMismatch,
                entry.before_hash.clone(),
                before,
            ));
        }
        let after = cache.get(state, self.candidates[k]);
        if after != entry.after_hash {
            found.push((
                ChainIssueKind::AfterHashMismatch,
                entry.after_hash.clone(),
                after,
            ));
        }
        Err(found)
    }
}

/// Compares the item hash of the current file (parsed and schema-canonicalized by the caller)
/// at `epoch` with the stream's last `after_hash`. Returns `None` when they agree or the stream
/// is empty.
pub fn check_drift(
    file_doc: &ItemDoc,
    entries: &[HistoryEntry],
    epoch: HashEpoch,
) -> Option<DriftMismatch> {
    let last = entries.last()?;
    let found = item_hash(file_doc, epoch);
    (found != last.after_hash).then(|| DriftMismatch {
        expected: last.after_hash.clone(),
        found,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::EMPTY_DOC_HASH;
    use crate::history::diff::item_patch;
    use crate::history::entry::PatchOp;
    use crate::history::stream::parse_stream;
    use serde_json::json;
    use std::path::Path;

    /// pm-written stream from the mutation transcript (4 lines): create, delete, restore, update.
    const D001: &str = include_str!("../../../testdata/history/pm-d001.jsonl");

    fn entries(text: &str) -> Vec<HistoryEntry> {
        parse_stream(text.as_bytes(), "pm-d001", Path::new("pm-d001.jsonl"))
            .expect("fixture parses")
            .entries
    }

    fn codes(report: &ChainReport) -> Vec<String> {
        report.issues.iter().map(ChainIssue::code).collect()
    }

    #[test]
    fn delete_and_restore_stream_verifies() {
        let entries = entries(D001);
        let report = verify_chain(&entries);
        assert!(report.is_ok(), "{:?}", report.issues);
        assert_eq!((report.applied, report.epoch), (4, HashEpoch::V2));
        assert_eq!(report.doc.str_field("status"), Some("canceled"));
        assert_eq!(entries[1].after_hash, EMPTY_DOC_HASH);
        assert_eq!(check_drift(&report.doc, &entries, report.epoch), None);
    }

    #[test]
    fn tampered_value_fails_at_its_entry() {
        let text = D001.replacen("\"Decision withdrawn\"", "\"Decision kept\"", 1);
        let report = verify_chain(&entries(&text));
        assert_eq!(codes(&report), ["after_hash_mismatch:entry_4"]);
        let issue = &report.issues[0];
        assert_eq!(
            issue.expected.as_deref(),
            Some("c1e2ccc323a4e72d0b96efde73c2eb7bc2bc045d73a3d7a90eac1b2754cd95a7")
        );
        assert_ne!(issue.found, issue.expected);
        // A tampered create changes every later state until delete empties the document.
        let text = D001.replacen("\"Use TOON as the item format\"", "\"Use JSON\"", 1);
        let report = verify_chain(&entries(&text));
        assert_eq!(
            codes(&report),
            [
                "after_hash_mismatch:entry_1",
                "before_hash_mismatch:entry_2"
            ]
        );
    }

    #[test]
    fn tampered_hash_breaks_the_link() {
        let recorded = "f22f52d05380537f57080b1d2cd440f25ed7f7f99f793485fe5a91947147d54a";
        let text = D001.replacen(recorded, &"0".repeat(64), 1);
        let report = verify_chain(&entries(&text));
        assert_eq!(codes(&report), ["after_hash_mismatch:entry_1"]);
    }

    #[test]
    fn patch_apply_failure_stops_replay() {
        let text = D001.replacen(
            r#"{"op":"remove","path":"/metadata/author"}"#,
            r#"{"op":"remove","path":"/metadata/assignee"}"#,
            1,
        );
        let report = verify_chain(&entries(&text));
        assert_eq!(codes(&report), ["patch_apply_failed:entry_2"]);
        assert_eq!(report.applied, 1);
        assert!(
            report.issues[0]
                .detail
                .as_deref()
                .is_some_and(|d| d.contains("path_not_found"))
        );
    }

    #[test]
    fn legacy_front_matter_paths_verify() {
        let text = D001.replace("\"/metadata/", "\"/front_matter/");
        assert!(verify_chain(&entries(&text)).is_ok());
    }

    #[test]
    fn empty_stream_is_the_empty_document() {
        let report = verify_chain(&[]);
        assert!(report.is_ok());
        assert_eq!((report.doc, report.applied), (ItemDoc::empty(), 0));
    }

    /// A document whose two epochs hash differently (unsorted `tests`).
    fn doc_with_tests() -> ItemDoc {
        let metadata = json!({
            "id": "pm-x", "title": "t", "type": "Task", "status": "open", "priority": 2,
            "tags": [], "created_at": "2026-01-01T00:00:00.000Z",
            "updated_at": "2026-01-01T00:00:00.000Z",
            "tests": [{"command": "b", "scope": "project"}, {"command": "a", "scope": "project"}],
        });
        ItemDoc {
            metadata: metadata.as_object().cloned().expect("object"),
            body: String::new(),
        }
    }

    fn create(doc: &ItemDoc, epoch: HashEpoch, version: Option<u32>) -> HistoryEntry {
        let mut entry = HistoryEntry::new(
            "2026-01-01T00:00:00.000Z",
            "me",
            "create",
            item_patch(&ItemDoc::empty(), doc),
            EMPTY_DOC_HASH,
            item_hash(doc, epoch),
        );
        entry.item_hash_version = version;
        entry
    }

    fn touch(doc: &ItemDoc, epoch: HashEpoch, version: Option<u32>) -> (ItemDoc, HistoryEntry) {
        let mut next = doc.clone();
        next.metadata.insert("priority".into(), json!(1));
        let mut entry = HistoryEntry::new(
            "2026-01-02T00:00:00.000Z",
            "me",
            "update",
            vec![PatchOp::replace("/metadata/priority", json!(1))],
            item_hash(doc, epoch),
            item_hash(&next, epoch),
        );
        entry.item_hash_version = version;
        (next, entry)
    }

    #[test]
    fn unversioned_entries_detect_their_epoch() {
        let doc = doc_with_tests();
        assert_ne!(
            item_hash(&doc, HashEpoch::V1),
            item_hash(&doc, HashEpoch::V2)
        );
        for epoch in [HashEpoch::V1, HashEpoch::V2] {
            let (_, update) = touch(&doc, epoch, None);
            let report = verify_chain(&[create(&doc, epoch, None), update]);
            assert!(report.is_ok(), "{epoch:?}: {:?}", report.issues);
            assert_eq!(report.epoch, epoch);
        }
    }

    #[test]
    fn explicit_epochs_bind_and_are_inherited() {
        let doc = doc_with_tests();
        // An explicit version is binding: a v2 hash under `item_hash_version: 1` fails.
        let report = verify_chain(&[create(&doc, HashEpoch::V2, Some(1))]);
        assert_eq!(codes(&report), ["after_hash_mismatch:entry_1"]);
        // Unversioned entries after an explicit v2 inherit it: v1 hashes fail there ...
        let (_, update) = touch(&doc, HashEpoch::V1, None);
        let report = verify_chain(&[create(&doc, HashEpoch::V2, Some(2)), update]);
        assert_eq!(
            codes(&report),
            [
                "before_hash_mismatch:entry_2",
                "after_hash_mismatch:entry_2"
            ]
        );
        // ... and v2 hashes pass, leaving the stream at v2.
        let (next, update) = touch(&doc, HashEpoch::V2, None);
        let stream = [create(&doc, HashEpoch::V2, Some(2)), update];
        let report = verify_chain(&stream);
        assert!(report.is_ok(), "{:?}", report.issues);
        assert_eq!(report.epoch, HashEpoch::V2);
        // Drift: the current file must hash to the last after_hash at the stream's epoch.
        assert_eq!(check_drift(&next, &stream, report.epoch), None);
        let stale = check_drift(&doc, &stream, report.epoch).expect("stale file drifts");
        assert_eq!(stale.expected, stream[1].after_hash);
        assert_eq!(stale.found, item_hash(&doc, HashEpoch::V2));
    }

    #[test]
    fn invalid_shape_is_a_patch_failure() {
        let mut entry = create(&doc_with_tests(), HashEpoch::V2, Some(2));
        entry.patch = vec![PatchOp::replace("/body", json!(1))];
        let report = verify_chain(&[entry]);
        assert_eq!(codes(&report), ["patch_apply_failed:entry_1"]);
    }

    /// The taking replay reports exactly what the sharing one does, on clean, tampered,
    /// legacy and failing streams and on operations the direct path leaves to `apply_op`.
    #[test]
    fn taking_the_values_gives_the_same_report() {
        let base = doc_with_tests();
        let mut odd = create(&base, HashEpoch::V2, Some(2));
        odd.patch.extend([
            PatchOp::add("/metadata/a~1b", json!(1)),
            PatchOp::add("/metadata/tags/-", json!("x")),
            PatchOp::replace("/metadata/title", json!("T2")),
            PatchOp::add("/metadata/title", json!("T3")),
            PatchOp::add("/body", json!("b2")),
            PatchOp::add("/metadata/", json!("empty key")),
        ]);
        let mut missing = create(&base, HashEpoch::V2, Some(2));
        missing
            .patch
            .push(PatchOp::replace("/metadata/nope", json!(1)));
        let mut moved = create(&base, HashEpoch::V2, Some(2));
        moved.patch.extend([
            PatchOp::replace("/metadata", json!([1])),
            PatchOp::add("/metadata/0", json!(2)),
        ]);
        let texts = [
            D001.to_string(),
            D001.replacen("\"Decision withdrawn\"", "\"Decision kept\"", 1),
            D001.replace("\"/metadata/", "\"/front_matter/"),
            D001.replacen(
                r#"{"op":"remove","path":"/metadata/author"}"#,
                r#"{"op":"remove","path":"/metadata/assignee"}"#,
                1,
            ),
        ];
        let mut streams: Vec<Vec<HistoryEntry>> = texts.iter().map(|t| entries(t)).collect();
        streams.extend([vec![odd], vec![missing], vec![moved]]);
        for stream in streams {
            let shared = verify_chain(&stream);
            let mut owned = stream.clone();
            assert_eq!(verify_chain_taking(&mut owned), shared);
        }
    }
}
