//! The log collections of an item — comments, notes and learnings: add an entry (text, or for
//! notes a JSON context event), replace an entry's text, delete an entry. Entries are
//! addressed by their 1-based position in the stored collection.

use serde_json::{Map, Value, json};

use super::MutationContext;
use super::protocol::{EntryExtras, Mutation, lock_existing};
use crate::error::{Error, Result};

/// A log collection of an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnnotationKind {
    /// `comments`.
    Comment,
    /// `notes`.
    Note,
    /// `learnings`.
    Learning,
}

impl AnnotationKind {
    /// Returns the metadata key (`comments`, `notes`, `learnings`).
    pub fn field(self) -> &'static str {
        match self {
            AnnotationKind::Comment => "comments",
            AnnotationKind::Note => "notes",
            AnnotationKind::Learning => "learnings",
        }
    }

    /// Returns the singular noun (`comment`, `note`, `learning`), the stem of history ops.
    pub fn singular(self) -> &'static str {
        match self {
            AnnotationKind::Comment => "comment",
            AnnotationKind::Note => "note",
            AnnotationKind::Learning => "learning",
        }
    }

    /// Returns the history op of an addition (`comment_add`, `note_add`, `learning_add`).
    pub fn add_op(self) -> String {
        self.op(LogAction::Add)
    }

    /// Returns the history op of `action` on this collection (`note_edit`, …).
    pub fn op(self, action: LogAction) -> String {
        format!("{}_{}", self.singular(), action.name())
    }
}

/// What a log edit did, as pm names it in receipts and history ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogAction {
    /// A new entry.
    Add,
    /// An entry's text replaced.
    Edit,
    /// An entry removed.
    Delete,
}

impl LogAction {
    /// `add`, `edit` or `delete`.
    pub fn name(self) -> &'static str {
        match self {
            LogAction::Add => "add",
            LogAction::Edit => "edit",
            LogAction::Delete => "delete",
        }
    }
}

/// One change to a log collection.
#[derive(Clone, Debug, PartialEq)]
pub enum LogEdit {
    /// Append `{created_at, author, text}`.
    Add(String),
    /// Append a JSON context event (notes): the object as given in `data`, its text with sorted
    /// keys in `text`, `format: json`, and its top-level `type` as `event_type`.
    AddJson(Map<String, Value>),
    /// Replace the text of the entry at a 1-based position and stamp `edited_at`.
    Edit {
        /// 1-based position in the stored collection.
        index: usize,
        /// The new text.
        text: String,
    },
    /// Remove the entry at a 1-based position.
    Delete {
        /// 1-based position in the stored collection.
        index: usize,
    },
}

impl LogEdit {
    /// The receipt's action.
    pub fn action(&self) -> LogAction {
        match self {
            LogEdit::Add(_) | LogEdit::AddJson(_) => LogAction::Add,
            LogEdit::Edit { .. } => LogAction::Edit,
            LogEdit::Delete { .. } => LogAction::Delete,
        }
    }
}

/// Appends `{created_at: now, author, text}` to a log collection. Returns the mutation and the
/// 1-based position of the new entry in the stored (sorted) collection.
///
/// # Errors
/// As [`edit_log`].
pub fn add_annotation(
    ctx: &MutationContext,
    raw_id: &str,
    kind: AnnotationKind,
    text: &str,
) -> Result<(Mutation, usize)> {
    edit_log(ctx, raw_id, kind, &LogEdit::Add(text.to_string()), None)
}

