//! The `format_version` check (`pm_format_version` behind or ahead of this implementation) and
//! the `storage_integrity` check (unreadable and duplicate items, conflicted or unparseable
//! streams, resurrected deletes, unparseable config files, the `.gitattributes` merge fence,
//! and the leftovers of killed writers from `operational.rs`).

use std::collections::BTreeMap;

use crate::read::unsafe_paths;
use serde_json::{Value, json};

use super::items::{capped, sorted_unique};
use super::{CheckName, Outcome, Scope};
use crate::history::verify::StreamStatus;
use crate::history::{TrackerHistoryReport, WORKSPACE_STREAM_ID};

/// The item format version this implementation writes and understands.
pub const CURRENT_FORMAT_VERSION: u64 = 1;

/// The `format_version` check: outdated items warn, items ahead are an error.
pub(crate) fn format_version(scope: &Scope<'_>) -> Outcome {
    let mut outdated = Vec::new();
    let mut ahead = Vec::new();
    for item in scope.items {
        let version = item
            .doc
            .metadata
            .get("pm_format_version")
            .and_then(Value::as_u64)
            .unwrap_or(CURRENT_FORMAT_VERSION);
        if version < CURRENT_FORMAT_VERSION {
            outdated.push(item.id.clone());
        } else if version > CURRENT_FORMAT_VERSION {
            ahead.push(item.id.clone());
        }
    }
    let mut warnings = Vec::new();
    if !outdated.is_empty() {
        warnings.push(format!(
            "validate_format_version_outdated_items:{}",
            outdated.len()
        ));
    }
    if !ahead.is_empty() {
        warnings.push(format!(
            "validate_format_version_ahead_items:{}",
            ahead.len()
        ));
    }
    let (n_out, n_ahead) = (outdated.len(), ahead.len());
    let outdated = capped(outdated, scope.limit);
    let ahead = capped(ahead, scope.limit);
    let details = json!({
        "checked_items": scope.items.len(),
        "current_format_version": CURRENT_FORMAT_VERSION,
        "outdated_items_count": n_out,
        "outdated_items": outdated.values,
        "outdated_items_truncated": outdated.truncated,
        "ahead_items_count": n_ahead,
        "ahead_items": ahead.values,
        "ahead_items_truncated": ahead.truncated,
    });
    Outcome::new(CheckName::FormatVersion, n_ahead > 0, details, warnings)
}

/// The config files pm reads: settings.json and every `schema/*.json`; returns how many were
/// scanned and the relative paths of those that do not parse as JSON.
fn config_files(scope: &Scope<'_>) -> (usize, Vec<String>) {
    let root = scope.view.tracker().root();
    let mut paths = vec![root.join("settings.json")];
    if let Ok(entries) = std::fs::read_dir(root.join("schema")) {
        let mut schema: Vec<_> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        schema.sort();
        paths.extend(schema);
    }
    let mut scanned = 0;
    let mut broken = Vec::new();
    for path in paths {
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        scanned += 1;
        if serde_json::from_slice::<Value>(&bytes).is_err() {
            broken.push(scope.view.relative(&path));
        }
    }
    (scanned, sorted_unique(broken))
}

/// The `.gitattributes` merge fence: `not_installed` when no pm merge driver is configured.
fn merge_fence(scope: &Scope<'_>) -> Value {
    let path = scope.view.tracker().workspace_root().join(".gitattributes");
    let installed = std::fs::read_to_string(path)
        .map(|text| text.lines().any(|l| l.contains("merge=pm")))
        .unwrap_or(false);
    json!({
        "status": if installed { "installed" } else { "not_installed" },
        "missing_patterns": [],
        "stale_patterns": [],
        "schema_scope": "project",
    })
}

/// What a clone knows about merges: its driver configuration and its pending receipts.
struct MergeState {
    drivers: crate::merge::clone_config::DriverConfiguration,
    /// Items of pending receipts that discarded a value (unreviewed decisions).
    decisions: Vec<String>,
    /// Items of pending receipts that discarded nothing.
    lossless: Vec<String>,
}

