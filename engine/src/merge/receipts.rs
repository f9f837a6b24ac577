//! Merge receipts as pm writes them: one JSON file per item-driver decision, twice. The
//! clone-local copy `<git dir>/pm-merge-receipts/<id>.json` keeps the values (never committed);
//! the tracker copy `merge-receipts/<id>.json` keeps only their hashes, so it can be committed
//! without leaking a discarded value. `merge reconcile` marks both `reconciled`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{Error, IoResultExt, Result};
use crate::hash::stable_hash;

/// The clone-local receipt folder inside the git directory.
pub const CLONE_RECEIPTS_DIR: &str = "pm-merge-receipts";
/// The hash-only receipt folder inside the tracker.
pub const TRACKER_RECEIPTS_DIR: &str = "merge-receipts";

/// Whether a receipt still waits for `merge reconcile`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReceiptState {
    /// Not yet recorded in history.
    Pending,
    /// Recorded by a `merge_reconcile` entry.
    Reconciled,
}

/// One scalar field both branches changed differently: the values (clone-local) or their
/// `{pm_value_hash}` (tracker copy; `base`/`ours`/`theirs` are then null).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The field.
    pub field: String,
    /// The common ancestor's value.
    pub base: Value,
    /// Ours' value.
    pub ours: Value,
    /// Theirs' value.
    pub theirs: Value,
    /// The value the merged file holds.
    pub retained: Value,
    /// The value the merge dropped.
    pub discarded: Value,
}

/// A merge receipt (pm's `version: 1` layout, keys in pm's order).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Receipt {
    /// Always 1.
    pub version: u32,
    /// The receipt id (a UUID).
    pub id: String,
    /// The item file, relative to the workspace root.
    pub item_path: String,
    /// The item id.
    pub item_id: String,
    /// The `--prefer` side asked for.
    pub requested_preference: String,
    /// How scalar conflicts were settled.
    pub conflict_resolution: String,
    /// Fields taken from theirs by clean three-way resolution.
    pub fields_from_theirs: Vec<String>,
    /// Collection fields merged by union.
    pub union_fields: Vec<String>,
    /// The scalar conflicts.
    pub decisions: Vec<Decision>,
    /// Pending or reconciled.
    pub state: ReceiptState,
    /// When the driver ran.
    pub created_at: String,
    /// `clone_local` (values) or `hash_only`.
    pub value_availability: String,
    /// When `merge reconcile` recorded it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reconciled_at: Option<String>,
}

/// A decision as `merge reconcile` reports it: only the hashes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DecisionSummary {
    /// The field.
    pub field: String,
    /// `pm_value_hash` of the retained value.
    pub retained_hash: String,
    /// `pm_value_hash` of the discarded value.
    pub discarded_hash: String,
}

/// A receipt as `merge reconcile` reports it and records it in history (no values).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReceiptSummary {
    /// The receipt id.
    pub receipt_id: String,
    /// The item id.
    pub item_id: String,
    /// The item file.
    pub item_path: String,
    /// The fields of the decisions.
    pub conflict_fields: Vec<String>,
    /// Fields taken from theirs.
    pub fields_from_theirs: Vec<String>,
    /// Fields merged by union.
    pub union_fields: Vec<String>,
    /// The `--prefer` side asked for.
    pub requested_preference: String,
    /// How scalar conflicts were settled.
    pub conflict_resolution: String,
    /// The decisions, hashes only.
    pub decisions: Vec<DecisionSummary>,
}

/// Returns pm's hash of a receipt value: SHA-256 of its `stableStringify`.
pub fn value_hash(value: &Value) -> String {
    stable_hash(value)
}

impl Receipt {
    /// Returns the tracker copy: values replaced by their hashes.
    pub fn hash_only(&self) -> Receipt {
        let hashed = |v: &Value| json!({"pm_value_hash": value_hash(v)});
        Receipt {
            decisions: self
                .decisions
                .iter()
                .map(|d| Decision {
                    field: d.field.clone(),
                    base: Value::Null,
                    ours: Value::Null,
                    theirs: Value::Null,
                    retained: hashed(&d.retained),
                    discarded: hashed(&d.discarded),
                })
                .collect(),
            value_availability: "hash_only".into(),
            ..self.clone()
        }
    }

