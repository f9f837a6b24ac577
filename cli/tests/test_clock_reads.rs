//! Clock reads are part of a read command's design: under `PM_CLOCK` every read of the clock
//! advances it by `PM_CLOCK_TICK_MS`, so the instant a command prints depends on how many reads
//! came before it. This table pins, per command, which read is the printed one; adding or
//! dropping a clock read anywhere on a command's path changes its row here.

use std::error::Error;

use serde_json::Value;

use crate::common::{SEED, TestTracker};

type TestResult = Result<(), Box<dyn Error>>;

/// The pinned start instant; each clock read advances it one second.
const START: &str = "2026-03-07T00:00:00.000Z";

/// One row: the argv, the JSON pointer of the printed instant, and the 0-based clock read
/// whose value it must be.
const PLAN: &[(&[&str], &str, i64)] = &[
    (&["list"], "/now", 0),
    (&["list", "--updated-after", "2d"], "/now", 0),
    (&["next"], "/now", 0),
    (&["validate"], "/generated_at", 0),
    (&["stats"], "/generated_at", 0),
    (&["aggregate", "--group-by", "type"], "/now", 0),
    (&["search", "e", "--full"], "/now", 0),
    (
        &["search", "e", "--full", "--updated-after", "2d"],
        "/now",
        1,
    ),
    (&["health"], "/generated_at", 1),
    (&["context"], "/now", 2),
];

/// Returns the clock read (0-based) whose instant `pm argv… --json` prints at `pointer`.
fn printed_read(t: &TestTracker, argv: &[&str], pointer: &str) -> Result<i64, Box<dyn Error>> {
    let mut args = argv.to_vec();
    args.push("--json");
    let env = [
        ("PM_CLOCK", START),
        ("PM_SEED", SEED),
        ("PM_CLOCK_TICK_MS", "1000"),
    ];
    let run = t.pm_in(&t.workspace(), &args, &env)?;
    assert_eq!(run.code, 0, "{argv:?}: {}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout)?;
    let printed = doc
        .pointer(pointer)
        .and_then(Value::as_str)
        .ok_or(format!("{argv:?}: no instant at {pointer}"))?;
    let start = pm_engine::timestamp::parse_timestamp(START).ok_or("bad start")?;
    let at =
        pm_engine::timestamp::parse_timestamp(printed).ok_or(format!("{printed} is no instant"))?;
    Ok((at - start) / 1000)
}

#[test]
fn every_read_command_prints_its_planned_clock_read() -> TestResult {
    let t = TestTracker::sample()?;
    let mut drifted = Vec::new();
    for (argv, pointer, planned) in PLAN {
        let read = printed_read(&t, argv, pointer)?;
        if read != *planned {
            drifted.push(format!(
                "{argv:?} {pointer}: read {read}, planned {planned}"
            ));
        }
    }
    assert!(
        drifted.is_empty(),
        "clock reads drifted:\n{}",
        drifted.join("\n")
    );
    Ok(())
}

#[test]
fn read_commands_take_instants_only_through_read_clock() -> TestResult {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/commands");
    let mut direct = Vec::new();
    for entry in walk(&dir)? {
        let text = std::fs::read_to_string(&entry)?;
        for (n, line) in text.lines().enumerate() {
            if line.contains("clock.now_ms()") || line.contains("clock.now_iso()") {
                direct.push(format!("{}:{}: {}", entry.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        direct.is_empty(),
        "read commands must take instants through clock_reads::ReadClock:\n{}",
        direct.join("\n")
    );
    Ok(())
}

/// Returns every `.rs` file under `dir`.
fn walk(dir: &std::path::Path) -> Result<Vec<std::path::PathBuf>, Box<dyn Error>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            files.extend(walk(&path)?);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    Ok(files)
}
