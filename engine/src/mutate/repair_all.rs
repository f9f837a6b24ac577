//! `history-repair --all`: find every stream that disagrees with its item (a parallel, unlocked
//! scan of the live items and of the streams whose item file is gone), then repair each under
//! its own lock. One failing stream never stops the rest; it is reported as `failed`.

use rayon::prelude::*;
use serde::Serialize;

use super::MutationContext;
use super::protocol::lock_item;
use super::reconcile;
use super::repair::{Reconciliation, RepairOptions, repair_locked};
use crate::confine::Root;
use crate::error::Result;
use crate::hash::{EMPTY_DOC_HASH, HashEpoch, item_hash};
use crate::history::{StreamRead, parse_stream};
use crate::item::ItemDoc;
use crate::item::canon::CanonSchema;
use crate::item::codec::parse_item;
use crate::tracker::ItemFileRef;

/// One drifted stream of `history-repair --all`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RepairAllStream {
    /// The item id.
    pub id: String,
    /// `repaired`, `skipped_clean` or `failed`.
    pub outcome: &'static str,
    /// Always 0 (see [`super::RepairHistory`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entries_rehashed: Option<usize>,
    /// Always 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entries_patch_repaired: Option<usize>,
    /// Whether the repair entry takes the chain to the on-disk item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reconciled_with_item: Option<bool>,
    /// What reconciling overwrites.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reconciliation: Option<Reconciliation>,
    /// The stream's warnings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
    /// Why the repair failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl RepairAllStream {
    /// The row of a stream whose repair failed with `err`.
    pub(crate) fn failed(id: &str, err: &crate::Error) -> RepairAllStream {
        RepairAllStream {
            id: id.to_string(),
            outcome: "failed",
            entries_rehashed: None,
            entries_patch_repaired: None,
            reconciled_with_item: None,
            reconciliation: None,
            warnings: None,
            error: Some(err.to_string()),
        }
    }
}

/// How many streams ended each way.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RepairTotals {
    /// Repaired (or, on a dry run, would be).
    pub repaired: usize,
    /// Found drifted by the scan but clean under the lock.
    pub skipped_clean: usize,
    /// Failed.
    pub failed: usize,
}

/// The result of `history-repair --all` (pm's shape).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RepairAllReport {
    /// Always true.
    pub all: bool,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// Live items scanned.
    pub scanned_streams: usize,
    /// Streams that disagree with their item (interrupted deletes included).
    pub drifted_streams: usize,
    /// Scanned streams with an entry whose `agent_provenance` is not a JSON object.
    pub provenance_invalid_streams: usize,
    /// One row per drifted stream.
    pub streams: Vec<RepairAllStream>,
    /// The outcome counts.
    pub totals: RepairTotals,
    /// Every stream's warnings, as `<id>:<warning>`.
    pub warnings: Vec<String>,
    /// When the scan ran.
    pub generated_at: String,
}

impl RepairAllReport {
    /// The report of a repair of the streams `scan` found, before any stream is repaired.
    pub fn of_scan(scan: &DriftScan, dry_run: bool, generated_at: String) -> RepairAllReport {
        RepairAllReport {
            all: true,
            dry_run,
            scanned_streams: scan.scanned_streams,
            drifted_streams: scan.drifted.len(),
            provenance_invalid_streams: scan.provenance_invalid_streams,
            streams: Vec::new(),
            totals: RepairTotals::default(),
            warnings: Vec::new(),
            generated_at,
        }
    }

    /// Whether any stream failed to repair.
    pub fn has_failures(&self) -> bool {
        self.totals.failed > 0
    }
}

/// Repairs every drifted stream of the tracker.
///
/// # Errors
/// Errors listing the type folders or `history/`; per-stream failures are rows, not errors.
pub fn history_repair_all(ctx: &MutationContext, opts: &RepairOptions) -> Result<RepairAllReport> {
    let generated_at = ctx.clock.now_iso();
    let scan = scan_drift(ctx)?;
    let mut report = RepairAllReport::of_scan(&scan, opts.dry_run, generated_at);
    for id in &scan.drifted {
        let row = repair_one(ctx, id, opts);
        report.push(row);
    }
    Ok(report)
}

impl RepairAllReport {
    /// Adds one stream's row: counts its outcome and collects its warnings as `<id>:<warning>`.
    pub fn push(&mut self, row: RepairAllStream) {
        match row.outcome {
            "repaired" => self.totals.repaired += 1,
            "skipped_clean" => self.totals.skipped_clean += 1,
            _ => self.totals.failed += 1,
        }
        for warning in row.warnings.iter().flatten() {
            self.warnings.push(format!("{}:{warning}", row.id));
        }
        self.streams.push(row);
    }
}

/// What an unlocked scan of every stream found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DriftScan {
    /// Live items scanned.
    pub scanned_streams: usize,
    /// Scanned streams with an entry whose `agent_provenance` is not a JSON object.
    pub provenance_invalid_streams: usize,
    /// The ids whose stream disagrees with the item (deleted items included), sorted.
    pub drifted: Vec<String>,
}

