//! The write transcript golden (`golden/write-transcript.tar.gz`): a fresh extraction per test
//! (tests copy and change its snapshots) and `pm` run with the transcript's own environment.

use std::path::{Path, PathBuf};

/// An extraction of the write transcript; removed when dropped.
pub struct Transcript {
    _dir: tempfile::TempDir,
    /// The `write-transcript/` folder.
    pub root: PathBuf,
}

/// Extracts the write transcript into a temp dir.
pub fn transcript() -> Result<Transcript, Box<dyn std::error::Error>> {
    let archive = pm_testkit::shared_file("golden/write-transcript.tar.gz");
    let dir = pm_testkit::extract_tar_gz(&archive)?;
    let root = dir.path().join("write-transcript");
    Ok(Transcript { _dir: dir, root })
}

/// Runs `pm args` in `ws` with the transcript's environment for `minute` (step N runs at
/// 2026-09-02T00:00Z plus N minutes); returns the exit code and stdout.
pub fn transcript_pm(
    ws: &Path,
    minute: u32,
    args: &[&str],
) -> Result<(i32, String), Box<dyn std::error::Error>> {
    let home = ws.join("../home");
    std::fs::create_dir_all(&home)?;
    let clock = format!("2026-09-02T{:02}:{:02}:00.000Z", minute / 60, minute % 60);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pm"))
        .env_clear()
        .current_dir(ws)
        .env("HOME", &home)
        .env("PM_GLOBAL_PATH", &home)
        .env("PM_PATH", ".agents/pm")
        .env("PM_CLOCK", clock)
        .env("PM_CLOCK_TICK_MS", "0")
        .env("PM_SEED", "golden-transcript-2")
        .env("PM_AUTHOR", "golden-author")
        .args(args)
        .output()?;
    Ok((
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout)?,
    ))
}
