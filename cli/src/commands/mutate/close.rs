//! `pm close <id> [reason]`: moves an item to the close status with a reason, optionally
//! setting the closure fields inline and choosing the close-validation mode.

use pm_engine::mutate::{CloseRequest, close_item};

use crate::args::item_id::ItemId;
use crate::ctx::Ctx;
use crate::failure::Result;
use crate::mutation::{MutationOutput, ReceiptArgs, receipt_for, with_context};

/// Close an item with a reason
///
/// Sets closed_at and completed_at, records the reason and drops the assignee. Close
/// validation (governance.close_validation_default, or --validate-close) checks resolution,
/// expected_result and actual_result.
#[derive(Debug, clap::Args)]
pub struct CloseArgs {
    /// The item.
    #[command(flatten)]
    pub item: ItemId,

    /// Why the item is closed
    #[arg(value_name = "REASON")]
    pub reason: Option<String>,

    /// Close reason text (alias for the positional reason)
    #[arg(short = 'r', long = "reason", value_name = "TEXT")]
    pub reason_flag: Option<String>,

    /// Close reason text (alias for the positional reason)
    #[arg(long, value_name = "TEXT")]
    pub close_reason: Option<String>,

    /// When the work was actually done, if not at close time: an ISO instant or an offset such
    /// as -2d (closed_at stays the close time)
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub completed_at: Option<String>,

    /// Close as a duplicate of this item: records duplicate_of and fills the reason,
    /// resolution, expected and actual result you leave unset
    #[arg(short = 'd', long, value_name = "ID")]
    pub duplicate_of: Option<String>,

    /// History message
    #[arg(short = 'm', long, value_name = "TEXT")]
    pub message: Option<String>,

    /// Validate closure metadata before close: off, warn (the bare flag) or strict
    #[arg(long, value_name = "MODE", num_args = 0..=1, default_missing_value = "")]
    pub validate_close: Option<String>,

    /// Set the closure resolution summary inline
    #[arg(long, value_name = "TEXT")]
    pub resolution: Option<String>,

    /// Set the expected-result note inline
    #[arg(long, visible_alias = "expected", value_name = "TEXT")]
    pub expected_result: Option<String>,

    /// Set the actual-result note inline
    #[arg(long, visible_alias = "actual", value_name = "TEXT")]
    pub actual_result: Option<String>,

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
/// `item_already_closed`, a missing reason, `close_validation_missing_fields`, ownership, lock
/// and revision conflicts.
pub fn cmd_close(ctx: &Ctx, args: &CloseArgs) -> Result<(MutationOutput, Vec<String>)> {
    let (id, reason) = args.item.with_next(args.reason.as_deref())?;
    let request = CloseRequest {
        reason: [
            reason,
            args.reason_flag.as_deref(),
            args.close_reason.as_deref(),
        ]
        .into_iter()
        .flatten()
        .next()
        .unwrap_or_default()
        .to_string(),
        message: args.message.clone(),
        resolution: args.resolution.clone(),
        expected_result: args.expected_result.clone(),
        actual_result: args.actual_result.clone(),
        validate_close: args.validate_close.clone(),
        completed_at: args.completed_at.clone(),
        duplicate_of: args.duplicate_of.clone(),
    };
    let m = with_context(ctx, "close", args.force, |mctx, _| {
        Ok(close_item(mctx, id, &request)?)
    })?;
    Ok((receipt_for(&m, &args.receipt), m.warnings))
}