/// Reads the merge state of a tracker inside a git repository; `None` outside one.
fn merge_state(scope: &Scope<'_>) -> Option<MergeState> {
    let tracker = scope.view.tracker();
    let drivers = crate::merge::clone_config::driver_configuration(tracker.workspace_root())?;
    let store =
        crate::merge::receipts::ReceiptStore::locate(tracker.root(), tracker.workspace_root());
    let pending: Vec<_> = store
        .list()
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.state == crate::merge::receipts::ReceiptState::Pending)
        .collect();
    let items = |lossy: bool| {
        sorted_unique(
            pending
                .iter()
                .filter(|r| r.decisions.is_empty() != lossy)
                .map(|r| r.item_id.clone())
                .collect(),
        )
    };
    Some(MergeState {
        drivers,
        decisions: items(true),
        lossless: items(false),
    })
}

impl MergeState {
    /// Fills pm's merge keys of `storage_integrity`; a drifted driver configuration and
    /// unreviewed merge decisions warn (a never-installed one is only noted, as pm's health
    /// treats it as advisory).
    fn apply(self, map: &mut serde_json::Map<String, Value>, warnings: &mut Vec<String>) {
        if self.drivers.status == "drift"
            && let Some(w) = self.drivers.warning()
        {
            warnings.push(format!("validate_{w}"));
        }
        if !self.decisions.is_empty() {
            warnings.push(format!(
                "validate_merge_decisions_unreviewed:{}",
                self.decisions.len()
            ));
        }
        map.insert(
            "merge_driver_configuration".into(),
            serde_json::to_value(&self.drivers).unwrap_or(Value::Null),
        );
        map.insert(
            "pending_merge_decision_count".into(),
            json!(self.decisions.len()),
        );
        map.insert("pending_merge_decision_items".into(), json!(self.decisions));
        map.insert(
            "lossless_merge_receipt_count".into(),
            json!(self.lossless.len()),
        );
        map.insert("lossless_merge_receipt_items".into(), json!(self.lossless));
    }
}

/// The type folders that exist but could not be listed, `{folder, error}` sorted by folder,
/// leaving out the symlinked ones `unsafe_paths` already names.
fn unreadable_folders(scope: &Scope<'_>, linked: &[String]) -> Vec<Value> {
    let root = format!("{}/", scope.view.tracker().root().display());
    let mut folders: Vec<(String, String)> = scope
        .folder_notices
        .iter()
        .filter_map(|n| {
            let folder = crate::tracker::unlisted_folder(n)?;
            (!linked.iter().any(|l| l == folder))
                .then(|| (folder.to_string(), n.message.replace(&root, "")))
        })
        .collect();
    folders.sort();
    folders.dedup_by(|a, b| a.0 == b.0);
    folders
        .into_iter()
        .map(|(folder, error)| json!({"folder": folder, "error": error}))
        .collect()
}

