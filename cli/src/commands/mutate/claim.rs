//! `pm claim <id>` and `pm release <id>`: take and give back ownership of an item.

use pm_engine::mutate::{claim, release};

use crate::ctx::Ctx;
use crate::failure::Result;
use crate::mutation::{ClaimOutput, MutationOutput, ReleaseOutput, output_item, with_context};

/// Claim an item: you become its assignee and claim principal
#[derive(Debug, clap::Args)]
pub struct ClaimArgs {
    /// The item id
    #[arg(value_name = "ID")]
    pub id: String,

    /// Take over an item another principal holds
    #[arg(long)]
    pub force: bool,
}

/// Release a claimed item: remove its assignee and claim principal
#[derive(Debug, clap::Args)]
pub struct ReleaseArgs {
    /// The item id
    #[arg(value_name = "ID")]
    pub id: String,

    /// Release an item another principal holds
    #[arg(long)]
    pub force: bool,
}

/// Claims the item.
///
/// # Errors
/// `already_claimed_by` (exit 4) without `--force`; lock and revision conflicts.
pub fn cmd_claim(ctx: &Ctx, args: &ClaimArgs) -> Result<(MutationOutput, Vec<String>)> {
    let m = with_context(ctx, "claim", args.force, |mctx, _| {
        Ok(claim(mctx, &args.id)?)
    })?;
    let previous = m.before.str_field("assignee").map(String::from);
    let output = ClaimOutput {
        item: output_item(&m.after.metadata),
        claimed_by: m.entry.author.clone(),
        forced: args.force && previous.as_deref().is_some_and(|p| p != m.entry.author),
        previous_assignee: previous,
    };
    Ok((MutationOutput::Claim(output), m.warnings))
}

/// Releases the item.
///
/// # Errors
/// `item_not_claimed`, ownership, lock and revision conflicts.
pub fn cmd_release(ctx: &Ctx, args: &ReleaseArgs) -> Result<(MutationOutput, Vec<String>)> {
    let m = with_context(ctx, "release", args.force, |mctx, _| {
        Ok(release(mctx, &args.id)?)
    })?;
    let output = ReleaseOutput {
        item: output_item(&m.after.metadata),
        released_by: m.entry.author.clone(),
        previous_assignee: m.before.str_field("assignee").map(String::from),
        forced: args.force,
    };
    Ok((MutationOutput::Release(output), m.warnings))
}
