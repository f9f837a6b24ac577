//! Collection edits: comments, notes and learnings (`<kind>_add`), linked files and docs with
//! workspace-anchored paths, dependency rows, and body appends.

use std::path::{Component, Path};

use serde_json::{Value, json};

use super::MutationContext;
use super::protocol::{EntryExtras, Mutation, lock_existing};
use super::update::{DependencySeed, FieldEdit, apply_edits};
use crate::error::{Error, Result};
use crate::ids::normalize_id_input;

/// An append-only log collection of an item.
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

    /// Returns the history op of an addition (`comment_add`, `note_add`, `learning_add`).
    pub fn add_op(self) -> &'static str {
        match self {
            AnnotationKind::Comment => "comment_add",
            AnnotationKind::Note => "note_add",
            AnnotationKind::Learning => "learning_add",
        }
    }
}

/// Appends `{created_at: now, author, text}` to a log collection. Returns the mutation and the
/// 1-based position of the new entry in the stored (sorted) collection.
///
/// # Errors
/// `invalid_argument_value` for empty text; lock, ownership, revision and I/O errors.
pub fn add_annotation(
    ctx: &MutationContext,
    raw_id: &str,
    kind: AnnotationKind,
    text: &str,
) -> Result<(Mutation, usize)> {
    if text.trim().is_empty() {
        return Err(Error::InvalidArgument {
            field: "--add".into(),
            value: text.into(),
            reason: format!("a {} needs text", kind.field().trim_end_matches('s')),
            allowed: Vec::new(),
        });
    }
    let mut locked = lock_existing(ctx, raw_id)?;
    locked.check_ownership()?;
    let mut doc = locked.draft();
    let entry = json!({"created_at": locked.now, "author": ctx.author.name, "text": text});
    match doc.metadata.get_mut(kind.field()) {
        Some(Value::Array(list)) => list.push(entry.clone()),
        _ => {
            doc.metadata
                .insert(kind.field().into(), Value::Array(vec![entry.clone()]));
        }
    }
    let mutation = locked.commit(kind.add_op(), doc, EntryExtras::default())?;
    let index = match mutation.after.metadata.get(kind.field()) {
        Some(Value::Array(list)) => list
            .iter()
            .rposition(|e| *e == entry)
            .map_or(list.len(), |i| i + 1),
        _ => 0,
    };
    Ok((mutation, index))
}

/// Appends text to the item body (`pm append <id> <text>`), separated from existing text by a
/// blank line.
///
/// # Errors
/// `invalid_argument_value` for empty text; lock, ownership, revision and I/O errors.
pub fn append_body(ctx: &MutationContext, raw_id: &str, text: &str) -> Result<Mutation> {
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
    locked.commit("append", doc, EntryExtras::default())
}

/// Linked path collections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkKind {
    /// `files`.
    Files,
    /// `docs`.
    Docs,
}

impl LinkKind {
    /// Returns the metadata key.
    pub fn field(self) -> &'static str {
        match self {
            LinkKind::Files => "files",
            LinkKind::Docs => "docs",
        }
    }
}

/// One linked path: `{path, scope, note?}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkedPath {
    /// The path as typed.
    pub path: String,
    /// `project` (default) or `global`.
    pub scope: String,
    /// Optional note.
    pub note: Option<String>,
}

impl LinkedPath {
    /// Parses `path=<p>,scope=<s>,note=<n>` or a bare path.
    ///
    /// # Errors
    /// `invalid_argument_value` for unknown keys, a missing path or an unknown scope.
    pub fn parse(raw: &str, flag: &str) -> Result<LinkedPath> {
        let invalid = |reason: &str| Error::InvalidArgument {
            field: flag.into(),
            value: raw.into(),
            reason: reason.into(),
            allowed: Vec::new(),
        };
        let trimmed = raw.trim();
        let starts_with_key = ["path=", "scope=", "note="]
            .iter()
            .any(|k| trimmed.starts_with(k));
        let mut link = LinkedPath {
            path: String::new(),
            scope: "project".into(),
            note: None,
        };
        if !starts_with_key {
            link.path = trimmed.to_string();
        } else {
            // `note` takes the rest of the text: notes may contain commas.
            let mut rest = trimmed;
            while !rest.is_empty() {
                let (key, tail) = rest
                    .split_once('=')
                    .ok_or_else(|| invalid("expected key=value"))?;
                let (value, next) = if key == "note" {
                    (tail, "")
                } else {
                    tail.split_once(',').unwrap_or((tail, ""))
                };
                match key.trim() {
                    "path" => link.path = value.trim().to_string(),
                    "scope" => link.scope = value.trim().to_ascii_lowercase(),
                    "note" => link.note = Some(value.trim().to_string()).filter(|n| !n.is_empty()),
                    _ => return Err(invalid("unknown key; use path, scope and note")),
                }
                rest = next.trim_start();
            }
        }
        if link.path.is_empty() {
            return Err(invalid("a path is required"));
        }
        if !["project", "global"].contains(&link.scope.as_str()) {
            return Err(Error::InvalidArgument {
                field: flag.into(),
                value: raw.into(),
                reason: "unknown scope".into(),
                allowed: vec!["project".into(), "global".into()],
            });
        }
        Ok(link)
    }
}

