//! Collection edits: dependency rows and body appends (linked paths are in `links`, the log
//! collections in `log_entries`).

use serde_json::Value;

use super::MutationContext;
use super::protocol::{EntryExtras, Mutation, lock_existing};
use super::update::{DependencySeed, FieldEdit, apply_edits};
use crate::error::{Error, Result};
use crate::ids::normalize_id_input;

/// Appends text to the item body (`pm append <id> <text>`), separated from existing text by a
/// blank line.
///
/// # Errors
/// `invalid_argument_value` for empty text; lock, ownership, revision and I/O errors.
pub fn append_body(
    ctx: &MutationContext,
    raw_id: &str,
    text: &str,
    message: Option<String>,
) -> Result<Mutation> {
    if text.trim().is_empty() {
        return Err(Error::InvalidArgument {
            field: "text".into(),
            value: text.into(),
            reason: "nothing to append".into(),
            allowed: Vec::new(),
        });
    }
    let mut locked = lock_existing(ctx, raw_id)?;
    locked.check_ownership()?;
    let mut doc = locked.draft();
    doc.body = if doc.body.trim().is_empty() {
        text.to_string()
    } else {
        format!("{}\n\n{text}", doc.body.trim_end())
    };
    let extras = EntryExtras {
        message,
        ..EntryExtras::default()
    };
    locked.commit("append", doc, extras)
}

/// Adds dependency rows (`pm deps <id> --add id=<id>,kind=<kind>`); each target must exist.
///
/// # Errors
/// `dependency_target_unresolved` for a missing target; lock, ownership, revision, I/O errors.
pub fn deps_add(ctx: &MutationContext, raw_id: &str, seeds: &[DependencySeed]) -> Result<Mutation> {
    let mut locked = lock_existing(ctx, raw_id)?;
    locked.check_ownership()?;
    let mut doc = locked.draft();
    let edits: Vec<FieldEdit> = seeds
        .iter()
        .cloned()
        .map(FieldEdit::AddDependency)
        .collect();
    apply_edits(&mut locked, &mut doc, &edits)?;
    locked.commit("update", doc, EntryExtras::default())
}

/// Removes dependency rows by target id (`pm deps <id> --remove <id>`).
///
/// # Errors
/// `invalid_argument_value` when the item has no such dependency; lock, ownership, revision
/// and I/O errors.
pub fn deps_remove(ctx: &MutationContext, raw_id: &str, targets: &[String]) -> Result<Mutation> {
    let prefix = ctx.settings.id_prefix();
    let mut locked = lock_existing(ctx, raw_id)?;
    locked.check_ownership()?;
    let mut doc = locked.draft();
    let Some(Value::Array(rows)) = doc.metadata.get_mut("dependencies") else {
        return Err(no_dependency(&targets[0]));
    };
    for raw in targets {
        let candidates = normalize_id_input(raw, &prefix);
        let before = rows.len();
        rows.retain(|r| {
            !r.get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| candidates.iter().any(|c| c == id))
        });
        if rows.len() == before {
            return Err(no_dependency(raw));
        }
    }
    locked.commit("update", doc, EntryExtras::default())
}

fn no_dependency(raw: &str) -> Error {
    Error::InvalidArgument {
        field: "--remove".into(),
        value: raw.into(),
        reason: "the item has no dependency on this id".into(),
        allowed: Vec::new(),
    }
}
