//! `history-repair` for the torn states the mutation protocol can leave when a process dies
//! between its two writes: a torn last history line is cut off, then a file that is ahead of
//! its history gets one `history_repair` entry recording the file's state (files are the truth).

use serde::Serialize;
use serde_json::json;

use super::MutationContext;
use super::protocol::{EntryExtras, lock_item};
use crate::error::{Error, IoResultExt, Result};
use crate::hash::EMPTY_DOC_HASH;
use crate::history::{parse_stream, replay_to, verify_chain};

/// One thing `history-repair` did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum RepairAction {
    /// Cut an unterminated, unparseable last line off the stream.
    TruncatedTornLine {
        /// 1-based line number of the removed text.
        line: usize,
        /// Bytes removed.
        bytes: usize,
    },
    /// Appended a `history_repair` entry from the last recorded state to the file's state.
    AppendedEntry {
        /// The recorded revision the entry starts from.
        before_hash: String,
        /// The file's revision.
        after_hash: String,
    },
}

/// What `history-repair` found and did for one item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RepairReport {
    /// The item id.
    pub id: String,
    /// What was done, in order; empty when file and history already agreed.
    pub actions: Vec<RepairAction>,
    /// The item's revision after the repair (`item_hash`).
    pub item_hash: String,
}

/// Brings an item's file and history stream back in line after an interrupted mutation.
///
/// Under the item lock: a torn last history line is removed; then, when the file's hash differs
/// from the last recorded `after_hash` (the file was written but its entry never landed, or the
/// file was removed by a delete whose entry never landed), one `history_repair` entry is
/// appended whose patch takes the replayed state to the file's state. The stream is never
/// otherwise rewritten and the file is never changed.
///
/// # Errors
/// `item_not_found` when neither a file nor a stream exists; `history_invalid_json` for a
/// stream with a bad line that is not a torn tail; `invalid_argument_value` when the chain
/// itself does not verify (not a torn write: this repair does not rewrite history); lock and
/// I/O errors.
pub fn history_repair(ctx: &MutationContext, raw_id: &str) -> Result<RepairReport> {
    let id = super::protocol::resolve_with_history(ctx, raw_id)?;
    let locked = lock_item(ctx, &id)?;
    let path = ctx.tracker.history_path(&id);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(err) => return Err(err).at(&path),
    };
    if bytes.is_empty() && locked.file.is_none() {
        return Err(Error::ItemNotFound { id });
    }
    let mut stream = parse_stream(&bytes, &id, &path)?;
    let mut actions = Vec::new();
    if let Some(torn) = stream.torn_tail.take() {
        let keep = usize::try_from(torn.offset)
            .map_err(|_| Error::internal("torn tail offset exceeds memory"))?;
        crate::atomic::write(&path, &bytes[..keep])?;
        actions.push(RepairAction::TruncatedTornLine {
            line: torn.line,
            bytes: bytes.len() - keep,
        });
    }
    let report = verify_chain(&stream.entries);
    if !report.is_ok() {
        let codes: Vec<String> = report.issues.iter().map(|i| i.code()).collect();
        return Err(Error::InvalidArgument {
            field: "history".into(),
            value: id.clone(),
            reason: format!(
                "the history chain does not verify ({}); this is not a torn write and is left alone",
                codes.join(", ")
            ),
            allowed: Vec::new(),
        });
    }
    let recorded = stream
        .entries
        .last()
        .map_or(EMPTY_DOC_HASH, |e| e.after_hash.as_str())
        .to_string();
    if recorded == locked.before_hash {
        return Ok(RepairReport {
            id,
            actions,
            item_hash: recorded,
        });
    }
    let replayed = replay_to(&stream.entries, stream.entries.len())
        .map_err(|_| Error::internal("a verified chain failed to replay"))?;
    let file_doc = locked.before.clone();
    let mut locked = locked;
    locked.before = replayed.doc;
    locked.before_hash = recorded.clone();
    let message = if file_doc.is_empty() {
        "torn_write:file_removed_without_history"
    } else {
        "torn_write:file_ahead_of_history"
    };
    let mutation = locked.commit_as_recorded(
        "history_repair",
        file_doc,
        EntryExtras {
            message: Some(message.into()),
            context: Some(json!({"repair": {"reason": "item_file_ahead_of_history"}})),
            ..EntryExtras::default()
        },
    )?;
    actions.push(RepairAction::AppendedEntry {
        before_hash: recorded,
        after_hash: mutation.item_hash.clone(),
    });
    Ok(RepairReport {
        id,
        actions,
        item_hash: mutation.item_hash,
    })
}
