//! The `files` check: project-scoped `files`/`docs` links whose path no longer exists (classified
//! `moved` when a scanned project file has the same name, else `deleted`), and project files in
//! pm's curated scan (`src/`, `tests/`, `docs/`, root docs) that no item links.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rayon::prelude::*;
use serde_json::{Value, json};

use super::items::{capped, sorted_unique};
use super::{CheckName, Outcome, Scope};
use crate::collate::locale_compare;

/// Project-file lists keep this many entries (pm's `FILE_LIST_SUMMARY_LIMIT`).
const FILE_LIST_LIMIT: usize = 40;
/// Folders of the curated scan.
const SCAN_DIRS: [&str; 3] = ["src", "tests", "docs"];
/// Root files of the curated scan.
const SCAN_ROOT_FILES: [&str; 8] = [
    "README.md",
    "PRD.md",
    "CHANGELOG.md",
    "AGENTS.md",
    "CONTRIBUTING.md",
    "SECURITY.md",
    "CODE_OF_CONDUCT.md",
    "LICENSE",
];
/// Folders the scan never enters.
const IGNORED_DIRS: [&str; 6] = [
    "node_modules",
    ".git",
    ".cursor",
    ".agents",
    "dist",
    "coverage",
];

/// Normalizes a linked path: `/` separators, no leading `./` or `/`.
fn normalize(path: &str) -> String {
    let mut p = path.trim().replace('\\', "/");
    loop {
        if let Some(rest) = p.strip_prefix("./") {
            p = rest.to_string();
        } else if let Some(rest) = p.strip_prefix('/') {
            p = rest.to_string();
        } else {
            return p;
        }
    }
}

/// Whether a linked path is a URL rather than a project path.
fn is_remote(path: &str) -> bool {
    let p = path.trim();
    p.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
    })
}

/// Lists files under `dir` (relative to `root`), skipping dot entries and ignored folders.
fn walk(root: &Path, dir: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with('.') {
            continue;
        }
        let rel = format!("{dir}/{name}");
        match entry.file_type() {
            Ok(t) if t.is_dir() && !IGNORED_DIRS.contains(&name.as_str()) => walk(root, &rel, out),
            Ok(t) if t.is_file() => out.push(rel),
            _ => {}
        }
    }
}

/// One missing link: the path, its owner and the link field.
struct Stale {
    path: String,
    owner: String,
    field: &'static str,
}

