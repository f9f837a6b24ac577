//! The Unix side of confined access: directory handles from `openat2` (Linux) or a walk of
//! `openat(O_NOFOLLOW | O_DIRECTORY)`, and `*at` calls relative to them.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::{EntryKind, unsafe_path};
use crate::error::{Error, IoResultExt, Result};

/// An open directory below (or at) the tracker root.
#[derive(Debug)]
pub struct Dir {
    path: PathBuf,
    fd: OwnedFd,
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC)
    .union(OFlags::NOFOLLOW);

fn io(errno: Errno) -> std::io::Error {
    std::io::Error::from_raw_os_error(errno.raw_os_error())
}

/// Widens a `stat` time field (its integer type differs between targets).
fn wide<T: TryInto<i64>>(value: T) -> i64 {
    value.try_into().unwrap_or(0)
}

/// Returns the instant `secs` seconds plus `nanos` nanoseconds after the epoch (before it for
/// negative seconds).
fn system_time(secs: i64, nanos: i64) -> SystemTime {
    let nanos = Duration::from_nanos(nanos.clamp(0, 999_999_999) as u64);
    if secs >= 0 {
        UNIX_EPOCH + Duration::from_secs(secs as u64) + nanos
    } else {
        UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs()) + nanos
    }
}

/// Whether an errno from opening with `O_NOFOLLOW` (or resolving with `RESOLVE_NO_SYMLINKS`)
/// means a symlink was in the way.
fn is_symlink_refusal(errno: Errno) -> bool {
    errno == Errno::LOOP || errno == Errno::XDEV || errno == Errno::MLINK
}

impl Dir {
    pub(super) fn open_root(root: &Path) -> Result<Dir> {
        let fd = rustix::fs::open(
            root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io)
        .at(root)?;
        Ok(Dir {
            path: root.to_path_buf(),
            fd,
        })
    }

