//! Test support shared by pm's crates: finds the conformance data (`shared/` beside the checkout,
//! or `PM_SHARED_DIR`) and extracts its tarballs into temp dirs. Never used by production code.
#![allow(clippy::disallowed_methods)] // tests may read PM_SHARED_DIR

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Returns the shared conformance directory (`corpora/`, `golden/`, `spec/`).
///
/// Looks at `PM_SHARED_DIR`, then for a `shared/` directory beside any ancestor of this crate.
/// Panics with a clear message when it is missing: conformance tests must not pass vacuously.
pub fn shared_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("PM_SHARED_DIR") {
        return PathBuf::from(dir);
    }
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    for ancestor in here.ancestors() {
        let candidate = ancestor.join("shared");
        if candidate.join("corpora").is_dir() {
            return candidate;
        }
    }
    panic!(
        "conformance data not found: expected a `shared/` directory (with corpora/ and golden/) \
         beside the checkout, or PM_SHARED_DIR pointing at it"
    );
}

/// Returns the path of a file inside the shared directory, panicking if it does not exist.
pub fn shared_file(relative: &str) -> PathBuf {
    let path = shared_dir().join(relative);
    assert!(path.exists(), "missing conformance file {}", path.display());
    path
}

/// Extracts a `.tar.gz` into a fresh temp dir and returns the dir (deleted when dropped).
pub fn extract_tar_gz(archive: &Path) -> io::Result<tempfile::TempDir> {
    let dir = tempfile::tempdir()?;
    let file = std::fs::File::open(archive)?;
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    tar.unpack(dir.path())?;
    Ok(dir)
}

/// Returns a read-only extraction of the real pm-cli tracker corpus (the tracker root is
/// `<dir>/.agents/pm`), shared by every test of every process.
///
/// The archive is extracted once into the cargo target directory (see [`shared_extraction`]);
/// its files are read-only. A test that modifies a tracker must copy it first
/// ([`copy_tree`]) or use [`extract_corpus`].
pub fn shared_corpus() -> io::Result<PathBuf> {
    shared_extraction("corpora/pm-cli-tracker.tar.gz")
}

/// Returns a read-only extraction of the shared archive at `relative`, made once and reused.
///
/// Extractions live in `<target>/pm-testkit/<name>-<size>-<mtime>/` next to the test binaries,
/// so a changed archive gets a fresh directory. The first caller extracts into a temp dir
/// beside it and renames it into place; concurrent processes that lose the race use the
/// winner's copy. Every extracted file is made read-only.
pub fn shared_extraction(relative: &str) -> io::Result<PathBuf> {
    static CACHE: OnceLock<Mutex<Vec<(String, PathBuf)>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(Vec::new()));
    let mut done = cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, path)) = done.iter().find(|(r, _)| r == relative) {
        return Ok(path.clone());
    }
    let archive = shared_file(relative);
    let meta = std::fs::metadata(&archive)?;
    let mtime = meta
        .modified()?
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let name: String = relative
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let base = cache_dir()?;
    let target = base.join(format!("{name}-{}-{mtime}", meta.len()));
    if !target.is_dir() {
        std::fs::create_dir_all(&base)?;
        let staging = tempfile::Builder::new()
            .prefix(".staging-")
            .tempdir_in(&base)?;
        let file = std::fs::File::open(&archive)?;
        tar::Archive::new(flate2::read::GzDecoder::new(file)).unpack(staging.path())?;
        make_read_only(staging.path())?;
        let staged = staging.keep();
        #[allow(clippy::disallowed_methods)] // a directory rename, not a file replacement
        if std::fs::rename(&staged, &target).is_err() {
            // Another process won the race; its extraction is identical.
            let _ = std::fs::remove_dir_all(&staged);
        }
    }
    done.push((relative.to_string(), target.clone()));
    Ok(target)
}

/// `<target dir>/pm-testkit`: the directory above `debug/deps/<test binary>`.
fn cache_dir() -> io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let profile_dir = exe
        .ancestors()
        .find(|dir| dir.file_name().is_some_and(|n| n == "deps"))
        .and_then(Path::parent)
        .and_then(Path::parent)
        .ok_or_else(|| {
            io::Error::other(format!("{} is not in a cargo target dir", exe.display()))
        })?;
    Ok(profile_dir.join("pm-testkit"))
}

fn make_read_only(dir: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            make_read_only(&entry.path())?;
        } else {
            let mut perms = entry.metadata()?.permissions();
            perms.set_readonly(true);
            std::fs::set_permissions(entry.path(), perms)?;
        }
    }
    Ok(())
}

/// Extracts the real pm-cli tracker corpus; the tracker root is `<dir>/.agents/pm`.
pub fn extract_corpus() -> io::Result<tempfile::TempDir> {
    extract_tar_gz(&shared_file("corpora/pm-cli-tracker.tar.gz"))
}

/// Extracts pm's canonical rewrites of the corpus (`.agents/pm/...`, `hashes.tsv`, `changed.txt`).
pub fn extract_canonical_golden() -> io::Result<tempfile::TempDir> {
    extract_tar_gz(&shared_file("golden/pm-cli-tracker-canonical.tar.gz"))
}

/// Copies a directory tree (files and directories only) to `to`; the copies are writable even
/// when the originals are read-only (a [`shared_extraction`]).
pub fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
            make_writable(&target)?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn make_writable(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = std::fs::metadata(path)?.permissions();
    perms.set_mode(perms.mode() | 0o200);
    std::fs::set_permissions(path, perms)
}

#[cfg(not(unix))]
fn make_writable(_path: &Path) -> io::Result<()> {
    Ok(())
}
