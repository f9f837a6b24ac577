//! `history-repair`: bring an item's stream back in line with its file, one item or all. Under
//! the item lock a torn last line is cut, then the stream gets the one `history_repair` entry it
//! needs ([`super::reconcile`]): a roll-forward patch when the chain verifies but the file is
//! ahead of it, a re-anchor marker when the chain itself breaks. Earlier lines are never
//! rewritten and the item file is never changed; `--dry-run` reports without writing.

use serde::Serialize;

use super::MutationContext;
use super::protocol::{Locked, lock_item, resolve_with_history};
use super::reconcile::{DriftKind, Reconcile};
use crate::error::{Error, Result};
use crate::history::{HistoryEntry, item_patch, replay_to, verify_chain};
use crate::item::ItemDoc;
use crate::read::history_view::changed_field;

/// How to repair.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepairOptions {
    /// Report what would be done; write nothing.
    pub dry_run: bool,
    /// The repair entry's `message` (default: a summary of what was done).
    pub message: Option<String>,
}

/// The stream part of a repair report (pm's `history` object).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RepairHistory {
    /// The stream file.
    pub path: String,
    /// Entries read.
    pub entries_scanned: usize,
    /// Whether the chain failed to verify before the repair.
    pub chain_drift_before: bool,
    /// Entries rewritten with new hashes: always 0 (this pm never rewrites earlier lines; a
    /// break is re-anchored by a marker instead).
    pub entries_rehashed: usize,
    /// Entries whose patch was rewritten: always 0, as above.
    pub entries_patch_repaired: usize,
    /// `replace` operations turned into `add`: always 0, as above.
    pub converted_replace_to_add: usize,
    /// Operations skipped: always 0, as above.
    pub skipped_ops: usize,
    /// Whether the repair entry takes the chain to the on-disk item.
    pub reconciled_with_item: bool,
    /// Whether a repair entry was (or, on a dry run, would be) appended.
    pub audit_entry_added: bool,
    /// Whether the stream verifies after the repair.
    pub verify_ok: bool,
    /// Chain issues left after the repair (`kind:entry_N`).
    pub verify_errors: Vec<String>,
    /// The 1-based line of a torn last line that was cut, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torn_line_removed: Option<usize>,
    /// The entries a re-anchor marker acknowledges (`from_entry`, `through_entry`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reanchored: Option<[usize; 2]>,
}

/// The item part of a repair report (pm's `item` object).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RepairItem {
    /// Whether the item file exists.
    pub exists: bool,
    /// The item file, when it exists.
    pub path: Option<String>,
    /// Whether the file's hash equalled the stream's last `after_hash` before the repair.
    pub matched_chain_before: Option<bool>,
}

/// One history event whose replayed effect the repair overwrites with the on-disk state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DiscardedEvent {
    /// 1-based entry number.
    pub index: usize,
    /// Its `ts`.
    pub ts: String,
    /// Its author.
    pub author: String,
    /// Its op.
    pub op: String,
    /// The reconciled fields it last wrote.
    pub fields: Vec<String>,
}

/// What reconciling with the on-disk item overwrites (pm's `reconciliation` report).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Reconciliation {
    /// Fields the repair entry changes.
    pub reconciled_field_count: usize,
    /// Their names, sorted.
    pub reconciled_fields: Vec<String>,
    /// Reconciled fields whose replayed value some history event wrote (now reverted).
    pub reverted_field_count: usize,
    /// Their names, sorted.
    pub reverted_fields: Vec<String>,
    /// The newest event that last wrote each reverted field, in stream order.
    pub discarded_events: Vec<DiscardedEvent>,
    /// The distinct authors of those events, sorted.
    pub discarded_authors: Vec<String>,
    /// Reverted fields whose on-disk value an older event wrote (the repair brings it back).
    pub preserved_field_count: usize,
    /// Their names, sorted.
    pub preserved_fields: Vec<String>,
    /// Those older events, in stream order.
    pub preserved_events: Vec<DiscardedEvent>,
    /// Their distinct authors, sorted.
    pub preserved_authors: Vec<String>,
    /// How to get a discarded value back.
    pub recovery_hint: String,
}

/// What `history-repair` found and did for one item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RepairReport {
    /// The item id.
    pub id: String,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// Whether the stream needed (or, on a dry run, needs) a change.
    pub changed: bool,
    /// The stream.
    pub history: RepairHistory,
    /// The item file.
    pub item: RepairItem,
    /// What reconciling overwrites, when it overwrites recorded events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reconciliation: Option<Reconciliation>,
    /// Warnings, sorted.
    pub warnings: Vec<String>,
    /// When the repair ran.
    pub generated_at: String,
    /// The item's revision after the repair (`item_hash`).
    #[serde(skip)]
    pub item_hash: String,
}

