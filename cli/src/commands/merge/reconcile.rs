//! `pm merge reconcile [--dry-run] [--message <text>] [--force]`: records the post-merge repair
//! of every drifted history stream and every pending merge receipt
//! (`pm_engine::merge::reconcile`), then validates history drift and storage integrity.

use pm_engine::merge::reconcile::{ReceiptsReport, ReconcileOptions, merge_reconcile};
use pm_engine::mutate::RepairAllReport;
use pm_engine::read::validate::{CheckName, SUMMARY_LIMIT};
use pm_engine::read::{TrackerView, ValidateOptions, validate};
use serde::Serialize;
use serde_json::Value;

use crate::clock_reads::ReadClock;
use crate::ctx::Ctx;
use crate::failure::Result;
use crate::mutation::with_context;
use crate::render::Format;

const DRY_RUN_GUIDANCE: [&str; 2] = [
    "Review repair.streams, then rerun pm merge reconcile without --dry-run to apply audited repairs.",
    "No Git hook is installed automatically; invoke this command from an explicit post-merge hook only when your repository policy opts in.",
];
const APPLIED_GUIDANCE: [&str; 2] = [
    "Reconciliation is complete; commit changed history streams with the merge result.",
    "Rerun pm merge reconcile --dry-run after future tracker-data merges as a non-mutating integrity check.",
];

/// The result of `pm merge reconcile` (pm's layout).
#[derive(Debug, Serialize)]
pub struct ReconcileOutput {
    /// No stream failed.
    pub ok: bool,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// The streams (the `history-repair --all` shape).
    pub repair: RepairAllReport,
    /// The receipts.
    pub receipts: ReceiptsReport,
    /// `validate --check-history-drift --check-storage-integrity` after the run.
    pub validation: Value,
    /// What to do next.
    pub guidance: [&'static str; 2],
    /// When the run happened.
    pub generated_at: String,
}

/// Reconciles the tracker of `ctx`.
///
/// # Errors
/// `merge_reconcile_discards_require_acceptance` (exit 4) without `force` when a receipt
/// discarded a value; `not_in_project`; listing, lock and I/O errors.
pub fn run(
    ctx: &Ctx,
    dry_run: bool,
    message: Option<String>,
    force: bool,
) -> Result<ReconcileOutput> {
    let opts = ReconcileOptions {
        dry_run,
        message,
        force,
    };
    let report = with_context(ctx, "merge", force, |mctx, _| {
        Ok(merge_reconcile(mctx, &opts)?)
    })?;
    let validation = validation(ctx)?;
    Ok(ReconcileOutput {
        ok: !report.repair.has_failures(),
        dry_run,
        generated_at: report.repair.generated_at.clone(),
        repair: report.repair,
        receipts: report.receipts,
        validation,
        guidance: if dry_run {
            DRY_RUN_GUIDANCE
        } else {
            APPLIED_GUIDANCE
        },
    })
}

/// Runs the two checks pm reports after a reconcile, listing at most 5 ids per diagnostic in
/// TOON (all under `--json`), as `pm validate` does.
fn validation(ctx: &Ctx) -> Result<Value> {
    let view = TrackerView::open(ctx.tracker()?, &ctx.settings_env())?;
    let format = ctx.read_output.resolve_format(ctx.format, None);
    let now_ms = ReadClock::new(&ctx.clock).instant();
    let options = ValidateOptions {
        checks: vec![CheckName::HistoryDrift, CheckName::StorageIntegrity],
        stale_blockers: false,
        counts: false,
        diagnostic_limit: (format != Format::Json).then_some(SUMMARY_LIMIT),
        generated_at: pm_engine::clock::format_iso_ms(now_ms),
        now_ms,
    };
    let report = validate(&view, &options)?;
    Ok(serde_json::to_value(&report)
        .map_err(|e| pm_engine::Error::internal(format!("validate report: {e}")))?)
}