/// Applies one [`LogEdit`] to an item's collection under its lock, with `message` as the
/// history entry's message. Returns the mutation and the 1-based position the edit concerned
/// (for an addition, where the new entry sits after canonical ordering).
///
/// # Errors
/// `invalid_argument_value` for empty text or a position outside the collection;
/// `structured_event_immutable` for an edit or deletion of a JSON context event; lock,
/// ownership, revision and I/O errors.
pub fn edit_log(
    ctx: &MutationContext,
    raw_id: &str,
    kind: AnnotationKind,
    edit: &LogEdit,
    message: Option<String>,
) -> Result<(Mutation, usize)> {
    if let LogEdit::Add(text) | LogEdit::Edit { text, .. } = edit {
        refuse_empty(kind, text)?;
    }
    let mut locked = lock_existing(ctx, raw_id)?;
    locked.check_ownership()?;
    let mut doc = locked.draft();
    let field = kind.field();
    let slot = doc.metadata.entry(field).or_insert(Value::Null);
    if !slot.is_array() {
        *slot = Value::Array(Vec::new());
    }
    let Value::Array(list) = slot else {
        return Err(Error::internal("a log collection that is not a list"));
    };
    let added = match edit {
        LogEdit::Add(text) => Some(entry(&locked.now, &ctx.author.name, text)),
        LogEdit::AddJson(data) => Some(json_event(&locked.now, &ctx.author.name, data)),
        LogEdit::Edit { index, text } => {
            let slot = position(kind, list, *index, "--edit", &locked.id)?;
            replace_text(&mut list[slot], text, &locked.now);
            None
        }
        LogEdit::Delete { index } => {
            let slot = position(kind, list, *index, "--delete", &locked.id)?;
            list.remove(slot);
            None
        }
    };
    if let Some(new) = &added {
        list.push(new.clone());
    }
    let extras = EntryExtras {
        message,
        ..EntryExtras::default()
    };
    let mutation = locked.commit(&kind.op(edit.action()), doc, extras)?;
    let index = match (edit, added) {
        (LogEdit::Edit { index, .. } | LogEdit::Delete { index }, _) => *index,
        (_, Some(new)) => stored_position(&mutation, field, &new),
        (_, None) => 0,
    };
    Ok((mutation, index))
}

fn refuse_empty(kind: AnnotationKind, text: &str) -> Result<()> {
    if !text.trim().is_empty() {
        return Ok(());
    }
    Err(Error::InvalidArgument {
        field: "--add".into(),
        value: text.into(),
        reason: format!("a {} needs text", kind.singular()),
        allowed: Vec::new(),
    })
}

fn entry(now: &str, author: &str, text: &str) -> Value {
    json!({"created_at": now, "author": author, "text": text})
}

fn json_event(now: &str, author: &str, data: &Map<String, Value>) -> Value {
    let event_type = data.get("type").and_then(Value::as_str).map(str::to_string);
    let data = Value::Object(data.clone());
    let mut event = Map::new();
    event.insert("created_at".into(), Value::from(now));
    event.insert("author".into(), Value::from(author));
    event.insert(
        "text".into(),
        Value::String(crate::json::to_compact(&sorted_keys(&data))),
    );
    event.insert("format".into(), Value::from("json"));
    event.insert("data".into(), data);
    if let Some(kind) = event_type {
        event.insert("event_type".into(), Value::String(kind));
    }
    Value::Object(event)
}

/// `value` with every object's keys in sorted order (the stored text of a JSON event).
fn sorted_keys(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted_keys(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted_keys).collect()),
        other => other.clone(),
    }
}

/// The 0-based slot of the 1-based `index`, refusing positions outside the collection and
/// JSON context events (append-only).
fn position(
    kind: AnnotationKind,
    list: &[Value],
    index: usize,
    flag: &str,
    id: &str,
) -> Result<usize> {
    let Some(found) = index.checked_sub(1).and_then(|slot| list.get(slot)) else {
        return Err(Error::InvalidArgument {
            field: flag.into(),
            value: index.to_string(),
            reason: format!(
                "{id} has {} {}; positions start at 1",
                list.len(),
                kind.field()
            ),
            allowed: Vec::new(),
        });
    };
    if found.get("format").and_then(Value::as_str) == Some("json") {
        return Err(Error::StructuredEventImmutable {
            id: id.to_string(),
            flag: flag.to_string(),
            index,
        });
    }
    Ok(index - 1)
}

fn replace_text(entry: &mut Value, text: &str, now: &str) {
    if let Value::Object(map) = entry {
        map.insert("text".into(), Value::String(text.to_string()));
        map.insert("edited_at".into(), Value::String(now.to_string()));
    }
}

/// The 1-based position of `new` in the committed collection (canonical ordering may move it).
fn stored_position(mutation: &Mutation, field: &str, new: &Value) -> usize {
    match mutation.after.metadata.get(field) {
        Some(Value::Array(list)) => list
            .iter()
            .rposition(|e| e == new)
            .map_or(list.len(), |i| i + 1),
        _ => 0,
    }
}
