//! `pm-stat-floor`: the bare stat floor of a default-mode read, measured as its own process.
//!
//! The default freshness check costs one `stat` per item file; the settled rule is that a
//! default-mode read target is a ratio to that floor, measured in the same run. This tool is
//! the floor: a minimal process that `statx`es every item file once, relative to its folder,
//! on one thread, and does nothing else.
//!
//! * `pm-stat-floor list TRACKER OUT` writes the item files pm would check (the engine's own
//!   enumeration: registered type folders, `.toon` and `.md`), one `folder/name` per line,
//!   relative to TRACKER. Run it once, outside the timing.
//! * `pm-stat-floor stat TRACKER LIST` stats every listed file and prints how many were
//!   regular files. This is the invocation to time (`benches/scripts/floor-ratio.py`).
//!
//! Not part of `cargo test` or CI.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::error::Error;
use std::path::Path;
#[cfg(not(target_os = "linux"))]
use std::path::PathBuf;
use std::process::ExitCode;

use pm_engine::read::TrackerView;
use pm_engine::settings::SettingsEnv;
use pm_engine::tracker::Tracker;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [mode, tracker, file] if mode == "list" => write_list(Path::new(tracker), Path::new(file)),
        [mode, tracker, file] if mode == "stat" => stat_list(Path::new(tracker), Path::new(file)),
        _ => Err("usage: pm-stat-floor list TRACKER OUT | pm-stat-floor stat TRACKER LIST".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("pm-stat-floor: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Writes `folder/name` for every item file of the tracker at `root` (its `.agents/pm`).
fn write_list(root: &Path, out: &Path) -> Result<(), Box<dyn Error>> {
    let view = TrackerView::open(Tracker::at(root), &SettingsEnv::default())?;
    let mut text = String::new();
    for file in view.item_files()?.files {
        let name = file.path.file_name().and_then(|n| n.to_str());
        let Some(name) = name else { continue };
        text.push_str(&file.folder);
        text.push('/');
        text.push_str(name);
        text.push('\n');
    }
    pm_engine::atomic::write_unsynced(out, text.as_bytes())?;
    Ok(())
}

/// Stats every listed file once, relative to its folder's descriptor, in list order.
fn stat_list(root: &Path, list: &Path) -> Result<(), Box<dyn Error>> {
    let text = std::fs::read_to_string(list)?;
    let mut regular = 0usize;
    let mut current: Option<(&str, Folder)> = None;
    for line in text.lines() {
        let Some((folder, name)) = line.rsplit_once('/') else {
            continue;
        };
        if current.as_ref().is_none_or(|(open, _)| *open != folder) {
            current = Some((folder, Folder::open(&root.join(folder))?));
        }
        if let Some((_, dir)) = &current {
            regular += usize::from(dir.is_file(name));
        }
    }
    println!("{regular}");
    Ok(())
}

/// An open folder whose entries are statted relative to it.
struct Folder {
    #[cfg(target_os = "linux")]
    fd: rustix::fd::OwnedFd,
    #[cfg(not(target_os = "linux"))]
    path: PathBuf,
}

impl Folder {
    #[cfg(target_os = "linux")]
    fn open(path: &Path) -> std::io::Result<Folder> {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Ok(Folder {
            fd: rustix::fs::open(path, flags, Mode::empty())?,
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn open(path: &Path) -> std::io::Result<Folder> {
        Ok(Folder {
            path: PathBuf::from(path),
        })
    }

    /// The same `statx` mask as pm's sweep.
    #[cfg(target_os = "linux")]
    fn is_file(&self, name: &str) -> bool {
        use rustix::fs::{AtFlags, FileType, StatxFlags};
        let mask = StatxFlags::TYPE
            | StatxFlags::SIZE
            | StatxFlags::INO
            | StatxFlags::MTIME
            | StatxFlags::CTIME;
        rustix::fs::statx(&self.fd, name, AtFlags::empty(), mask)
            .is_ok_and(|st| FileType::from_raw_mode(u32::from(st.stx_mode)).is_file())
    }

    #[cfg(not(target_os = "linux"))]
    fn is_file(&self, name: &str) -> bool {
        std::fs::symlink_metadata(self.path.join(name)).is_ok_and(|m| m.is_file())
    }
}
