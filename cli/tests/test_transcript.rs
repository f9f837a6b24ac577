//! Differential replay of pm-cli's mutation transcript (`shared/golden/mutation-transcript`):
//! all 37 steps with each step's environment, in a TOON run and a `--json` run; after every step
//! the tracker tree, the exit code and stdout must equal the reference.

use std::collections::BTreeMap;
use std::error::Error;
use std::path::Path;
use std::process::Command;

use serde::Deserialize;

type TestResult = Result<(), Box<dyn Error>>;

/// Steps whose stdout is not compared yet, per run, and why. The lead removes entries as the
/// commands they need merge; every other step is compared byte for byte.
const DEFERRED_STDOUT: &[(&str, Mode, &str)] = &[
    // Documented init deviations (no agent_guidance, telemetry, shorter next_steps); the
    // receipt is compared field by field in test_init.
    (
        "00-init",
        Mode::Both,
        "init receipt: see docs/compatibility.md, `pm init`",
    ),
    // Under --json our error envelope goes to stdout (machine contract C1/C2); pm-cli writes a
    // problem document to stderr and leaves stdout empty. Exit codes are still compared.
    ("31-create", Mode::Json, "errors under --json go to stdout"),
    ("32-update", Mode::Json, "errors under --json go to stdout"),
    // Our get adds `item_hash` (docs/compatibility.md); test_get compares these steps with the
    // golden minus that key.
    (
        "33-get",
        Mode::Both,
        "get adds item_hash; compared in test_get",
    ),
    (
        "34-get",
        Mode::Both,
        "get adds item_hash; compared in test_get",
    ),
];

/// Steps whose exit code is not compared yet (the command does not exist on this branch).
const DEFERRED_EXIT: &[&str] = &[];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Toon,
    Json,
    Both,
}

#[derive(Debug, Deserialize)]
struct Commands {
    steps: Vec<Step>,
}

#[derive(Debug, Deserialize)]
struct Step {
    name: String,
    argv: Vec<String>,
    env: BTreeMap<String, String>,
    toon: Outcome,
    json: Outcome,
}

#[derive(Debug, Deserialize)]
struct Outcome {
    argv: Option<Vec<String>>,
    exit_code: i32,
    stdout: Option<String>,
}

/// Every file (path → bytes) and directory (path with `/` → empty) under `root`, leaving out
/// derived state (`runtime/`, `locks/`, `transactions/`, `checkpoints/`).
fn tree(root: &Path) -> Result<BTreeMap<String, Vec<u8>>, Box<dyn Error>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let path = entry.path();
            let rel = path.strip_prefix(root)?.to_string_lossy().into_owned();
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type()?.is_dir() {
                if ["runtime", "locks", "transactions", "checkpoints"].contains(&name.as_str()) {
                    continue;
                }
                out.insert(format!("{rel}/"), Vec::new());
                stack.push(path);
            } else {
                out.insert(rel, std::fs::read(&path)?);
            }
        }
    }
    Ok(out)
}

fn deferred_stdout(name: &str, mode: Mode) -> bool {
    DEFERRED_STDOUT
        .iter()
        .any(|(n, m, _)| *n == name && (*m == mode || *m == Mode::Both))
}

fn replay(mode: Mode) -> TestResult {
    let golden = pm_testkit::extract_tar_gz(&pm_testkit::shared_file(
        "golden/mutation-transcript.tar.gz",
    ))?;
    let base = golden.path().join("mutation-transcript");
    let commands: Commands =
        serde_json::from_str(&std::fs::read_to_string(base.join("commands.json"))?)?;
    assert_eq!(commands.steps.len(), 37);
    let tmp = tempfile::tempdir()?;
    let ws = tmp.path().join("work");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&ws)?;
    std::fs::create_dir_all(&home)?;
    let mut failures = Vec::new();
    for step in &commands.steps {
        let outcome = if mode == Mode::Json {
            &step.json
        } else {
            &step.toon
        };
        let argv = outcome.argv.as_ref().unwrap_or(&step.argv);
        let output = Command::new(env!("CARGO_BIN_EXE_pm"))
            .env_clear()
            .current_dir(&ws)
            .env("HOME", &home)
            .env("PM_GLOBAL_PATH", &home)
            .env("LANG", "C.UTF-8")
            .env("TZ", "UTC")
            .envs(&step.env)
            .args(&argv[1..])
            .output()?;
        let name = &step.name;
        let code = output.status.code().unwrap_or(-1);
        if code != outcome.exit_code && !DEFERRED_EXIT.contains(&name.as_str()) {
            failures.push(format!(
                "{name}: exit {code}, expected {}",
                outcome.exit_code
            ));
        }
        if !deferred_stdout(name, mode) {
            let expected = match &outcome.stdout {
                Some(rel) => std::fs::read(base.join(rel))?,
                None => Vec::new(),
            };
            let ours = crate::common::without_source(&String::from_utf8(output.stdout)?)
                .replace(&ws.display().to_string(), "[TRACKER]");
            if ours.as_bytes() != expected {
                failures.push(format!(
                    "{name}: stdout differs\n--- ours\n{ours}\n--- pm\n{}",
                    String::from_utf8_lossy(&expected)
                ));
            }
        }
        let ours = tree(&ws)?;
        let theirs = tree(&base.join("snapshots").join(name))?;
        let differing: Vec<&String> = ours
            .keys()
            .chain(theirs.keys())
            .filter(|k| ours.get(*k) != theirs.get(*k))
            .collect();
        if !differing.is_empty() {
            failures.push(format!("{name}: tree differs at {differing:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{mode:?} run:\n{}",
        failures.join("\n")
    );
    Ok(())
}

#[test]
fn toon_run_matches_pm_cli_after_every_step() -> TestResult {
    replay(Mode::Toon)
}

#[test]
fn json_run_matches_pm_cli_after_every_step() -> TestResult {
    replay(Mode::Json)
}

#[test]
fn deferred_lists_name_real_steps() {
    let names: Vec<&str> = DEFERRED_STDOUT.iter().map(|(n, _, _)| *n).collect();
    for name in names.iter().chain(DEFERRED_EXIT) {
        let index: usize = name[..2].parse().expect("NN- prefix");
        assert!(index < 37, "{name}");
    }
}
