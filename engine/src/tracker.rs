//! Tracker discovery and layout: where the tracker root and workspace root
//! are, the paths of items, history, locks and runtime state, item-file enumeration and lookup
//! by id. Never reads the environment: the CLI passes `--pm-path`/`PM_PATH` in.

use crate::error::{Error, IoResultExt, Result};
use crate::ids::{is_valid_id, normalize_id_input};
pub use crate::item::ItemFormat;
use crate::notice::Notice;
use crate::schema::TypeRegistry;
use crate::settings::SETTINGS_FILE;
use serde::Serialize;
use std::path::{Component, Path, PathBuf};

/// The folder, relative to the tracker root, that holds the history streams.
pub const HISTORY_FOLDER: &str = "history";

/// The nested tracker directory inside a workspace.
pub const NESTED_TRACKER_DIR: &str = ".agents/pm";

/// One item file found on disk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ItemFileRef {
    /// The type whose folder holds the file (the first type in registry order that uses the
    /// folder); the item's own `type` field is authoritative once it is parsed.
    pub type_name: String,
    /// The folder relative to the tracker root.
    pub folder: String,
    /// The absolute file path.
    pub path: PathBuf,
    /// The file name without its extension (should equal the item id).
    pub stem: String,
    /// The file format.
    pub format: ItemFormat,
}

/// The result of [`Tracker::item_files`].
#[derive(Clone, Debug, Default)]
pub struct ItemFiles {
    /// Every item file, folders in registry order, files sorted by name within a folder.
    pub files: Vec<ItemFileRef>,
    /// `item_list_directory_read_failed:<folder>` for folders that exist but cannot be read.
    pub notices: Vec<Notice>,
}

/// A tracker location: its root (where settings.json lives) and its workspace root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tracker {
    root: PathBuf,
    workspace_root: PathBuf,
}

impl Tracker {
    /// Returns the tracker rooted at `root` (not checked for initialization).
    pub fn at(root: impl Into<PathBuf>) -> Tracker {
        let root = normalize_lexically(&root.into());
        let workspace_root = workspace_root_of(&root);
        Tracker {
            root,
            workspace_root,
        }
    }

    /// Finds the tracker for a command run in `cwd` (absolute) with an optional explicit path
    /// (`--pm-path`, `--path` or `PM_PATH`, chosen and trimmed by the caller):
    ///
    /// 1. An explicit path is resolved against `cwd`; if it lacks settings.json but
    ///    `<p>/.agents/pm/settings.json` exists, that nested root is used, else `<p>` as is.
    /// 2. Otherwise each directory from `cwd` up to `/` is tried: `D/.agents/pm/settings.json`
    ///    makes `D/.agents/pm` the root; else a `D/settings.json` holding a JSON object with
    ///    `id_prefix` or `item_format` makes `D` the root (root layout).
    /// 3. Otherwise `<cwd>/.agents/pm` (possibly uninitialized, for `pm init`).
    pub fn discover(cwd: &Path, explicit: Option<&Path>) -> Tracker {
        if let Some(explicit) = explicit {
            let path = normalize_lexically(&cwd.join(explicit));
            let nested = path.join(NESTED_TRACKER_DIR);
            if !Probe::of(&path.join(SETTINGS_FILE)).found()
                && Probe::of(&nested.join(SETTINGS_FILE)).found()
            {
                return Tracker::at(nested);
            }
            return Tracker::at(path);
        }
        let cwd = normalize_lexically(cwd);
        for dir in cwd.ancestors() {
            let nested = dir.join(NESTED_TRACKER_DIR);
            if Probe::of(&nested.join(SETTINGS_FILE)).found() {
                return Tracker::at(nested);
            }
            if is_root_layout_settings(&dir.join(SETTINGS_FILE)) {
                return Tracker::at(dir);
            }
        }
        Tracker::at(cwd.join(NESTED_TRACKER_DIR))
    }

