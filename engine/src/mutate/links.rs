//! Linked paths (`pm files|docs`): entries `{path, scope, note?}` with project paths anchored
//! at the workspace root. One edit may add explicit paths, add the files a glob matches, remove
//! paths and migrate path prefixes; all of it lands as one history entry.

use std::path::{Component, Path};

use serde_json::{Value, json};

use super::MutationContext;
use super::protocol::{EntryExtras, Mutation, lock_existing};
use crate::error::{Error, Result};
use crate::item::canon::sort_linked_paths;

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
        let pairs = parse_pairs(raw, flag, &["path", "scope", "note"])?;
        let mut link = LinkedPath {
            path: String::new(),
            scope: "project".into(),
            note: None,
        };
        match pairs {
            None => link.path = raw.trim().to_string(),
            Some(pairs) => {
                for (key, value) in pairs {
                    match key {
                        "path" => link.path = value,
                        "scope" => link.scope = value.to_ascii_lowercase(),
                        _ => link.note = Some(value).filter(|n| !n.is_empty()),
                    }
                }
            }
        }
        if link.path.is_empty() {
            return Err(invalid(flag, raw, "a path is required"));
        }
        check_scope(&link.scope, flag, raw)?;
        Ok(link)
    }
}

/// One `--add-glob` value: `pattern=<glob>,scope=<s>,note=<n>` or a plain glob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkGlob {
    /// The glob, relative to the workspace root.
    pub pattern: String,
    /// The scope of the links it adds.
    pub scope: String,
    /// Optional note of the links it adds.
    pub note: Option<String>,
}

impl LinkGlob {
    /// Parses a glob value (`glob=` and `path=` are accepted spellings of `pattern=`).
    ///
    /// # Errors
    /// `invalid_argument_value` for unknown keys, a missing or malformed pattern, an unknown
    /// scope.
    pub fn parse(raw: &str) -> Result<LinkGlob> {
        let flag = "--add-glob";
        let keys = ["pattern", "glob", "path", "scope", "note"];
        let mut spec = LinkGlob {
            pattern: String::new(),
            scope: "project".into(),
            note: None,
        };
        match parse_pairs(raw, flag, &keys)? {
            None => spec.pattern = raw.trim().to_string(),
            Some(pairs) => {
                for (key, value) in pairs {
                    match key {
                        "scope" => spec.scope = value.to_ascii_lowercase(),
                        "note" => spec.note = Some(value).filter(|n| !n.is_empty()),
                        _ => spec.pattern = value,
                    }
                }
            }
        }
        if spec.pattern.is_empty() {
            return Err(invalid(flag, raw, "a glob pattern is required"));
        }
        check_scope(&spec.scope, flag, raw)?;
        glob::Pattern::new(&spec.pattern)
            .map_err(|e| invalid(flag, raw, &format!("not a valid glob: {}", e.msg)))?;
        Ok(spec)
    }
}

/// One `--migrate from=<prefix>,to=<prefix>` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathMigration {
    /// The prefix to replace.
    pub from: String,
    /// Its replacement.
    pub to: String,
}

impl PathMigration {
    /// Parses `from=<prefix>,to=<prefix>`.
    ///
    /// # Errors
    /// `invalid_argument_value` unless both keys are given and `from` is not empty.
    pub fn parse(raw: &str) -> Result<PathMigration> {
        let flag = "--migrate";
        let pairs = parse_pairs(raw, flag, &["from", "to"])?
            .ok_or_else(|| invalid(flag, raw, "expected from=<prefix>,to=<prefix>"))?;
        let (mut from, mut to) = (None, None);
        for (key, value) in pairs {
            let slot = if key == "from" { &mut from } else { &mut to };
            *slot = Some(value.replace('\\', "/"));
        }
        match (from, to) {
            (Some(from), Some(to)) if !from.is_empty() => Ok(PathMigration { from, to }),
            _ => Err(invalid(flag, raw, "expected from=<prefix>,to=<prefix>")),
        }
    }
}

/// Everything one `pm files|docs` invocation changes.
#[derive(Clone, Debug, Default)]
pub struct LinkEdit {
    /// Explicit paths; one already linked gets the new scope and note.
    pub add: Vec<LinkedPath>,
    /// Globs; a matched path that is already linked keeps its entry.
    pub globs: Vec<LinkGlob>,
    /// Paths to unlink (each must be linked).
    pub remove: Vec<String>,
    /// Prefix rewrites (each must match a linked path).
    pub migrate: Vec<PathMigration>,
    /// Keep the stored order and append new links (files only; docs are always sorted).
    pub append_stable: bool,
    /// The history entry's message.
    pub message: Option<String>,
}

