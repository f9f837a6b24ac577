//! Recorded folder listings (`runtime/index/listing/`): the freshness sweep of a folder whose
//! own signature is unchanged since it was listed stats the recorded names instead of reading
//! the directory again (at 100,000 files the listing is about a third of the sweep).
//!
//! Every entry created, removed or renamed in a folder gives it a new change time, so while its
//! signature is the recorded one its entries are the recorded ones. A listing is recorded only
//! when the folder was settled, that is last changed before the filesystem time read just
//! before its signature was taken: a later change then cannot keep that signature. Files
//! rewritten in place keep the folder's signature but are still caught, since every recorded
//! name is statted. A listing is a cache: missing, foreign or damaged ones are listed again.

use crate::fresh::digest::name_hash;
use crate::fresh::source::Sig;
use std::path::{Path, PathBuf};

/// First word of a listing file; a different one is ignored.
const MAGIC: &str = "pm-listing-v1";

/// Where listings are recorded, and the filesystem time that decides which may be.
#[derive(Clone, Debug)]
pub struct FolderListings {
    dir: PathBuf,
    clock: ClockSource,
}

#[derive(Clone, Copy, Debug)]
enum ClockSource {
    /// Read the filesystem clock when a folder is about to be listed.
    Filesystem,
    /// A fixed time (tests).
    Fixed(i64),
}

impl FolderListings {
    /// FolderListings in `dir` (created when the first one is recorded), settled by the filesystem
    /// clock.
    pub fn at(dir: PathBuf) -> FolderListings {
        FolderListings {
            dir,
            clock: ClockSource::Filesystem,
        }
    }

    /// FolderListings in `dir` that count every folder changed before `now_ns` as settled, without
    /// reading the filesystem clock (for tests, which cannot wait for the clock to move on).
    pub fn settled_before(dir: PathBuf, now_ns: i64) -> FolderListings {
        FolderListings {
            dir,
            clock: ClockSource::Fixed(now_ns),
        }
    }

    /// The filesystem time now, in ns; `None` when it cannot be read (nothing is recorded).
    pub(crate) fn now(&self) -> Option<i64> {
        match self.clock {
            ClockSource::Fixed(now) => Some(now),
            ClockSource::Filesystem => {
                self.ensure_dir().then_some(())?;
                crate::fresh::dirsig::filesystem_now(&self.dir)
            }
        }
    }

    /// The recorded names of `folder` (each followed by a newline) when the folder at `dir`
    /// still has the signature they were recorded with.
    pub(crate) fn recall(&self, folder: &str, dir: &Path) -> Option<String> {
        let sig = Sig::of(&std::fs::symlink_metadata(dir).ok()?);
        let text = std::fs::read_to_string(self.file(folder)).ok()?;
        let (header, names) = text.split_once('\n')?;
        (header == header_line(folder, sig) && (names.is_empty() || names.ends_with('\n')))
            .then(|| names.to_string())
    }

    /// Records `names` as the listing of `folder` taken after its signature `sig`, when `sig`
    /// is settled at `now_ns`. Failures only cost the next sweep a listing.
    pub(crate) fn record(&self, folder: &str, sig: Sig, names: &[String], now_ns: i64) {
        let settled = sig.mtime_ns < now_ns && sig.ctime_ns < now_ns;
        if !settled || names.iter().any(|n| n.contains('\n')) {
            return;
        }
        let mut text = header_line(folder, sig);
        text.push('\n');
        text.reserve(names.iter().map(|n| n.len() + 1).sum());
        for name in names {
            text.push_str(name);
            text.push('\n');
        }
        if self.ensure_dir() {
            let _ = pm_engine::atomic::write(&self.file(folder), text.as_bytes());
        }
    }

    /// Creates the listings folder inside an existing parent (`runtime/index/`, which the
    /// projection's writers create and vet); never creates the parents.
    fn ensure_dir(&self) -> bool {
        match std::fs::create_dir(&self.dir) {
            Ok(()) => true,
            Err(e) => {
                e.kind() == std::io::ErrorKind::AlreadyExists
                    && std::fs::symlink_metadata(&self.dir).is_ok_and(|m| m.is_dir())
            }
        }
    }

    /// The listing file of `folder`: named by a hash, since a folder name may hold anything a
    /// schema allows.
    fn file(&self, folder: &str) -> PathBuf {
        self.dir
            .join(format!("{:016x}", name_hash(folder.as_bytes())))
    }
}

