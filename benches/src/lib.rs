//! Shared fixtures for pm's criterion benches (inputs only; no production code lives here):
//! trackers from the real seed-42 corpus generator (`pm_engine::bench_corpus`, the bytes
//! `pm bench generate` writes), the tier sizes, and an in-process `pm` invocation.
#![allow(clippy::disallowed_methods)] // benches may read PM_BENCH_* variables

pub mod flat;
pub use flat::{generate_tracker, generated_id};

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use pm_cli::ctx::Environment;
use pm_engine::bench_corpus::{CorpusOptions, CorpusReport, SCRATCH, generate_corpus};
use pm_engine::tracker::Tracker;

pub use pm_engine::bench_corpus::corpus_id;

/// The calibration tier (pm-cli's "current tracker scale").
pub const TIER_SMALL: usize = 2_243;
/// The CI tier.
pub const TIER_CI: usize = 10_000;
/// The large tier (only with `PM_BENCH_LARGE=1`).
pub const TIER_LARGE: usize = 100_000;

/// Returns the tiers to run: 2,243 and 10k, plus 100k when `PM_BENCH_LARGE=1`.
pub fn tiers() -> Vec<usize> {
    let mut tiers = vec![TIER_SMALL, TIER_CI];
    if std::env::var("PM_BENCH_LARGE").is_ok_and(|v| v == "1") {
        tiers.push(TIER_LARGE);
    }
    tiers
}

/// A generated scratch corpus (seed 42) in a temp dir, removed on drop.
pub struct Corpus {
    dir: tempfile::TempDir,
    /// What the generator wrote (sample ids, visible counts).
    pub report: CorpusReport,
}

impl Corpus {
    /// Generates `n` items of pm-cli's `scratch` shape, seed 42 (what `pm bench generate
    /// --items n` writes).
    ///
    /// # Panics
    /// When the temp dir or the corpus cannot be written (a bench cannot run without it).
    pub fn generate(n: usize) -> Corpus {
        let dir = tempfile::tempdir().expect("temp dir");
        for sub in ["home", "global"] {
            std::fs::create_dir(dir.path().join(sub)).expect("scratch dir");
        }
        let options = CorpusOptions {
            items: n as u64,
            seed: 42,
            shape: SCRATCH,
            force: false,
            allow_million: false,
        };
        let report = generate_corpus(&dir.path().join("work"), &options).expect("generate corpus");
        Corpus { dir, report }
    }

    /// Returns the workspace (the directory holding `.agents/pm`).
    pub fn workspace(&self) -> PathBuf {
        self.report.workspace_root.clone()
    }

    /// Returns the tracker.
    pub fn tracker(&self) -> Tracker {
        Tracker::at(self.report.tracker_root.clone())
    }

    /// Runs `pm args…` in-process in the workspace (pinned clock, empty global profile) and
    /// returns stdout.
    ///
    /// # Panics
    /// When the command fails (a bench measures working reads only).
    pub fn pm(&self, args: &[&str]) -> Vec<u8> {
        run_pm(&self.workspace(), self.dir.path(), args)
    }
}

/// Runs `pm args…` in-process with `cwd` as the working directory and `scratch` holding the
/// empty home and global profile; returns stdout.
///
/// # Panics
/// When the command exits non-zero.
pub fn run_pm(cwd: &Path, scratch: &Path, args: &[&str]) -> Vec<u8> {
    let mut env = Environment::with_cwd(cwd);
    env.pm_clock = Some("2026-09-01T00:00:00.000Z".into());
    env.pm_seed = Some("bench".into());
    env.pm_clock_tick_ms = Some("0".into());
    env.pm_global_path = Some(scratch.join("global").into_os_string());
    env.home = Some(scratch.join("home").into_os_string());
    let argv: Vec<OsString> = std::iter::once("pm")
        .chain(args.iter().copied())
        .map(OsString::from)
        .collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = pm_cli::run_with(&argv, env, &mut out, &mut err);
    assert_eq!(
        code,
        0,
        "pm {args:?}: {}{}",
        String::from_utf8_lossy(&out),
        String::from_utf8_lossy(&err)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_corpus_is_the_real_generator_and_reads_work() {
        let corpus = Corpus::generate(2);
        assert_eq!(corpus.report.sample_get, corpus_id(0));
        let out = corpus.pm(&["get", "pm-s0000001", "--json"]);
        assert!(String::from_utf8_lossy(&out).contains("Synthetic task 1"));
    }
}