    /// Returns the directory's path (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn try_clone(&self) -> Result<Dir> {
        Ok(Dir {
            path: self.path.clone(),
            fd: self.fd.try_clone().at(&self.path)?,
        })
    }

    /// Opens `parts` below this directory, one component at a time (creating missing ones when
    /// `create`); `None` when a component is missing and `create` is not set.
    pub(super) fn descend(&self, parts: &[&OsStr], create: bool) -> Result<Option<Dir>> {
        #[cfg(target_os = "linux")]
        if let Some(found) = self.resolve_beneath(parts)? {
            return Ok(Some(found));
        }
        let mut current: Option<Dir> = None;
        for part in parts {
            let parent = current.as_ref().unwrap_or(self);
            match parent.child_dir(part, create)? {
                Some(next) => current = Some(next),
                None => return Ok(None),
            }
        }
        Ok(current)
    }

    /// The whole relative path in one `openat2`; `None` when it is missing (the walk then
    /// creates it or reports it) or the kernel has no `openat2`.
    #[cfg(target_os = "linux")]
    fn resolve_beneath(&self, parts: &[&OsStr]) -> Result<Option<Dir>> {
        use rustix::fs::ResolveFlags;
        let rel: PathBuf = parts.iter().collect();
        let path = self.path.join(&rel);
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        match rustix::fs::openat2(&self.fd, &rel, DIR_FLAGS, Mode::empty(), resolve) {
            Ok(fd) => Ok(Some(Dir { path, fd })),
            Err(e) if is_symlink_refusal(e) => Err(unsafe_path(
                &path,
                "passes through a symlink (pm never follows links inside the tracker)",
            )),
            Err(e) if e == Errno::NOTDIR => Err(unsafe_path(&path, "is not a directory")),
            // Missing (created or reported by the walk), or no openat2 (old kernel, seccomp).
            Err(e)
                if e == Errno::NOENT
                    || e == Errno::NOSYS
                    || e == Errno::PERM
                    || e == Errno::INVAL =>
            {
                Ok(None)
            }
            Err(e) => Err(io(e)).at(&path),
        }
    }

    fn child_dir(&self, name: &OsStr, create: bool) -> Result<Option<Dir>> {
        let path = self.path.join(name);
        for _ in 0..2 {
            match rustix::fs::openat(&self.fd, name, DIR_FLAGS, Mode::empty()) {
                Ok(fd) => return Ok(Some(Dir { path, fd })),
                Err(e) if is_symlink_refusal(e) => {
                    return Err(unsafe_path(
                        &path,
                        "is a symlink (pm never follows links inside the tracker)",
                    ));
                }
                Err(e) if e == Errno::NOTDIR => {
                    return Err(unsafe_path(&path, "is not a directory"));
                }
                Err(e) if e == Errno::NOENT && create => {
                    match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => continue,
                        Err(e) => return Err(io(e)).at(&path),
                    }
                }
                Err(e) if e == Errno::NOENT => return Ok(None),
                Err(e) => return Err(io(e)).at(&path),
            }
        }
        Err(Error::internal(format!(
            "{} vanished right after it was created",
            path.display()
        )))
    }

    /// Opens the subdirectory `name` (never through a symlink); `None` when missing.
    ///
    /// # Errors
    /// `Error::PathUnsafe` for a symlink or a non-directory; `Error::Io`.
    pub fn subdir(&self, name: &OsStr, create: bool) -> Result<Option<Dir>> {
        self.child_dir(name, create)
    }

    fn open_file(&self, name: &OsStr, flags: OFlags, mode: u32) -> Result<Option<File>> {
        let path = self.path.join(name);
        let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(mode)) {
            Ok(fd) => {
                let file = File::from(fd);
                let meta = file.metadata().at(&path)?;
                if !meta.is_file() {
                    return Err(unsafe_path(&path, "is not a regular file"));
                }
                Ok(Some(file))
            }
            Err(e) if is_symlink_refusal(e) => Err(unsafe_path(
                &path,
                "is a symlink (pm never follows links inside the tracker)",
            )),
            Err(e) if e == Errno::NOENT => Ok(None),
            Err(e) => Err(io(e)).at(&path),
        }
    }

    /// Reads the file `name`; `None` when it does not exist.
    ///
    /// # Errors
    /// `Error::PathUnsafe` for a symlink or a non-file; `Error::Io`.
    pub fn read(&self, name: &OsStr) -> Result<Option<Vec<u8>>> {
        let Some(mut file) = self.open_file(name, OFlags::RDONLY, 0)? else {
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
        self.open_file(name, OFlags::RDONLY, 0)
    }

    /// Opens the file `name` for reading and writing without creating it (truncation of a torn
    /// tail); `None` when it does not exist.
    ///
    /// # Errors
    /// As [`Dir::read`].
    pub fn open_rw(&self, name: &OsStr) -> Result<Option<File>> {
        self.open_file(name, OFlags::RDWR, 0)
    }

    /// Creates `name` exclusively and writes `bytes` to it, synced.
    ///
    /// # Errors
    /// `Error::Io` with `AlreadyExists` when it exists; `PathUnsafe` for a symlink.
    pub fn create_new(&self, name: &OsStr, bytes: &[u8]) -> Result<()> {
        let path = self.path.join(name);
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL;
        let mut file = self
            .open_file(name, flags, 0o666)?
            .ok_or_else(|| Error::internal(format!("{} vanished on create", path.display())))?;
        let written = file.write_all(bytes).and_then(|()| file.sync_data());
        if written.is_err() {
            let _ = rustix::fs::unlinkat(&self.fd, name, AtFlags::empty());
        }
        written.at(&path)
    }

    /// Replaces `name` with `bytes` atomically: a sibling temp file (`O_EXCL`, synced) is renamed
    /// over it and the directory is synced. A symlink at `name` is refused, not replaced.
    ///
    /// # Errors
    /// `Error::PathUnsafe` for a symlink or directory at `name`; `Error::Io`.
    pub fn write_atomic(&self, name: &OsStr, bytes: &[u8]) -> Result<()> {
        let path = self.path.join(name);
        match self.kind(name)? {
            EntryKind::Symlink => {
                return Err(unsafe_path(
                    &path,
                    "is a symlink (pm never writes through links inside the tracker)",
                ));
            }
            EntryKind::Directory | EntryKind::Other => {
                return Err(unsafe_path(&path, "is not a regular file"));
            }
            EntryKind::Missing | EntryKind::File(_) => {}
        }
        let base = name.to_string_lossy();
        let mut last_err = None;
        for _ in 0..crate::atomic::TEMP_NAME_ATTEMPTS {
            let temp = crate::atomic::temp_name(&base);
            match self.create_new(OsStr::new(&temp), bytes) {
                Ok(()) => return self.rename_into(OsStr::new(&temp), name),
                Err(Error::Io { source, path }) if source.kind() == ErrorKind::AlreadyExists => {
                    last_err = Some(Error::Io { source, path });
                }
                Err(e) => return Err(e),
            }
        }
        Err(last_err.unwrap_or_else(|| Error::internal("no temp name was tried")))
    }

    fn rename_into(&self, temp: &OsStr, name: &OsStr) -> Result<()> {
        if let Err(e) = rustix::fs::renameat(&self.fd, temp, &self.fd, name) {
            let _ = rustix::fs::unlinkat(&self.fd, temp, AtFlags::empty());
            return Err(io(e)).at(self.path.join(name));
        }
        self.sync()
    }

    /// Appends `bytes` to `name` with one `write_all` in `O_APPEND` mode and syncs it; creates
    /// the file when missing.
    ///
    /// # Errors
    /// `Error::PathUnsafe` for a symlink; `Error::Io`.
    pub fn append(&self, name: &OsStr, bytes: &[u8]) -> Result<()> {
        let path = self.path.join(name);
        let flags = OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE;
        let mut file = self
            .open_file(name, flags, 0o666)?
            .ok_or_else(|| Error::internal(format!("{} vanished on open", path.display())))?;
        file.write_all(bytes).at(&path)?;
        file.sync_data().at(&path)
    }

    /// Removes the file `name` and syncs the directory; false when it did not exist.
    ///
    /// # Errors
    /// `Error::Io` (a symlink is removed as a name, never followed).
    pub fn remove(&self, name: &OsStr) -> Result<bool> {
        match rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()) {
            Ok(()) => {
                self.sync()?;
                Ok(true)
            }
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(io(e)).at(self.path.join(name)),
        }
    }

    /// Removes the file `name` without syncing the directory (lock files and temp files,
    /// whose removal need not survive a crash); false when it did not exist.
    ///
    /// # Errors
    /// `Error::Io`.
    pub fn unlink(&self, name: &OsStr) -> Result<bool> {
        match rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()) {
            Ok(()) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(io(e)).at(self.path.join(name)),
        }
    }

    /// Hard-links `from` to `to` inside this directory (fails when `to` exists).
    ///
    /// # Errors
    /// The raw I/O error, so a caller can tell `AlreadyExists` apart.
    pub fn hard_link(&self, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
        rustix::fs::linkat(&self.fd, from, &self.fd, to, AtFlags::empty()).map_err(io)
    }

    /// Creates the subdirectory `name`; the raw I/O error on failure (`AlreadyExists`).
    ///
    /// # Errors
    /// The raw I/O error.
    pub fn make_dir(&self, name: &OsStr) -> std::io::Result<()> {
        rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o777)).map_err(io)
    }

    /// Removes the empty subdirectory `name`; false when it did not exist.
    ///
    /// # Errors
    /// `Error::Io`.
    pub fn remove_dir(&self, name: &OsStr) -> Result<bool> {
        match rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR) {
            Ok(()) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(io(e)).at(self.path.join(name)),
        }
    }

    /// Returns what `name` is, without following it.
    ///
    /// # Errors
    /// `Error::Io` for failures other than absence.
    pub fn kind(&self, name: &OsStr) -> Result<EntryKind> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(match FileType::from_raw_mode(stat.st_mode) {
                FileType::RegularFile => EntryKind::File(stat.st_size.max(0) as u64),
                FileType::Directory => EntryKind::Directory,
                FileType::Symlink => EntryKind::Symlink,
                _ => EntryKind::Other,
            }),
            Err(Errno::NOENT) => Ok(EntryKind::Missing),
            Err(e) => Err(io(e)).at(self.path.join(name)),
        }
    }

    /// Returns when `name` was last modified, without following it; `None` when it is missing.
    ///
    /// # Errors
    /// `Error::Io` for failures other than absence.
    pub fn modified(&self, name: &OsStr) -> Result<Option<SystemTime>> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(system_time(
                wide(stat.st_mtime),
                wide(stat.st_mtime_nsec),
            ))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(io(e)).at(self.path.join(name)),
        }
    }

    /// Lists the names in this directory (unsorted; `.` and `..` left out).
    ///
    /// # Errors
    /// `Error::Io`.
    pub fn names(&self) -> Result<Vec<std::ffi::OsString>> {
        let fd = self.fd.try_clone().at(&self.path)?;
        let dir = rustix::fs::Dir::read_from(fd.as_fd())
            .map_err(io)
            .at(&self.path)?;
        let mut names = Vec::new();
        for entry in dir {
            let entry = entry.map_err(io).at(&self.path)?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                use std::os::unix::ffi::OsStrExt;
                names.push(OsStr::from_bytes(name).to_os_string());
            }
        }
        Ok(names)
    }

    /// Returns the directory's own metadata (through its handle).
    ///
    /// # Errors
    /// `Error::Io`.
    pub fn metadata(&self) -> Result<std::fs::Metadata> {
        let fd = self.fd.try_clone().at(&self.path)?;
        File::from(fd).metadata().at(&self.path)
    }

    /// Flushes this directory's entries (create, rename, unlink) to disk.
    ///
    /// # Errors
    /// `Error::Io`.
    pub fn sync(&self) -> Result<()> {
        rustix::fs::fsync(&self.fd).map_err(io).at(&self.path)
    }
}