/// The `storage_integrity` check; corruption is an error, fence drift alone a warning.
pub(crate) fn storage_integrity(scope: &Scope<'_>, report: &TrackerHistoryReport) -> Outcome {
    let mut by_id: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut unreadable = Vec::new();
    let mut refused = Vec::new();
    for (file, doc) in scope.scanned {
        let path = scope.view.relative(&file.path);
        match doc {
            Ok(id) => by_id.entry(id.to_lowercase()).or_default().push(path),
            Err(err) => {
                if matches!(err, crate::Error::PathUnsafe { .. }) {
                    refused.push(path.clone());
                }
                unreadable.push(path);
                by_id.entry(file.stem.to_lowercase()).or_default();
            }
        }
    }
    let ids_on_disk: usize = scope
        .scanned
        .iter()
        .map(|(f, _)| f.stem.to_lowercase())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let duplicates: Vec<Value> = by_id
        .iter()
        .filter(|(_, paths)| paths.len() > 1)
        .map(|(id, paths)| json!({"id": id, "paths": paths}))
        .collect();
    let mut conflicted = Vec::new();
    let mut unparseable = Vec::new();
    let workspace_file = scope
        .view
        .tracker()
        .history_path(WORKSPACE_STREAM_ID)
        .is_file();
    let streams = report
        .items
        .iter()
        .map(|i| {
            (
                i.id.as_str(),
                &i.stream,
                i.torn_tail.is_some(),
                i.stream_file,
            )
        })
        .chain([(
            WORKSPACE_STREAM_ID,
            &report.workspace.stream,
            report.workspace.torn_tail.is_some(),
            workspace_file,
        )]);
    let mut scanned_streams = 0usize;
    for (id, stream, torn, exists) in streams {
        scanned_streams += usize::from(exists);
        match stream {
            StreamStatus::Unreadable { code, .. } if *code == "path_unsafe" => {
                refused.push(format!("history/{id}.jsonl"));
                unparseable.push(id.to_string());
            }
            StreamStatus::Unreadable { code, .. } if code.contains("conflict") => {
                conflicted.push(id.to_string());
            }
            StreamStatus::Unreadable { .. } => unparseable.push(id.to_string()),
            _ if torn => unparseable.push(id.to_string()),
            _ => {}
        }
    }
    let resurrected: Vec<String> = report
        .items
        .iter()
        .filter(|i| i.last_op.as_deref() == Some("delete") && !i.files.is_empty())
        .map(|i| i.id.clone())
        .collect();
    let (config_scanned, broken_config) = config_files(scope);
    let fence = merge_fence(scope);
    let mut warnings = Vec::new();
    let mut warn = |token: &str, n: usize| {
        if n > 0 {
            warnings.push(format!("{token}:{n}"));
        }
    };
    warn("validate_storage_unreadable_items", unreadable.len());
    warn("validate_storage_duplicate_item_ids", duplicates.len());
    warn(
        "validate_storage_history_conflict_markers",
        conflicted.len(),
    );
    warn("validate_storage_unparseable_history", unparseable.len());
    warn("validate_storage_resurrected_items", resurrected.len());
    warn("validate_storage_unparseable_config", broken_config.len());
    let linked = unsafe_paths::merge(
        unsafe_paths::linked_folders_and_locks(scope.view.tracker(), &scope.view.schema().types),
        refused,
    );
    warn("validate_storage_unsafe_paths", linked.len());
    let folders = unreadable_folders(scope, &linked);
    warn("validate_storage_unreadable_item_folders", folders.len());
    // Corruption and symlinks are errors; the leftovers of killed writers only warn.
    let error = !warnings.is_empty();
    let leftovers = super::operational::leftovers(scope);
    let mut details = json!({
        "item_files_on_disk": scope.scanned.len(),
        "item_ids_on_disk": ids_on_disk,
        "parsed_items": scope.items.len(),
        "unreadable_item_files": sorted_unique(unreadable),
        "duplicate_item_ids": duplicates,
        "history_streams_scanned": scanned_streams,
        "history_conflict_marker_streams": sorted_unique(conflicted),
        "history_unparseable_streams": sorted_unique(unparseable),
        "resurrected_items": sorted_unique(resurrected),
        "history_repair_reconciliations": 0,
        "config_files_scanned": config_scanned,
        "unparseable_config_files": broken_config,
        "merge_fence": fence,
        "merge_driver_configuration": null,
        "pending_merge_decision_count": 0,
        "pending_merge_decision_items": [],
        "lossless_merge_receipt_count": 0,
        "lossless_merge_receipt_items": [],
        "tracked_runtime_cache": {
            "tracker_relative_root": null,
            "tracked_paths": [],
            "tracked_path_count": 0,
            "remediation_command": null,
        },
    });
    if let Value::Object(map) = &mut details
        && !linked.is_empty()
    {
        let paths = super::items::capped(linked.clone(), scope.limit);
        map.insert(
            "unsafe_paths".into(),
            json!({
                "code": "validate_storage_unsafe_paths",
                "count": linked.len(),
                "paths": paths.values,
                "paths_truncated": paths.truncated,
                "fix": unsafe_paths::UNSAFE_PATHS_FIX,
            }),
        );
    }
    if let Value::Object(map) = &mut details
        && !folders.is_empty()
    {
        map.insert(
            "unreadable_item_folders".into(),
            json!({
                "code": "validate_storage_unreadable_item_folders",
                "count": folders.len(),
                "folders": folders,
                "fix": "make each folder a readable directory of item files (check its type and \
                        permissions); until then every read of this tracker is partial",
            }),
        );
    }
    if let Value::Object(map) = &mut details {
        for (key, group, warning) in leftovers {
            map.insert(key.into(), group);
            warnings.push(warning);
        }
        if let Some(merge) = merge_state(scope) {
            merge.apply(map, &mut warnings);
        }
    }
    Outcome::new(CheckName::StorageIntegrity, error, details, warnings)
}
