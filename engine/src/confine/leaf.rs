//! Reads of tracker files by path, for the readers that list whole folders (the scan, the
//! index build, validate, health): an item file or stream lives exactly one folder below the
//! root, so a read refuses a symlinked folder (one `lstat`) and opens the file with
//! `O_NOFOLLOW`; a folder listing refuses a symlinked folder. Each refusal is
//! [`Error::PathUnsafe`], so a read through a link git checked out answers the same code a write
//! does, and nothing outside the tracker is ever read as tracker data.

use std::fs::{File, ReadDir};
use std::io::{ErrorKind, Read};
use std::path::Path;

use super::unsafe_path;
use crate::error::{Error, IoResultExt, Result};

const SYMLINK: &str = "is a symlink (pm never follows links inside the tracker)";

/// Checks that the folder `dir` is a real directory when it exists: `Ok(false)` when missing.
///
/// # Errors
/// `Error::PathUnsafe` for a symlink or a non-directory; `Error::Io` when it cannot be stat'ed.
pub fn check_folder(dir: &Path) -> Result<bool> {
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => Err(unsafe_path(dir, SYMLINK)),
        Ok(meta) if !meta.is_dir() => Err(unsafe_path(dir, "is not a directory")),
        Ok(_) => Ok(true),
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(false),
        Err(err) => Err(err).at(dir),
    }
}

/// Checks that no folder between `root` and `path` (both excluded) is a symlink, so that an
/// operation on `path` by name stays inside the tracker; a missing folder ends the walk.
///
/// # Errors
/// `Error::PathUnsafe` for a symlinked folder on the way, or a `path` outside `root`.
pub fn check_beneath(root: &Path, path: &Path) -> Result<()> {
    let rel = path
        .strip_prefix(root)
        .map_err(|_| unsafe_path(path, "is outside the tracker root"))?;
    let mut dir = root.to_path_buf();
    let mut parts: Vec<_> = rel.components().collect();
    parts.pop();
    for part in parts {
        dir.push(part);
        if !check_folder(&dir)? {
            break;
        }
    }
    Ok(())
}

/// Lists the folder `dir`; `None` when it does not exist.
///
/// # Errors
/// As [`check_folder`]; `Error::Io` when it cannot be listed.
pub fn list_folder(dir: &Path) -> Result<Option<ReadDir>> {
    if !check_folder(dir)? {
        return Ok(None);
    }
    match std::fs::read_dir(dir) {
        Ok(entries) => Ok(Some(entries)),
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err).at(dir),
    }
}

/// Opens the file `path` for reading unless it or its folder is a symlink; `None` when it does
/// not exist.
///
/// # Errors
/// `Error::PathUnsafe` for a symlink at `path` or its folder; `Error::Io` otherwise.
pub fn open_file(path: &Path) -> Result<Option<File>> {
    if let Some(folder) = path.parent()
        && !check_folder(folder)?
    {
        return Ok(None);
    }
    open_nofollow(path)
}

/// Opens `path` without following a symlink at its last component (its folder is the caller's
/// check); `None` when it does not exist.
///
/// # Errors
/// `Error::PathUnsafe` for a symlink; `Error::Io` otherwise.
pub fn open_nofollow(path: &Path) -> Result<Option<File>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() | rustix::fs::OFlags::CLOEXEC.bits();
        options.custom_flags(i32::try_from(nofollow).unwrap_or(i32::MAX));
    }
    #[cfg(not(unix))]
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(unsafe_path(path, SYMLINK));
    }
    match options.open(path) {
        Ok(file) => Ok(Some(file)),
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(None),
        Err(err) if is_symlink_refusal(&err) => Err(unsafe_path(path, SYMLINK)),
        Err(err) => Err(err).at(path),
    }
}

/// Reads the whole file `path` as [`open_file`] opens it; `None` when it does not exist.
///
/// # Errors
/// As [`open_file`].
pub fn read_file(path: &Path) -> Result<Option<Vec<u8>>> {
    let Some(mut file) = open_file(path)? else {
        return Ok(None);
    };
    let hint = file
        .metadata()
        .map_or(0, |m| usize::try_from(m.len()).unwrap_or(0));
    let mut bytes = Vec::with_capacity(hint);
    file.read_to_end(&mut bytes).at(path)?;
    Ok(Some(bytes))
}

/// Reads `path` as [`read_file`] does; a missing file is `Error::Io` (`NotFound`) naming it.
///
/// # Errors
/// As [`read_file`].
pub fn read_existing(path: &Path) -> Result<Vec<u8>> {
    read_file(path)?.ok_or_else(|| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::from(ErrorKind::NotFound),
    })
}

/// Whether an open failed because the last component is a symlink (`ELOOP`; `EMLINK` on
/// FreeBSD, `EFTYPE` on some BSDs).
fn is_symlink_refusal(err: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        let raw = err.raw_os_error();
        raw == Some(rustix::io::Errno::LOOP.raw_os_error())
            || raw == Some(rustix::io::Errno::MLINK.raw_os_error())
    }
    #[cfg(not(unix))]
    {
        let _ = err;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

    #[cfg(unix)]
    #[test]
    fn symlinked_files_and_folders_are_refused_and_real_ones_read() -> TestResult {
        let temp = tempfile::tempdir()?;
        let root = temp.path().join("root");
        let outside = temp.path().join("outside");
        std::fs::create_dir_all(root.join("tasks"))?;
        std::fs::create_dir_all(&outside)?;
        crate::atomic::write(&outside.join("a.toon"), b"decoy")?;
        crate::atomic::write(&root.join("tasks/real.toon"), b"real")?;
        std::os::unix::fs::symlink(outside.join("a.toon"), root.join("tasks/link.toon"))?;
        std::os::unix::fs::symlink(&outside, root.join("history"))?;

        assert_eq!(
            read_file(&root.join("tasks/real.toon"))?,
            Some(b"real".to_vec())
        );
        assert_eq!(read_file(&root.join("tasks/none.toon"))?, None);
        assert_eq!(read_file(&root.join("missing/none.toon"))?, None);
        for path in [root.join("tasks/link.toon"), root.join("history/a.toon")] {
            let err = read_file(&path).expect_err("a link is refused");
            assert_eq!(err.code().as_str(), "path_unsafe", "{path:?}");
        }
        assert!(list_folder(&root.join("tasks"))?.is_some());
        assert!(list_folder(&root.join("missing"))?.is_none());
        let err = list_folder(&root.join("history")).expect_err("linked folder");
        assert_eq!(err.code().as_str(), "path_unsafe");
        Ok(())
    }
}