/// The `files` check.
pub(crate) fn files(scope: &Scope<'_>) -> Outcome {
    let workspace = scope.view.tracker().workspace_root();
    let mut links: Vec<(String, &super::CheckItem, &'static str)> = Vec::new();
    let mut remote = BTreeSet::new();
    for item in scope.items {
        for field in ["files", "docs"] {
            for row in item.rows(field) {
                if row.get("scope").and_then(Value::as_str) != Some("project") {
                    continue;
                }
                let Some(path) = row.get("path").and_then(Value::as_str) else {
                    continue;
                };
                if is_remote(path) {
                    remote.insert(path.trim().to_string());
                } else if !normalize(path).is_empty() {
                    links.push((path.to_string(), item, field));
                }
            }
        }
    }
    let linked: BTreeSet<String> = links.iter().map(|(p, _, _)| normalize(p)).collect();
    let missing_flags: Vec<bool> = links
        .par_iter()
        .map(|(path, _, _)| {
            let p = Path::new(path);
            let full = if p.is_absolute() {
                p.to_path_buf()
            } else {
                workspace.join(p)
            };
            match std::fs::metadata(&full) {
                Ok(m) => !m.is_file() && !m.is_dir(),
                Err(e) => e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(20),
            }
        })
        .collect();
    let stale: Vec<Stale> = links
        .iter()
        .zip(&missing_flags)
        .filter(|(_, missing)| **missing)
        .map(|((path, item, field), _)| Stale {
            path: normalize(path),
            owner: item.id.clone(),
            field,
        })
        .collect();
    let mut candidates = Vec::new();
    for dir in SCAN_DIRS {
        walk(workspace, dir, &mut candidates);
    }
    for file in SCAN_ROOT_FILES {
        if workspace.join(file).is_file() {
            candidates.push(file.to_string());
        }
    }
    let candidates = sorted_unique(candidates);
    let basenames: BTreeSet<&str> = candidates
        .iter()
        .map(|c| c.rsplit('/').next().unwrap_or(c))
        .collect();
    let missing_paths = sorted_unique(stale.iter().map(|s| s.path.clone()).collect());
    let classify = |path: &str| {
        if basenames.contains(path.rsplit('/').next().unwrap_or(path)) {
            "moved"
        } else {
            "deleted"
        }
    };
    let moved = missing_paths
        .iter()
        .filter(|p| classify(p) == "moved")
        .count();
    let orphaned: Vec<String> = candidates
        .iter()
        .filter(|c| !linked.contains(*c))
        .cloned()
        .collect();
    let owners: BTreeMap<&str, &super::CheckItem> =
        scope.items.iter().map(|i| (i.id.as_str(), i)).collect();
    let mut owner_rows: Vec<(&Stale, String)> = stale
        .iter()
        .map(|s| {
            let (status, title) = owners
                .get(s.owner.as_str())
                .map_or(("", ""), |i| (i.status.as_str(), i.title()));
            let line = format!(
                "{}:{} owner={} status={status} field={} title={}",
                s.path,
                classify(&s.path),
                s.owner,
                s.field,
                crate::json::quote(title)
            );
            (s, line)
        })
        .collect();
    owner_rows.sort_by(|a, b| {
        locale_compare(&a.0.path, &b.0.path)
            .then_with(|| locale_compare(&a.0.owner, &b.0.owner))
            .then_with(|| locale_compare(a.0.field, b.0.field))
    });
    owner_rows.dedup_by(|a, b| a.1 == b.1);
    let mut warnings = Vec::new();
    if !missing_paths.is_empty() {
        warnings.push(format!(
            "validate_files_missing_linked_paths:{}",
            missing_paths.len()
        ));
    }
    if !orphaned.is_empty() {
        warnings.push(format!("validate_files_orphaned_paths:{}", orphaned.len()));
    }
    let limit = Some(FILE_LIST_LIMIT);
    let remote: Vec<String> = sorted_unique(remote.into_iter().collect());
    let remote_list = capped(remote.clone(), limit);
    let missing_list = capped(missing_paths.clone(), limit);
    let classifications = capped(
        missing_paths
            .iter()
            .map(|p| format!("{p}:{}", classify(p)))
            .collect::<Vec<_>>(),
        limit,
    );
    let owner_list = capped(
        owner_rows
            .into_iter()
            .map(|(_, line)| line)
            .collect::<Vec<_>>(),
        limit,
    );
    let orphan_class = |p: &str| {
        if p.starts_with("docs/")
            || (!p.starts_with("tests/") && !p.starts_with("src/") && p.ends_with(".md"))
        {
            "docs_unowned"
        } else if p.starts_with("tests/") {
            "tests_unowned"
        } else if p.starts_with("src/") {
            "source_unowned"
        } else {
            "unlinked_existing"
        }
    };
    let orphan_list = capped(orphaned.clone(), limit);
    let orphan_classes = capped(
        orphaned
            .iter()
            .map(|p| format!("{p}:{}:owner_candidate=unowned", orphan_class(p)))
            .collect::<Vec<_>>(),
        limit,
    );
    let orphan_rows = capped(
        orphaned
            .iter()
            .map(|p| {
                let command = if orphan_class(p) == "docs_unowned" { "docs" } else { "files" };
                let hint = format!(
                    "pm {command} <id> --add path={p},scope=project,note=\"<why this artifact belongs to the item>\""
                );
                format!(
                    "{p}:{} owner_candidate=unowned hint={}",
                    orphan_class(p),
                    crate::json::quote(&hint)
                )
            })
            .collect::<Vec<_>>(),
        limit,
    );
    let n = candidates.len();
    let details = json!({
        "workspace_root": workspace.display().to_string(),
        "scan_mode_requested": "default",
        "scan_mode_applied": "default",
        "strict_tracked_all_mode": false,
        "strict_mode_forces_pm_internals": false,
        "strict_mode_forces_pm_internals_notice": null,
        "file_list_detail_mode": "summary",
        "file_list_summary_limit": FILE_LIST_LIMIT,
        "candidate_scan_source": "default-curated",
        "include_pm_internals": false,
        "include_pm_internals_requested": false,
        "pm_internal_candidate_prefixes": [".agents/pm"],
        "pm_internal_excluded_count": 0,
        "excluded_total": 0,
        "excluded_by_reason": {},
        "linked_project_paths": linked.len(),
        "remote_linked_paths_count": remote.len(),
        "remote_linked_paths_total": remote.len(),
        "remote_linked_paths": remote_list.values,
        "remote_linked_paths_truncated": remote_list.truncated,
        "candidate_total_raw": n,
        "candidate_scanned_raw": n,
        "candidate_total": n,
        "candidate_scanned": n,
        "scanned_candidate_files": n,
        "missing_linked_paths_count": missing_paths.len(),
        "missing_linked_paths_total": missing_paths.len(),
        "missing_linked_paths": missing_list.values,
        "missing_linked_paths_truncated": missing_list.truncated,
        "missing_linked_paths_moved_count": moved,
        "missing_linked_paths_deleted_count": missing_paths.len() - moved,
        "missing_linked_path_classifications": classifications.values,
        "missing_linked_path_classifications_truncated": classifications.truncated,
        "missing_linked_path_rows_count": missing_paths.len(),
        "missing_linked_path_rows": owner_list.values,
        "orphaned_paths_count": orphaned.len(),
        "orphaned_paths_total": orphaned.len(),
        "orphaned_paths": orphan_list.values,
        "orphaned_paths_truncated": orphan_list.truncated,
        "orphaned_path_classifications": orphan_classes.values,
        "orphaned_path_classifications_truncated": orphan_classes.truncated,
        "orphaned_path_rows_count": orphaned.len(),
        "orphaned_path_rows": orphan_rows.values,
    });
    Outcome::new(CheckName::Files, false, details, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_urls() {
        assert_eq!(normalize(".//./a\\b.md"), "a/b.md");
        assert!(is_remote("https://example.com/x"));
        assert!(!is_remote("docs/a.md"));
    }
}