    /// Returns the summary `merge reconcile` prints and records.
    pub fn summary(&self) -> ReceiptSummary {
        let hash_of = |v: &Value| match v.get("pm_value_hash").and_then(Value::as_str) {
            Some(h) if self.value_availability == "hash_only" => h.to_string(),
            _ => value_hash(v),
        };
        ReceiptSummary {
            receipt_id: self.id.clone(),
            item_id: self.item_id.clone(),
            item_path: self.item_path.clone(),
            conflict_fields: self.decisions.iter().map(|d| d.field.clone()).collect(),
            fields_from_theirs: self.fields_from_theirs.clone(),
            union_fields: self.union_fields.clone(),
            requested_preference: self.requested_preference.clone(),
            conflict_resolution: self.conflict_resolution.clone(),
            decisions: self
                .decisions
                .iter()
                .map(|d| DecisionSummary {
                    field: d.field.clone(),
                    retained_hash: hash_of(&d.retained),
                    discarded_hash: hash_of(&d.discarded),
                })
                .collect(),
        }
    }

    fn to_text(&self) -> Result<String> {
        let value = serde_json::to_value(self)
            .map_err(|e| Error::internal(format!("merge receipt: {e}")))?;
        Ok(format!("{}\n", crate::json::to_pretty(&value)))
    }
}

/// The two receipt folders of one clone and tracker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceiptStore {
    /// `<git common dir>/pm-merge-receipts`, when the tracker is inside a git repository (the
    /// same folder from every worktree of the clone).
    pub clone_dir: Option<PathBuf>,
    /// `<tracker>/merge-receipts`; `None` for a driver run outside any tracker.
    pub tracker_dir: Option<PathBuf>,
}

impl ReceiptStore {
    /// Returns the store of the tracker at `tracker_root` (its workspace at `workspace_root`).
    pub fn locate(tracker_root: &Path, workspace_root: &Path) -> ReceiptStore {
        ReceiptStore {
            clone_dir: super::GitRepo::discover(workspace_root)
                .ok()
                .map(|repo| repo.common_dir.join(CLONE_RECEIPTS_DIR)),
            tracker_dir: Some(tracker_root.join(TRACKER_RECEIPTS_DIR)),
        }
    }

    /// Writes a new receipt: the values clone-locally (when in git) and the hash-only copy;
    /// returns the paths written. Driver runs write without fsync: git reads the merge result
    /// straight back and the commit that follows owns its durability.
    ///
    /// # Errors
    /// I/O errors naming the file.
    pub fn write(&self, receipt: &Receipt) -> Result<Vec<PathBuf>> {
        let mut written = Vec::new();
        if let Some(dir) = &self.clone_dir {
            written.push(write_receipt(dir, receipt, Durability::Unsynced)?);
        }
        if let Some(dir) = &self.tracker_dir {
            written.push(write_receipt(
                dir,
                &receipt.hash_only(),
                Durability::Unsynced,
            )?);
        }
        Ok(written)
    }

    /// Returns the clone-local receipts (the tracker copies when the clone has none), oldest
    /// first (by `created_at`, then id). Unparseable files are skipped.
    ///
    /// # Errors
    /// I/O errors listing a folder.
    pub fn list(&self) -> Result<Vec<Receipt>> {
        let dir = match (&self.clone_dir, &self.tracker_dir) {
            (Some(dir), _) if dir.is_dir() => dir,
            (_, Some(dir)) => dir,
            (Some(dir), None) => dir,
            (None, None) => return Ok(Vec::new()),
        };
        let mut out = read_dir(dir)?;
        out.sort_by(|a, b| {
            crate::timestamp::compare_timestamp_strings(&a.created_at, &b.created_at)
                .then_with(|| a.id.cmp(&b.id))
        });
        Ok(out)
    }