/// Returns `path` anchored at the workspace root: separators as `/`, `./` and `..` resolved,
/// and an absolute path inside the workspace made relative. Project paths may not escape the
/// workspace.
fn anchor(workspace: &Path, link: &LinkedPath, flag: &str) -> Result<String> {
    if link.scope == "global" {
        return Ok(link.path.clone());
    }
    let raw = link.path.replace('\\', "/");
    let path = Path::new(&raw);
    let relative = if path.is_absolute() {
        path.strip_prefix(workspace)
            .map(Path::to_path_buf)
            .map_err(|_| Error::InvalidArgument {
                field: flag.into(),
                value: link.path.clone(),
                reason: "a project path must be inside the workspace (use scope=global otherwise)"
                    .into(),
                allowed: Vec::new(),
            })?
    } else {
        path.to_path_buf()
    };
    let mut parts: Vec<String> = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::ParentDir if parts.pop().is_some() => {}
            Component::CurDir => {}
            _ => {
                return Err(Error::InvalidArgument {
                    field: flag.into(),
                    value: link.path.clone(),
                    reason: "a project path may not leave the workspace".into(),
                    allowed: Vec::new(),
                });
            }
        }
    }
    Ok(parts.join("/"))
}

/// Adds linked paths (`pm files|docs <id> --add …`); an already linked path gets the new scope
/// and note. Returns the mutation (op `files_add` / `docs_add`).
///
/// # Errors
/// Path refusals, lock, ownership, revision and I/O errors.
pub fn link_add(
    ctx: &MutationContext,
    raw_id: &str,
    kind: LinkKind,
    links: &[LinkedPath],
    flag: &str,
) -> Result<Mutation> {
    let workspace = ctx.tracker.workspace_root().to_path_buf();
    let anchored = links
        .iter()
        .map(|l| Ok((anchor(&workspace, l, flag)?, l)))
        .collect::<Result<Vec<_>>>()?;
    let mut locked = lock_existing(ctx, raw_id)?;
    locked.check_ownership()?;
    let mut doc = locked.draft();
    let list = doc
        .metadata
        .entry(kind.field())
        .or_insert_with(|| Value::Array(Vec::new()));
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    if let Value::Array(items) = list {
        for (path, link) in anchored {
            items.retain(|e| e.get("path").and_then(Value::as_str) != Some(&path));
            let mut entry = json!({"path": path, "scope": link.scope});
            if let Some(note) = &link.note {
                entry["note"] = json!(note);
            }
            items.push(entry);
        }
    }
    let op = format!("{}_add", kind.field());
    locked.commit(&op, doc, EntryExtras::default())
}

/// Removes linked paths (`pm files|docs <id> --remove <path>`; op `files_remove` /
/// `docs_remove`).
///
/// # Errors
/// `invalid_argument_value` when a path is not linked; lock, ownership, revision and I/O errors.
pub fn link_remove(
    ctx: &MutationContext,
    raw_id: &str,
    kind: LinkKind,
    paths: &[String],
    flag: &str,
) -> Result<Mutation> {
    let workspace = ctx.tracker.workspace_root().to_path_buf();
    let mut wanted = Vec::new();
    for raw in paths {
        let link = LinkedPath::parse(raw, flag)?;
        wanted.push(anchor(&workspace, &link, flag)?);
    }
    let mut locked = lock_existing(ctx, raw_id)?;
    locked.check_ownership()?;
    let mut doc = locked.draft();
    let Some(Value::Array(items)) = doc.metadata.get_mut(kind.field()) else {
        return Err(not_linked(flag, &wanted[0]));
    };
    for path in &wanted {
        let before = items.len();
        items.retain(|e| e.get("path").and_then(Value::as_str) != Some(path));
        if items.len() == before {
            return Err(not_linked(flag, path));
        }
    }
    let op = format!("{}_remove", kind.field());
    locked.commit(&op, doc, EntryExtras::default())
}

fn not_linked(flag: &str, path: &str) -> Error {
    Error::InvalidArgument {
        field: flag.into(),
        value: path.into(),
        reason: "this path is not linked to the item".into(),
        allowed: Vec::new(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linked_paths_parse_and_anchor() -> Result<()> {
        let link = LinkedPath::parse(
            "path=src/toon.rs,scope=project,note=encoder, entry",
            "--add",
        )?;
        assert_eq!(link.path, "src/toon.rs");
        assert_eq!(link.note.as_deref(), Some("encoder, entry"));
        let ws = Path::new("/w");
        let bare = LinkedPath::parse("/w/./a/../b\\c.rs", "--add")?;
        assert_eq!(anchor(ws, &bare, "--add")?, "b/c.rs");
        let outside = LinkedPath::parse("../x", "--add")?;
        assert!(anchor(ws, &outside, "--add").is_err());
        assert!(LinkedPath::parse("scope=weird,path=x", "--add").is_err());
        Ok(())
    }
}
