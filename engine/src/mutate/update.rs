//! `update`: field edits (set, unset, tag and acceptance-criteria additions, dependency rows)
//! validated against the runtime schema and applied to one item; a type change moves the file.
//! `create` reuses the same edits to build a new document.

use serde_json::{Map, Value, json};

use super::protocol::{EntryExtras, Locked, Mutation, lock_existing};
use super::{AuthorSource, MutationContext};
use crate::error::{Error, Result};
use crate::ids::{is_valid_id, normalize_id_input};
use crate::item::ItemDoc;
use crate::item::keys::SEVERITY_VALUES;
use crate::timestamp::parse_timestamp;

/// Dependency kinds pm accepts on `--dep`.
pub const DEPENDENCY_KINDS: &[&str] = &["blocks", "parent", "child", "related", "discovered_from"];

/// Timestamp fields a flag may set (stored in `toISOString()` form).
const TIMESTAMP_FIELDS: &[&str] = &["deadline", "completed_at", "closed_at"];

/// The values `--regression` accepts (a bare flag means true).
const REGRESSION_VALUES: &[&str] = &["true", "false", "1", "0"];

/// Fields no edit may set or unset directly (the protocol owns them).
const PROTECTED_FIELDS: &[&str] = &["id", "created_at", "updated_at"];

/// One requested change to an item's metadata.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldEdit {
    /// Set a field from its command-line text (validated per field).
    Set {
        /// The metadata key (`status`, `estimated_minutes`, …).
        key: String,
        /// The raw value.
        value: String,
    },
    /// Set a field to a JSON value as given (`--stdin-json`); canonicalization normalizes it.
    Raw {
        /// The metadata key.
        key: String,
        /// The value.
        value: Value,
    },
    /// Remove a field (`--unset`).
    Unset(String),
    /// Add tags (`--add-tags`, comma separated).
    AddTags(Vec<String>),
    /// Remove tags (`--remove-tags`).
    RemoveTags(Vec<String>),
    /// Append an acceptance criterion (`--add-ac`), joined with `; `.
    AddAcceptance(String),
    /// Remove the acceptance criterion with exactly this text (`--remove-ac`); one that
    /// matches nothing refuses the edit.
    RemoveAcceptance(String),
    /// Correct `completed_at` of a closed or canceled item (`update --completed-at`): an ISO
    /// instant or an offset from now such as `-2d`.
    CompletedAt(String),
    /// Add a dependency row (`--dep`).
    AddDependency(DependencySeed),
}

/// A dependency requested on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DependencySeed {
    /// The target id as typed.
    pub id: String,
    /// The relationship kind.
    pub kind: String,
    /// `source_kind` written on the row (`cli:create:dep`, `cli:update:dep`, …).
    pub source_kind: String,
}

impl DependencySeed {
    /// Parses `id=<id>,kind=<kind>` (also `type=`) or a bare id (kind `related`).
    ///
    /// # Errors
    /// `invalid_argument_value` for unknown keys, a missing id, an unknown kind or a `none`/
    /// `null` placeholder.
    pub fn parse(raw: &str, source_kind: &str) -> Result<DependencySeed> {
        let invalid = |reason: &str, allowed: &[&str]| Error::InvalidArgument {
            field: "--dep".into(),
            value: raw.into(),
            reason: reason.into(),
            allowed: allowed.iter().map(|s| s.to_string()).collect(),
        };
        let trimmed = raw.trim();
        let (mut id, mut kind) = (None, None);
        if trimmed.contains('=') {
            for part in trimmed.split(',') {
                let Some((key, value)) = part.split_once('=') else {
                    return Err(invalid(
                        "expected key=value pairs: id=<id>,kind=<kind>",
                        &[],
                    ));
                };
                match key.trim() {
                    "id" => id = Some(value.trim().to_string()),
                    "kind" | "type" => kind = Some(value.trim().to_ascii_lowercase()),
                    _ => return Err(invalid("unknown key; use id and kind", &["id", "kind"])),
                }
            }
        } else {
            id = Some(trimmed.to_string());
        }
        let id = id
            .filter(|id| !id.is_empty())
            .ok_or_else(|| invalid("--dep requires an id", &[]))?;
        if is_placeholder(&id) {
            return Err(invalid("placeholder ids are refused", &[]));
        }
        let kind = kind.unwrap_or_else(|| "related".into());
        if !DEPENDENCY_KINDS.contains(&kind.as_str()) {
            return Err(invalid("unknown dependency kind", DEPENDENCY_KINDS));
        }
        Ok(DependencySeed {
            id,
            kind,
            source_kind: source_kind.to_string(),
        })
    }
}

