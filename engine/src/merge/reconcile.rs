//! `pm merge reconcile`: after a merge, every stream that disagrees with its item file (a merge
//! made without the drivers, a scalar conflict, a union the replay cannot reproduce) and every
//! item with a pending merge receipt gets one `merge_reconcile` entry: a roll-forward patch to
//! the file when the chain verifies, a re-anchor marker when it breaks, an empty provenance
//! entry when it already agrees. Earlier lines are never rewritten; the receipts are then
//! marked `reconciled` in both stores. Discarded scalar values need `--force`.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::receipts::{Receipt, ReceiptState, ReceiptStore, ReceiptSummary};
use crate::error::{Error, Result};
use crate::history::HistoryEntry;
use crate::history::anchor::MERGE_RECONCILE_OP;
use crate::mutate::plan_verified;
use crate::mutate::{
    Locked, MutationContext, RepairAllReport, RepairAllStream, lock_item, reconciliation,
    repair_warnings, scan_drift,
};

/// The message of an entry that changes the replayed state.
pub const RECONCILE_MESSAGE: &str = "post-merge reconciliation of field-aware tracker history";
/// The message of a provenance-only entry (the chain already agrees with the file).
pub const PROVENANCE_MESSAGE: &str = "record field-aware branch merge provenance";

/// How to reconcile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReconcileOptions {
    /// Report what would be done; write nothing.
    pub dry_run: bool,
    /// The entries' `message` (default: pm's two messages).
    pub message: Option<String>,
    /// Accept receipts that discarded a scalar value.
    pub force: bool,
}

/// The receipts part of the report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReceiptsReport {
    /// Pending clone-local receipts before the run.
    pub pending_before: usize,
    /// Receipts marked reconciled (0 on a dry run).
    pub reconciled: usize,
    /// The pending receipts, hashes only.
    pub summaries: Vec<ReceiptSummary>,
}

/// What `merge reconcile` found and did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReconcileReport {
    /// The streams (pm's `history-repair --all` shape).
    pub repair: RepairAllReport,
    /// The receipts.
    pub receipts: ReceiptsReport,
}

/// Reconciles every drifted stream and every item with a pending receipt.
///
/// # Errors
/// `merge_reconcile_discards_require_acceptance` when a pending receipt discarded a value and
/// neither `--force` nor `--dry-run` is given; listing and receipt I/O errors. A stream that
/// fails is a `failed` row, not an error.
pub fn merge_reconcile(ctx: &MutationContext, opts: &ReconcileOptions) -> Result<ReconcileReport> {
    let store = ReceiptStore::locate(ctx.tracker.root(), ctx.tracker.workspace_root());
    let pending: Vec<Receipt> = store
        .list()?
        .into_iter()
        .filter(|r| r.state == ReceiptState::Pending)
        .collect();
    let lossy: Vec<&Receipt> = pending.iter().filter(|r| !r.decisions.is_empty()).collect();
    if !lossy.is_empty() && !opts.force && !opts.dry_run {
        return Err(Error::MergeDiscardsUnaccepted {
            count: lossy.len(),
            reviews: lossy
                .iter()
                .map(|r| {
                    let fields: Vec<&str> = r.decisions.iter().map(|d| d.field.as_str()).collect();
                    format!(
                        "Review receipt {} for {}: {}.",
                        r.id,
                        r.item_id,
                        fields.join(", ")
                    )
                })
                .collect(),
        });
    }
    let scan = scan_drift(ctx)?;
    let mut ids: Vec<String> = scan.drifted.clone();
    ids.extend(pending.iter().map(|r| r.item_id.clone()));
    ids.sort();
    ids.dedup();
    let mut repair = RepairAllReport::of_scan(&scan, opts.dry_run, ctx.clock.now_iso());
    let mut reconciled_items = Vec::new();
    for id in &ids {
        let receipts: Vec<&Receipt> = pending.iter().filter(|r| &r.item_id == id).collect();
        let row = match lock_item(ctx, id).and_then(|l| reconcile_locked(l, &receipts, opts)) {
            Ok(row) => row,
            Err(err) => RepairAllStream::failed(id, &err),
        };
        if row.outcome == "repaired" {
            reconciled_items.push(id.clone());
        }
        repair.push(row);
    }
    let mut reconciled = 0;
    if !opts.dry_run {
        let now = ctx.clock.now_iso();
        for receipt in pending
            .iter()
            .filter(|r| reconciled_items.contains(&r.item_id))
        {
            store.mark_reconciled(&receipt.id, &now)?;
            reconciled += 1;
        }
    }
    Ok(ReconcileReport {
        repair,
        receipts: ReceiptsReport {
            pending_before: pending.len(),
            reconciled,
            summaries: pending.iter().map(Receipt::summary).collect(),
        },
    })
}

