//! Confined access where no `*at` calls exist: every component is checked with
//! `symlink_metadata` before use. A link swapped in between the check and the use is not
//! caught here (the Unix side has no such window).
#![allow(clippy::disallowed_methods)] // the rename of an atomic replace

use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};

use super::{EntryKind, unsafe_path};
use crate::error::{IoResultExt, Result};

/// An open directory below (or at) the tracker root (its path, checked component by component).
#[derive(Debug)]
pub struct Dir {
    path: PathBuf,
}

impl Dir {
    pub(super) fn open_root(root: &Path) -> Result<Dir> {
        if !fs::metadata(root).at(root)?.is_dir() {
            return Err(unsafe_path(root, "is not a directory"));
        }
        Ok(Dir {
            path: root.to_path_buf(),
        })
    }

    /// Returns the directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn try_clone(&self) -> Result<Dir> {
        Ok(Dir {
            path: self.path.clone(),
        })
    }

    pub(super) fn descend(&self, parts: &[&OsStr], create: bool) -> Result<Option<Dir>> {
        let mut current = self.try_clone()?;
        for part in parts {
            match current.subdir(part, create)? {
                Some(next) => current = next,
                None => return Ok(None),
            }
        }
        Ok(Some(current))
    }

    /// Opens the subdirectory `name` (never through a symlink); `None` when missing.
    ///
    /// # Errors
    /// `Error::PathUnsafe` for a symlink or a non-directory; `Error::Io`.
    pub fn subdir(&self, name: &OsStr, create: bool) -> Result<Option<Dir>> {
        let path = self.path.join(name);
        match self.kind(name)? {
            EntryKind::Directory => Ok(Some(Dir { path })),
            EntryKind::Symlink => Err(unsafe_path(&path, "is a symlink")),
            EntryKind::Missing if create => {
                match fs::create_dir(&path) {
                    Err(e) if e.kind() != ErrorKind::AlreadyExists => return Err(e).at(&path),
                    _ => {}
                }
                self.subdir(name, false)
            }
            EntryKind::Missing => Ok(None),
            _ => Err(unsafe_path(&path, "is not a directory")),
        }
    }

    fn checked_file(&self, name: &OsStr) -> Result<Option<PathBuf>> {
        let path = self.path.join(name);
        match self.kind(name)? {
            EntryKind::Missing => Ok(None),
            EntryKind::File(_) => Ok(Some(path)),
            EntryKind::Symlink => Err(unsafe_path(&path, "is a symlink")),
            _ => Err(unsafe_path(&path, "is not a regular file")),
        }
    }

    /// Reads the file `name`; `None` when it does not exist.
    ///
    /// # Errors
    /// `Error::PathUnsafe` for a symlink or a non-file; `Error::Io`.
    pub fn read(&self, name: &OsStr) -> Result<Option<Vec<u8>>> {
        let Some(mut file) = self.open_read(name)? else {
            return Ok(None);
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).at(self.path.join(name))?;
        Ok(Some(bytes))
    }

    /// Opens the file `name` for reading; `None` when it does not exist.
    ///
    /// # Errors
    /// As [`Dir::read`].
    pub fn open_read(&self, name: &OsStr) -> Result<Option<File>> {
        match self.checked_file(name)? {
            Some(path) => File::open(&path).at(&path).map(Some),
            None => Ok(None),
        }
    }

    /// Opens the file `name` for reading and writing; `None` when it does not exist.
    ///
    /// # Errors
    /// As [`Dir::read`].
    pub fn open_rw(&self, name: &OsStr) -> Result<Option<File>> {
        match self.checked_file(name)? {
            Some(path) => OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .at(&path)
                .map(Some),
            None => Ok(None),
        }
    }

    /// Creates `name` exclusively and writes `bytes` to it, synced.
    ///
    /// # Errors
    /// `Error::Io` with `AlreadyExists` when it exists.
    pub fn create_new(&self, name: &OsStr, bytes: &[u8]) -> Result<()> {
        let path = self.path.join(name);
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .at(&path)?;
        let written = file.write_all(bytes).and_then(|()| file.sync_data());
        if written.is_err() {
            let _ = fs::remove_file(&path);
        }
        written.at(&path)
    }

    /// Replaces `name` with `bytes` atomically (temp file, rename).
    ///
    /// # Errors
    /// `Error::PathUnsafe` for a symlink or directory at `name`; `Error::Io`.
    pub fn write_atomic(&self, name: &OsStr, bytes: &[u8]) -> Result<()> {
        self.checked_file(name)?;
        let temp = crate::atomic::temp_name(&name.to_string_lossy());
        self.create_new(OsStr::new(&temp), bytes)?;
        let (from, to) = (self.path.join(&temp), self.path.join(name));
        if let Err(e) = fs::rename(&from, &to) {
            let _ = fs::remove_file(&from);
            return Err(e).at(&to);
        }
        Ok(())
    }

    /// Appends `bytes` to `name` in append mode and syncs it; creates the file when missing.
    ///
    /// # Errors
    /// `Error::PathUnsafe` for a symlink; `Error::Io`.
    pub fn append(&self, name: &OsStr, bytes: &[u8]) -> Result<()> {
        self.checked_file(name)?;
        let path = self.path.join(name);
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .at(&path)?;
        file.write_all(bytes).at(&path)?;
        file.sync_data().at(&path)
    }

    /// Removes the file `name`; false when it did not exist.
    ///
    /// # Errors
    /// `Error::Io`.
    pub fn remove(&self, name: &OsStr) -> Result<bool> {
        let path = self.path.join(name);
        match fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e).at(&path),
        }
    }

    /// Removes the file `name` (the same as [`Dir::remove`] here).
    ///
    /// # Errors
    /// `Error::Io`.
    pub fn unlink(&self, name: &OsStr) -> Result<bool> {
        self.remove(name)
    }

    /// Hard-links `from` to `to` inside this directory.
    ///
    /// # Errors
    /// The raw I/O error.
    pub fn hard_link(&self, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
        fs::hard_link(self.path.join(from), self.path.join(to))
    }

    /// Creates the subdirectory `name`.
    ///
    /// # Errors
    /// The raw I/O error.
    pub fn make_dir(&self, name: &OsStr) -> std::io::Result<()> {
        fs::create_dir(self.path.join(name))
    }

    /// Removes the empty subdirectory `name`; false when it did not exist.
    ///
    /// # Errors
    /// `Error::Io`.
    pub fn remove_dir(&self, name: &OsStr) -> Result<bool> {
        let path = self.path.join(name);
        match fs::remove_dir(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e).at(&path),
        }
    }

    /// Returns what `name` is, without following it.
    ///
    /// # Errors
    /// `Error::Io` for failures other than absence.
    pub fn kind(&self, name: &OsStr) -> Result<EntryKind> {
        let path = self.path.join(name);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => Ok(EntryKind::Symlink),
            Ok(meta) if meta.is_dir() => Ok(EntryKind::Directory),
            Ok(meta) if meta.is_file() => Ok(EntryKind::File(meta.len())),
            Ok(_) => Ok(EntryKind::Other),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(EntryKind::Missing),
            Err(e) => Err(e).at(&path),
        }
    }

    /// Returns when `name` was last modified, without following it; `None` when it is missing.
    ///
    /// # Errors
    /// `Error::Io` for failures other than absence.
    pub fn modified(&self, name: &OsStr) -> Result<Option<std::time::SystemTime>> {
        let path = self.path.join(name);
        match fs::symlink_metadata(&path) {
            Ok(meta) => meta.modified().map(Some).at(&path),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).at(&path),
        }
    }

    /// Lists the names in this directory.
    ///
    /// # Errors
    /// `Error::Io`.
    pub fn names(&self) -> Result<Vec<std::ffi::OsString>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(&self.path).at(&self.path)? {
            names.push(entry.at(&self.path)?.file_name());
        }
        Ok(names)
    }

    /// Returns the directory's own metadata.
    ///
    /// # Errors
    /// `Error::Io`.
    pub fn metadata(&self) -> Result<fs::Metadata> {
        fs::symlink_metadata(&self.path).at(&self.path)
    }

    /// A no-op here: directories cannot be opened as files.
    ///
    /// # Errors
    /// Never.
    pub fn sync(&self) -> Result<()> {
        Ok(())
    }
}
