//! `pm close <id> <reason>`: moves an item to the close status with a reason.

use pm_engine::Result;
use pm_engine::mutate::close;

use crate::ctx::Ctx;
use crate::mutation::{MutationOutput, ReceiptArgs, receipt_for, with_context};

/// Close an item with a reason
///
/// Sets closed_at and completed_at, records the reason and drops the assignee.
#[derive(Debug, clap::Args)]
pub struct CloseArgs {
    /// The item id
    #[arg(value_name = "ID")]
    pub id: String,

    /// Why the item is closed
    #[arg(value_name = "REASON")]
    pub reason: Option<String>,

    /// History message
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,

    /// Close an item another principal holds
    #[arg(long)]
    pub force: bool,

    /// Receipt flags.
    #[command(flatten)]
    pub receipt: ReceiptArgs,
}

/// Closes the item and returns its receipt.
///
/// # Errors
/// `item_already_closed`, a missing reason, ownership, lock and revision conflicts.
pub fn cmd_close(ctx: &Ctx, args: &CloseArgs) -> Result<(MutationOutput, Vec<String>)> {
    let reason = args.reason.clone().unwrap_or_default();
    let m = with_context(ctx, "close", args.force, |mctx, _| {
        close(mctx, &args.id, &reason, args.message.clone())
    })?;
    Ok((receipt_for(&m, &args.receipt), m.warnings))
}