    /// Like [`Tracker::discover`], but requires an initialized tracker.
    ///
    /// # Errors
    /// `Error::TrackerUnreadable` when the root or its settings.json exists but permissions
    /// forbid looking at it; `Error::NotInProject` when the discovered root has no settings.json.
    pub fn open(cwd: &Path, explicit: Option<&Path>) -> Result<Tracker> {
        let tracker = Tracker::discover(cwd, explicit);
        if tracker.is_initialized() {
            return Ok(tracker);
        }
        // A forbidden settings.json stat means the root itself cannot be searched: name the root.
        for path in [tracker.root.clone(), tracker.settings_path()] {
            if let Probe::Unreadable(source) = Probe::of(&path) {
                return Err(Error::TrackerUnreadable {
                    path: tracker.root,
                    source,
                });
            }
        }
        Err(Error::NotInProject {
            cwd: cwd.to_path_buf(),
            tried: tracker.root,
        })
    }

    /// Returns true when the root is a directory containing a settings.json file.
    pub fn is_initialized(&self) -> bool {
        self.root.is_dir() && self.settings_path().is_file()
    }

    /// Returns the tracker root (the directory holding settings.json).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Returns the workspace root: the parent of `.agents` for a `…/.agents/pm` root, else the
    /// root itself.
    pub fn workspace_root(&self) -> &Path {
        &self.workspace_root
    }

    /// Returns `<root>/settings.json`.
    pub fn settings_path(&self) -> PathBuf {
        self.root.join(SETTINGS_FILE)
    }

    /// Returns `<root>/history`.
    pub fn history_dir(&self) -> PathBuf {
        self.root.join(HISTORY_FOLDER)
    }

    /// Returns `<root>/locks`.
    pub fn locks_dir(&self) -> PathBuf {
        self.root.join("locks")
    }

    /// Returns `<root>/runtime` (derived, rebuildable state).
    pub fn runtime_dir(&self) -> PathBuf {
        self.root.join("runtime")
    }

    /// Returns `<root>/<folder>/<id><ext>`.
    pub fn item_path(&self, folder: &str, id: &str, format: ItemFormat) -> PathBuf {
        self.root.join(folder).join(format.file_name(id))
    }

    /// Returns `<root>/history/<id>.jsonl` (whatever the item's folder).
    pub fn history_path(&self, id: &str) -> PathBuf {
        self.history_dir().join(format!("{id}.jsonl"))
    }

    /// Returns `<root>/locks/<lock_id>.lock` (see `lock` for validation of the id).
    pub fn lock_path(&self, lock_id: &str) -> PathBuf {
        self.locks_dir().join(format!("{lock_id}.lock"))
    }

    /// Lists every item file: each registered folder once (registry order), non-recursively,
    /// files ending in `.toon` or `.md` (any case), sorted by name. Missing folders are empty;
    /// unreadable ones are reported as notices. Temp files (`.x.toon.<…>.tmp`) never match.
    ///
    /// # Errors
    /// `Error::Io` when an entry of a readable folder cannot be inspected.
    pub fn item_files(&self, types: &TypeRegistry) -> Result<ItemFiles> {
        let mut out = ItemFiles::default();
        for (folder, type_name) in types.folders() {
            let dir = self.root.join(folder);
            let entries = match crate::confine::leaf::list_folder(&dir) {
                Ok(Some(entries)) => entries,
                Ok(None) => continue,
                Err(err @ Error::PathUnsafe { .. }) => {
                    out.notices.push(Notice::new(
                        format!("{FOLDER_UNSAFE_NOTICE}:{folder}"),
                        err.to_string(),
                    ));
                    continue;
                }
                Err(err) => {
                    out.notices.push(Notice::new(
                        format!("{FOLDER_READ_FAILED_NOTICE}:{folder}"),
                        format!("{}: {err}", dir.display()),
                    ));
                    continue;
                }
            };
            let mut found: Vec<ItemFileRef> = Vec::new();
            for entry in entries {
                let entry = entry.at(&dir)?;
                if entry.file_type().at(entry.path())?.is_dir() {
                    continue;
                }
                let name = entry.file_name();
                let Some(name) = name.to_str() else { continue };
                if let Some((format, stem)) = ItemFormat::split_file_name(name) {
                    found.push(ItemFileRef {
                        type_name: type_name.to_string(),
                        folder: folder.to_string(),
                        path: entry.path(),
                        stem: stem.to_string(),
                        format,
                    });
                }
            }
            // Every path is the folder's path joined with a name, so ordering by the paths'
            // bytes orders the names by their bytes, which is the path order, without splitting
            // paths into components for each comparison (a tenth of a second at 100,000 files).
            // Names in one folder are unique.
            found.sort_unstable_by(|a, b| {
                (a.path.as_os_str().as_encoded_bytes()).cmp(b.path.as_os_str().as_encoded_bytes())
            });
            out.files.extend(found);
        }
        Ok(out)
    }