/// Plans (and unless dry-running, appends) the entry of one locked item.
fn reconcile_locked(
    locked: Locked<'_, '_>,
    receipts: &[&Receipt],
    opts: &ReconcileOptions,
) -> Result<RepairAllStream> {
    let entries = &locked.stream.entries;
    let plan = plan_verified(entries, &locked.before, &locked.before_hash);
    let torn = locked.stream.torn_tail.is_some();
    if plan.is_none() && receipts.is_empty() && !torn {
        return Ok(row(&locked.id, "skipped_clean", false, None, Vec::new()));
    }
    let report = plan
        .as_ref()
        .and_then(|p| reconciliation(entries, p, &locked.before));
    let warnings = repair_warnings(true, report.as_ref());
    let mut context = Map::new();
    if !receipts.is_empty() {
        let summaries: Vec<ReceiptSummary> = receipts.iter().map(|r| r.summary()).collect();
        context.insert("merge".into(), json!({ "receipts": summaries }));
    }
    let (patch, before, after, default_message) = match &plan {
        Some(p) => {
            if let Some(Value::Object(marker)) = &p.context {
                context.extend(marker.clone());
            }
            (
                p.patch.clone(),
                p.before_hash.clone(),
                p.after_hash.clone(),
                RECONCILE_MESSAGE,
            )
        }
        None => {
            let hash = locked.before_hash.clone();
            (Vec::new(), hash.clone(), hash, PROVENANCE_MESSAGE)
        }
    };
    let message = opts
        .message
        .clone()
        .filter(|m| !m.trim().is_empty())
        .unwrap_or_else(|| default_message.to_string());
    let entry = reconcile_entry(&locked, patch, before, after, message, context);
    let id = locked.id.clone();
    let needs_entry = plan.is_some() || !receipts.is_empty();
    if !opts.dry_run {
        locked.record_entry(needs_entry.then_some(entry))?;
    }
    Ok(row(&id, "repaired", plan.is_some(), report, warnings))
}

fn row(
    id: &str,
    outcome: &'static str,
    with_item: bool,
    reconciliation: Option<crate::mutate::Reconciliation>,
    warnings: Vec<String>,
) -> RepairAllStream {
    RepairAllStream {
        id: id.to_string(),
        outcome,
        entries_rehashed: Some(0),
        entries_patch_repaired: Some(0),
        reconciled_with_item: Some(with_item),
        reconciliation,
        warnings: Some(warnings),
        error: None,
    }
}

/// pm's `merge_reconcile` line layout: `message`, then `item_hash_version`, then `context`;
/// no `author_source`.
fn reconcile_entry(
    locked: &Locked<'_, '_>,
    patch: Vec<crate::history::PatchOp>,
    before: String,
    after: String,
    message: String,
    context: Map<String, Value>,
) -> HistoryEntry {
    let mut entry = HistoryEntry::new(
        locked.now.clone(),
        locked.ctx.author.name.clone(),
        MERGE_RECONCILE_OP,
        patch,
        before,
        after,
    );
    entry.item_hash_version = None;
    entry.message = Some(message);
    entry
        .extra
        .insert("item_hash_version".into(), Value::from(2));
    if !context.is_empty() {
        entry.extra.insert("context".into(), Value::Object(context));
    }
    entry
}
