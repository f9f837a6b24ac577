//! `pm history-repair <id>`: bring an item's file and history back in line after an
//! interrupted mutation (see docs/mutations.md).

use pm_engine::Result;
use pm_engine::mutate::history_repair;

use crate::ctx::Ctx;
use crate::mutation::{MutationOutput, with_context};

/// Repair an item whose mutation was interrupted between the file write and the history append
///
/// Cuts a torn last history line, then appends one history_repair entry recording the item
/// file's state when the file is ahead of its history. Nothing else is rewritten.
#[derive(Debug, clap::Args)]
pub struct HistoryRepairArgs {
    /// The item id (a deleted item's id works too)
    #[arg(value_name = "ID")]
    pub id: String,

    /// Remove the item's lock even if it is stale and governance requires --force
    #[arg(long)]
    pub force: bool,
}

/// Repairs the item and returns the report.
///
/// # Errors
/// `item_not_found`, a chain that does not verify (not a torn write), lock and I/O errors.
pub fn cmd_history_repair(
    ctx: &Ctx,
    args: &HistoryRepairArgs,
) -> Result<(MutationOutput, Vec<String>)> {
    let report = with_context(ctx, "history-repair", args.force, |mctx, _| {
        history_repair(mctx, &args.id)
    })?;
    Ok((MutationOutput::Repair(report), Vec::new()))
}