    /// Returns every file that holds exactly `id`: for each folder in registry order,
    /// `<folder>/<id>.toon` then `<folder>/<id>.md`.
    ///
    /// # Errors
    /// `Error::Io` naming the folder when no file was found but a folder could not be looked
    /// into (permissions): the id may be there, so "not found" would mislead.
    pub fn files_for_id(&self, id: &str, types: &TypeRegistry) -> Result<Vec<ItemFileRef>> {
        let mut hits = Vec::new();
        if !is_valid_id(id) {
            return Ok(hits);
        }
        let mut unreadable = None;
        for (folder, type_name) in types.folders() {
            for format in [ItemFormat::Toon, ItemFormat::Markdown] {
                let path = self.item_path(folder, id, format);
                // A symlink is a hit too: reading it is refused as `path_unsafe`.
                match std::fs::symlink_metadata(&path).map_err(Probe::classify) {
                    Ok(meta) if !meta.is_dir() => hits.push(ItemFileRef {
                        type_name: type_name.to_string(),
                        folder: folder.to_string(),
                        path,
                        stem: id.to_string(),
                        format,
                    }),
                    Err(Probe::Unreadable(source)) if unreadable.is_none() => {
                        unreadable = Some(Error::Io {
                            path: self.root.join(folder),
                            source,
                        });
                    }
                    _ => {}
                }
            }
        }
        match unreadable {
            Some(error) if hits.is_empty() => Err(error),
            _ => Ok(hits),
        }
    }

    /// Finds the file of an id argument (pm's `locateItem`): the prefixed normalized form is
    /// tried first, then the bare normalized input.
    ///
    /// Stricter than pm, which returns the first hit: when the same id exists in more than one
    /// file (several folders, or both `.toon` and `.md`) this fails with `DuplicateId`.
    ///
    /// # Errors
    /// `InvalidId` when no candidate is a well-formed id, `DuplicateId` for several files,
    /// `ItemNotFound` when no file exists.
    pub fn locate_item(
        &self,
        raw_id: &str,
        prefix: &str,
        types: &TypeRegistry,
    ) -> Result<ItemFileRef> {
        let candidates: Vec<String> = normalize_id_input(raw_id, prefix)
            .into_iter()
            .filter(|c| is_valid_id(c))
            .collect();
        let Some(first) = candidates.first().cloned() else {
            return Err(Error::InvalidId {
                input: raw_id.to_string(),
                reason: "ids use lowercase letters, digits and inner hyphens only".to_string(),
            });
        };
        let mut unreadable = None;
        for id in candidates {
            let mut hits = match self.files_for_id(&id, types) {
                Ok(hits) => hits,
                Err(error) => {
                    unreadable.get_or_insert(error);
                    continue;
                }
            };
            match hits.len() {
                0 => continue,
                1 => return Ok(hits.remove(0)),
                _ => {
                    return Err(Error::DuplicateId {
                        id,
                        paths: hits.into_iter().map(|h| h.path).collect(),
                    });
                }
            }
        }
        Err(unreadable.unwrap_or(Error::ItemNotFound { id: first }))
    }
}

/// Notice code prefix of a type folder that is a symlink or not a directory
/// (`item_list_directory_unsafe:<folder>`).
pub const FOLDER_UNSAFE_NOTICE: &str = "item_list_directory_unsafe";

/// Notice code prefix of a type folder that could not be listed
/// (`item_list_directory_read_failed:<folder>`).
pub const FOLDER_READ_FAILED_NOTICE: &str = "item_list_directory_read_failed";

/// Returns the folder an unlistable-folder notice names, `None` for any other notice.
pub fn unlisted_folder(notice: &Notice) -> Option<&str> {
    let (prefix, folder) = notice.code.split_once(':')?;
    [FOLDER_UNSAFE_NOTICE, FOLDER_READ_FAILED_NOTICE]
        .contains(&prefix)
        .then_some(folder)
}

