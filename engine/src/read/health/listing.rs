//! What `pm health` reports about the item listing itself: type folders that exist but could
//! not be listed (every read is partial while they are) and ids held by more than one item
//! file (reads answer one of them). Both are gate-failing integrity findings with the path and
//! the fix; their detail keys appear only when there is something to report.

use serde::Serialize;
use serde_json::{Map, Value};

use super::HealthFinding;
use super::memo::Facts;

/// A type folder that could not be listed, as reported.
#[derive(Serialize)]
struct UnreadableFolder<'a> {
    folder: &'a str,
    error: &'a str,
}

/// One id held by several item files.
#[derive(Serialize)]
struct DuplicateId {
    id: String,
    paths: Vec<String>,
}

/// Returns the findings and the detail keys (`item_folders_unreadable`, `duplicate_item_ids`)
/// to add to the integrity check.
pub(super) fn listing_findings(facts: &Facts) -> (Map<String, Value>, Vec<HealthFinding>) {
    let mut details = Map::new();
    let mut findings = Vec::new();
    let folders: Vec<UnreadableFolder<'_>> = facts
        .unreadable_folders
        .iter()
        .map(|p| UnreadableFolder {
            folder: &p.folder,
            error: &p.error,
        })
        .collect();
    for f in &folders {
        let mut finding = HealthFinding::new(
            "integrity",
            format!("integrity_item_folder_unreadable:{}", f.folder),
            true,
            Some(format!(
                "make {} a readable directory of item files (check its type and permissions), \
                 then run pm health again",
                f.folder
            )),
        );
        finding.message = Some(format!(
            "the type folder {} could not be listed ({}): its items are missing from every read",
            f.folder, f.error
        ));
        findings.push(finding);
    }
    if !folders.is_empty() {
        details.insert("item_folders_unreadable".into(), to_value(&folders));
    }
    let duplicates: Vec<DuplicateId> = facts
        .groups
        .iter()
        .filter(|g| g.files.len() > 1)
        .map(|g| DuplicateId {
            id: g.id.clone(),
            paths: g.files.iter().map(|f| f.name.clone()).collect(),
        })
        .collect();
    for d in &duplicates {
        let mut finding = HealthFinding::new(
            "integrity",
            format!("integrity_duplicate_item_id:{}", d.id),
            true,
            Some(format!(
                "keep one of {} and remove the others (reads answer {} from the first one)",
                d.paths.join(", "),
                d.id
            )),
        );
        finding.message = Some(format!(
            "item {} is stored in {} files: {}",
            d.id,
            d.paths.len(),
            d.paths.join(", ")
        ));
        findings.push(finding);
    }
    if !duplicates.is_empty() {
        details.insert("duplicate_item_ids".into(), to_value(&duplicates));
    }
    (details, findings)
}

fn to_value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
