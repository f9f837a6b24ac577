//! The history-stream merge behind `pm merge driver history`: both sides share a prefix; their
//! tails are unioned (an entry on both sides once), ordered by `ts` (ours first on ties, each
//! side's own order kept), and the chain is re-anchored: every tail entry's patch is replayed
//! from the prefix's state and its `before_hash`/`after_hash` recomputed, so the result
//! verifies. A side whose tail ends in a `delete` (one branch edited the item, the other
//! deleted it) keeps that delete last, and it still empties the document, so the merged stream
//! describes a deleted item. Pure bytes in, bytes out; the caller writes the file.

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::hash::{HashEpoch, replay_hash};
use crate::history::diff::{compare, wrap_state};
use crate::history::replay::epoch_of;
use crate::history::{
    DELETE_OP, HistoryEntry, StreamRead, apply_lenient, apply_strict, parse_stream,
};
use crate::item::ItemDoc;
use crate::timestamp::compare_timestamp_strings;

/// How the two streams were combined (pm's `strategy` labels).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamStrategy {
    /// Both sides hold the same entries.
    Identical,
    /// Only ours added entries: ours is kept.
    FastForwardOurs,
    /// Only theirs added entries: theirs is kept.
    FastForwardTheirs,
    /// Both added entries: union of the tails, chain re-anchored.
    UnionReanchor,
}

/// What the merge did (pm's `history` object of the driver result).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StreamMergeReport {
    /// How the streams were combined.
    pub strategy: StreamStrategy,
    /// Entries both sides share before they diverge.
    pub common_entries: usize,
    /// Divergent entries contributed by ours.
    pub entries_from_ours: usize,
    /// Divergent entries contributed by theirs (those also on ours are counted once, as ours).
    pub entries_from_theirs: usize,
    /// Entries in the merged stream.
    pub entries_total: usize,
    /// Whether hashes were recomputed (every union merge).
    pub reanchored: bool,
}

/// The merged stream and its report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamMerge {
    /// The merged JSONL text (one line per entry, each ending in `\n`).
    pub text: String,
    /// What was done.
    pub report: StreamMergeReport,
    /// Tail entries whose patch no longer applied in the merged order and was rewritten as the
    /// difference its lenient application made (pm's `patch_repaired`).
    pub patches_repaired: usize,
}

/// One entry of an input stream with its line as written.
struct Line<'a> {
    entry: HistoryEntry,
    raw: &'a str,
}

impl Line<'_> {
    /// Whether pm counts both as the same entry: the same line, else the same identity.
    fn same(&self, other: &Line<'_>) -> bool {
        self.raw == other.raw
            || (self.entry.ts == other.entry.ts
                && self.entry.op == other.entry.op
                && identity(&self.entry) == identity(&other.entry))
    }
}

/// Merges the three versions of one history stream (git's `%O`, `%A`, `%B`). `path` names the
/// stream in errors.
///
/// # Errors
/// `history_merge_conflict_markers_detected` or `history_invalid_json` when a side does not
/// parse (a torn last line is dropped, as readers skip it).
pub fn merge_streams(base: &[u8], ours: &[u8], theirs: &[u8], path: &Path) -> Result<StreamMerge> {
    let id = stream_id(path);
    parse_stream(base, &id, path)?;
    let ours_read = parse_stream(ours, &id, path)?;
    let theirs_read = parse_stream(theirs, &id, path)?;
    let ours = lines(ours_read, ours)?;
    let theirs = lines(theirs_read, theirs)?;
    let shared = ours
        .iter()
        .zip(&theirs)
        .take_while(|(a, b)| a.same(b))
        .count();
    let report = |strategy, from_ours, from_theirs, total| StreamMergeReport {
        strategy,
        common_entries: shared,
        entries_from_ours: from_ours,
        entries_from_theirs: from_theirs,
        entries_total: total,
        reanchored: strategy == StreamStrategy::UnionReanchor,
    };
    let kept = |side: &[Line<'_>], report: StreamMergeReport| StreamMerge {
        text: join(side.iter().map(|l| l.raw.to_string())),
        report,
        patches_repaired: 0,
    };
    if shared == theirs.len() {
        let strategy = if shared == ours.len() {
            StreamStrategy::Identical
        } else {
            StreamStrategy::FastForwardOurs
        };
        let r = report(strategy, ours.len() - shared, 0, ours.len());
        return Ok(kept(&ours, r));
    }
    if shared == ours.len() {
        let r = report(
            StreamStrategy::FastForwardTheirs,
            0,
            theirs.len() - shared,
            theirs.len(),
        );
        return Ok(kept(&theirs, r));
    }
    let from_ours = ours.len() - shared;
    // Only entries with the same `ts` can share an identity: group ours' tail by it.
    let mut by_ts: std::collections::HashMap<&str, Vec<&Line<'_>>> = Default::default();
    for line in &ours[shared..] {
        by_ts.entry(line.entry.ts.as_str()).or_default().push(line);
    }
    let theirs_tail: Vec<&Line<'_>> = theirs[shared..]
        .iter()
        .filter(|l| {
            by_ts
                .get(l.entry.ts.as_str())
                .is_none_or(|same_ts| !same_ts.iter().any(|o| o.same(l)))
        })
        .collect();
    let from_theirs = theirs_tail.len();
    let tail = order_tails(ours[shared..].iter().collect(), theirs_tail);
    let prefix = &ours[..shared];
    let mut merged = reanchor(prefix, &tail);
    merged.report = report(
        StreamStrategy::UnionReanchor,
        from_ours,
        from_theirs,
        shared + tail.len(),
    );
    Ok(merged)
}

