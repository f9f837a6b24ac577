//! Lifecycle transitions: `close` (reason, inline closure fields, close validation,
//! `closed_at`, `completed_at`, assignee dropped),
//! `reopen` (recurrence context), `claim` and `release` (assignee and claim principal).

use serde_json::{Map, Value, json};

use super::MutationContext;
use super::protocol::{EntryExtras, Mutation, lock_existing, resolve_existing};
use crate::clock::format_iso_ms;
use crate::error::{Error, LifecycleConflict, Result};
use crate::governance::{CloseValidation, check_close};
use crate::query::parse_when;
use crate::timestamp::parse_timestamp;

/// What `pm close` asks for besides the id.
#[derive(Clone, Debug, Default)]
pub struct CloseRequest {
    /// The reason as typed (positional, `--reason` or `--close-reason`; may be empty).
    pub reason: String,
    /// `--message`.
    pub message: Option<String>,
    /// `--resolution`, set inline in the same write.
    pub resolution: Option<String>,
    /// `--expected-result`, set inline.
    pub expected_result: Option<String>,
    /// `--actual-result`, set inline.
    pub actual_result: Option<String>,
    /// `--validate-close [mode]` as typed (`Some("")` for the bare flag; `None`:
    /// `governance.close_validation_default`).
    pub validate_close: Option<String>,
    /// `--completed-at` as typed: when the work was actually done, an ISO instant or an
    /// offset from the close time (`-2d`); `None` keeps a stored `completed_at` or uses the
    /// close time.
    pub completed_at: Option<String>,
    /// `--duplicate-of <id>`: close as a duplicate of this (existing) item.
    pub duplicate_of: Option<String>,
}

/// Closes an item with a reason (`pm close <id> <reason>`); see [`close_item`].
///
/// # Errors
/// As [`close_item`].
pub fn close(
    ctx: &MutationContext,
    raw_id: &str,
    reason: &str,
    message: Option<String>,
) -> Result<Mutation> {
    let request = CloseRequest {
        reason: reason.to_string(),
        message,
        ..CloseRequest::default()
    };
    close_item(ctx, raw_id, &request)
}