/// Returns true for the placeholder tokens pm refuses as ids (`none`, `null`, `undefined`).
pub fn is_placeholder(raw: &str) -> bool {
    matches!(
        raw.trim().to_ascii_lowercase().as_str(),
        "none" | "null" | "undefined"
    )
}

/// Updates one item (`pm update`): applies `edits` to a copy, bumps `updated_at`, writes.
///
/// # Errors
/// `item_not_found`, `invalid_argument_value` for a value outside its domain,
/// `dependency_target_unresolved` for a missing parent or dependency, lock and revision
/// conflicts, I/O errors. Nothing is written on error.
pub fn update(
    ctx: &MutationContext,
    raw_id: &str,
    edits: &[FieldEdit],
    message: Option<String>,
) -> Result<Mutation> {
    let mut locked = lock_existing(ctx, raw_id)?;
    locked.check_ownership()?;
    let mut doc = locked.draft();
    apply_edits(&mut locked, &mut doc, edits)?;
    refuse_open_completion(ctx, &doc, edits)?;
    if let Some(status) = edits.iter().find_map(|e| match e {
        FieldEdit::Set { key, .. } if key == "status" => doc.str_field("status"),
        _ => None,
    }) && ctx.schema.statuses.in_progress_status() == Some(status)
        && doc.str_field("assignee").is_none()
    {
        let id = locked.id.clone();
        locked.warnings.push(format!(
            "in_progress_item_unclaimed:{id}:claim_with=pm claim {id}"
        ));
    }
    locked.commit(
        "update",
        doc,
        EntryExtras {
            message,
            ..EntryExtras::default()
        },
    )
}

/// `update --completed-at` corrects the completion time of a closed or canceled item; on an
/// open one it would record work as done that is not.
fn refuse_open_completion(ctx: &MutationContext, doc: &ItemDoc, edits: &[FieldEdit]) -> Result<()> {
    let sets_completion = edits.iter().any(|e| matches!(e, FieldEdit::CompletedAt(_)));
    let status = doc.str_field("status").unwrap_or_default();
    if sets_completion && !ctx.schema.statuses.is_terminal(status) {
        return Err(Error::InvalidArgument {
            field: "--completed-at".into(),
            value: doc
                .str_field("completed_at")
                .unwrap_or_default()
                .to_string(),
            reason: format!(
                "the item is {status}; --completed-at corrects a closed or canceled item (close it with pm close --completed-at)"
            ),
            allowed: Vec::new(),
        });
    }
    Ok(())
}

/// Applies `edits` in order to `doc` under the lock held by `locked`.
pub(crate) fn apply_edits(
    locked: &mut Locked,
    doc: &mut ItemDoc,
    edits: &[FieldEdit],
) -> Result<()> {
    for edit in edits {
        apply_edit(locked, doc, edit)?;
    }
    Ok(())
}

