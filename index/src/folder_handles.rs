//! Open handles of the folders a full build reads from, so each source file is opened by its
//! name relative to its folder: the kernel then looks up one name instead of walking the whole
//! path again for each of the build's files (Linux; elsewhere files are opened by path).

use crate::fresh::source::SourceFile;
use std::fs::File;
use std::path::Path;

/// Directory handles by tracker-relative folder name.
#[derive(Default)]
pub struct FolderHandles {
    #[cfg(target_os = "linux")]
    folders: Vec<(String, rustix::fd::OwnedFd)>,
}

impl FolderHandles {
    /// Opens `root/<folder>` for each of `folders`; a folder that cannot be opened is left out
    /// (its files are then opened by path, with the errors that brings).
    pub fn open<'f>(root: &Path, folders: impl IntoIterator<Item = &'f str>) -> FolderHandles {
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{Mode, OFlags};
            let folders = folders
                .into_iter()
                .filter_map(|folder| {
                    let fd = rustix::fs::open(
                        root.join(folder),
                        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    )
                    .ok()?;
                    Some((folder.to_string(), fd))
                })
                .collect();
            FolderHandles { folders }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (root, folders.into_iter().count());
            FolderHandles::default()
        }
    }

    /// Opens `file` for reading: by name in its folder's handle when there is one, else by its
    /// absolute path. Neither follows a symlink (a symlinked folder gets no handle, and its
    /// files are refused by path).
    ///
    /// # Errors
    /// `path_unsafe` for a symlink at the file or its folder; the open's I/O error otherwise
    /// (`NotFound` for a file that vanished).
    pub fn open_file(&self, file: &SourceFile) -> pm_engine::Result<File> {
        #[cfg(target_os = "linux")]
        if let Some((folder, name)) = file.rel.rsplit_once('/')
            && let Some((_, fd)) = self.folders.iter().find(|(f, _)| f == folder)
        {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            return match rustix::fs::openat(fd, name, flags, Mode::empty()) {
                Ok(opened) => Ok(File::from(opened)),
                // The name is a symlink: refused exactly as a read by path refuses it.
                Err(rustix::io::Errno::LOOP) => pm_engine::confine::leaf::open_nofollow(&file.abs)
                    .and_then(|f| f.ok_or_else(|| vanished(file))),
                Err(e) => Err(pm_engine::Error::Io {
                    path: file.abs.clone(),
                    source: e.into(),
                }),
            };
        }
        pm_engine::confine::leaf::open_file(&file.abs)?.ok_or_else(|| vanished(file))
    }
}

fn vanished(file: &SourceFile) -> pm_engine::Error {
    pm_engine::Error::Io {
        path: file.abs.clone(),
        source: std::io::ErrorKind::NotFound.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fresh::source::SourceKind;

    fn source(root: &Path, rel: &str) -> SourceFile {
        SourceFile {
            rel: rel.to_string(),
            abs: root.join(rel),
            kind: SourceKind::History,
            item: None,
        }
    }

    #[test]
    fn files_open_through_their_folder_or_by_path() -> Result<(), Box<dyn std::error::Error>> {
        let root = tempfile::tempdir()?;
        std::fs::create_dir_all(root.path().join("history"))?;
        std::fs::create_dir_all(root.path().join("other"))?;
        pm_engine::atomic::write(&root.path().join("history/a.jsonl"), b"one")?;
        pm_engine::atomic::write(&root.path().join("other/b.jsonl"), b"two")?;
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(
                root.path().join("other/b.jsonl"),
                root.path().join("history/l.jsonl"),
            )?;
            std::os::unix::fs::symlink(root.path().join("other"), root.path().join("linked"))?;
        }
        let handles = FolderHandles::open(root.path(), ["history", "missing", "linked"]);
        let read = |rel: &str| -> pm_engine::Result<String> {
            let mut text = String::new();
            let mut file = handles.open_file(&source(root.path(), rel))?;
            std::io::Read::read_to_string(&mut file, &mut text).map_err(|e| {
                pm_engine::Error::Io {
                    path: rel.into(),
                    source: e,
                }
            })?;
            Ok(text)
        };
        assert_eq!(read("history/a.jsonl")?, "one");
        // No handle for the folder: opened by path.
        assert_eq!(read("other/b.jsonl")?, "two");
        let gone = read("history/none.jsonl");
        assert!(
            matches!(&gone, Err(pm_engine::Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound),
            "{gone:?}"
        );
        // Links are refused, through a handle and by path.
        #[cfg(unix)]
        for rel in ["history/l.jsonl", "linked/b.jsonl"] {
            let refused = read(rel).expect_err("a link is refused");
            assert_eq!(refused.code().as_str(), "path_unsafe", "{rel}");
        }
        Ok(())
    }
}
