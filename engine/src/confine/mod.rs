//! Confined access to tracker files: every item file, history stream, lock and other tracker
//! file is reached from a handle of the tracker root, one directory handle at a time, and no
//! symlink below the root is ever followed. A clone can carry symlinks (git stores them), so a
//! symlinked type folder, `history/`, stream or lock would otherwise make pm write outside the
//! tracker; here each of them is refused as [`Error::PathUnsafe`].
//!
//! On Linux a directory is opened with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, falling
//! back to a walk of `openat(O_NOFOLLOW | O_DIRECTORY)` per component where the kernel lacks
//! `openat2`; files inside a directory handle are opened with `O_NOFOLLOW`. The root itself is
//! the user's choice (`--pm-path`, discovery) and may be reached through a symlink.

pub mod leaf;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as imp;

#[cfg(not(unix))]
mod portable;
#[cfg(not(unix))]
use portable as imp;

use std::ffi::OsStr;
use std::path::{Component, Path};

use crate::error::{Error, Result};

pub use imp::Dir;

/// What a name inside a directory is, without following it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// Nothing by that name.
    Missing,
    /// A regular file, with its size in bytes.
    File(u64),
    /// A directory.
    Directory,
    /// A symbolic link (never followed).
    Symlink,
    /// A socket, fifo or device.
    Other,
}

/// The tracker root, opened once; every confined path is resolved from it.
#[derive(Debug)]
pub struct Root {
    dir: Dir,
}

impl Root {
    /// Opens the tracker root `root` (a symlink to the root itself is followed: the root is the
    /// user's choice).
    ///
    /// # Errors
    /// `Error::Io` when the root cannot be opened as a directory.
    pub fn open(root: &Path) -> Result<Root> {
        Ok(Root {
            dir: Dir::open_root(root)?,
        })
    }

    /// Returns the root's path.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Opens the directory `rel` below the root (`"."` or empty is the root), creating missing
    /// components when `create` is set; `None` when it is missing and `create` is not set.
    ///
    /// # Errors
    /// `Error::PathUnsafe` when `rel` is absolute, has `..`, or passes through a symlink or a
    /// non-directory; `Error::Io` for other failures.
    pub fn dir(&self, rel: &Path, create: bool) -> Result<Option<Dir>> {
        let parts = relative_parts(self.path(), rel)?;
        if parts.is_empty() {
            return self.dir.try_clone().map(Some);
        }
        self.dir.descend(&parts, create)
    }

    /// Splits `path` (absolute under the root, or relative to it) into the directory that holds
    /// it and its file name, opening (or creating, when `create`) that directory.
    ///
    /// # Errors
    /// `Error::PathUnsafe` for a path outside the root or through a symlink; `Error::Io`.
    pub fn parent_of<'p>(&self, path: &'p Path, create: bool) -> Result<Option<(Dir, &'p OsStr)>> {
        let rel = self.relative(path)?;
        let name = rel
            .file_name()
            .ok_or_else(|| unsafe_path(path, "names no file"))?;
        let parent = rel.parent().unwrap_or(Path::new(""));
        Ok(self.dir(parent, create)?.map(|dir| (dir, name)))
    }

    /// Returns `path` relative to the root (a relative `path` is taken as relative already).
    ///
    /// # Errors
    /// `Error::PathUnsafe` when an absolute `path` is not below the root.
    pub fn relative<'p>(&self, path: &'p Path) -> Result<&'p Path> {
        if path.is_relative() {
            return Ok(path);
        }
        path.strip_prefix(self.path())
            .map_err(|_| unsafe_path(path, "is outside the tracker root"))
    }
}

/// Returns the normal components of `rel`, refusing anything that could leave the root.
fn relative_parts<'a>(root: &Path, rel: &'a Path) -> Result<Vec<&'a OsStr>> {
    let mut parts = Vec::new();
    for component in rel.components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::CurDir => {}
            _ => {
                return Err(unsafe_path(
                    &root.join(rel),
                    "leaves the tracker root (absolute or `..`)",
                ));
            }
        }
    }
    Ok(parts)
}

/// Returns [`Error::PathUnsafe`] for `path`.
pub(crate) fn unsafe_path(path: &Path, reason: &str) -> Error {
    Error::PathUnsafe {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

/// Writes `bytes` to the tracker file `path` atomically (temp file, fsync, rename, directory
/// fsync), creating missing directories, without following any symlink below `root`.
///
/// # Errors
/// `Error::PathUnsafe` when `path` is outside `root` or a symlink is on the way or at `path`;
/// `Error::Io` otherwise.
pub fn write(root: &Path, path: &Path, bytes: &[u8]) -> Result<()> {
    let root = Root::open(root)?;
    let (dir, name) = expect_dir(root.parent_of(path, true)?, path)?;
    dir.write_atomic(name, bytes)
}

/// Appends `bytes` (one or more whole lines) to the tracker file `path` with one write in append
/// mode, then fsync; creates the file and missing directories.
///
/// # Errors
/// As [`write`].
pub fn append(root: &Path, path: &Path, bytes: &[u8]) -> Result<()> {
    let root = Root::open(root)?;
    let (dir, name) = expect_dir(root.parent_of(path, true)?, path)?;
    dir.append(name, bytes)
}

/// Removes the tracker file `path` and fsyncs its directory; false when it did not exist.
///
/// # Errors
/// As [`write`].
pub fn remove(root: &Path, path: &Path) -> Result<bool> {
    let root = Root::open(root)?;
    match root.parent_of(path, false)? {
        Some((dir, name)) => dir.remove(name),
        None => Ok(false),
    }
}

/// Reads the tracker file `path`; `None` when it (or its directory) does not exist.
///
/// # Errors
/// `Error::PathUnsafe` for a symlink on the way or at `path`; `Error::Io` otherwise.
pub fn read(root: &Path, path: &Path) -> Result<Option<Vec<u8>>> {
    let root = Root::open(root)?;
    match root.parent_of(path, false)? {
        Some((dir, name)) => dir.read(name),
        None => Ok(None),
    }
}

/// Returns what `path` is below `root`, following no symlink (a symlinked directory on the way
/// is reported as [`Error::PathUnsafe`]).
///
/// # Errors
/// As [`read`].
pub fn kind(root: &Path, path: &Path) -> Result<EntryKind> {
    let root = Root::open(root)?;
    match root.parent_of(path, false)? {
        Some((dir, name)) => dir.kind(name),
        None => Ok(EntryKind::Missing),
    }
}

fn expect_dir<'p>(found: Option<(Dir, &'p OsStr)>, path: &Path) -> Result<(Dir, &'p OsStr)> {
    found.ok_or_else(|| Error::internal(format!("{} has no directory", path.display())))
}

#[cfg(test)]
mod tests;
