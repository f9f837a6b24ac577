//! `create`: builds a new item from a type, a title and field edits, mints or validates its
//! id, and writes it under the item lock after re-checking that the id is still unused. The
//! create-mode policy and duplicate detection (`crate::governance`) run on the way.

use serde_json::{Map, Value, json};

use super::MutationContext;
use super::protocol::{EntryExtras, Mutation, lock_item};
use super::update::{FieldEdit, apply_edits, is_placeholder};
use crate::error::{Error, Result};
use crate::governance::{self, CreateMode, DuplicateMode, GivenOptions};
use crate::history::entry_message;
use crate::ids::{IdMinter, validate_explicit_id};
use crate::item::ItemDoc;

/// What `pm create` asks for.
#[derive(Clone, Debug, Default)]
pub struct NewItem {
    /// The item type as typed (resolved through the type registry).
    pub type_name: String,
    /// The title (required, non-empty).
    pub title: String,
    /// `--id`: an explicit id, normalized with the tracker prefix.
    pub id: Option<String>,
    /// Field edits applied after the defaults (description, status, priority, tags, …).
    pub edits: Vec<FieldEdit>,
    /// The Markdown body.
    pub body: String,
    /// `--message`.
    pub message: Option<String>,
    /// Fields the caller asked to leave unset (recorded as `explicit_unset=` in the message).
    pub explicit_unset: Vec<String>,
    /// `--create-mode` as typed (`None`: `governance.create_mode_default`).
    pub create_mode: Option<String>,
    /// `--schedule-preset` as typed (`lightweight`: a Reminder, Meeting or Event creates
    /// progressively).
    pub schedule_preset: Option<String>,
    /// For the create-mode policy: options given that the fields above do not show (`--author`,
    /// `--body`), and explicit empties (`--clear-<collection>`). Title, type, `message` and the
    /// edits are read from the item itself.
    pub options: GivenOptions,
    /// `--allow-duplicate`: create even when strict duplicate detection finds likely duplicates.
    pub allow_duplicate: bool,
}

