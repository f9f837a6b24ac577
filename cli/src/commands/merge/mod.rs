//! `pm merge`: install drivers, the drivers git calls, reconcile and report.
//!
//! TEMPORARY (branch `mergeb`): this file only routes `driver history`, `reconcile` and
//! `report` to their modules so they run end to end; the real clap surface, `install` and the
//! item/json/relationship drivers come from branch `mergea`, whose `mod.rs` replaces this one
//! (keep its `MergeArgs`, add the three `pub mod` lines and the three match arms below).

pub mod history_driver;
pub mod reconcile;
pub mod report;

use std::path::PathBuf;

use serde_json::Value;

use crate::clock_reads::ReadClock;
use crate::ctx::Ctx;
use crate::failure::{CliError, Result, UsageKind};

/// Install merge drivers, reconcile or report post-merge history, or run a field-aware driver
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// Merge subcommand: install, reconcile, report, driver
    #[arg(
        value_parser = ["report", "reconcile", "install", "driver"],
        hide_possible_values = true
    )]
    pub subcommand: String,
    /// driver only: artifact class to merge (item, history, relationship, json)
    pub artifact: Option<String>,
    /// driver only: common-ancestor file path (git %O)
    pub base: Option<PathBuf>,
    /// driver only: current-branch file path (git %A)
    pub ours: Option<PathBuf>,
    /// driver only: other-branch file path (git %B)
    pub theirs: Option<PathBuf>,
    /// install/reconcile: preview changes without writing
    #[arg(long)]
    pub dry_run: bool,
    /// reconcile only: audit message recorded on repaired history streams
    #[arg(long, value_name = "text")]
    pub message: Option<String>,
    /// reconcile only: permit the underlying audited history ownership override
    #[arg(long)]
    pub force: bool,
    /// report only: include clone-local receipts already recorded in history
    #[arg(long)]
    pub include_reconciled: bool,
    /// driver only: write the merged content to this path instead of the ours path
    #[arg(long, value_name = "path")]
    pub output: Option<PathBuf>,
    /// driver only: original repository-relative path supplied by git as %P
    #[arg(long, value_name = "path")]
    pub item_path: Option<String>,
    /// driver only: side that wins unresolvable conflicts (ours|theirs; default ours)
    #[arg(long, value_name = "side", default_value = "ours")]
    pub prefer: String,
}

fn to_value(value: &impl serde::Serialize) -> Result<Value> {
    serde_json::to_value(value)
        .map_err(|e| pm_engine::Error::internal(format!("merge output: {e}")).into())
}

fn unsupported(what: &str) -> CliError {
    CliError::Usage {
        kind: UsageKind::MissingRequiredArgument,
        detail: format!("merge: {what} is not available on this branch"),
        flag: None,
        value: Some(what.to_string()),
        suggestions: Box::new([]),
        allowed: Box::new([]),
    }
}

/// Runs `pm merge …` and returns its document.
///
/// # Errors
/// Whatever the subcommand returns.
pub fn cmd_merge(ctx: &Ctx, args: &MergeArgs) -> Result<Value> {
    match (args.subcommand.as_str(), args.artifact.as_deref()) {
        ("reconcile", _) => to_value(&reconcile::run(
            ctx,
            args.dry_run,
            args.message.clone(),
            args.force,
        )?),
        ("report", _) => to_value(&report::run(ctx, args.include_reconciled)?),
        ("driver", Some("history")) => {
            let (Some(base), Some(ours), Some(theirs)) = (&args.base, &args.ours, &args.theirs)
            else {
                return Err(unsupported("driver history without %O %A %B"));
            };
            to_value(&history_driver::run(
                &ctx.cwd,
                base,
                ours,
                theirs,
                args.output.as_deref(),
                &args.prefer,
                ReadClock::new(&ctx.clock).stamp(),
            )?)
        }
        (other, _) => Err(unsupported(other)),
    }
}