fn header_line(folder: &str, sig: Sig) -> String {
    format!(
        "{MAGIC} {} {} {} {} {folder}",
        sig.size, sig.mtime_ns, sig.ctime_ns, sig.inode
    )
}

/// Stats `names` (each followed by a newline) in the folder `dir` known as `folder`, in
/// parallel, relative to the folder: the digest contribution and count of the regular files.
/// `None` when the folder cannot be opened.
#[cfg(target_os = "linux")]
pub(crate) fn stat_names(dir: &Path, folder: &str, names: &str) -> Option<(u64, usize)> {
    use rayon::prelude::*;
    use rustix::fs::{AtFlags, FileType, Mode, OFlags, StatxFlags};
    let fd = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let mask = StatxFlags::TYPE
        | StatxFlags::SIZE
        | StatxFlags::INO
        | StatxFlags::MTIME
        | StatxFlags::CTIME;
    let ns = |t: rustix::fs::StatxTimestamp| {
        t.tv_sec.saturating_mul(1_000_000_000) + i64::from(t.tv_nsec)
    };
    let found = names
        .par_split_terminator('\n')
        .map(
            |name| match rustix::fs::statx(&fd, name, AtFlags::empty(), mask) {
                Ok(st) if FileType::from_raw_mode(u32::from(st.stx_mode)).is_file() => {
                    let sig = Sig {
                        size: st.stx_size,
                        mtime_ns: ns(st.stx_mtime),
                        ctime_ns: ns(st.stx_ctime),
                        inode: st.stx_ino,
                    };
                    (sig.contribution_at(folder, name), 1)
                }
                _ => (0u64, 0usize),
            },
        )
        .reduce(|| (0, 0), |a, b| (a.0.wrapping_add(b.0), a.1 + b.1));
    Some(found)
}

/// Recorded listings are only used on Linux; elsewhere every folder is listed.
#[cfg(not(target_os = "linux"))]
pub(crate) fn stat_names(_dir: &Path, _folder: &str, _names: &str) -> Option<(u64, usize)> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_is_recalled_only_with_its_folders_signature()
    -> Result<(), Box<dyn std::error::Error>> {
        let root = tempfile::tempdir()?;
        let folder = root.path().join("tasks");
        std::fs::create_dir(&folder)?;
        let sig = Sig::of(&std::fs::symlink_metadata(&folder)?);
        let listings = FolderListings::settled_before(root.path().join("listing"), i64::MAX);
        assert_eq!(listings.recall("tasks", &folder), None);
        let names = vec!["a.toon".to_string(), "b c.md".to_string()];
        listings.record("tasks", sig, &names, i64::MAX);
        assert_eq!(
            listings.recall("tasks", &folder).as_deref(),
            Some("a.toon\nb c.md\n")
        );
        // Another folder name, another file.
        assert_eq!(listings.recall("issues", &folder), None);
        // A new entry changes the folder's signature.
        std::fs::File::create(folder.join("c.toon"))?;
        assert_eq!(listings.recall("tasks", &folder), None);
        Ok(())
    }

    #[test]
    fn unsettled_or_unrecordable_listings_are_not_kept() -> Result<(), Box<dyn std::error::Error>> {
        let root = tempfile::tempdir()?;
        let folder = root.path().join("tasks");
        std::fs::create_dir(&folder)?;
        let sig = Sig::of(&std::fs::symlink_metadata(&folder)?);
        let listings = FolderListings::settled_before(root.path().join("listing"), sig.ctime_ns);
        // Changed at the clock's reading: a later change could keep the same change time.
        listings.record("tasks", sig, &["a.toon".to_string()], sig.ctime_ns);
        assert_eq!(listings.recall("tasks", &folder), None);
        // A name with a newline cannot be recorded one per line.
        listings.record("tasks", sig, &["a\nb.toon".to_string()], i64::MAX);
        assert_eq!(listings.recall("tasks", &folder), None);
        // A damaged file (no final newline) is ignored.
        listings.record("tasks", sig, &["a.toon".to_string()], i64::MAX);
        let file = listings.file("tasks");
        let text = std::fs::read_to_string(&file)?;
        std::fs::File::create(&file)?;
        std::io::Write::write_all(
            &mut std::fs::OpenOptions::new().write(true).open(&file)?,
            text.trim_end().as_bytes(),
        )?;
        assert_eq!(listings.recall("tasks", &folder), None);
        Ok(())
    }
}
