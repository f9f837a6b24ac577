//! `pm item <subcommand>`: item lifecycle operations spelled as pm spells them
//! (`pm item reopen <id> <reason>`).

use pm_engine::mutate::reopen;

use crate::ctx::Ctx;
use crate::failure::Result;
use crate::mutation::{MutationOutput, ReceiptArgs, receipt_for, with_context};

/// Manage item lifecycle transitions
#[derive(Debug, clap::Args)]
pub struct ItemArgs {
    /// The item operation.
    #[command(subcommand)]
    pub command: ItemCommand,
}

/// Item subcommands.
#[derive(Debug, clap::Subcommand)]
#[allow(missing_docs)]
pub enum ItemCommand {
    Reopen(ReopenArgs),
}

/// Reopen a closed or canceled item, recording why it recurred
#[derive(Debug, clap::Args)]
pub struct ReopenArgs {
    /// The item id
    #[arg(value_name = "ID")]
    pub id: String,

    /// Why the item is reopened (recorded as the recurrence reason)
    #[arg(value_name = "REASON")]
    pub reason: String,

    /// Target status: the open status (default) or the in-progress status
    #[arg(long, value_name = "STATUS")]
    pub to: Option<String>,

    /// Reopen an item another principal holds
    #[arg(long)]
    pub force: bool,

    /// Receipt flags.
    #[command(flatten)]
    pub receipt: ReceiptArgs,
}

/// Runs an item subcommand and returns its receipt.
///
/// # Errors
/// `item_not_closed`, a missing reason, ownership, lock and revision conflicts.
pub fn cmd_item(ctx: &Ctx, args: &ItemArgs) -> Result<(MutationOutput, Vec<String>)> {
    match &args.command {
        ItemCommand::Reopen(args) => {
            let m = with_context(ctx, "reopen", args.force, |mctx, _| {
                Ok(reopen(mctx, &args.id, &args.reason, args.to.as_deref())?)
            })?;
            Ok((receipt_for(&m, &args.receipt), m.warnings))
        }
    }
}