const RECOVERY_HINT: &str = "Reconciliation keeps the on-disk item and overwrites these replayed mutations. To recover one, inspect it with pm history <id> --diff --field <field>, then re-apply the lost value with pm update.";

/// Repairs the stream of one item (a deleted item's id works too).
///
/// # Errors
/// `item_not_found` when neither a file nor a stream exists; the stream's reader errors
/// (`history_invalid_json`, `history_merge_conflict_markers_detected`: fix those lines by hand
/// first); lock, path and I/O errors.
pub fn history_repair(
    ctx: &MutationContext,
    raw_id: &str,
    opts: &RepairOptions,
) -> Result<RepairReport> {
    let id = resolve_with_history(ctx, raw_id)?;
    let locked = lock_item(ctx, &id)?;
    if locked.stream.entries.is_empty()
        && locked.stream.torn_tail.is_none()
        && locked.file.is_none()
    {
        return Err(Error::ItemNotFound { id });
    }
    repair_locked(locked, opts)
}

pub(super) fn repair_locked(mut locked: Locked, opts: &RepairOptions) -> Result<RepairReport> {
    let ctx = locked.ctx;
    if locked.reconcile.is_none() {
        // The mutation path only checks linkage; a repair replays the whole stream.
        locked.reconcile = super::reconcile::plan_verified(
            &locked.stream.entries,
            &locked.before,
            &locked.before_hash,
        );
    }
    let plan = locked.reconcile.clone();
    let torn_line = locked.stream.torn_tail.as_ref().map(|t| t.line);
    let chain_before = verify_chain(&locked.stream.entries);
    let message = opts
        .message
        .clone()
        .filter(|m| !m.trim().is_empty())
        .or_else(|| plan.as_ref().map(default_message));
    let entry = locked.repair_entry(message.clone());
    let mut after_entries = locked.stream.entries.clone();
    after_entries.extend(entry.iter().cloned());
    let verify = verify_chain(&after_entries);
    let reconciliation = plan
        .as_ref()
        .and_then(|p| reconciliation(&locked.stream.entries, p, &locked.before));
    let report = RepairReport {
        id: locked.id.clone(),
        dry_run: opts.dry_run,
        changed: plan.is_some() || torn_line.is_some(),
        history: RepairHistory {
            path: ctx.tracker.history_path(&locked.id).display().to_string(),
            entries_scanned: locked.stream.entries.len(),
            chain_drift_before: !chain_before.is_ok(),
            entries_rehashed: 0,
            entries_patch_repaired: 0,
            converted_replace_to_add: 0,
            skipped_ops: 0,
            reconciled_with_item: plan.is_some(),
            audit_entry_added: entry.is_some(),
            verify_ok: verify.is_ok(),
            verify_errors: verify.issues.iter().map(|i| i.code()).collect(),
            torn_line_removed: torn_line,
            reanchored: plan.as_ref().and_then(reanchored_range),
        },
        item: RepairItem {
            exists: locked.file.is_some(),
            path: locked.file.as_ref().map(|f| f.path.display().to_string()),
            matched_chain_before: locked.file.as_ref().map(|_| {
                locked.stream.entries.last().map(|e| e.after_hash.as_str())
                    == Some(locked.before_hash.as_str())
            }),
        },
        warnings: repair_warnings(
            plan.is_some() || torn_line.is_some(),
            reconciliation.as_ref(),
        ),
        reconciliation,
        generated_at: locked.now.clone(),
        item_hash: locked.before_hash.clone(),
    };
    if !opts.dry_run {
        locked.record_repair(message)?;
    }
    Ok(report)
}

/// pm's summary message for a repair entry, with the re-anchor spelled out.
fn default_message(plan: &Reconcile) -> String {
    match reanchored_range(plan) {
        Some([from, through]) => format!(
            "history-repair re-anchored 0 entries, reconciled chain with on-disk item \
             (acknowledged the chain break of entries {from}-{through}: {}).",
            plan.issues.first().map_or("", String::as_str)
        ),
        None => "history-repair re-anchored 0 entries, reconciled chain with on-disk item.".into(),
    }
}

fn reanchored_range(plan: &Reconcile) -> Option<[usize; 2]> {
    let reanchor = plan.context.as_ref()?.get("reanchor")?;
    let get = |key: &str| {
        reanchor
            .get(key)
            .and_then(serde_json::Value::as_u64)
            .and_then(|v| usize::try_from(v).ok())
    };
    Some([get("from_entry")?, get("through_entry")?])
}

