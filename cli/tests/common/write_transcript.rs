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

/// One step of `commands.json` as a segment replay needs it.
#[derive(Debug, serde::Deserialize)]
pub struct TranscriptStep {
    /// `NNN-<cmd>`.
    pub name: String,
    /// `mutation`, `expected_error`, `read`, …
    pub kind: String,
    /// The pm argv (absent for shell steps).
    pub argv: Option<Vec<String>>,
    /// The per-step environment.
    pub env: std::collections::BTreeMap<String, String>,
    /// What the step read from stdin.
    pub stdin: Option<String>,
    /// The TOON run.
    pub toon: TranscriptOutcome,
    /// The `--json` run.
    pub json: TranscriptOutcome,
}

/// One run of a step.
#[derive(Debug, serde::Deserialize)]
pub struct TranscriptOutcome {
    /// The argv of this run (the JSON run appends `--json`).
    pub argv: Option<Vec<String>>,
    /// Its exit code.
    pub exit_code: i32,
    /// Its stdout file, relative to the transcript root.
    pub stdout: Option<String>,
}

impl Transcript {
    /// The steps of `commands.json`, in order.
    pub fn steps(&self) -> Result<Vec<TranscriptStep>, Box<dyn std::error::Error>> {
        #[derive(serde::Deserialize)]
        struct Commands {
            steps: Vec<TranscriptStep>,
        }
        let text = std::fs::read_to_string(self.root.join("commands.json"))?;
        Ok(serde_json::from_str::<Commands>(&text)?.steps)
    }

    /// A workspace at `into` holding the tracker of snapshot `name` and the files step 001
    /// wrote (`inputs/`, `src/`, `docs/`).
    pub fn workspace_at(&self, name: &str, into: &Path) -> Result<(), Box<dyn std::error::Error>> {
        let snapshot = self.root.join("snapshots").join(name);
        pm_testkit::copy_tree(&snapshot.join(".agents"), &into.join(".agents"))?;
        pm_testkit::copy_tree(&self.root.join("input-files"), into)?;
        Ok(())
    }

    /// Replays `steps` in `ws` (the workspace of the snapshot before the first) with `--json`
    /// or not, and returns every difference from pm-cli: exit codes, stdout (skipped for
    /// errors under `--json`, which this pm prints to stdout), and the tracker after each step.
    pub fn replay(
        &self,
        ws: &Path,
        steps: &[&TranscriptStep],
        json: bool,
    ) -> Result<Vec<String>, Box<dyn std::error::Error>> {
        let mut failures = Vec::new();
        for step in steps {
            let outcome = if json { &step.json } else { &step.toon };
            let argv = outcome.argv.as_ref().or(step.argv.as_ref());
            let Some(argv) = argv else { continue };
            let (code, stdout) = run_step(ws, step, &argv[1..])?;
            let name = &step.name;
            if code != outcome.exit_code {
                failures.push(format!(
                    "{name}: exit {code}, expected {}",
                    outcome.exit_code
                ));
            }
            if !(json && step.kind == "expected_error") {
                let expected = match &outcome.stdout {
                    Some(rel) => std::fs::read_to_string(self.root.join(rel))?,
                    None => String::new(),
                };
                let ours = crate::common::without_source(&stdout);
                if ours != expected {
                    failures.push(format!(
                        "{name}: stdout differs\n--- ours\n{ours}\n--- pm\n{expected}"
                    ));
                }
            }
            let theirs = self.root.join("snapshots").join(name).join(".agents/pm");
            let differing = tree_differences(&ws.join(".agents/pm"), &theirs)?;
            if !differing.is_empty() {
                failures.push(format!("{name}: tracker differs at {differing:?}"));
            }
        }
        Ok(failures)
    }
}

fn run_step(
    ws: &Path,
    step: &TranscriptStep,
    args: &[String],
) -> Result<(i32, String), Box<dyn std::error::Error>> {
    use std::io::Write;
    let home = ws.join("../home");
    std::fs::create_dir_all(&home)?;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_pm"))
        .env_clear()
        .current_dir(ws)
        .env("HOME", &home)
        .env("PM_GLOBAL_PATH", &home)
        .env("LANG", "C.UTF-8")
        .env("TZ", "UTC")
        .envs(&step.env)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(step.stdin.as_deref().unwrap_or_default().as_bytes())?;
    }
    let out = child.wait_with_output()?;
    Ok((
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout)?,
    ))
}

/// Paths whose bytes differ between two trackers, leaving out `runtime/` and `locks/`.
fn tree_differences(ours: &Path, theirs: &Path) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let (ours, theirs) = (tracker_files(ours)?, tracker_files(theirs)?);
    Ok(ours
        .keys()
        .chain(theirs.keys())
        .filter(|k| ours.get(*k) != theirs.get(*k))
        .cloned()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect())
}

fn tracker_files(
    root: &Path,
) -> Result<std::collections::BTreeMap<String, Vec<u8>>, Box<dyn std::error::Error>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let path = entry.path();
            let rel = path.strip_prefix(root)?.to_string_lossy().into_owned();
            if entry.file_type()?.is_dir() {
                if !["runtime", "locks"].contains(&rel.as_str()) {
                    stack.push(path);
                }
            } else {
                out.insert(rel, std::fs::read(&path)?);
            }
        }
    }
    Ok(out)
}

/// Replays pm-cli's steps `first..=last` (checking that `first` is named `first_name`) from
/// its snapshot of step `first - 1`, in TOON and in JSON, and fails with every difference.
pub fn replay_steps(
    first: usize,
    last: usize,
    first_name: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let t = transcript()?;
    let steps = t.steps()?;
    assert_eq!(steps[first].name, first_name);
    let segment: Vec<_> = steps[first..=last].iter().collect();
    for json in [false, true] {
        let tmp = tempfile::tempdir()?;
        let ws = tmp.path().join("work");
        t.workspace_at(&steps[first - 1].name, &ws)?;
        let failures = t.replay(&ws, &segment, json)?;
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
    Ok(())
}
