//! `delete` (remove the file, append a `delete` entry whose after-state is the empty document)
//! and `restore` (rebuild a past version from history, deleted items included).

use super::MutationContext;
use super::protocol::{EntryExtras, Mutation, lock_existing, lock_item};
use crate::error::{Error, Result};
use crate::history::{DELETE_OP, HistoryPoint, replay_point};
use crate::item::ItemDoc;

/// Deletes an item (`pm delete <id>`): the file is removed and the history stream kept.
///
/// # Errors
/// `item_not_found`; ownership, lock, revision and I/O errors (the file is written back when the
/// history append fails).
pub fn delete(ctx: &MutationContext, raw_id: &str, message: Option<String>) -> Result<Mutation> {
    let mut locked = lock_existing(ctx, raw_id)?;
    locked.check_ownership()?;
    locked.commit(
        DELETE_OP,
        ItemDoc::empty(),
        EntryExtras {
            message,
            changed_fields: Some(vec!["deleted".into()]),
            ..EntryExtras::default()
        },
    )
}

/// Which past state `restore` rebuilds (the history point `get --at` reads too).
pub type RestoreTarget = HistoryPoint;

/// Restores an item to a past state rebuilt from its history (`pm restore <id> <version>`),
/// also when the item is deleted. The rebuilt document is written as it was, `updated_at`
/// included; the entry's `ts` is now.
///
/// # Errors
/// `item_not_found` when neither a file nor a history stream exists, `invalid_argument_value`
/// for a version outside the stream or a state that is empty, `history_invalid_json` for an
/// unreadable stream; ownership, lock, revision and I/O errors.
pub fn restore(
    ctx: &MutationContext,
    raw_id: &str,
    target: RestoreTarget,
    message: Option<String>,
) -> Result<Mutation> {
    let id = super::protocol::resolve_with_history(ctx, raw_id)?;
    let mut locked = lock_item(ctx, &id)?;
    if locked.file.is_some() {
        locked.check_ownership()?;
    }
    if locked.stream.entries.is_empty() && locked.file.is_none() {
        return Err(Error::ItemNotFound { id });
    }
    let replayed = replay_point(&locked.stream.entries, target, &id, "version")?;
    if replayed.doc.is_empty() {
        return Err(target.refusal(
            "version",
            "the item did not exist at that point; use `pm delete` to remove it".into(),
        ));
    }
    locked.commit(
        "restore",
        replayed.doc,
        EntryExtras {
            message,
            ..EntryExtras::default()
        },
    )
}
