//! End-to-end harness: runs the real `pm` binary in a temp workspace with a pinned, hermetic
//! environment and returns stdout, stderr and the exit code together.

pub mod git_repo;
pub mod write_transcript;

use std::cell::Cell;
use std::error::Error;
use std::path::{Path, PathBuf};

use pm_engine::clock::format_iso_ms;
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// `PM_CLOCK` of the first command; each later command runs one second later.
const CLOCK_START_MS: i64 = 1_788_220_800_000; // 2026-09-01T00:00:00.000Z
/// `PM_SEED` of every command.
pub const SEED: &str = "pm-cli-tests";
/// `PM_AUTHOR` of every command.
pub const AUTHOR: &str = "test-author";

/// A temp directory holding a workspace (`work/`), an empty `HOME` and an empty global pm dir.
pub struct TestTracker {
    tmp: tempfile::TempDir,
    step: Cell<i64>,
}

/// What one `pm` run produced.
#[derive(Debug)]
pub struct Run {
    /// Everything written to stdout.
    pub stdout: String,
    /// Everything written to stderr.
    pub stderr: String,
    /// The exit code (`-1` when killed by a signal).
    pub code: i32,
}

impl Run {
    /// Returns the `error.code` of a `--json` failure (empty when stdout has none).
    pub fn error_code(&self) -> Result<String, Box<dyn Error>> {
        let out: serde_json::Value = serde_json::from_str(&self.stdout)?;
        Ok(out["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_string())
    }
}

impl TestTracker {
    /// Returns a fresh workspace without a tracker.
    pub fn new() -> Result<TestTracker, Box<dyn Error>> {
        let tmp = tempfile::tempdir()?;
        for dir in ["work", "home", "global"] {
            std::fs::create_dir(tmp.path().join(dir))?;
        }
        Ok(TestTracker {
            tmp,
            step: Cell::new(0),
        })
    }

    /// Returns a workspace holding a copy of the fx-100 fixture tracker (`work/.agents/pm`).
    pub fn fx100() -> Result<TestTracker, Box<dyn Error>> {
        let tracker = TestTracker::new()?;
        let archive = pm_testkit::shared_file("golden/reads/fx-100-tracker.tar.gz");
        let extracted = pm_testkit::extract_tar_gz(&archive)?;
        pm_testkit::copy_tree(extracted.path(), &tracker.workspace())?;
        Ok(tracker)
    }

    /// Returns a workspace holding a copy of the directory tree `dir` (e.g. a transcript
    /// snapshot whose `.agents/pm` is the tracker).
    pub fn from_tree(dir: &Path) -> Result<TestTracker, Box<dyn Error>> {
        let tracker = TestTracker::new()?;
        pm_testkit::copy_tree(dir, &tracker.workspace())?;
        Ok(tracker)
    }

    /// Returns a workspace holding a copy of the committed sample tracker
    /// (`testdata/trackers/sample`, tracker at `work/.agents/pm`).
    pub fn sample() -> Result<TestTracker, Box<dyn Error>> {
        TestTracker::from_tree(&sample_tracker_dir())
    }

    /// Returns the workspace root (the working directory of every run).
    pub fn workspace(&self) -> PathBuf {
        self.tmp.path().join("work")
    }

    /// Returns the temp directory that holds the workspace (a directory outside any tracker).
    pub fn outside(&self) -> PathBuf {
        self.tmp.path().join("home")
    }

    /// Runs `pm args…` in the workspace.
    pub fn pm(&self, args: &[&str]) -> Result<Run, Box<dyn Error>> {
        self.pm_in(&self.workspace(), args, &[])
    }

    /// Returns the `pm args…` command for `dir` with the pinned environment plus `env` (the
    /// next clock step).
    fn command(&self, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Command {
        let step = self.step.get();
        self.step.set(step + 1);
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pm"));
        cmd.env_clear()
            .current_dir(dir)
            .env("PM_CLOCK", format_iso_ms(CLOCK_START_MS + step * 1000))
            .env("PM_SEED", SEED)
            .env("PM_CLOCK_TICK_MS", "0")
            .env("PM_AUTHOR", AUTHOR)
            .env("PM_GLOBAL_PATH", self.tmp.path().join("global"))
            .env("HOME", self.tmp.path().join("home"))
            .env("NO_COLOR", "1")
            .args(args);
        for (key, value) in env {
            cmd.env(key, value);
        }
        cmd
    }

    /// Returns the `pm args…` command for the workspace with the pinned environment, for tests
    /// that wire its streams themselves (a pseudo-terminal, a pipe kept open).
    pub fn pm_command(&self, args: &[&str]) -> std::process::Command {
        self.command(&self.workspace(), args, &[])
    }

    /// Runs `pm args…` in `dir` with extra environment variables.
    pub fn pm_in(
        &self,
        dir: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<Run, Box<dyn Error>> {
        let output = assert_cmd::Command::from_std(self.command(dir, args, env)).output()?;
        Ok(Run {
            stdout: String::from_utf8(output.stdout)?,
            stderr: String::from_utf8(output.stderr)?,
            code: output.status.code().unwrap_or(-1),
        })
    }

    /// Runs `pm args…` in the workspace without the pinned variables named in `unset` (e.g.
    /// `PM_AUTHOR`, so that the tracker's `author_default` applies).
    pub fn pm_unset(&self, args: &[&str], unset: &[&str]) -> Result<Run, Box<dyn Error>> {
        let mut cmd = self.command(&self.workspace(), args, &[]);
        for key in unset {
            cmd.env_remove(key);
        }
        let output = assert_cmd::Command::from_std(cmd).output()?;
        Ok(Run {
            stdout: String::from_utf8(output.stdout)?,
            stderr: String::from_utf8(output.stderr)?,
            code: output.status.code().unwrap_or(-1),
        })
    }

    /// Starts the mutation `pm args…` in the workspace with `PM_FAULT_POINT=point` and returns
    /// once it announced the point (`fault:<point>` on stderr), parked there until killed.
    pub fn park_at(&self, args: &[&str], point: &str) -> Result<Parked, Box<dyn Error>> {
        use std::io::BufRead;
        let mut child = self
            .command(&self.workspace(), args, &[("PM_FAULT_POINT", point)])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let parked = Parked(child);
        let mut line = String::new();
        std::io::BufReader::new(stderr).read_line(&mut line)?;
        if line.trim() != format!("fault:{point}") {
            return Err(format!("{args:?} did not stop at {point}: {line:?}").into());
        }
        Ok(parked)
    }

    /// Returns every file under the workspace (relative path → bytes), for "nothing changed"
    /// assertions.
    pub fn snapshot(&self) -> Result<std::collections::BTreeMap<String, Vec<u8>>, Box<dyn Error>> {
        let root = self.workspace();
        let mut out = std::collections::BTreeMap::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir)? {
                let path = entry?.path();
                let rel = path.strip_prefix(&root)?.to_string_lossy().into_owned();
                if path.is_dir() {
                    out.insert(format!("{rel}/"), Vec::new());
                    stack.push(path);
                } else {
                    out.insert(rel, std::fs::read(&path)?);
                }
            }
        }
        Ok(out)
    }

    /// Returns the tracker root (`work/.agents/pm`).
    pub fn root(&self) -> PathBuf {
        self.workspace().join(".agents/pm")
    }

    /// Replaces the temp workspace path in `text` with `[TRACKER]`.
    pub fn redact(&self, text: &str) -> String {
        text.replace(&self.workspace().display().to_string(), "[TRACKER]")
    }
}

/// A `pm` process parked at a fault point; killed (SIGKILL) and reaped when dropped.
pub struct Parked(std::process::Child);

impl Parked {
    /// Returns the process id.
    pub fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Kills the process with SIGKILL and reaps it.
    pub fn kill(mut self) -> Result<(), Box<dyn Error>> {
        self.0.kill()?;
        self.0.wait()?;
        Ok(())
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Run {
    /// Parses stdout as exactly one JSON document of type `T`.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, Box<dyn Error>> {
        Ok(serde_json::from_str(&self.stdout)?)
    }
}

/// Removes the top-level `source` line (TOON `source: "index"`, pretty JSON `  "source": "scan",`)
/// that `pm list` adds to pm's envelope (docs/compatibility.md), so the rest compares with
/// pm's bytes.
pub fn without_source(text: &str) -> String {
    let keep = |line: &&str| {
        !matches!(
            *line,
            "source: \"index\""
                | "source: \"scan\""
                | "  \"source\": \"index\","
                | "  \"source\": \"scan\","
        )
    };
    text.split('\n').filter(keep).collect::<Vec<_>>().join("\n")
}

/// Returns `testdata/trackers/sample` of the checkout (never modify it in place).
pub fn sample_tracker_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/trackers/sample")
}

/// Reads the files at `relative` paths out of a shared `.tar.gz` without extracting the rest
/// (the mutation transcript holds 1,500 files; tests need a handful).
pub fn archive_files(archive: &str, relative: &[&str]) -> Result<Vec<String>, Box<dyn Error>> {
    let file = std::fs::File::open(pm_testkit::shared_file(archive))?;
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut found: Vec<Option<String>> = vec![None; relative.len()];
    for entry in tar.entries()? {
        let mut entry = entry?;
        let path = entry.path()?.to_string_lossy().into_owned();
        if let Some(slot) = relative.iter().position(|r| *r == path) {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut entry, &mut text)?;
            found[slot] = Some(text);
        }
    }
    found
        .into_iter()
        .zip(relative)
        .map(|(text, path)| text.ok_or_else(|| format!("{archive} has no {path}").into()))
        .collect()
}

/// The `--json` error envelope, as scripts read it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorEnvelope {
    /// Always false.
    pub ok: bool,
    /// The problem.
    pub error: ErrorBody,
}

/// The `error` object.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
    pub title: String,
    pub required: String,
    pub why: Option<String>,
    #[serde(default)]
    pub examples: Vec<String>,
    pub recovery: RecoveryBody,
    pub next_steps: Vec<String>,
    pub exit_code: i32,
    pub refusal: RefusalBody,
    pub hint: Option<String>,
    pub changed: bool,
    pub context: Option<serde_json::Value>,
}

/// `error.recovery`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecoveryBody {
    pub attempted_command: String,
    pub normalized_args: Vec<String>,
    pub provided_fields: Vec<String>,
    #[serde(default)]
    pub missing: Vec<String>,
    #[serde(default)]
    pub suggested_flags: Vec<String>,
    #[serde(default)]
    pub candidate_commands: Vec<String>,
    #[serde(default)]
    pub allowed_values: Vec<String>,
    pub suggested_retry: Option<String>,
}

/// `error.refusal`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefusalBody {
    pub surface: String,
    pub rejected_value: Option<String>,
    pub legal_domain: Option<Vec<String>>,
    pub exit_code: i32,
}