/// Applies one [`LinkEdit`] under the item's lock. The op is `files_add` / `docs_add` for
/// every kind of edit, as pm writes it.
///
/// # Errors
/// Path refusals, a removal of an unlinked path, a migration that matches nothing; lock,
/// ownership, revision and I/O errors.
pub fn edit_links(
    ctx: &MutationContext,
    raw_id: &str,
    kind: LinkKind,
    edit: &LinkEdit,
) -> Result<Mutation> {
    let workspace = ctx.tracker.workspace_root().to_path_buf();
    let explicit = anchor_all(&workspace, &edit.add, "--add")?;
    let matched = expand_globs(&workspace, &edit.globs)?;
    let removed = edit
        .remove
        .iter()
        .map(|raw| anchor(&workspace, &LinkedPath::parse(raw, "--remove")?, "--remove"))
        .collect::<Result<Vec<_>>>()?;
    let mut locked = lock_existing(ctx, raw_id)?;
    locked.check_ownership()?;
    let mut doc = locked.draft();
    let slot = doc.metadata.entry(kind.field()).or_insert(Value::Null);
    if !slot.is_array() {
        *slot = Value::Array(Vec::new());
    }
    let Value::Array(rows) = slot else {
        return Err(Error::internal(
            "a linked-path collection that is not a list",
        ));
    };
    for (path, link) in &explicit {
        rows.retain(|e| !same_link(e, &link.scope, path));
        rows.push(entry(path, &link.scope, link.note.as_deref()));
    }
    for (path, scope, note) in matched {
        if !rows.iter().any(|e| same_link(e, &scope, &path)) {
            rows.push(entry(&path, &scope, note.as_deref()));
        }
    }
    for path in &removed {
        let before = rows.len();
        rows.retain(|e| e.get("path").and_then(Value::as_str) != Some(path));
        if rows.len() == before {
            return Err(invalid(
                "--remove",
                path,
                "this path is not linked to the item",
            ));
        }
    }
    for migration in &edit.migrate {
        migrate(rows, migration)?;
    }
    if !edit.append_stable {
        sort_linked_paths(rows);
    }
    let extras = EntryExtras {
        message: edit.message.clone(),
        ..EntryExtras::default()
    };
    locked.commit(&format!("{}_add", kind.field()), doc, extras)
}

fn entry(path: &str, scope: &str, note: Option<&str>) -> Value {
    let mut entry = json!({"path": path, "scope": scope});
    if let Some(note) = note {
        entry["note"] = json!(note);
    }
    entry
}

fn same_link(entry: &Value, scope: &str, path: &str) -> bool {
    entry.get("path").and_then(Value::as_str) == Some(path)
        && entry
            .get("scope")
            .and_then(Value::as_str)
            .unwrap_or("project")
            == scope
}

/// Rewrites the prefix of every linked path that starts with `from`; two paths that end up
/// equal keep the first entry.
fn migrate(rows: &mut Vec<Value>, migration: &PathMigration) -> Result<()> {
    let mut hits = 0;
    for row in rows.iter_mut() {
        let Some(path) = row.get("path").and_then(Value::as_str) else {
            continue;
        };
        if let Some(rest) = path.strip_prefix(&migration.from) {
            row["path"] = json!(format!("{}{rest}", migration.to));
            hits += 1;
        }
    }
    if hits == 0 {
        let raw = format!("from={},to={}", migration.from, migration.to);
        return Err(invalid(
            "--migrate",
            &raw,
            "no linked path starts with this prefix",
        ));
    }
    let mut seen = Vec::new();
    rows.retain(|row| {
        let key = (
            row.get("scope").cloned().unwrap_or(Value::Null),
            row.get("path").cloned().unwrap_or(Value::Null),
        );
        let fresh = !seen.contains(&key);
        seen.push(key);
        fresh
    });
    Ok(())
}

fn anchor_all<'a>(
    workspace: &Path,
    links: &'a [LinkedPath],
    flag: &str,
) -> Result<Vec<(String, &'a LinkedPath)>> {
    links
        .iter()
        .map(|l| Ok((anchor(workspace, l, flag)?, l)))
        .collect()
}

