//! Cold-process measurement: spawn a binary with a clean environment, time it from spawn to
//! exit, count its stdout bytes, and read its peak RSS through GNU time (`/usr/bin/time -f %M`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

/// A binary under test and the environment it runs in.
#[derive(Clone, Debug)]
pub struct Target {
    /// Report label (`pm`, `compare`).
    pub label: String,
    /// Program and leading arguments (`node dist/cli.js` is two words).
    pub command: Vec<String>,
    /// The workspace (cwd); the tracker is `<workspace>/.agents/pm`.
    pub workspace: PathBuf,
    /// Scratch directory for `HOME` and `PM_GLOBAL_PATH`.
    pub home: PathBuf,
}

/// One finished process.
#[derive(Clone, Debug)]
pub struct Sample {
    /// Wall time from spawn to exit.
    pub ms: f64,
    /// Exit code (-1 when killed by a signal).
    pub exit: i32,
    /// stdout length.
    pub stdout_bytes: usize,
    /// The first stderr line, for failures.
    pub stderr_head: String,
}

impl Target {
    fn command(&self, args: &[String]) -> Command {
        let mut cmd = Command::new(&self.command[0]);
        cmd.args(&self.command[1..])
            .args(args)
            .current_dir(&self.workspace)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("PM_GLOBAL_PATH", self.home.join("pm-global"))
            .env("PM_PATH", self.workspace.join(".agents/pm"))
            .env("PM_AUTHOR", "pm-scale-benchmark")
            .env("NO_COLOR", "1")
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `args` once and measures it.
    ///
    /// # Errors
    /// When the process cannot be spawned.
    pub fn run(&self, args: &[String]) -> std::io::Result<Sample> {
        let mut cmd = self.command(args);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let start = Instant::now();
        let output = cmd.spawn()?.wait_with_output()?;
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        Ok(Sample {
            ms,
            exit: output.status.code().unwrap_or(-1),
            stdout_bytes: output.stdout.len(),
            stderr_head: String::from_utf8_lossy(&output.stderr)
                .lines()
                .next()
                .unwrap_or_default()
                .chars()
                .take(200)
                .collect(),
        })
    }

    /// Returns whether the binary has `subcommand` (`<bin> <subcommand> --help` exits 0).
    pub fn has_subcommand(&self, subcommand: &str) -> bool {
        let mut cmd = self.command(&[subcommand.to_string(), "--help".to_string()]);
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        cmd.status().is_ok_and(|s| s.success())
    }

    /// Runs `args` under GNU time and returns the peak RSS in KiB (`None` without
    /// `/usr/bin/time` or when the run fails).
    pub fn peak_rss_kib(&self, args: &[String], scratch: &Path) -> Option<u64> {
        let time = Path::new("/usr/bin/time");
        if !time.is_file() {
            return None;
        }
        let out = scratch.join("rss.txt");
        let inner = self.command(args);
        let mut cmd = Command::new(time);
        cmd.arg("-f")
            .arg("%M")
            .arg("-o")
            .arg(&out)
            .arg(inner.get_program())
            .args(inner.get_args())
            .current_dir(&self.workspace)
            .env_clear()
            .envs(inner.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let status = cmd.status().ok()?;
        if !status.success() {
            return None;
        }
        let text = std::fs::read_to_string(&out).ok()?;
        text.lines().last()?.trim().parse().ok()
    }
}

/// Returns the nearest-rank percentile of a non-empty sample (pm-cli's `nearestRank`).
pub fn nearest_rank(values: &[f64], percentile: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((percentile / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

fn round1(ms: f64) -> f64 {
    (ms * 10.0).round() / 10.0
}

/// The summary of one operation on one binary.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Measured runs (excluding the warm-up).
    pub samples: Vec<Sample>,
    /// The excluded warm-up run.
    pub warmup: Sample,
    /// Peak RSS of the extra GNU-time run, KiB.
    pub peak_rss_kib: Option<u64>,
}

impl Summary {
    /// Returns the p50 latency.
    pub fn p50(&self) -> f64 {
        nearest_rank(&self.latencies(), 50.0)
    }

    fn latencies(&self) -> Vec<f64> {
        self.samples.iter().map(|s| s.ms).collect()
    }

    /// Returns the first failed run, if any run (warm-up included) exited non-zero.
    pub fn failure(&self) -> Option<&Sample> {
        std::iter::once(&self.warmup)
            .chain(&self.samples)
            .find(|s| s.exit != 0)
    }

    /// Returns the report object.
    pub fn to_json(&self) -> Value {
        let lat = self.latencies();
        let bytes = self
            .samples
            .iter()
            .map(|s| s.stdout_bytes)
            .max()
            .unwrap_or(0);
        let mut out = json!({
            "status": "ok",
            "runs": self.samples.len(),
            "min_ms": round1(lat.iter().copied().fold(f64::INFINITY, f64::min)),
            "p50_ms": round1(self.p50()),
            "p95_ms": round1(nearest_rank(&lat, 95.0)),
            "max_ms": round1(lat.iter().copied().fold(0.0, f64::max)),
            "warmup_ms": round1(self.warmup.ms),
            "peak_rss_kib": self.peak_rss_kib,
            "output_bytes": bytes,
            "estimated_tokens": bytes.div_ceil(4),
        });
        if let Some(failed) = self.failure() {
            out["status"] = json!("failed");
            out["exit_code"] = json!(failed.exit);
            out["stderr"] = json!(failed.stderr_head);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_matches_pm_cli() {
        let v = [5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(nearest_rank(&v, 50.0), 3.0);
        assert_eq!(nearest_rank(&v, 95.0), 5.0);
        assert_eq!(nearest_rank(&[7.0], 95.0), 7.0);
    }
}
