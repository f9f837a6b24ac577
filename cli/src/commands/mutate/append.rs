//! `pm append <id> [text]`: append text to an item's body.

use pm_engine::mutate::append_body;

use crate::args::item_id::ItemId;
use crate::ctx::Ctx;
use crate::failure::{CliError, Result, UsageKind};
use crate::mutation::{MutationOutput, ReceiptArgs, receipt_for, with_context};

/// Append text to an item's body (a blank line separates it from the existing text)
///
/// For entries several agents add at once, prefer `pm notes`: each note is its own row, so
/// concurrent branches merge without touching the same line.
#[derive(Debug, clap::Args)]
pub struct AppendArgs {
    /// The item.
    #[command(flatten)]
    pub item: ItemId,

    /// The text to append (the same as --body; - reads stdin)
    #[arg(value_name = "TEXT")]
    pub text: Option<String>,

    /// The text to append (- reads stdin)
    #[arg(long, visible_alias = "text", value_name = "TEXT")]
    pub body: Option<String>,

    /// The history entry's message
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,

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
/// No text or two texts, empty text, `item_not_found`, ownership, lock and revision conflicts.
pub fn cmd_append(ctx: &Ctx, args: &AppendArgs) -> Result<(MutationOutput, Vec<String>)> {
    let (id, operand) = args.item.with_next(args.text.as_deref())?;
    let text = match (operand, args.body.as_deref()) {
        (Some(_), Some(_)) => {
            return Err(usage(
                UsageKind::ConflictingArguments,
                "give the text once: TEXT or --body",
            ));
        }
        (None, None) => {
            return Err(usage(
                UsageKind::MissingRequiredArgument,
                "the text to append is required: TEXT or --body (- reads stdin)",
            ));
        }
        (Some("-"), _) | (_, Some("-")) => ctx.read_stdin()?,
        (Some(text), _) | (_, Some(text)) => text.to_string(),
    };
    let m = with_context(ctx, "append", args.force, |mctx, _| {
        Ok(append_body(mctx, id, &text, args.message.clone())?)
    })?;
    Ok((receipt_for(&m, &args.receipt), m.warnings))
}

fn usage(kind: UsageKind, detail: &str) -> CliError {
    CliError::Usage {
        kind,
        detail: detail.into(),
        flag: Some("--body".into()),
        value: None,
        suggestions: Box::new([]),
        allowed: Box::new([]),
    }
}