/// The regular files each glob matches under the workspace root, in path order: `(path,
/// scope, note)`. A glob that matches nothing adds nothing.
fn expand_globs(
    workspace: &Path,
    globs: &[LinkGlob],
) -> Result<Vec<(String, String, Option<String>)>> {
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    };
    let mut out = Vec::new();
    for spec in globs {
        let rooted = if Path::new(&spec.pattern).is_absolute() {
            spec.pattern.clone()
        } else {
            format!(
                "{}/{}",
                glob::Pattern::escape(&workspace.to_string_lossy()),
                spec.pattern
            )
        };
        let paths = glob::glob_with(&rooted, options)
            .map_err(|e| invalid("--add-glob", &spec.pattern, e.msg))?;
        let mut found: Vec<String> = Vec::new();
        for path in paths.filter_map(std::result::Result::ok) {
            if !path.is_file() {
                continue;
            }
            let link = LinkedPath {
                path: path.to_string_lossy().into_owned(),
                scope: "project".into(),
                note: None,
            };
            found.push(anchor(workspace, &link, "--add-glob")?);
        }
        found.sort();
        found.dedup();
        let stored = |p: String| (p, spec.scope.clone(), spec.note.clone());
        out.extend(found.into_iter().map(stored));
    }
    Ok(out)
}

/// Splits `key=value,key=value` (a `note` takes the rest of the text: notes may contain
/// commas). `None` when the text does not start with a known key (a bare value).
fn parse_pairs<'k>(
    raw: &str,
    flag: &str,
    keys: &[&'k str],
) -> Result<Option<Vec<(&'k str, String)>>> {
    let trimmed = raw.trim();
    let keyed = |text: &str| {
        keys.iter()
            .find(|k| text.strip_prefix(**k).is_some_and(|t| t.starts_with('=')))
            .copied()
    };
    if keyed(trimmed).is_none() {
        return Ok(None);
    }
    let mut pairs = Vec::new();
    let mut rest = trimmed;
    while !rest.is_empty() {
        let (key, tail) = rest
            .split_once('=')
            .ok_or_else(|| invalid(flag, raw, "expected key=value"))?;
        let Some(known) = keyed(&format!("{}=", key.trim())) else {
            let reason = format!(
                "unknown key {:?}; allowed keys: {}",
                key.trim(),
                keys.join(", ")
            );
            return Err(invalid(flag, raw, &reason));
        };
        let (value, next) = if known == "note" {
            (tail, "")
        } else {
            tail.split_once(',').unwrap_or((tail, ""))
        };
        pairs.push((known, value.trim().to_string()));
        rest = next.trim_start();
    }
    Ok(Some(pairs))
}

fn check_scope(scope: &str, flag: &str, raw: &str) -> Result<()> {
    if ["project", "global"].contains(&scope) {
        return Ok(());
    }
    Err(Error::InvalidArgument {
        field: flag.into(),
        value: raw.into(),
        reason: "unknown scope".into(),
        allowed: vec!["project".into(), "global".into()],
    })
}

fn invalid(flag: &str, value: &str, reason: &str) -> Error {
    Error::InvalidArgument {
        field: flag.into(),
        value: value.into(),
        reason: reason.into(),
        allowed: Vec::new(),
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
            .map_err(|_| {
                let reason =
                    "a project path must be inside the workspace (use scope=global otherwise)";
                invalid(flag, &link.path, reason)
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
                let reason = "a project path may not leave the workspace";
                return Err(invalid(flag, &link.path, reason));
            }
        }
    }
    Ok(parts.join("/"))
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
        assert!(LinkedPath::parse("path=x,lable=y", "--add").is_err());
        Ok(())
    }

    #[test]
    fn globs_and_migrations_parse() -> Result<()> {
        assert_eq!(LinkGlob::parse("src/*.rs")?.pattern, "src/*.rs");
        let keyed = LinkGlob::parse("pattern=docs/**/*.md,scope=project,note=all docs")?;
        assert_eq!(
            (keyed.pattern.as_str(), keyed.note.as_deref()),
            ("docs/**/*.md", Some("all docs"))
        );
        assert!(LinkGlob::parse("src/[").is_err());
        let m = PathMigration::parse("from=src/,to=lib/")?;
        assert_eq!((m.from.as_str(), m.to.as_str()), ("src/", "lib/"));
        assert!(PathMigration::parse("src/").is_err());
        assert!(PathMigration::parse("from=,to=x").is_err());
        Ok(())
    }

    #[test]
    fn a_migration_rewrites_prefixes_and_drops_collisions() -> Result<()> {
        let mut rows = vec![
            entry("src/a.rs", "project", None),
            entry("lib/a.rs", "project", Some("kept")),
            entry("docs/x.md", "project", None),
        ];
        let m = PathMigration::parse("from=src/,to=lib/")?;
        migrate(&mut rows, &m)?;
        assert_eq!(
            rows,
            vec![
                entry("lib/a.rs", "project", None),
                entry("docs/x.md", "project", None)
            ]
        );
        assert!(migrate(&mut rows, &m).is_err());
        Ok(())
    }
}