/// The warnings of a repair (sorted): no change, or the events and authors it discards.
pub(crate) fn repair_warnings(
    changed: bool,
    reconciliation: Option<&Reconciliation>,
) -> Vec<String> {
    let mut out = Vec::new();
    if !changed {
        out.push("history_repair_no_changes".to_string());
    }
    if let Some(r) = reconciliation {
        out.push(format!(
            "history_repair_reconcile_discards_events:{}",
            r.discarded_events.len()
        ));
        out.push(format!(
            "history_repair_discarded_authors:{}",
            r.discarded_authors.join(",")
        ));
    }
    out.sort_by(|a, b| crate::collate::locale_compare(a, b));
    out
}

/// Which recorded events the repair overwrites: for each field the repair changes (from the
/// replayed state to the file), the newest event that wrote it. `None` when nothing changes.
pub(crate) fn reconciliation(
    entries: &[HistoryEntry],
    plan: &Reconcile,
    file_doc: &ItemDoc,
) -> Option<Reconciliation> {
    if plan.kind == DriftKind::NoHistory {
        return None;
    }
    let patch = match plan.kind {
        DriftKind::ChainBroken => item_patch(&plan.replayed, file_doc),
        _ => plan.patch.clone(),
    };
    if patch.is_empty() {
        return None;
    }
    let mut reconciled: Vec<String> = patch.iter().map(|op| changed_field(&op.path)).collect();
    sort_unique(&mut reconciled);
    let mut remaining = reconciled.clone();
    let mut discarded = Vec::new();
    for (index, entry) in entries.iter().enumerate().rev() {
        if remaining.is_empty() {
            break;
        }
        let mut touched: Vec<String> = entry
            .patch
            .iter()
            .flat_map(|op| std::iter::once(&op.path).chain(op.from.as_ref()))
            .map(|p| changed_field(p))
            .collect();
        sort_unique(&mut touched);
        let overlap: Vec<String> = remaining
            .iter()
            .filter(|f| touched.contains(f))
            .cloned()
            .collect();
        if overlap.is_empty() {
            continue;
        }
        remaining.retain(|f| !overlap.contains(f));
        discarded.push(DiscardedEvent {
            index: index + 1,
            ts: entry.ts.clone(),
            author: entry.author.clone(),
            op: entry.op.clone(),
            fields: overlap,
        });
    }
    discarded.reverse();
    let mut reverted: Vec<String> = discarded.iter().flat_map(|e| e.fields.clone()).collect();
    sort_unique(&mut reverted);
    let mut authors: Vec<String> = discarded.iter().map(|e| e.author.clone()).collect();
    sort_unique(&mut authors);
    let preserved = preserved_events(entries, &discarded, file_doc);
    let mut preserved_fields: Vec<String> =
        preserved.iter().flat_map(|e| e.fields.clone()).collect();
    sort_unique(&mut preserved_fields);
    let mut preserved_authors: Vec<String> = preserved.iter().map(|e| e.author.clone()).collect();
    sort_unique(&mut preserved_authors);
    Some(Reconciliation {
        reconciled_field_count: reconciled.len(),
        reconciled_fields: reconciled,
        reverted_field_count: reverted.len(),
        reverted_fields: reverted,
        discarded_events: discarded,
        discarded_authors: authors,
        preserved_field_count: preserved_fields.len(),
        preserved_fields,
        preserved_events: preserved,
        preserved_authors,
        recovery_hint: RECOVERY_HINT.to_string(),
    })
}

/// For each reverted field, the newest event older than the discarded one whose written value
/// is the file's value again (the repair restores it).
fn preserved_events(
    entries: &[HistoryEntry],
    discarded: &[DiscardedEvent],
    file_doc: &ItemDoc,
) -> Vec<DiscardedEvent> {
    let value_of = |doc: &ItemDoc, field: &str| match field {
        "body" => Some(serde_json::Value::String(doc.body.clone())),
        _ => doc.metadata.get(field).cloned(),
    };
    let mut found: Vec<DiscardedEvent> = Vec::new();
    for event in discarded {
        for field in &event.fields {
            let target = value_of(file_doc, field);
            let older = (0..event.index - 1).rev().find(|&i| {
                entries[i]
                    .patch
                    .iter()
                    .any(|op| changed_field(&op.path) == *field)
                    && replay_to(entries, i + 1)
                        .is_ok_and(|state| value_of(&state.doc, field) == target)
            });
            let Some(i) = older else { continue };
            match found.iter_mut().find(|e| e.index == i + 1) {
                Some(row) => row.fields.push(field.clone()),
                None => found.push(DiscardedEvent {
                    index: i + 1,
                    ts: entries[i].ts.clone(),
                    author: entries[i].author.clone(),
                    op: entries[i].op.clone(),
                    fields: vec![field.clone()],
                }),
            }
        }
    }
    found.sort_by_key(|e| e.index);
    found
}

fn sort_unique(values: &mut Vec<String>) {
    values.sort_by(|a, b| crate::collate::locale_compare(a, b));
    values.dedup();
}
