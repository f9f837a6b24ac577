//! `pm comments|notes|learnings <id> [text]`: list the collection, or add, edit or delete one
//! entry (notes also take JSON context events).

use pm_engine::Error;
use pm_engine::mutate::{AnnotationKind, LogEdit, edit_log, read_item};
use pm_engine::timestamp::parse_timestamp;
use serde_json::{Map, Value, json};

use super::log_args::{LogArgs, LogRequest};
use crate::args::numbers::NumberFlag;
use crate::ctx::Ctx;
use crate::failure::{CliError, Result, UsageKind};
use crate::mutation::{AnnotationOutput, MutationOutput, Workspace, with_context};

/// Lists the collection, or applies the one change the flags ask for.
///
/// # Errors
/// Usage errors for conflicting text sources, `item_not_found`, empty text, positions outside
/// the collection, `structured_event_immutable`, ownership, lock and revision conflicts.
pub fn cmd_annotation(ctx: &Ctx, req: &LogRequest<'_>) -> Result<(MutationOutput, Vec<String>)> {
    let (id, operand) = item_and_operand(req.log)?;
    let limit = req.log.limit.value("--limit")?;
    if let Some(since) = req.since.filter(|since| parse_timestamp(since).is_none()) {
        let reason = "expected an ISO 8601 timestamp such as 2026-09-01T00:00:00Z";
        return Err(Error::invalid_argument("--since", since, reason, Vec::new()).into());
    }
    let field = req.kind.field();
    let Some(edit) = planned_edit(ctx, req, operand)? else {
        let ws = Workspace::open(ctx)?;
        let doc = read_item(&ws.tracker, &ws.settings, &ws.schema, id)?;
        let all: Vec<Value> = (list(doc.metadata.get(field)).into_iter())
            .filter(|entry| listed(req, entry))
            .collect();
        let total = all.len();
        let id = doc.id().unwrap_or_default().to_string();
        let shown = newest(all, limit);
        return Ok((envelope(id, field, shown, total, None), Vec::new()));
    };
    let (m, index) = with_context(ctx, field, req.log.force, |mctx, _| {
        Ok(edit_log(
            mctx,
            id,
            req.kind,
            &edit,
            req.log.message.clone(),
        )?)
    })?;
    let all = list(m.after.metadata.get(field));
    let total = all.len();
    let returned: Vec<Value> = match (&edit, req.log.full_history) {
        (_, true) => newest(all, limit),
        (LogEdit::Delete { .. }, false) => Vec::new(),
        (_, false) => all
            .into_iter()
            .skip(index.saturating_sub(1))
            .take(1)
            .collect(),
    };
    let receipt = json!({
        "action": edit.action().name(),
        "entry_index": index,
        "changed_count": 1,
        "full_history_included": returned.len() == total,
    });
    let out = envelope(m.id.clone(), field, returned, total, Some(receipt));
    Ok((out, m.warnings))
}

/// The item id (operand or `--id`) and the text operand. With `--id`, a single operand is the
/// text.
fn item_and_operand(log: &LogArgs) -> Result<(&str, Option<&str>)> {
    match (&log.item, &log.id, &log.text) {
        (Some(item), Some(first), Some(_)) if item != first => Err(CliError::Usage {
            kind: UsageKind::UnexpectedArgument,
            detail: format!("--id {item} names the item; pass at most one TEXT operand"),
            flag: log.text.clone(),
            value: None,
            suggestions: Box::new([]),
            allowed: Box::new([]),
        }),
        (Some(item), Some(first), None) => Ok((item, Some(first))),
        (Some(item), _, text) => Ok((item, text.as_deref())),
        (None, Some(first), text) => Ok((first, text.as_deref())),
        (None, None, _) => Err(CliError::Usage {
            kind: UsageKind::MissingRequiredArgument,
            detail: "the item id is required (operand or --id)".into(),
            flag: Some("ID".into()),
            value: None,
            suggestions: Box::new([]),
            allowed: Box::new([]),
        }),
    }
}

/// The change the flags ask for; `None` lists the collection.
fn planned_edit(ctx: &Ctx, req: &LogRequest<'_>, operand: Option<&str>) -> Result<Option<LogEdit>> {
    let text = entry_text(ctx, req, operand)?;
    let log = req.log;
    if let Some(index) = log.delete.value("--delete")? {
        let other = (text.as_ref().map(|(flag, _)| *flag)).or(req.add_json.map(|_| "--add-json"));
        if let Some(flag) = other {
            return Err(conflict("--delete", flag));
        }
        return Ok(Some(LogEdit::Delete { index }));
    }
    if let Some(json) = req.add_json {
        if let Some((flag, _)) = &text {
            return Err(conflict("--add-json", flag));
        }
        if log.edit.is_some() {
            return Err(conflict("--add-json", "--edit"));
        }
        return Ok(Some(LogEdit::AddJson(json_object(json)?)));
    }
    if let Some(index) = log.edit.value("--edit")? {
        let Some((_, text)) = text else {
            return Err(Error::invalid_argument(
                "--edit",
                &index.to_string(),
                "--edit needs the replacement text: TEXT, --add, --stdin or --file",
                Vec::new(),
            )
            .into());
        };
        return Ok(Some(LogEdit::Edit { index, text }));
    }
    Ok(text.map(|(_, text)| LogEdit::Add(text)))
}

