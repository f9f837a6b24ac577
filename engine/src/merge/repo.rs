//! The git repository around a tracker: where its worktree, git directory and clone-local
//! (common) directory are, found by walking up from a directory as git does, and the two
//! `git config` calls the merge fence needs. Discovery reads files only, so a merge driver
//! that git starts once per conflicting file pays no extra process.

use crate::error::{Error, IoResultExt, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A git worktree and its directories.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitRepo {
    /// The top of the worktree (where `.git` is).
    pub top_level: PathBuf,
    /// The worktree's git directory (`.git`, or `.git/worktrees/<name>` of a linked worktree).
    pub git_dir: PathBuf,
    /// The directory every worktree of the clone shares (`config`, clone-local receipts).
    pub common_dir: PathBuf,
}

impl GitRepo {
    /// Returns the repository containing `start` (absolute): the nearest directory holding a
    /// `.git` directory, or a `.git` file naming one (`gitdir: <path>`, linked worktrees and
    /// submodules); the common directory follows the git directory's `commondir` file.
    ///
    /// Bare repositories and `GIT_DIR` overrides are not considered: the fence lives in a
    /// worktree.
    ///
    /// # Errors
    /// [`Error::MergeRootNotFound`] when no ancestor of `start` is a git worktree.
    pub fn discover(start: &Path) -> Result<GitRepo> {
        let start = start.canonicalize().unwrap_or_else(|_| start.to_path_buf());
        for dir in start.ancestors() {
            let dot_git = dir.join(".git");
            let git_dir = if dot_git.is_dir() {
                dot_git
            } else if dot_git.is_file() {
                match linked_git_dir(&dot_git)? {
                    Some(path) => path,
                    None => continue,
                }
            } else {
                continue;
            };
            let common_dir = common_dir_of(&git_dir)?;
            return Ok(GitRepo {
                top_level: dir.to_path_buf(),
                git_dir,
                common_dir,
            });
        }
        Err(Error::MergeRootNotFound { path: start })
    }

    /// Returns the clone's configuration file (`<common dir>/config`).
    pub fn config_path(&self) -> PathBuf {
        self.common_dir.join("config")
    }

    /// Returns every `merge.pm-*` entry of the clone's configuration as `(key, value)`, keys
    /// lowercased the way git prints them.
    ///
    /// # Errors
    /// [`Error::MergeGitConfigUnwritable`] when git cannot be run.
    pub fn pm_driver_entries(&self) -> Result<Vec<(String, String)>> {
        let output = self
            .git_config()
            .args(["--null", "--get-regexp", r"^merge\.pm-"])
            .output()
            .map_err(|e| self.config_error(e.to_string()))?;
        // Exit 1 means "no such key"; anything else non-zero is a real failure.
        if !output.status.success() && output.status.code() != Some(1) {
            return Err(self.config_error(String::from_utf8_lossy(&output.stderr).into_owned()));
        }
        let text = String::from_utf8_lossy(&output.stdout);
        Ok(text
            .split('\0')
            .filter(|entry| !entry.is_empty())
            .map(|entry| match entry.split_once('\n') {
                Some((key, value)) => (key.to_string(), value.to_string()),
                None => (entry.to_string(), String::new()),
            })
            .collect())
    }

    /// Sets `key` to `value` in the clone's configuration.
    ///
    /// # Errors
    /// [`Error::MergeGitConfigUnwritable`] when git cannot be run or refuses the write.
    pub fn set_config(&self, key: &str, value: &str) -> Result<()> {
        let output = self
            .git_config()
            .args([key, value])
            .output()
            .map_err(|e| self.config_error(e.to_string()))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(self.config_error(String::from_utf8_lossy(&output.stderr).trim().to_string()))
        }
    }

    fn git_config(&self) -> Command {
        let mut command = Command::new("git");
        command
            .arg("config")
            .arg("--file")
            .arg(self.config_path())
            .current_dir(&self.top_level);
        command
    }

    fn config_error(&self, detail: String) -> Error {
        Error::MergeGitConfigUnwritable {
            path: self.config_path(),
            detail,
        }
    }
}

/// Returns the git directory a `.git` file names (`gitdir: <path>`, relative to the file's
/// directory), or `None` when the file does not have that shape.
fn linked_git_dir(dot_git: &Path) -> Result<Option<PathBuf>> {
    let text = std::fs::read_to_string(dot_git).at(dot_git)?;
    let Some(target) = text.trim_end().strip_prefix("gitdir:") else {
        return Ok(None);
    };
    let base = dot_git.parent().unwrap_or(Path::new("/"));
    Ok(Some(base.join(target.trim())))
}

/// Returns the common directory of `git_dir`: the path its `commondir` file holds (relative to
/// `git_dir`), else `git_dir` itself.
fn common_dir_of(git_dir: &Path) -> Result<PathBuf> {
    let file = git_dir.join("commondir");
    match std::fs::read_to_string(&file) {
        Ok(text) => {
            let joined = git_dir.join(text.trim_end());
            Ok(joined.canonicalize().unwrap_or(joined))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(git_dir.to_path_buf()),
        Err(e) => Err(e).at(&file),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn finds_the_worktree_from_a_subdirectory() -> TestResult {
        let dir = tempfile::tempdir()?;
        let top = dir.path().canonicalize()?;
        std::fs::create_dir_all(top.join(".git"))?;
        std::fs::create_dir_all(top.join("a/b"))?;
        let repo = GitRepo::discover(&top.join("a/b"))?;
        assert_eq!(repo.top_level, top);
        assert_eq!(repo.git_dir, top.join(".git"));
        assert_eq!(repo.common_dir, top.join(".git"));
        Ok(())
    }

    #[test]
    fn follows_a_linked_worktree_to_its_common_dir() -> TestResult {
        let dir = tempfile::tempdir()?;
        let top = dir.path().canonicalize()?;
        let linked = top.join("main/.git/worktrees/wt");
        std::fs::create_dir_all(&linked)?;
        crate::atomic::write(&linked.join("commondir"), b"../..\n")?;
        std::fs::create_dir_all(top.join("wt"))?;
        crate::atomic::write(
            &top.join("wt/.git"),
            format!("gitdir: {}\n", linked.display()).as_bytes(),
        )?;
        let repo = GitRepo::discover(&top.join("wt"))?;
        assert_eq!(repo.top_level, top.join("wt"));
        assert_eq!(repo.git_dir, linked);
        assert_eq!(repo.common_dir, top.join("main/.git"));
        Ok(())
    }

    #[test]
    fn outside_any_worktree_is_merge_root_not_found() -> TestResult {
        let dir = tempfile::tempdir()?;
        let err = GitRepo::discover(dir.path())
            .err()
            .ok_or("no repo expected")?;
        assert_eq!(err.code().as_str(), "merge_root_not_found");
        Ok(())
    }
}