/// The id a stream path names (`history/<id>.jsonl`), for error messages.
fn stream_id(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("history")
        .to_string()
}

fn lines(read: StreamRead, bytes: &[u8]) -> Result<Vec<Line<'_>>> {
    read.entries
        .into_iter()
        .zip(read.spans)
        .map(|(entry, span)| {
            let raw = std::str::from_utf8(&bytes[span])
                .map_err(|e| Error::internal(format!("history line is not UTF-8: {e}")))?;
            Ok(Line { entry, raw })
        })
        .collect()
}

/// pm's entry identity: `stableStringify({ts, author, op, patch, message})`.
fn identity(entry: &HistoryEntry) -> String {
    let patch: Vec<Value> = entry.patch.iter().map(|op| op.to_value()).collect();
    crate::json::to_stable(&json!({
        "ts": entry.ts,
        "author": entry.author,
        "op": entry.op,
        "patch": patch,
        "message": entry.message,
    }))
}

/// Orders the two tails by `ts`; on a tie ours comes first, and each side keeps its own order.
/// A side's closing `delete` goes after every entry of the other side: those entries never saw
/// the deletion, and the side that deleted the item ends deleted, so the union does too.
fn order_tails<'l, 'a>(ours: Vec<&'l Line<'a>>, theirs: Vec<&'l Line<'a>>) -> Vec<&'l Line<'a>> {
    let closing_delete =
        |side: &[&Line<'_>], i: usize| i + 1 == side.len() && side[i].entry.op == DELETE_OP;
    let tag = |is_ours: bool, side: &[&'l Line<'a>]| -> Vec<(bool, bool, usize, &'l Line<'a>)> {
        (0..side.len())
            .map(|i| (closing_delete(side, i), is_ours, i, side[i]))
            .collect()
    };
    let mut all = tag(true, &ours);
    all.extend(tag(false, &theirs));
    all.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| compare_timestamp_strings(&a.3.entry.ts, &b.3.entry.ts))
            .then_with(|| b.1.cmp(&a.1))
            .then(a.2.cmp(&b.2))
    });
    all.into_iter().map(|(_, _, _, l)| l).collect()
}

/// The running replay of the merged stream.
struct Replay {
    state: Value,
    epoch: HashEpoch,
    /// The hash of `state` in `epoch`, once computed (the next entry's `before_hash`).
    known: Option<(HashEpoch, String)>,
}

impl Replay {
    fn hash(&mut self, epoch: HashEpoch) -> String {
        if let Some((known, hash)) = &self.known
            && *known == epoch
        {
            return hash.clone();
        }
        let hash = self.compute(epoch);
        self.known = Some((epoch, hash.clone()));
        hash
    }

    fn compute(&mut self, epoch: HashEpoch) -> String {
        let Value::Object(root) = &mut self.state else {
            return replay_hash(&ItemDoc::empty(), epoch);
        };
        let metadata = match root.get_mut("metadata") {
            Some(Value::Object(map)) => std::mem::take(map),
            _ => Map::new(),
        };
        let body = match root.get_mut("body") {
            Some(Value::String(s)) => std::mem::take(s),
            _ => String::new(),
        };
        let doc = ItemDoc { metadata, body };
        let hash = replay_hash(&doc, epoch);
        root.insert("metadata".into(), Value::Object(doc.metadata));
        root.insert("body".into(), Value::String(doc.body));
        hash
    }
}