/// Closes an item (`pm close`).
///
/// The close reason is the first non-blank of the reason, `--resolution` and `--message`
/// (pm's precedence). Inline `--resolution`/`--expected-result`/`--actual-result` values
/// (trimmed, blank ignored) are written first, then close validation checks the closure
/// fields: `warn` adds `close_validation_missing_fields:<id>:<fields>` to `receipt_warnings`,
/// `strict` refuses. Sets the close status, `closed_at = now`, `completed_at = now` unless
/// already set, and `close_reason`; drops `assignee` but keeps `claim_principal`; a Plan also
/// gets `plan_mode: completed`.
///
/// # Errors
/// `item_already_closed` (exit 4) for an item in a terminal status, `invalid_argument_value`
/// for an empty reason when governance requires one or a bad `--validate-close` mode,
/// `close_validation_missing_fields` (exit 2), ownership, lock, revision and I/O errors.
pub fn close_item(ctx: &MutationContext, raw_id: &str, request: &CloseRequest) -> Result<Mutation> {
    let governance = ctx.settings.governance();
    let reason = [
        Some(request.reason.as_str()),
        request.resolution.as_deref(),
        request.message.as_deref(),
    ]
    .into_iter()
    .flatten()
    .map(str::trim)
    .find(|r| !r.is_empty())
    .unwrap_or_default();
    let duplicate = duplicate_fields(ctx, raw_id, request)?;
    let reason = match &duplicate {
        Some(dup) if reason.is_empty() => dup.resolution.as_str(),
        _ => reason,
    };
    if reason.is_empty() && governance.require_close_reason {
        return Err(Error::InvalidArgument {
            field: "reason".into(),
            value: String::new(),
            reason: "closing an item requires a reason".into(),
            allowed: Vec::new(),
        });
    }
    let validation = CloseValidation::resolve(
        request.validate_close.as_deref(),
        CloseValidation::from_setting(&governance.close_validation_default),
    )?;
    let mut locked = lock_existing(ctx, raw_id)?;
    let status = locked
        .before
        .str_field("status")
        .unwrap_or_default()
        .to_string();
    if ctx.schema.statuses.is_terminal(&status) {
        return Err(Error::Lifecycle {
            kind: LifecycleConflict::AlreadyClosed,
            id: locked.id.clone(),
            holder: Some(status.clone()),
            detail: format!("Item {} is already {status}", locked.id),
        });
    }
    locked.check_ownership()?;
    let now = locked.now.clone();
    let mut doc = locked.draft();
    let meta = &mut doc.metadata;
    let inline = [
        ("resolution", &request.resolution),
        ("expected_result", &request.expected_result),
        ("actual_result", &request.actual_result),
    ];
    for (key, value) in inline {
        if let Some(value) = value.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
            meta.insert(key.into(), json!(value));
        }
    }
    if let Some(dup) = &duplicate {
        for (key, value) in [
            ("resolution", &dup.resolution),
            ("expected_result", &dup.expected_result),
            ("actual_result", &dup.actual_result),
        ] {
            if !meta.contains_key(key) {
                meta.insert(key.into(), json!(value));
            }
        }
    }
    let warnings = check_close(&locked.id, meta, validation)?;
    meta.insert("status".into(), json!(ctx.schema.statuses.close_status()));
    meta.insert("closed_at".into(), json!(now));
    match &request.completed_at {
        Some(raw) => {
            let base = parse_timestamp(&now).unwrap_or_default();
            let at = parse_when("--completed-at", raw, base)?;
            meta.insert("completed_at".into(), json!(format_iso_ms(at)));
        }
        None if !meta.contains_key("completed_at") => {
            meta.insert("completed_at".into(), json!(now));
        }
        None => {}
    }
    if !reason.is_empty() {
        meta.insert("close_reason".into(), json!(reason));
    }
    if let Some(dup) = &duplicate {
        meta.insert("duplicate_of".into(), json!(dup.target));
    }
    meta.shift_remove("assignee");
    if meta.get("type").and_then(Value::as_str) == Some("Plan") {
        meta.insert("plan_mode".into(), json!("completed"));
    }
    let mut closed = locked.commit(
        "close",
        doc,
        EntryExtras {
            message: request.message.clone(),
            ..EntryExtras::default()
        },
    )?;
    closed.receipt_warnings.extend(warnings);
    Ok(closed)
}

/// The closure fields `--duplicate-of` fills (where the request leaves them empty).
struct DuplicateFields {
    target: String,
    resolution: String,
    expected_result: String,
    actual_result: String,
}

/// Resolves `--duplicate-of`: the target must be another existing item.
fn duplicate_fields(
    ctx: &MutationContext,
    raw_id: &str,
    request: &CloseRequest,
) -> Result<Option<DuplicateFields>> {
    let Some(raw) = request.duplicate_of.as_deref() else {
        return Ok(None);
    };
    let target = resolve_existing(ctx, raw)?;
    if resolve_existing(ctx, raw_id).is_ok_and(|id| id == target) {
        return Err(Error::InvalidArgument {
            field: "--duplicate-of".into(),
            value: raw.into(),
            reason: "an item cannot be a duplicate of itself; name the canonical item".into(),
            allowed: Vec::new(),
        });
    }
    Ok(Some(DuplicateFields {
        resolution: format!("Duplicate of {target}"),
        expected_result: format!("Canonical item {target} tracks the work."),
        actual_result: format!("Closed as duplicate of {target}."),
        target,
    }))
}