/// The one text source given (operand, `--add`, `--stdin`, `--file`), read, with its flag.
fn entry_text(
    ctx: &Ctx,
    req: &LogRequest<'_>,
    operand: Option<&str>,
) -> Result<Option<(&'static str, String)>> {
    let log = req.log;
    let sources = [
        ("TEXT", operand.is_some()),
        ("--add", req.add.is_some()),
        ("--stdin", log.stdin),
        ("--file", log.file.is_some()),
    ];
    let mut given = sources.iter().filter(|(_, on)| *on).map(|(flag, _)| *flag);
    let (Some(first), second) = (given.next(), given.next()) else {
        return Ok(None);
    };
    if let Some(second) = second {
        return Err(conflict(second, first));
    }
    // pm keeps a comment's text from stdin or a file as read, and drops a note's trailing
    // newlines (write transcript steps 013, 014 and 016).
    let loaded = |text: String| match req.kind {
        AnnotationKind::Note => text.trim_end_matches(['\n', '\r']).to_string(),
        _ => text,
    };
    let text = match (first, operand.or(req.add), &log.file) {
        ("--stdin", _, _) => loaded(ctx.read_stdin()?),
        ("--file", _, Some(path)) => loaded(read_text_file(ctx, path)?),
        (_, Some("-"), _) => ctx.read_stdin()?,
        (_, Some(text), _) => text.to_string(),
        _ => return Ok(None),
    };
    Ok(Some((first, text)))
}

fn read_text_file(ctx: &Ctx, path: &str) -> Result<String> {
    use pm_engine::IoResultExt;
    let full = ctx.cwd.join(path);
    Ok(std::fs::read_to_string(&full).at(&full)?)
}

fn json_object(text: &str) -> Result<Map<String, Value>> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(invalid_json(text, "a JSON event must be one JSON object")),
        Err(e) => Err(invalid_json(text, &format!("not valid JSON: {e}"))),
    }
}

fn invalid_json(text: &str, reason: &str) -> CliError {
    let shown: String = text.chars().take(80).collect();
    Error::invalid_argument("--add-json", &shown, reason, Vec::new()).into()
}

fn conflict(flag: &str, other: &str) -> CliError {
    Error::ConflictingOptions {
        flag: flag.into(),
        other: other.into(),
    }
    .into()
}

/// Whether a stored entry passes `notes --since/--event-type` (only JSON events do).
fn listed(req: &LogRequest<'_>, entry: &Value) -> bool {
    if req.since.is_none() && req.event_type.is_none() {
        return true;
    }
    let text = |key: &str| entry.get(key).and_then(Value::as_str);
    text("format") == Some("json")
        && req.since.is_none_or(|since| {
            parse_timestamp(since)
                .zip(text("created_at").and_then(parse_timestamp))
                .is_some_and(|(from, at)| at >= from)
        })
        && req
            .event_type
            .is_none_or(|kind| text("event_type") == Some(kind))
}

/// The newest `limit` entries (all without a limit), oldest first.
fn newest(all: Vec<Value>, limit: Option<usize>) -> Vec<Value> {
    let skip = limit.map_or(0, |n| all.len().saturating_sub(n));
    all.into_iter().skip(skip).collect()
}

fn list(value: Option<&Value>) -> Vec<Value> {
    value.and_then(Value::as_array).cloned().unwrap_or_default()
}

fn envelope(
    id: String,
    field: &str,
    returned: Vec<Value>,
    total: usize,
    receipt: Option<Value>,
) -> MutationOutput {
    let count = returned.len();
    let has_more = count < total;
    let groups: Vec<Value> = if has_more && receipt.is_some() {
        vec![json!({
            "name": format!("{field}_history"),
            "restore_with": {"selector": "full_history", "cli_flag": "--full-history",
                "sdk_option": "fullHistory", "mcp_option": "full"},
        })]
    } else {
        Vec::new()
    };
    let mut entries = Map::new();
    entries.insert(field.to_string(), Value::Array(returned));
    MutationOutput::Annotation(AnnotationOutput {
        id,
        entries,
        count,
        total_count: total,
        returned_count: count,
        has_more,
        mutation_receipt: receipt,
        omission_receipt: json!({
            "has_omissions": !groups.is_empty(),
            "omitted_field_group_count": groups.len(),
            "omitted_field_groups": groups,
        }),
    })
}