    /// Marks receipt `id` reconciled at `at` in both folders (a copy that is missing is left
    /// missing).
    ///
    /// # Errors
    /// I/O errors naming the file.
    pub fn mark_reconciled(&self, id: &str, at: &str) -> Result<()> {
        for dir in self.clone_dir.iter().chain(self.tracker_dir.iter()) {
            let path = dir.join(format!("{id}.json"));
            let Some(mut receipt) = read_receipt(&path)? else {
                continue;
            };
            receipt.state = ReceiptState::Reconciled;
            receipt.reconciled_at = Some(at.to_string());
            write_receipt(dir, &receipt, Durability::Synced)?;
        }
        Ok(())
    }
}

/// Whether a receipt write waits for the disk.
#[derive(Clone, Copy)]
enum Durability {
    Synced,
    Unsynced,
}

fn write_receipt(dir: &Path, receipt: &Receipt, durability: Durability) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).at(dir)?;
    let path = dir.join(format!("{}.json", receipt.id));
    let text = receipt.to_text()?;
    match durability {
        Durability::Synced => crate::atomic::write(&path, text.as_bytes())?,
        Durability::Unsynced => crate::atomic::write_unsynced(&path, text.as_bytes())?,
    }
    Ok(path)
}

fn read_receipt(path: &Path) -> Result<Option<Receipt>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(serde_json::from_slice(&bytes).ok()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).at(path),
    }
}

fn read_dir(dir: &Path) -> Result<Vec<Receipt>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).at(dir),
    };
    let mut out = Vec::new();
    for entry in entries {
        let path = entry.at(dir)?.path();
        if path.extension().is_some_and(|x| x == "json")
            && let Some(receipt) = read_receipt(&path)?
        {
            out.push(receipt);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt() -> Receipt {
        Receipt {
            version: 1,
            id: "r1".into(),
            item_path: ".agents/pm/epics/pm-e001.toon".into(),
            item_id: "pm-e001".into(),
            requested_preference: "ours".into(),
            conflict_resolution: "stable_value_order".into(),
            fields_from_theirs: vec!["priority".into()],
            union_fields: vec![],
            decisions: vec![Decision {
                field: "title".into(),
                base: json!("Write-surface epic"),
                ours: json!("Epic title from main"),
                theirs: json!("Epic title from C"),
                retained: json!("Epic title from C"),
                discarded: json!("Epic title from main"),
            }],
            state: ReceiptState::Pending,
            created_at: "2026-09-02T02:04:00.000Z".into(),
            value_availability: "clone_local".into(),
            reconciled_at: None,
        }
    }

    #[test]
    fn the_hash_only_copy_keeps_no_value() {
        let copy = receipt().hash_only();
        let d = &copy.decisions[0];
        assert_eq!(d.base, Value::Null);
        assert_eq!(
            d.retained,
            json!({"pm_value_hash": "0397266298ba174cb99d27f03db3c88f52b8113d71d237907b95037653617e71"})
        );
        assert_eq!(copy.summary(), receipt().summary());
        assert_eq!(
            copy.summary().decisions[0].discarded_hash,
            "1d3f231d4030ff9835f37b30b563d659c6fa133f21662a4aa6d6688b24aec398"
        );
    }

    #[test]
    fn written_receipts_list_and_reconcile_in_both_folders() -> Result<()> {
        let tmp = tempfile::tempdir().map_err(|e| Error::internal(e.to_string()))?;
        let store = ReceiptStore {
            clone_dir: Some(tmp.path().join("git/pm-merge-receipts")),
            tracker_dir: Some(tmp.path().join("pm/merge-receipts")),
        };
        store.write(&receipt())?;
        assert_eq!(store.list()?, vec![receipt()]);
        store.mark_reconciled("r1", "2026-09-02T02:09:00.000Z")?;
        let listed = store.list()?;
        assert_eq!(listed[0].state, ReceiptState::Reconciled);
        let text = std::fs::read_to_string(tmp.path().join("pm/merge-receipts/r1.json"))
            .map_err(|e| Error::internal(e.to_string()))?;
        assert!(text.ends_with("\"reconciled_at\": \"2026-09-02T02:09:00.000Z\"\n}\n"));
        assert!(text.contains("\"value_availability\": \"hash_only\""));
        Ok(())
    }
}