/// Reopens a closed or canceled item (`pm item reopen <id> <reason>`).
///
/// Moves it to `to` (the open status by default; the in-progress status is also allowed),
/// removes `closed_at`, `completed_at` and `close_reason`, and records
/// `context.recurrence = {reason, from_status, to_status, previous_terminal: {close_reason}}`.
///
/// # Errors
/// `item_not_closed` for an item that is not in a terminal status, `invalid_argument_value`
/// for an empty reason or a bad target status, ownership, lock, revision and I/O errors.
pub fn reopen(
    ctx: &MutationContext,
    raw_id: &str,
    reason: &str,
    to: Option<&str>,
) -> Result<Mutation> {
    let reason = reason.trim();
    let statuses = &ctx.schema.statuses;
    let open = statuses.open_status().to_string();
    let mut allowed = vec![open.clone()];
    allowed.extend(statuses.in_progress_status().map(String::from));
    let target = match to {
        None => open,
        Some(raw) => match statuses.resolve(raw) {
            Some(s) if allowed.iter().any(|a| a == s) => s.to_string(),
            _ => {
                return Err(Error::InvalidArgument {
                    field: "--to".into(),
                    value: raw.into(),
                    reason: "a reopened item goes to the open or in-progress status".into(),
                    allowed,
                });
            }
        },
    };
    if reason.is_empty() {
        return Err(Error::InvalidArgument {
            field: "reason".into(),
            value: String::new(),
            reason: "reopening an item requires a recurrence reason".into(),
            allowed: Vec::new(),
        });
    }
    let mut locked = lock_existing(ctx, raw_id)?;
    let from = locked
        .before
        .str_field("status")
        .unwrap_or_default()
        .to_string();
    if !statuses.is_terminal(&from) {
        return Err(Error::Lifecycle {
            kind: LifecycleConflict::NotClosed,
            id: locked.id.clone(),
            holder: Some(from.clone()),
            detail: format!("Item {} is {from}, not closed", locked.id),
        });
    }
    locked.check_ownership()?;
    let mut doc = locked.draft();
    let mut previous = Map::new();
    if let Some(reason) = doc.metadata.get("close_reason") {
        previous.insert("close_reason".into(), reason.clone());
    }
    for key in ["closed_at", "completed_at", "close_reason"] {
        doc.metadata.shift_remove(key);
    }
    doc.metadata.insert("status".into(), json!(target));
    let mut recurrence = Map::new();
    recurrence.insert("reason".into(), json!(reason));
    recurrence.insert("from_status".into(), json!(from));
    recurrence.insert("to_status".into(), json!(target));
    recurrence.insert("previous_terminal".into(), Value::Object(previous));
    locked.commit(
        "reopen",
        doc,
        EntryExtras {
            context: Some(json!({ "recurrence": recurrence })),
            ..EntryExtras::default()
        },
    )
}

/// Claims an item for the author (`pm claim <id>`): `assignee` and `claim_principal` become the
/// author.
///
/// # Errors
/// `already_claimed_by` (exit 4) when another principal holds it and `--force` is not given;
/// lock, revision and I/O errors.
pub fn claim(ctx: &MutationContext, raw_id: &str) -> Result<Mutation> {
    let locked = lock_existing(ctx, raw_id)?;
    if let Some(owner) = locked.owner()
        && owner != ctx.author.name
        && !ctx.force
    {
        return Err(Error::Lifecycle {
            kind: LifecycleConflict::AlreadyClaimed,
            id: locked.id.clone(),
            holder: Some(owner.clone()),
            detail: format!("Item {} is already claimed by {owner}", locked.id),
        });
    }
    let mut doc = locked.draft();
    doc.metadata
        .insert("assignee".into(), json!(ctx.author.name));
    doc.metadata
        .insert("claim_principal".into(), json!(ctx.author.name));
    locked.commit("claim", doc, EntryExtras::default())
}

/// Releases a claimed item (`pm release <id>`): removes `assignee` and `claim_principal`.
///
/// # Errors
/// `item_not_claimed` when nobody holds it; ownership (another principal holds it, no
/// `--force`), lock, revision and I/O errors.
pub fn release(ctx: &MutationContext, raw_id: &str) -> Result<Mutation> {
    let mut locked = lock_existing(ctx, raw_id)?;
    if locked.owner().is_none() {
        return Err(Error::Lifecycle {
            kind: LifecycleConflict::NotClaimed,
            id: locked.id.clone(),
            holder: None,
            detail: format!("Item {} is not claimed", locked.id),
        });
    }
    locked.check_ownership()?;
    let mut doc = locked.draft();
    doc.metadata.shift_remove("assignee");
    doc.metadata.shift_remove("claim_principal");
    locked.commit("release", doc, EntryExtras::default())
}