/// What a `stat` says about a tracker path: there, absent, or there but forbidden.
#[derive(Debug)]
enum Probe {
    /// The path exists.
    Present,
    /// The path does not exist (or is not reachable as named, e.g. a parent is a file).
    Absent,
    /// Permissions forbid looking: the path may well exist.
    Unreadable(std::io::Error),
}

impl Probe {
    /// Returns what `stat(path)` says (following links, like `Path::exists`).
    fn of(path: &Path) -> Probe {
        match std::fs::metadata(path) {
            Ok(_) => Probe::Present,
            Err(err) => Probe::classify(err),
        }
    }

    /// Classifies a failed `stat`: only a permission error leaves the path's existence open.
    fn classify(err: std::io::Error) -> Probe {
        match err.kind() {
            std::io::ErrorKind::PermissionDenied => Probe::Unreadable(err),
            _ => Probe::Absent,
        }
    }

    /// Returns whether the path is there or may be (a forbidden one is reported, not skipped).
    fn found(&self) -> bool {
        !matches!(self, Probe::Absent)
    }
}

fn workspace_root_of(root: &Path) -> PathBuf {
    let is_nested = root.file_name().is_some_and(|n| n == "pm")
        && root
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == ".agents");
    match root.parent().and_then(Path::parent) {
        Some(workspace) if is_nested => workspace.to_path_buf(),
        _ => root.to_path_buf(),
    }
}

/// Returns true when `path` holds a JSON object with `id_prefix` or `item_format`.
fn is_root_layout_settings(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| {
            v.as_object()
                .map(|m| m.contains_key("id_prefix") || m.contains_key("item_format"))
        })
        .unwrap_or(false)
}

