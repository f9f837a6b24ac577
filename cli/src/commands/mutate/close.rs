//! `pm close <id> <reason>`: moves an item to the close status with a reason, optionally
//! setting the closure fields inline and choosing the close-validation mode.

use pm_engine::mutate::{CloseRequest, close_item};

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
    /// The item id
    #[arg(value_name = "ID")]
    pub id: String,

    /// Why the item is closed
    #[arg(value_name = "REASON")]
    pub reason: Option<String>,

    /// Close reason text (alias for the positional reason)
    #[arg(short = 'r', long = "reason", value_name = "TEXT")]
    pub reason_flag: Option<String>,

    /// Close reason text (alias for the positional reason)
    #[arg(long, value_name = "TEXT")]
    pub close_reason: Option<String>,

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
    let request = CloseRequest {
        reason: [&args.reason, &args.reason_flag, &args.close_reason]
            .into_iter()
            .find_map(Clone::clone)
            .unwrap_or_default(),
        message: args.message.clone(),
        resolution: args.resolution.clone(),
        expected_result: args.expected_result.clone(),
        actual_result: args.actual_result.clone(),
        validate_close: args.validate_close.clone(),
    };
    let m = with_context(ctx, "close", args.force, |mctx, _| {
        Ok(close_item(mctx, &args.id, &request)?)
    })?;
    Ok((receipt_for(&m, &args.receipt), m.warnings))
}