fn apply_edit(locked: &mut Locked, doc: &mut ItemDoc, edit: &FieldEdit) -> Result<()> {
    let ctx = locked.ctx;
    let meta = &mut doc.metadata;
    match edit {
        FieldEdit::CompletedAt(raw) => {
            let now = parse_timestamp(&locked.now).unwrap_or_default();
            let at = crate::query::parse_when("--completed-at", raw, now)?;
            meta.insert(
                "completed_at".into(),
                json!(crate::clock::format_iso_ms(at)),
            );
        }
        FieldEdit::Set { key, value } => {
            refuse_protected(key, value)?;
            let parsed = parse_field(ctx, &locked.id, key, value)?;
            meta.insert(key.clone(), parsed);
        }
        FieldEdit::Raw { key, value } if key == "body" => {
            doc.body = value.as_str().unwrap_or_default().to_string();
        }
        FieldEdit::Raw { key, value } => {
            refuse_protected(key, &crate::json::to_compact(value))?;
            meta.insert(key.clone(), value.clone());
        }
        FieldEdit::Unset(key) => {
            refuse_protected(key, key)?;
            if crate::item::keys::REQUIRED_FIELDS.contains(&key.as_str()) {
                return Err(Error::InvalidArgument {
                    field: "--unset".into(),
                    value: key.clone(),
                    reason: "required fields cannot be unset".into(),
                    allowed: Vec::new(),
                });
            }
            meta.shift_remove(key);
        }
        FieldEdit::AddTags(tags) => {
            let list = meta
                .entry("tags")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(items) = list {
                items.extend(tags.iter().map(|t| Value::String(t.clone())));
            }
        }
        FieldEdit::RemoveTags(tags) => {
            let remove: Vec<String> = tags.iter().map(|t| t.trim().to_lowercase()).collect();
            if let Some(Value::Array(items)) = meta.get_mut("tags") {
                items.retain(|t| {
                    !t.as_str()
                        .is_some_and(|t| remove.contains(&t.trim().to_lowercase()))
                });
            }
        }
        FieldEdit::AddAcceptance(text) => {
            let text = text.trim();
            let joined = match meta.get("acceptance_criteria").and_then(Value::as_str) {
                Some(old) if !old.trim().is_empty() => format!("{old}; {text}"),
                _ => text.to_string(),
            };
            meta.insert("acceptance_criteria".into(), Value::String(joined));
        }
        FieldEdit::RemoveAcceptance(text) => remove_acceptance(meta, text)?,
        FieldEdit::AddDependency(seed) => {
            let target = resolve_reference(ctx, &locked.id, "--dep", &seed.id)?;
            let row = json!({
                "id": target,
                "kind": seed.kind,
                "created_at": locked.now,
                "author": ctx.author.name,
                "source_kind": seed.source_kind,
                "author_source": AuthorSource::Detected.as_str(),
            });
            match meta.get_mut("dependencies") {
                Some(Value::Array(rows)) => {
                    rows.retain(|r| r.get("id").and_then(Value::as_str) != Some(&target));
                    rows.push(row);
                }
                _ => {
                    meta.insert("dependencies".into(), Value::Array(vec![row]));
                }
            }
        }
    }
    Ok(())
}

fn refuse_protected(key: &str, value: &str) -> Result<()> {
    if PROTECTED_FIELDS.contains(&key) {
        return Err(Error::InvalidArgument {
            field: key.to_string(),
            value: value.to_string(),
            reason: "this field is managed by pm".into(),
            allowed: Vec::new(),
        });
    }
    Ok(())
}

/// Validates the command-line text of one field and returns its stored JSON value.
fn parse_field(ctx: &MutationContext, id: &str, key: &str, raw: &str) -> Result<Value> {
    let invalid = |reason: &str, allowed: Vec<String>| Error::InvalidArgument {
        field: format!("--{}", key.replace('_', "-")),
        value: raw.to_string(),
        reason: reason.to_string(),
        allowed,
    };
    let value = raw.trim();
    Ok(match key {
        "type" => match ctx.schema.types.resolve(value) {
            Some(def) => Value::String(def.name.clone()),
            None => {
                let names = ctx.schema.types.definitions().iter();
                return Err(invalid(
                    "unknown item type",
                    names.map(|d| d.name.clone()).collect(),
                ));
            }
        },
        "status" => match ctx.schema.statuses.resolve(value) {
            Some(status) => Value::String(status.to_string()),
            None => {
                let ids = ctx.schema.statuses.definitions().iter();
                return Err(invalid(
                    "unknown status",
                    ids.map(|d| d.id.clone()).collect(),
                ));
            }
        },
        "priority" => match value.parse::<u8>() {
            Ok(p) if p <= 4 => json!(p),
            _ => {
                return Err(invalid(
                    "priority is a whole number from 0 to 4",
                    allowed(&["0", "1", "2", "3", "4"]),
                ));
            }
        },
        "estimated_minutes" => match value.parse::<u64>() {
            Ok(n) => json!(n),
            Err(_) => {
                return Err(invalid(
                    "expected a non-negative whole number of minutes",
                    Vec::new(),
                ));
            }
        },
        "severity" => {
            let lower = value.to_ascii_lowercase();
            if !SEVERITY_VALUES.contains(&lower.as_str()) {
                return Err(invalid("unknown severity", allowed(SEVERITY_VALUES)));
            }
            Value::String(lower)
        }
        "parent" => {
            if is_placeholder(value) {
                return Err(invalid(
                    "placeholder ids are refused; use --unset parent",
                    Vec::new(),
                ));
            }
            Value::String(resolve_reference(ctx, id, "--parent", value)?)
        }
        "tags" => Value::Array(split_list(value).into_iter().map(Value::String).collect()),
        "order" => match value.parse::<i64>() {
            Ok(n) => json!(n),
            Err(_) => return Err(invalid("expected a whole number", Vec::new())),
        },
        "regression" => match value.to_ascii_lowercase().as_str() {
            "" | "true" | "1" => Value::Bool(true),
            "false" | "0" => Value::Bool(false),
            _ => {
                return Err(invalid(
                    "expected true or false",
                    allowed(REGRESSION_VALUES),
                ));
            }
        },
        k if TIMESTAMP_FIELDS.contains(&k) => match parse_timestamp(value) {
            Some(ms) => Value::String(crate::clock::format_iso_ms(ms)),
            None => return Err(invalid("expected an ISO-8601 date or instant", Vec::new())),
        },
        _ => Value::String(value.to_string()),
    })
}

