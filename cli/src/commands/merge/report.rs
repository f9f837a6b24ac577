//! `pm merge report [--include-reconciled]`: lists the clone-local merge receipts (values
//! included; the tracker's hash-only copies when the clone has none), pending ones only unless
//! asked.

use pm_engine::merge::receipts::{Receipt, ReceiptState, ReceiptStore};
use serde::Serialize;

use crate::ctx::Ctx;
use crate::failure::Result;

/// The result of `pm merge report` (pm's layout).
#[derive(Debug, Serialize)]
pub struct ReportOutput {
    /// Always true.
    pub ok: bool,
    /// Receipts listed.
    pub count: usize,
    /// The receipts, oldest first.
    pub receipts: Vec<Receipt>,
    /// When the report was made.
    pub generated_at: String,
}

/// Lists the receipts of the tracker of `ctx`.
///
/// # Errors
/// `not_in_project`; I/O errors listing the receipt folders.
pub fn run(ctx: &Ctx, include_reconciled: bool) -> Result<ReportOutput> {
    let tracker = ctx.tracker()?;
    let store = ReceiptStore::locate(tracker.root(), tracker.workspace_root());
    let receipts: Vec<Receipt> = store
        .list()?
        .into_iter()
        .filter(|r| include_reconciled || r.state == ReceiptState::Pending)
        .collect();
    Ok(ReportOutput {
        ok: true,
        count: receipts.len(),
        receipts,
        generated_at: crate::clock_reads::ReadClock::new(&ctx.clock).stamp(),
    })
}
