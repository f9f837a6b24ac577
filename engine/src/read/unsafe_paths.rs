//! Symlinks inside a tracker, named for `validate` and `health`. Git stores symlinks, so a
//! clone can carry a linked type folder, `history/`, stream, item file, `locks/` or lock file;
//! pm never follows one (reads and writes refuse them as `path_unsafe`), and these checks say
//! where they are so a user can replace them.

use crate::schema::TypeRegistry;
use crate::tracker::Tracker;

/// The fix both reports print.
pub const UNSAFE_PATHS_FIX: &str = "replace each symlink with the real file or folder (git \
     keeps symlinks: see `git log -- <path>`); pm never reads or writes through them";

/// The tracker folders pm reads or writes, besides the type folders.
const FOLDERS: [&str; 8] = [
    "history",
    "locks",
    "runtime",
    "schema",
    "search",
    "index",
    "checkpoints",
    "transactions",
];

/// Returns the tracker-relative paths of the symlinked tracker folders and of the symlinks in
/// `locks/`, sorted. Item files and streams are the listings' to report (their reads refuse a
/// link with `path_unsafe`); see [`merge`].
pub fn linked_folders_and_locks(tracker: &Tracker, types: &TypeRegistry) -> Vec<String> {
    let root = tracker.root();
    let mut out: Vec<String> = types
        .folders()
        .into_iter()
        .map(|(folder, _)| folder)
        .chain(FOLDERS)
        .filter(|folder| is_symlink(&root.join(folder)))
        .map(str::to_string)
        .collect();
    if let Ok(Some(entries)) = crate::confine::leaf::list_folder(&tracker.locks_dir()) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_symlink()) {
                out.push(format!("locks/{}", entry.file_name().to_string_lossy()));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Returns `found` with `refused` (paths whose reads were refused as `path_unsafe`) merged in,
/// sorted and unique.
pub fn merge(mut found: Vec<String>, refused: impl IntoIterator<Item = String>) -> Vec<String> {
    found.extend(refused);
    found.sort();
    found.dedup();
    found
}

fn is_symlink(path: &std::path::Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn names_linked_folders_and_lock_links() -> Result<(), Box<dyn std::error::Error>> {
        let temp = tempfile::tempdir()?;
        let tracker = Tracker::at(temp.path().join("pm"));
        let root = tracker.root();
        std::fs::create_dir_all(root.join("locks"))?;
        std::fs::create_dir_all(temp.path().join("elsewhere"))?;
        std::os::unix::fs::symlink(temp.path().join("elsewhere"), root.join("tasks"))?;
        std::os::unix::fs::symlink(temp.path().join("elsewhere"), root.join("history"))?;
        std::os::unix::fs::symlink(temp.path().join("x"), root.join("locks/pm-a.lock"))?;
        let types = TypeRegistry::builtin();
        assert_eq!(
            linked_folders_and_locks(&tracker, &types),
            ["history", "locks/pm-a.lock", "tasks"]
        );
        assert_eq!(
            merge(vec!["tasks".into()], ["history/pm-a.jsonl".to_string()]),
            ["history/pm-a.jsonl", "tasks"]
        );
        Ok(())
    }
}
