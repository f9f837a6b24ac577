//! `pm comments|notes|learnings <id>`: add an entry (`--add`) or list the collection.

use pm_engine::mutate::{AnnotationKind, add_annotation, read_item};
use serde_json::{Map, Value, json};

use crate::ctx::Ctx;
use crate::failure::Result;
use crate::mutation::{AnnotationOutput, MutationOutput, Workspace, with_context};

/// Add to or list an item's comments, notes or learnings
#[derive(Debug, clap::Args)]
pub struct AnnotationArgs {
    /// The item id
    #[arg(value_name = "ID")]
    pub id: String,

    /// Add an entry with this text (without it, list the entries)
    #[arg(long, value_name = "TEXT")]
    pub add: Option<String>,

    /// After --add, return every entry instead of only the new one
    #[arg(long)]
    pub full_history: bool,

    /// Bypass ownership checks and clear a stale item lock (a lock whose owner is alive is
    /// never broken)
    #[arg(long)]
    pub force: bool,
}

/// Adds an entry or lists the collection.
///
/// # Errors
/// `item_not_found`, empty text, ownership, lock and revision conflicts.
pub fn cmd_annotation(
    ctx: &Ctx,
    kind: AnnotationKind,
    args: &AnnotationArgs,
) -> Result<(MutationOutput, Vec<String>)> {
    let field = kind.field();
    let Some(text) = &args.add else {
        let ws = Workspace::open(ctx)?;
        let doc = read_item(&ws.tracker, &ws.settings, &ws.schema, &args.id)?;
        let all = list(doc.metadata.get(field));
        let id = doc.id().unwrap_or_default().to_string();
        return Ok((
            envelope(id, field, all.clone(), all.len(), None, false),
            Vec::new(),
        ));
    };
    let (m, index) = with_context(ctx, field, args.force, |mctx, _| {
        Ok(add_annotation(mctx, &args.id, kind, text)?)
    })?;
    let all = list(m.after.metadata.get(field));
    let total = all.len();
    let returned: Vec<Value> = if args.full_history {
        all
    } else {
        all.into_iter()
            .skip(index.saturating_sub(1))
            .take(1)
            .collect()
    };
    let receipt = json!({
        "action": "add",
        "entry_index": index,
        "changed_count": 1,
        "full_history_included": returned.len() == total,
    });
    let out = envelope(m.id.clone(), field, returned, total, Some(receipt), true);
    Ok((out, m.warnings))
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
    mutation: bool,
) -> MutationOutput {
    let count = returned.len();
    let has_more = count < total;
    let groups: Vec<Value> = if has_more && mutation {
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
