//! `pm append <id> <text>`: append text to an item's body.

use pm_engine::mutate::append_body;

use crate::ctx::Ctx;
use crate::failure::Result;
use crate::mutation::{MutationOutput, ReceiptArgs, receipt_for, with_context};

/// Append text to an item's body
#[derive(Debug, clap::Args)]
pub struct AppendArgs {
    /// The item id
    #[arg(value_name = "ID")]
    pub id: String,

    /// The text to append (a blank line separates it from existing text)
    #[arg(value_name = "TEXT")]
    pub text: String,

    /// Receipt flags.
    #[command(flatten)]
    pub receipt: ReceiptArgs,

    /// Bypass ownership checks and clear a stale item lock (a lock whose owner is alive is
    /// never broken)
    #[arg(long)]
    pub force: bool,
}

/// Appends the text and returns the receipt.
///
/// # Errors
/// Empty text, `item_not_found`, ownership, lock and revision conflicts.
pub fn cmd_append(ctx: &Ctx, args: &AppendArgs) -> Result<(MutationOutput, Vec<String>)> {
    let m = with_context(ctx, "append", args.force, |mctx, _| {
        Ok(append_body(mctx, &args.id, &args.text)?)
    })?;
    Ok((receipt_for(&m, &args.receipt), m.warnings))
}
