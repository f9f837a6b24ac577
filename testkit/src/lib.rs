//! Test support shared by pm's crates: finds the conformance data (`shared/` beside the checkout,
//! or `PM_SHARED_DIR`) and extracts its tarballs into temp dirs. Never used by production code.
#![allow(clippy::disallowed_methods)] // tests may read PM_SHARED_DIR

use std::io;
use std::path::{Path, PathBuf};

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

/// Extracts the real pm-cli tracker corpus; the tracker root is `<dir>/.agents/pm`.
pub fn extract_corpus() -> io::Result<tempfile::TempDir> {
    extract_tar_gz(&shared_file("corpora/pm-cli-tracker.tar.gz"))
}

/// Extracts pm's canonical rewrites of the corpus (`.agents/pm/...`, `hashes.tsv`, `changed.txt`).
pub fn extract_canonical_golden() -> io::Result<tempfile::TempDir> {
    extract_tar_gz(&shared_file("golden/pm-cli-tracker-canonical.tar.gz"))
}

/// Copies a directory tree (files and directories only) to `to`.
pub fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}