/// Re-anchors `prefix` + `tail`. A prefix that verifies is kept as written and the tail
/// replays from its state; one that does not is re-anchored from the empty document too.
fn reanchor(prefix: &[Line<'_>], tail: &[&Line<'_>]) -> StreamMerge {
    let entries: Vec<HistoryEntry> = prefix.iter().map(|l| l.entry.clone()).collect();
    let check = crate::history::verify_chain(&entries);
    let mut out: Vec<String> = Vec::with_capacity(prefix.len() + tail.len());
    let mut replay;
    let rest: Vec<&Line<'_>> = if check.is_ok() {
        out.extend(prefix.iter().map(|l| l.raw.to_string()));
        replay = Replay {
            state: wrap_state(check.doc.metadata, check.doc.body),
            epoch: check.epoch,
            known: None,
        };
        tail.to_vec()
    } else {
        replay = Replay {
            state: wrap_state(Map::new(), String::new()),
            epoch: HashEpoch::V2,
            known: None,
        };
        prefix.iter().chain(tail.iter().copied()).collect()
    };
    let mut repaired = 0;
    for line in rest {
        let (text, patch_repaired) = replay_line(&mut replay, line);
        repaired += usize::from(patch_repaired);
        out.push(text);
    }
    StreamMerge {
        text: join(out.into_iter()),
        report: StreamMergeReport {
            strategy: StreamStrategy::UnionReanchor,
            common_entries: 0,
            entries_from_ours: 0,
            entries_from_theirs: 0,
            entries_total: 0,
            reanchored: true,
        },
        patches_repaired: repaired,
    }
}

/// Applies one entry to the replay and returns its line with recomputed hashes (the line as
/// written when nothing changed) and whether its patch had to be rewritten.
fn replay_line(replay: &mut Replay, line: &Line<'_>) -> (String, bool) {
    let entry = &line.entry;
    if let Some(version) = entry.item_hash_version {
        replay.epoch = epoch_of(version);
    }
    let epoch = replay.epoch;
    let before_hash = replay.hash(epoch);
    let mut next = replay.state.clone();
    let mut new_patch = None;
    if apply_strict(&mut next, &entry.patch).is_err() {
        next = replay.state.clone();
        apply_lenient(&mut next, &entry.patch);
        new_patch = Some(compare(&replay.state, &next));
    }
    // A delete empties the document, also of what the other branch added after it forked.
    if entry.op == DELETE_OP {
        let empty = wrap_state(Map::new(), String::new());
        if next != empty {
            new_patch = Some(compare(&replay.state, &empty));
            next = empty;
        }
    }
    replay.state = next;
    replay.known = None;
    let after_hash = replay.hash(epoch);
    if new_patch.is_none() && before_hash == entry.before_hash && after_hash == entry.after_hash {
        return (line.raw.to_string(), false);
    }
    (
        rewrite_line(line.raw, &before_hash, &after_hash, new_patch.as_deref()),
        new_patch.is_some(),
    )
}

/// Rewrites the hashes (and the patch) of a line in place, keeping its key order. A line whose
/// patch stands has its two hashes spliced into the text as written; anything else is re-encoded.
fn rewrite_line(
    raw: &str,
    before: &str,
    after: &str,
    patch: Option<&[crate::history::PatchOp]>,
) -> String {
    if patch.is_none()
        && let Some(line) = splice_hashes(raw, before, after)
    {
        return line;
    }
    let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(raw) else {
        return raw.to_string();
    };
    if let Some(patch) = patch {
        map.insert(
            "patch".into(),
            Value::Array(patch.iter().map(|op| op.to_value()).collect()),
        );
    }
    map.insert("before_hash".into(), Value::String(before.to_string()));
    map.insert("after_hash".into(), Value::String(after.to_string()));
    crate::json::to_compact(&Value::Object(map))
}

/// `raw` with the values of its `before_hash` and `after_hash` keys replaced, when each key occurs
/// exactly once and holds a 64-digit hash (as every line pm writes does); `None` otherwise.
fn splice_hashes(raw: &str, before: &str, after: &str) -> Option<String> {
    let at = |key: &str| -> Option<usize> {
        let mut found = memchr::memmem::find_iter(raw.as_bytes(), key.as_bytes());
        let start = found.next()? + key.len();
        let value = raw.get(start..start + 65)?;
        let hex = value.strip_suffix('"')?;
        (found.next().is_none() && hex.bytes().all(|b| b.is_ascii_hexdigit())).then_some(start)
    };
    let b = at("\"before_hash\":\"")?;
    let a = at("\"after_hash\":\"")?;
    if before.len() != 64 || after.len() != 64 {
        return None;
    }
    let mut line = raw.to_string();
    line.replace_range(b..b + 64, before);
    line.replace_range(a..a + 64, after);
    Some(line)
}

fn join(lines: impl Iterator<Item = String>) -> String {
    let mut text = String::new();
    for line in lines {
        text.push_str(&line);
        text.push('\n');
    }
    text
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
