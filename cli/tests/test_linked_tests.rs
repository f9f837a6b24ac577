//! `pm test <id>`: linking and unlinking tests writes pm's `tests_add` / `tests_remove` entries
//! with valid hash chains; bad specs and unknown selectors refuse without changing a byte.

use serde_json::Value;

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[test]
fn tests_are_linked_listed_and_unlinked() -> TestResult {
    let t = TestTracker::new()?;
    for args in [
        &["init", "--defaults"][..],
        &["create", "task", "Alpha", "--id", "pm-a"],
        &[
            "test",
            "pm-a",
            "--add",
            "path=tests/io.rs,timeout_seconds=240,command=cargo test -p io, -q",
            "--add",
            "cargo clippy",
        ],
        &["tests", "pm-a", "--remove", "2"],
    ] {
        let run = t.pm(args)?;
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    }
    let listed: Value = t.pm(&["--json", "test", "pm-a"])?.json()?;
    assert_eq!(listed["count"], 1);
    assert_eq!(
        listed["tests"][0],
        serde_json::json!({"command": "cargo test -p io, -q", "path": "tests/io.rs",
            "scope": "project", "timeout_seconds": 240})
    );
    let text = std::fs::read_to_string(t.root().join("history/pm-a.jsonl"))?;
    let ops: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).map(|v| v["op"].as_str().unwrap_or("").into()))
        .collect::<Result<_, _>>()?;
    assert_eq!(ops, ["create", "tests_add", "tests_remove"]);
    let verified = t.pm(&["history", "pm-a", "--verify", "--strict-exit"])?;
    assert_eq!(verified.code, 0, "{}", verified.stdout);

    let before = t.snapshot()?;
    for (args, code) in [
        (
            &["test", "pm-a", "--remove", "nope"][..],
            "invalid_argument_value",
        ),
        (
            &["test", "pm-a", "--add", "scope=moon,command=x"],
            "invalid_argument_value",
        ),
        (&["test", "pm-zz", "--add", "x"], "item_not_found"),
    ] {
        let run = t.pm(args)?;
        assert_ne!(run.code, 0, "{args:?}");
        assert!(
            run.stderr.starts_with(&format!("error[{code}]")),
            "{}",
            run.stderr
        );
    }
    assert_eq!(t.snapshot()?, before);
    Ok(())
}