/// Resolves `.` and `..` components without touching the filesystem (like Node's
/// `path.resolve`); `..` at the root stays at the root.
fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atomic::write;

    type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn explicit_paths_resolve_and_prefer_nested_settings() -> TestResult {
        let tmp = tempfile::tempdir()?;
        let ws = tmp.path();
        write(&ws.join(".agents/pm/settings.json"), b"{}")?;
        let t = Tracker::discover(ws, Some(Path::new(".")));
        assert_eq!(t.root(), ws.join(".agents/pm"));
        assert_eq!(t.workspace_root(), ws);
        let t = Tracker::discover(&ws.join("sub"), Some(Path::new("../other")));
        assert_eq!(t.root(), ws.join("other"));
        assert_eq!(t.workspace_root(), ws.join("other"));
        assert!(!t.is_initialized());
        Ok(())
    }

    #[test]
    fn walks_up_to_nested_or_root_layout() -> TestResult {
        let tmp = tempfile::tempdir()?;
        let ws = tmp.path();
        write(&ws.join(".agents/pm/settings.json"), b"{}")?;
        std::fs::create_dir_all(ws.join("a/b"))?;
        assert_eq!(
            Tracker::discover(&ws.join("a/b"), None).root(),
            ws.join(".agents/pm")
        );
        write(&ws.join("a/settings.json"), br#"{"item_format":"toon"}"#)?;
        assert_eq!(
            Tracker::discover(&ws.join("a/b"), None).root(),
            ws.join("a")
        );
        write(&ws.join("a/settings.json"), br#"{"other":1}"#)?;
        assert_eq!(
            Tracker::discover(&ws.join("a/b"), None).root(),
            ws.join(".agents/pm")
        );
        Ok(())
    }

    #[test]
    fn falls_back_to_cwd_and_open_requires_init() -> TestResult {
        let tmp = tempfile::tempdir()?;
        let cwd = tmp.path().join("x");
        std::fs::create_dir_all(&cwd)?;
        let t = Tracker::discover(&cwd, None);
        assert_eq!(t.root(), cwd.join(".agents/pm"));
        let err = Tracker::open(&cwd, None).expect_err("uninitialized");
        assert_eq!(err.code().as_str(), "not_in_project");
        Ok(())
    }

    #[test]
    fn only_permission_errors_leave_a_path_unreadable() {
        use std::io::{Error as IoError, ErrorKind};
        let denied = Probe::classify(IoError::from(ErrorKind::PermissionDenied));
        assert!(matches!(denied, Probe::Unreadable(_)) && denied.found());
        for kind in [
            ErrorKind::NotFound,
            ErrorKind::NotADirectory,
            ErrorKind::InvalidInput,
        ] {
            let probe = Probe::classify(IoError::from(kind));
            assert!(matches!(probe, Probe::Absent) && !probe.found(), "{kind:?}");
        }
        assert!(Probe::of(Path::new("/")).found());
    }

    #[test]
    fn paths_are_laid_out_like_pm() {
        let t = Tracker::at("/w/.agents/pm");
        assert_eq!(t.workspace_root(), Path::new("/w"));
        assert_eq!(
            t.item_path("tasks", "pm-a1", ItemFormat::Toon),
            Path::new("/w/.agents/pm/tasks/pm-a1.toon")
        );
        assert_eq!(
            t.history_path("pm-a1"),
            Path::new("/w/.agents/pm/history/pm-a1.jsonl")
        );
        assert_eq!(
            t.lock_path("pm-a1"),
            Path::new("/w/.agents/pm/locks/pm-a1.lock")
        );
        assert_eq!(t.runtime_dir(), Path::new("/w/.agents/pm/runtime"));
    }

    #[test]
    fn item_file_names_split_case_insensitively() {
        assert_eq!(
            ItemFormat::split_file_name("pm-a.TOON"),
            Some((ItemFormat::Toon, "pm-a"))
        );
        assert_eq!(
            ItemFormat::split_file_name("pm-a.Md"),
            Some((ItemFormat::Markdown, "pm-a"))
        );
        assert_eq!(ItemFormat::split_file_name(".toon"), None);
        assert_eq!(
            ItemFormat::split_file_name(".pm-a.toon.1.2.deadbeef.tmp"),
            None
        );
        assert_eq!(ItemFormat::split_file_name("notes.txt"), None);
    }

    #[test]
    fn enumeration_and_lookup() -> TestResult {
        let tmp = tempfile::tempdir()?;
        let t = Tracker::at(tmp.path());
        let types = TypeRegistry::builtin();
        write(&t.item_path("tasks", "pm-b", ItemFormat::Toon), b"x")?;
        write(&t.item_path("tasks", "pm-a", ItemFormat::Markdown), b"x")?;
        write(&t.item_path("epics", "pm-c", ItemFormat::Toon), b"x")?;
        // Names sort by their bytes: '-' < '.' < '0'.
        write(&t.item_path("tasks", "pm-a0", ItemFormat::Toon), b"x")?;
        write(&t.item_path("tasks", "pm-a-b", ItemFormat::Toon), b"x")?;
        write(
            &tmp.path().join("tasks/.pm-b.toon.1.2.deadbeef.tmp"),
            b"partial",
        )?;
        write(&tmp.path().join("tasks/readme.txt"), b"x")?;
        std::fs::create_dir_all(tmp.path().join("tasks/nested.toon"))?;
        let files = t.item_files(&types)?;
        let stems: Vec<_> = files
            .files
            .iter()
            .map(|f| (f.folder.as_str(), f.stem.as_str()))
            .collect();
        assert_eq!(
            stems,
            [
                ("epics", "pm-c"),
                ("tasks", "pm-a-b"),
                ("tasks", "pm-a"),
                ("tasks", "pm-a0"),
                ("tasks", "pm-b")
            ]
        );
        assert_eq!(files.files[0].type_name, "Epic");

        assert_eq!(
            t.locate_item("#B", "pm-", &types)?.path,
            t.item_path("tasks", "pm-b", ItemFormat::Toon)
        );
        let missing = t.locate_item("zz", "pm-", &types).expect_err("missing");
        assert_eq!(missing.code().as_str(), "item_not_found");
        let bad = t
            .locate_item("../../etc", "pm-", &types)
            .expect_err("bad id");
        assert_eq!(bad.code().as_str(), "invalid_item_id");

        write(&t.item_path("chores", "pm-b", ItemFormat::Markdown), b"x")?;
        let dup = t.locate_item("pm-b", "pm-", &types).expect_err("duplicate");
        match dup {
            Error::DuplicateId { id, paths } => {
                assert_eq!(id, "pm-b");
                assert_eq!(paths.len(), 2);
            }
            other => panic!("unexpected {other:?}"),
        }
        Ok(())
    }
}