/// Creates an item (`pm create`).
///
/// Defaults follow pm: description `""`, priority 2, no tags, status from `--status`, else the
/// type's `default_status`, else the open status; `created_at = updated_at = now`; `author` is
/// the resolved author. Creating straight into the close status also sets `closed_at` and
/// `completed_at`. The id is `--id` or minted with `minter` (`ids.token_length` characters,
/// probing existing files); under the item lock the id must still be unused.
///
/// Governance: the type's required options are checked under the create mode
/// ([`governance::check_create`]); under the item lock, duplicate detection scores the title
/// against every item and adds `likely_duplicates:`/`likely_duplicate_recovery:` to
/// `receipt_warnings` (advisory, or strict with `allow_duplicate`).
///
/// # Errors
/// `invalid_argument_value` (empty title, unknown type or status, bad values, bad
/// `--create-mode`), `missing_required_option`, `invalid_item_id` (a malformed or placeholder
/// `--id`), `item_id_collision` and `likely_duplicate` (exit 4), unresolved references, lock and
/// I/O errors. Nothing is written on error.
pub fn create(ctx: &MutationContext, item: &NewItem, minter: &mut IdMinter) -> Result<Mutation> {
    let title = item.title.trim();
    if title.is_empty() {
        return Err(Error::InvalidArgument {
            field: "title".into(),
            value: item.title.clone(),
            reason: "a title is required".into(),
            allowed: Vec::new(),
        });
    }
    let Some(type_def) = ctx.schema.types.resolve(item.type_name.trim()) else {
        return Err(Error::InvalidArgument {
            field: "type".into(),
            value: item.type_name.clone(),
            reason: "unknown item type".into(),
            allowed: ctx
                .schema
                .types
                .definitions()
                .iter()
                .map(|d| d.name.clone())
                .collect(),
        });
    };
    let governance = ctx.settings.governance();
    let mode = governance::create_policy::effective_mode(
        item.create_mode.as_deref(),
        item.schedule_preset.as_deref(),
        CreateMode::from_setting(&governance.create_mode_default),
        &type_def.name,
    )?;
    governance::check_create(type_def, mode, &given_options(item))?;
    let prefix = ctx.settings.id_prefix();
    let id = match &item.id {
        Some(raw) if is_placeholder(raw) => {
            return Err(Error::InvalidId {
                input: raw.clone(),
                reason: "none, null and undefined are not ids".into(),
            });
        }
        Some(raw) => validate_explicit_id(raw, &prefix)?.into_string(),
        None => minter
            .mint_unused(&prefix, ctx.settings.token_length(), |id| {
                // An unreadable folder counts as free here; the locked lookup below reports it.
                ctx.tracker
                    .files_for_id(id.as_str(), &ctx.schema.types)
                    .is_ok_and(|hits| !hits.is_empty())
            })?
            .into_string(),
    };
    let mut locked = lock_item(ctx, &id)?;
    if let Some(file) = &locked.file {
        return Err(Error::ItemIdCollision {
            id,
            path: file.path.clone(),
        });
    }
    let now = locked.now.clone();
    let status = type_def
        .default_status
        .as_deref()
        .and_then(|s| ctx.schema.statuses.resolve(s))
        .unwrap_or(ctx.schema.statuses.open_status())
        .to_string();
    let mut metadata = Map::new();
    metadata.insert("id".into(), json!(id));
    metadata.insert("title".into(), json!(title));
    metadata.insert("description".into(), json!(""));
    metadata.insert("type".into(), json!(type_def.name));
    metadata.insert("status".into(), json!(status));
    metadata.insert("priority".into(), json!(2));
    metadata.insert("tags".into(), Value::Array(Vec::new()));
    metadata.insert("created_at".into(), json!(now));
    metadata.insert("updated_at".into(), json!(now));
    metadata.insert("author".into(), json!(ctx.author.name));
    let mut doc = ItemDoc {
        metadata,
        body: item.body.clone(),
    };
    apply_edits(&mut locked, &mut doc, &item.edits)?;
    if doc.str_field("status") == Some(ctx.schema.statuses.close_status()) {
        for key in ["closed_at", "completed_at"] {
            if !doc.metadata.contains_key(key) {
                doc.metadata.insert(key.into(), json!(now));
            }
        }
    }
    let duplicates = duplicate_warnings(ctx, title, item.allow_duplicate)?;
    let mut unset: Vec<&str> = item.explicit_unset.iter().map(String::as_str).collect();
    unset.sort_by(|a, b| crate::collate::locale_compare(a, b));
    unset.dedup();
    let message = entry_message(item.message.as_deref(), &unset, true);
    let mut created = locked.commit(
        "create",
        doc,
        EntryExtras {
            message,
            ..EntryExtras::default()
        },
    )?;
    created.receipt_warnings.extend(duplicates);
    Ok(created)
}

/// Returns every option `item` gives, for the create-mode policy.
fn given_options(item: &NewItem) -> GivenOptions {
    let mut options = item.options.clone();
    options
        .given
        .extend(["title".to_string(), "type".to_string()]);
    if item.message.is_some() {
        options.given.push("message".into());
    }
    for edit in &item.edits {
        match edit {
            FieldEdit::Set { key, .. } | FieldEdit::Raw { key, .. } => {
                options.given.push(key.clone());
            }
            FieldEdit::Unset(key) => options.cleared.push(key.clone()),
            FieldEdit::AddTags(_) => options.given.push("tags".into()),
            FieldEdit::AddAcceptance(_) => options.given.push("ac".into()),
            FieldEdit::CompletedAt(_) => options.given.push("completed_at".into()),
            FieldEdit::AddDependency(_) => options.given.push("dep".into()),
            FieldEdit::RemoveTags(_) | FieldEdit::RemoveAcceptance(_) => {}
        }
    }
    options
}

/// Runs duplicate detection for `title` under `governance.duplicate_detection_mode`.
///
/// # Errors
/// `likely_duplicate` under strict mode without `allow_duplicate`; bad threshold or limit;
/// the scan's I/O errors.
fn duplicate_warnings(
    ctx: &MutationContext,
    title: &str,
    allow_duplicate: bool,
) -> Result<Vec<String>> {
    let governance = ctx.settings.governance();
    let mode = DuplicateMode::from_setting(&governance.duplicate_detection_mode);
    if mode == DuplicateMode::Off {
        return Ok(Vec::new());
    }
    let matches = governance::find_similar(
        ctx.tracker,
        ctx.schema,
        title,
        governance.duplicate_detection_threshold,
        governance.duplicate_detection_limit,
    )?;
    governance::decide(mode, allow_duplicate, matches)
}
