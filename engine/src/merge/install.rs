//! `pm merge install`: records the five merge drivers in the clone's git configuration and
//! reconciles the fence block of the worktree's `.gitattributes`. Idempotent; a dry run
//! reports the same plan and writes nothing.

use super::fence::{self, ATTRIBUTES_END, ATTRIBUTES_START, ConfigEntry};
use super::repo::GitRepo;
use crate::error::{Error, IoResultExt, Result};
use crate::init::with_block;
use crate::schema::RuntimeSchema;
use crate::tracker::Tracker;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// What an install found and (unless a dry run) did.
#[derive(Clone, Debug)]
pub struct InstallReport {
    /// The repository the tracker lives in.
    pub repo: GitRepo,
    /// The tracker root (as found on disk).
    pub tracker_root: PathBuf,
    /// `<worktree>/.gitattributes`.
    pub attributes_path: PathBuf,
    /// Whether the fence block differed from what the file holds (and so was, or would be,
    /// rewritten).
    pub attributes_changed: bool,
    /// The attribute lines of the block.
    pub patterns: Vec<String>,
    /// The ten driver entries.
    pub config: Vec<ConfigEntry>,
    /// Whether any entry differed from the clone's configuration.
    pub config_changed: bool,
}

/// Installs the merge fence for `tracker`, whose drivers call `program`.
///
/// The configuration is written before `.gitattributes`, so a failed install never leaves
/// attributes that name drivers git does not know.
///
/// # Errors
/// [`Error::MergeRootNotFound`] when the tracker is not inside a git worktree;
/// [`Error::MergeGitConfigUnwritable`] when git refuses a configuration write; `Error::Io`
/// for `.gitattributes`.
pub fn install(
    tracker: &Tracker,
    schema: &RuntimeSchema,
    program: &Path,
    dry_run: bool,
) -> Result<InstallReport> {
    let root = tracker
        .root()
        .canonicalize()
        .unwrap_or_else(|_| tracker.root().to_path_buf());
    let repo = GitRepo::discover(&root)?;
    let rel = relative_posix(&root, &repo.top_level)
        .ok_or_else(|| Error::MergeRootNotFound { path: root.clone() })?;
    let folders: Vec<&str> = schema.types.folders().into_iter().map(|(f, _)| f).collect();
    let patterns = fence::attribute_patterns(&rel, &folders);
    let config = fence::config_entries(program);

    let current_config = repo.pm_driver_entries()?;
    let missing: Vec<&ConfigEntry> = config
        .iter()
        .filter(|entry| {
            !current_config
                .iter()
                .any(|(k, v)| k.eq_ignore_ascii_case(&entry.key) && *v == entry.value)
        })
        .collect();

    let attributes_path = repo.top_level.join(".gitattributes");
    let current = match std::fs::read_to_string(&attributes_path) {
        Ok(text) => text,
        Err(e) if e.kind() == ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).at(&attributes_path),
    };
    let block = fence::attributes_block(&patterns);
    let next = with_block(&current, ATTRIBUTES_START, ATTRIBUTES_END, &block);
    let attributes_changed = next != current;

    if !dry_run {
        for entry in &missing {
            repo.set_config(&entry.key, &entry.value)?;
        }
        if attributes_changed {
            crate::atomic::write(&attributes_path, next.as_bytes())?;
        }
    }
    Ok(InstallReport {
        config_changed: !missing.is_empty(),
        repo,
        tracker_root: root,
        attributes_path,
        attributes_changed,
        patterns,
        config,
    })
}

/// Returns `path` relative to `base` with `/` separators, or `None` when it is not inside.
fn relative_posix(path: &Path, base: &Path) -> Option<String> {
    let rel = path.strip_prefix(base).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| match c {
            std::path::Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_posix_and_inside() {
        assert_eq!(
            relative_posix(Path::new("/w/.agents/pm"), Path::new("/w")).as_deref(),
            Some(".agents/pm")
        );
        assert_eq!(
            relative_posix(Path::new("/w"), Path::new("/w")).as_deref(),
            Some("")
        );
        assert_eq!(relative_posix(Path::new("/x"), Path::new("/w")), None);
    }
}