/// Removes the `; `-separated acceptance criterion equal to `text` (both trimmed); the field
/// goes away with its last criterion.
fn remove_acceptance(meta: &mut Map<String, Value>, text: &str) -> Result<()> {
    let text = text.trim();
    let stored = meta
        .get("acceptance_criteria")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let all: Vec<&str> = stored.split(';').map(str::trim).collect();
    let kept: Vec<&str> = all.iter().copied().filter(|c| *c != text).collect();
    if kept.len() == all.len() {
        return Err(Error::InvalidArgument {
            field: "--remove-ac".into(),
            value: text.to_string(),
            reason: "no acceptance criterion has exactly this text".into(),
            allowed: all
                .iter()
                .filter(|c| !c.is_empty())
                .map(|c| c.to_string())
                .collect(),
        });
    }
    let kept: Vec<&str> = kept.into_iter().filter(|c| !c.is_empty()).collect();
    if kept.is_empty() {
        meta.shift_remove("acceptance_criteria");
    } else {
        meta.insert("acceptance_criteria".into(), json!(kept.join("; ")));
    }
    Ok(())
}

fn allowed(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| s.to_string()).collect()
}

/// Splits a comma-separated list, trimming entries and dropping empty ones.
pub fn split_list(raw: &str) -> Vec<String> {
    raw.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// Resolves a referenced item id (parent, dependency) to the stored id; it must exist and not
/// be the item itself.
pub(crate) fn resolve_reference(
    ctx: &MutationContext,
    id: &str,
    field: &str,
    raw: &str,
) -> Result<String> {
    let prefix = ctx.settings.id_prefix();
    let candidates: Vec<String> = normalize_id_input(raw, &prefix)
        .into_iter()
        .filter(|c| is_valid_id(c))
        .collect();
    if candidates.is_empty() || is_placeholder(raw) {
        return Err(Error::InvalidId {
            input: raw.to_string(),
            reason: format!("{field} needs an item id"),
        });
    }
    if candidates.iter().any(|c| c == id) {
        return Err(Error::InvalidArgument {
            field: field.to_string(),
            value: raw.to_string(),
            reason: "an item cannot reference itself".into(),
            allowed: Vec::new(),
        });
    }
    for candidate in &candidates {
        if !ctx
            .tracker
            .files_for_id(candidate, &ctx.schema.types)?
            .is_empty()
        {
            return Ok(candidate.clone());
        }
    }
    Err(Error::UnresolvedReference {
        id: id.to_string(),
        field: field.to_string(),
        target: candidates[0].clone(),
    })
}

/// Builds the edits of a `--stdin-json` document: strings are validated like flags, `tags`
/// arrays and other values are taken as given.
pub fn edits_from_json(doc: &Map<String, Value>) -> Vec<FieldEdit> {
    doc.iter()
        .map(|(key, value)| match value {
            Value::String(s) if key != "body" => FieldEdit::Set {
                key: key.clone(),
                value: s.clone(),
            },
            Value::Null => FieldEdit::Unset(key.clone()),
            _ => FieldEdit::Raw {
                key: key.clone(),
                value: value.clone(),
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependency_seeds_parse_like_pm() -> Result<()> {
        let seed = DependencySeed::parse("id=pm-t001,kind=blocks", "cli:create:dep")?;
        assert_eq!(
            (seed.id.as_str(), seed.kind.as_str()),
            ("pm-t001", "blocks")
        );
        let bare = DependencySeed::parse(" pm-x ", "cli:update:dep")?;
        assert_eq!(bare.kind, "related");
        for bad in [
            "id=none",
            "null",
            "id=pm-x,kind=weird",
            "id=pm-x,what=1",
            "kind=blocks",
        ] {
            assert!(DependencySeed::parse(bad, "s").is_err(), "{bad}");
        }
        Ok(())
    }

    #[test]
    fn lists_split_on_commas() {
        assert_eq!(split_list(" a, ,B ,"), ["a", "B"]);
        assert!(is_placeholder(" NULL ") && !is_placeholder("pm-null"));
    }
}