/// Scans every live item and every stream whose item file is gone, in parallel and without
/// locking, for streams that need a repair entry.
///
/// # Errors
/// Errors listing the type folders or `history/`.
pub fn scan_drift(ctx: &MutationContext) -> Result<DriftScan> {
    let files = ctx.tracker.item_files(&ctx.schema.types)?.files;
    let root = Root::open(ctx.tracker.root())?;
    let mut candidates: Vec<(String, Option<ItemFileRef>)> = files
        .iter()
        .map(|f| (f.stem.clone(), Some(f.clone())))
        .collect();
    candidates.extend(
        orphan_streams(&root, &files)?
            .into_iter()
            .map(|id| (id, None)),
    );
    let canon = CanonSchema::from_runtime(ctx.schema);
    let scanned: Vec<(String, Scan)> = candidates
        .par_iter()
        .map(|(id, file)| (id.clone(), scan(ctx, &root, &canon, id, file.as_ref())))
        .collect();
    let mut drifted: Vec<String> = scanned
        .iter()
        .filter(|(_, s)| s.drifted)
        .map(|(id, _)| id.clone())
        .collect();
    drifted.sort();
    drifted.dedup();
    Ok(DriftScan {
        scanned_streams: files.len(),
        provenance_invalid_streams: scanned.iter().filter(|(_, s)| s.provenance_invalid).count(),
        drifted,
    })
}

fn repair_one(ctx: &MutationContext, id: &str, opts: &RepairOptions) -> RepairAllStream {
    let result = lock_item(ctx, id).and_then(|locked| repair_locked(locked, opts));
    match result {
        Ok(report) => RepairAllStream {
            id: id.to_string(),
            outcome: if report.changed {
                "repaired"
            } else {
                "skipped_clean"
            },
            entries_rehashed: Some(report.history.entries_rehashed),
            entries_patch_repaired: Some(report.history.entries_patch_repaired),
            reconciled_with_item: Some(report.history.reconciled_with_item),
            reconciliation: report.reconciliation,
            warnings: Some(report.warnings),
            error: None,
        },
        Err(err) => RepairAllStream::failed(id, &err),
    }
}

struct Scan {
    drifted: bool,
    provenance_invalid: bool,
}

/// Reads one item and its stream without locking and tells whether it needs a repair (a
/// stream or file that cannot be read counts as drifted: its repair reports why).
fn scan(
    ctx: &MutationContext,
    root: &Root,
    canon: &CanonSchema,
    id: &str,
    file: Option<&ItemFileRef>,
) -> Scan {
    let path = ctx.tracker.history_path(id);
    let stream = match read_confined(root, &path) {
        Ok(Some(bytes)) => parse_stream(&bytes, id, &path),
        Ok(None) => Ok(StreamRead::default()),
        Err(e) => Err(e),
    };
    let Ok(stream) = stream else {
        return Scan {
            drifted: true,
            provenance_invalid: false,
        };
    };
    let provenance_invalid = stream
        .entries
        .iter()
        .any(|e| e.agent_provenance.as_ref().is_some_and(|p| !p.is_object()));
    let doc = match file {
        Some(file) => match read_confined(root, &file.path).and_then(|b| {
            b.map(|b| parse_item(&b, file.format, &file.path, canon))
                .transpose()
        }) {
            Ok(doc) => doc.unwrap_or_else(ItemDoc::empty),
            Err(_) => {
                return Scan {
                    drifted: true,
                    provenance_invalid,
                };
            }
        },
        None => ItemDoc::empty(),
    };
    let hash = if doc.is_empty() {
        EMPTY_DOC_HASH.to_string()
    } else {
        item_hash(&doc, HashEpoch::V2)
    };
    let drifted = stream.torn_tail.is_some()
        || reconcile::plan_verified(&stream.entries, &doc, &hash).is_some();
    Scan {
        drifted,
        provenance_invalid,
    }
}

fn read_confined(root: &Root, path: &std::path::Path) -> Result<Option<Vec<u8>>> {
    match root.parent_of(path, false)? {
        Some((dir, name)) => dir.read(name),
        None => Ok(None),
    }
}

/// Ids of `history/*.jsonl` streams (the workspace stream aside) with no item file.
fn orphan_streams(root: &Root, files: &[ItemFileRef]) -> Result<Vec<String>> {
    let Some(dir) = root.dir(std::path::Path::new(crate::tracker::HISTORY_FOLDER), false)? else {
        return Ok(Vec::new());
    };
    let live: std::collections::HashSet<&str> = files.iter().map(|f| f.stem.as_str()).collect();
    let mut ids: Vec<String> = dir
        .names()?
        .into_iter()
        .filter_map(|n| {
            n.to_str()
                .and_then(|n| n.strip_suffix(".jsonl"))
                .map(String::from)
        })
        .filter(|id| crate::ids::is_valid_id(id) && !live.contains(id.as_str()))
        .collect();
    ids.sort();
    Ok(ids)
}
