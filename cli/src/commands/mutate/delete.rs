//! `pm delete <id>` and `pm restore <id> <version>`: remove an item (its history stays) and
//! rebuild a past version from history.

use pm_engine::Error;
use pm_engine::mutate::{RestoreTarget, delete, restore};
use pm_engine::timestamp::parse_timestamp;

use crate::ctx::Ctx;
use crate::failure::{CliError, Result, UsageKind};
use crate::mutation::{MutationOutput, ReceiptArgs, receipt_for, with_context};

/// Delete an item; its history stream is kept so that it can be restored
#[derive(Debug, clap::Args)]
pub struct DeleteArgs {
    /// The item id
    #[arg(value_name = "ID")]
    pub id: String,

    /// History message
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,

    /// Delete an item another principal holds
    #[arg(long)]
    pub force: bool,

    /// Receipt flags.
    #[command(flatten)]
    pub receipt: ReceiptArgs,
}

/// Restore an item (also a deleted one) to a version rebuilt from its history
#[derive(Debug, clap::Args)]
pub struct RestoreArgs {
    /// The item id
    #[arg(value_name = "ID")]
    pub id: String,

    /// History version (1 = as created) or an ISO instant
    #[arg(value_name = "VERSION")]
    pub version: Option<String>,

    /// History version or ISO instant, instead of the operand
    #[arg(long, value_name = "VERSION")]
    pub at: Option<String>,

    /// History message
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,

    /// Restore an item another principal holds
    #[arg(long)]
    pub force: bool,

    /// Receipt flags.
    #[command(flatten)]
    pub receipt: ReceiptArgs,
}

/// Deletes the item.
///
/// # Errors
/// `item_not_found`, ownership, lock and revision conflicts.
pub fn cmd_delete(ctx: &Ctx, args: &DeleteArgs) -> Result<(MutationOutput, Vec<String>)> {
    let m = with_context(ctx, "delete", args.force, |mctx, _| {
        Ok(delete(mctx, &args.id, args.message.clone())?)
    })?;
    Ok((receipt_for(&m, &args.receipt), m.warnings))
}

/// Restores the item.
///
/// # Errors
/// A missing or malformed version, `item_not_found`, replay failures, lock and revision
/// conflicts.
pub fn cmd_restore(ctx: &Ctx, args: &RestoreArgs) -> Result<(MutationOutput, Vec<String>)> {
    let raw = args
        .at
        .as_deref()
        .or(args.version.as_deref())
        .ok_or_else(|| CliError::Usage {
            kind: UsageKind::MissingRequiredArgument,
            detail: "restore needs a VERSION operand or --at".into(),
            flag: Some("VERSION".into()),
            value: None,
            suggestions: Box::new([]),
            allowed: Box::new([]),
        })?;
    let target = match raw.trim().parse::<usize>() {
        Ok(v) => RestoreTarget::Version(v),
        Err(_) => {
            RestoreTarget::At(parse_timestamp(raw).ok_or_else(|| Error::InvalidArgument {
                field: "--at".into(),
                value: raw.into(),
                reason: "expected a history version number or an ISO instant".into(),
                allowed: Vec::new(),
            })?)
        }
    };
    let m = with_context(ctx, "restore", args.force, |mctx, _| {
        Ok(restore(mctx, &args.id, target, args.message.clone())?)
    })?;
    Ok((receipt_for(&m, &args.receipt), m.warnings))
}
