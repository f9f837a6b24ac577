//! `pm update`: field flags, `--unset`, tag and acceptance-criteria additions, `--dep` and
//! `--stdin-json` become engine `FieldEdit`s applied to one item.

use pm_engine::mutate::{DependencySeed, FieldEdit, edits_from_json, split_list, update};

use crate::commands::mutate::create::stdin_document;
use crate::ctx::Ctx;
use crate::failure::Result;
use crate::mutation::{FieldFlags, MutationOutput, ReceiptArgs, receipt_for, with_context};

/// Update fields of an item
///
/// Example: pm update pm-a1b2 --status in_progress --add-tags urgent --unset deadline
#[derive(Debug, clap::Args)]
pub struct UpdateArgs {
    /// The item id
    #[arg(value_name = "ID")]
    pub id: String,

    /// New title
    #[arg(long, value_name = "TITLE")]
    pub title: Option<String>,

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

    /// Add a dependency: id=<id>,kind=<kind> or a bare id (repeatable)
    #[arg(long, value_name = "SPEC")]
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
    edits.extend(set("type", &args.type_name));
    edits.extend(args.fields.edits());
    let list = |raw: &[String]| raw.iter().flat_map(|r| split_list(r)).collect::<Vec<_>>();
    for key in list(&args.unset) {
        edits.push(FieldEdit::Unset(key));
    }
    if !args.add_tags.is_empty() {
        edits.push(FieldEdit::AddTags(list(&args.add_tags)));
    }
    if !args.remove_tags.is_empty() {
        edits.push(FieldEdit::RemoveTags(list(&args.remove_tags)));
    }
    edits.extend(args.add_ac.iter().cloned().map(FieldEdit::AddAcceptance));
    for dep in &args.dep {
        edits.push(FieldEdit::AddDependency(DependencySeed::parse(
            dep,
            "cli:update:dep",
        )?));
    }
    let m = with_context(ctx, "update", args.force, |mctx, _| {
        Ok(update(mctx, &args.id, &edits, args.message.clone())?)
    })?;
    Ok((receipt_for(&m, &args.receipt), m.warnings))
}
