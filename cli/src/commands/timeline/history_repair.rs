//! `pm history-repair <id> | --all`: bring item histories back in line with their files after an
//! interrupted write, a hand edit or a hand merge (see docs/mutations.md).

use pm_engine::mutate::{RepairOptions, history_repair, history_repair_all};

use crate::ctx::Ctx;
use crate::failure::{CliError, Result, UsageKind};
use crate::mutation::{MutationOutput, with_context};

/// Repair item histories that disagree with their files
///
/// Cuts a torn last history line, then appends the one history_repair entry a stream needs:
/// a roll-forward to the item file when the chain verifies but the file is ahead of it (an
/// interrupted write or a hand edit), or a re-anchor marker when the chain itself breaks (a
/// hand-merged stream). Earlier lines and the item file are never rewritten.
#[derive(Debug, clap::Args)]
pub struct HistoryRepairArgs {
    /// The item id (a deleted item's id works too); omit it with --all
    #[arg(value_name = "ID", required_unless_present_any = ["all", "id_flag"])]
    pub id: Option<String>,

    /// The item id, as a flag
    #[arg(long = "id", value_name = "ID", conflicts_with = "id")]
    pub id_flag: Option<String>,

    /// Repair every stream that disagrees with its item, each under its own lock
    #[arg(long, conflicts_with_all = ["id", "id_flag"])]
    pub all: bool,

    /// Report what would be repaired without writing anything
    #[arg(long)]
    pub dry_run: bool,

    /// The message of the repair entry (default: a summary of the repair)
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,

    /// Remove the item's lock even if it is stale and governance requires --force
    #[arg(long)]
    pub force: bool,
}

/// Repairs one item or all and returns the report.
///
/// # Errors
/// `item_not_found`, a stream readers reject, lock, path and I/O errors.
pub fn cmd_history_repair(
    ctx: &Ctx,
    args: &HistoryRepairArgs,
) -> Result<(MutationOutput, Vec<String>)> {
    let opts = RepairOptions {
        dry_run: args.dry_run,
        message: args.message.clone(),
    };
    if args.all {
        let report = with_context(ctx, "history-repair", args.force, |mctx, _| {
            Ok(history_repair_all(mctx, &opts)?)
        })?;
        return Ok((MutationOutput::RepairAll(Box::new(report)), Vec::new()));
    }
    let Some(id) = args.id.as_deref().or(args.id_flag.as_deref()) else {
        return Err(CliError::Usage {
            kind: UsageKind::MissingRequiredArgument,
            detail: "history-repair: provide an item <id> or pass --all".into(),
            flag: Some("<ID>".into()),
            value: None,
            suggestions: Box::new([]),
            allowed: Box::new([]),
        });
    };
    let report = with_context(ctx, "history-repair", args.force, |mctx, _| {
        Ok(history_repair(mctx, id, &opts)?)
    })?;
    Ok((MutationOutput::Repair(Box::new(report)), Vec::new()))
}
