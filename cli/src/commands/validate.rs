//! `pm validate`: runs the tracker checks this implementation has (history drift so far) and
//! prints pm's validation envelope; `--strict-exit` turns warnings into exit 1.

use pm_engine::Result;
use pm_engine::read::validate::CheckName;
use pm_engine::read::{TrackerView, ValidateOptions, ValidateReport, validate};

use crate::ctx::Ctx;

/// Check the tracker: every history chain and every item file against its history
///
/// --check-history-drift replays every history stream (deleted items and the workspace stream
/// included), checks every before_hash and after_hash, reports torn last lines, and compares
/// each item file's hash with its stream's last after_hash. Without a --check-* flag every
/// available check runs; pm's other checks are listed under checks_not_implemented.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Verify history chains and compare item files with their history
    #[arg(long)]
    pub check_history_drift: bool,

    /// Keep counts and drop the per-item diagnostic lists
    #[arg(long, conflicts_with = "full")]
    pub counts: bool,

    /// Include the per-item diagnostic lists (the default)
    #[arg(long)]
    pub full: bool,

    /// Exit 1 when a warning or failure is reported; the report is still printed
    #[arg(long, visible_alias = "fail-on-warn")]
    pub strict_exit: bool,
}

/// The `validate` envelope.
pub type ValidateOutput = ValidateReport;

/// Validates the tracker of `ctx`.
///
/// # Errors
/// `not_in_project`; `io_error` when item folders or the history directory cannot be listed.
pub fn cmd_validate(ctx: &Ctx, args: &ValidateArgs) -> Result<ValidateOutput> {
    let mut checks = Vec::new();
    if args.check_history_drift {
        checks.push(CheckName::HistoryDrift);
    }
    let view = TrackerView::open(ctx.tracker()?, &ctx.settings_env())?;
    let options = ValidateOptions {
        checks,
        counts: args.counts,
        generated_at: ctx.clock.now_iso(),
    };
    validate(&view, &options)
}
