//! `pm update`: field flags, `--unset`, `--clear-<collection>`, the body, tag and
//! acceptance-criteria edits, `--dep` and `--stdin-json` become engine `FieldEdit`s applied to
//! one item.

use pm_engine::mutate::{DependencySeed, FieldEdit, edits_from_json, split_list, update};
use serde_json::Value;

use crate::args::item_id::ItemId;
use crate::commands::mutate::create::{ClearFlags, read_body_file, stdin_document};
use crate::ctx::Ctx;
use crate::failure::Result;
use crate::mutation::{FieldFlags, MutationOutput, ReceiptArgs, receipt_for, with_context};

/// Update fields of an item
///
/// Example: pm update pm-a1b2 --status in_progress --add-tags urgent --unset deadline
#[derive(Debug, clap::Args)]
pub struct UpdateArgs {
    /// The item.
    #[command(flatten)]
    pub item: ItemId,

    /// New title
    #[arg(short = 't', long, value_name = "TITLE")]
    pub title: Option<String>,

    /// Replace the markdown body (an empty string empties it)
    #[arg(short = 'b', long, value_name = "TEXT", conflicts_with = "body_file")]
    pub body: Option<String>,

    /// Replace the markdown body with the contents of this file
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<std::path::PathBuf>,

    /// Correct when a closed or canceled item's work was done: an ISO instant or an offset
    /// such as -2d
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub completed_at: Option<String>,

    /// New type (moves the file to the type's folder)
    #[arg(long = "type", value_name = "TYPE")]
    pub type_name: Option<String>,

    /// Remove these fields (comma-separated, repeatable)
    #[arg(long, value_name = "FIELDS")]
    pub unset: Vec<String>,

    /// Add tags (comma-separated, repeatable)
    #[arg(long, visible_alias = "add-tag", value_name = "TAGS")]
    pub add_tags: Vec<String>,

    /// Remove tags (comma-separated, repeatable)
    #[arg(long, visible_alias = "remove-tag", value_name = "TAGS")]
    pub remove_tags: Vec<String>,

    /// Append an acceptance criterion (repeatable)
    #[arg(long, value_name = "TEXT")]
    pub add_ac: Vec<String>,

    /// Remove the acceptance criterion with exactly this text; one that matches nothing
    /// refuses the update (repeatable; applied before --add-ac)
    #[arg(long, value_name = "TEXT")]
    pub remove_ac: Vec<String>,

    /// Add a dependency: id=<id>,kind=<kind> or a bare id (repeatable)
    #[arg(long, value_name = "SPEC", conflicts_with = "clear_deps")]
    pub dep: Vec<String>,

    /// History message
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,

    /// Read field values as a JSON object from stdin
    #[arg(long)]
    pub stdin_json: bool,

    /// Change an item another principal holds
    #[arg(long)]
    pub force: bool,

    /// Collections to empty.
    #[command(flatten)]
    pub clear: ClearFlags,

    /// Field flags.
    #[command(flatten)]
    pub fields: FieldFlags,

    /// Receipt flags.
    #[command(flatten)]
    pub receipt: ReceiptArgs,
}

/// Updates the item and returns its receipt.
///
/// # Errors
/// The engine's refusals: `item_not_found`, invalid values, unresolved references, ownership,
/// lock and revision conflicts.
pub fn cmd_update(ctx: &Ctx, args: &UpdateArgs) -> Result<(MutationOutput, Vec<String>)> {
    let mut edits = Vec::new();
    if args.stdin_json {
        edits.extend(edits_from_json(&stdin_document(ctx)?));
    }
    let set = |key: &str, value: &Option<String>| {
        value.as_ref().map(|v| FieldEdit::Set {
            key: key.into(),
            value: v.clone(),
        })
    };
    edits.extend(set("title", &args.title));
    if let Some(body) = body_text(args)? {
        edits.push(FieldEdit::Raw {
            key: "body".into(),
            value: Value::String(body),
        });
    }
    edits.extend(args.completed_at.clone().map(FieldEdit::CompletedAt));
    edits.extend(set("type", &args.type_name));
    edits.extend(args.fields.edits());
    let list = |raw: &[String]| raw.iter().flat_map(|r| split_list(r)).collect::<Vec<_>>();
    for key in list(&args.unset) {
        edits.push(FieldEdit::Unset(key));
    }
    edits.extend(args.clear.fields().map(|k| FieldEdit::Unset(k.into())));
    if !args.add_tags.is_empty() {
        edits.push(FieldEdit::AddTags(list(&args.add_tags)));
    }
    if !args.remove_tags.is_empty() {
        edits.push(FieldEdit::RemoveTags(list(&args.remove_tags)));
    }
    edits.extend(
        args.remove_ac
            .iter()
            .cloned()
            .map(FieldEdit::RemoveAcceptance),
    );
    edits.extend(args.add_ac.iter().cloned().map(FieldEdit::AddAcceptance));
    for dep in &args.dep {
        edits.push(FieldEdit::AddDependency(DependencySeed::parse(
            dep,
            "cli:update:dep",
        )?));
    }
    let m = with_context(ctx, "update", args.force, |mctx, _| {
        Ok(update(
            mctx,
            args.item.get()?,
            &edits,
            args.message.clone(),
        )?)
    })?;
    Ok((receipt_for(&m, &args.receipt), m.warnings))
}

/// The new body: `--body` as typed, or the contents of `--body-file`.
fn body_text(args: &UpdateArgs) -> Result<Option<String>> {
    match &args.body_file {
        Some(path) => read_body_file(path).map(Some),
        None => Ok(args.body.clone()),
    }
}
