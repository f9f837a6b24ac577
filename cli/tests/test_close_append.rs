//! `pm append` (`--body`/`--text`, stdin, `--id`) and `pm close` (`--completed-at`,
//! `--duplicate-of`, `--id`). pm-cli's write transcript steps 030, 032 and 134 replay byte for
//! byte from its snapshots 029, 031 and 133.

use serde_json::Value;

use crate::common::TestTracker;
use crate::common::write_transcript::replay_steps;

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[test]
fn transcript_append_text_matches_pm_cli() -> TestResult {
    replay_steps(30, 30, "030-append")
}

#[test]
fn transcript_close_completed_at_matches_pm_cli() -> TestResult {
    replay_steps(32, 32, "032-close")
}

#[test]
fn transcript_close_duplicate_of_matches_pm_cli() -> TestResult {
    replay_steps(134, 134, "134-close")
}

/// A tracker with the tasks pm-a1 and pm-a2.
fn two_tasks() -> Result<TestTracker, Box<dyn std::error::Error>> {
    let t = TestTracker::new()?;
    assert_eq!(t.pm(&["init", "--defaults"])?.code, 0);
    for id in ["pm-a1", "pm-a2"] {
        let created = t.pm(&["create", "task", "Task", "--id", id])?;
        assert_eq!(created.code, 0, "{}", created.stderr);
    }
    Ok(t)
}

fn item(t: &TestTracker, id: &str) -> Result<Value, Box<dyn std::error::Error>> {
    let run = t.pm(&["get", id, "--json"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out: Value = serde_json::from_str(&run.stdout)?;
    Ok(out["item"].clone())
}

fn body(t: &TestTracker, id: &str) -> Result<String, Box<dyn std::error::Error>> {
    let run = t.pm(&["get", id, "--json"])?;
    let out: Value = serde_json::from_str(&run.stdout)?;
    Ok(out["item"]["body"].as_str().unwrap_or_default().to_string())
}

#[test]
fn append_takes_text_from_an_operand_a_flag_or_stdin() -> TestResult {
    let t = two_tasks()?;
    assert_eq!(t.pm(&["append", "pm-a1", "first"])?.code, 0);
    assert_eq!(t.pm(&["append", "--id", "pm-a1", "second"])?.code, 0);
    assert_eq!(t.pm(&["append", "pm-a1", "--text", "third"])?.code, 0);
    let cmd = t.pm_command(&["append", "pm-a1", "--body", "-"]);
    let out = assert_cmd::Command::from_std(cmd)
        .write_stdin("fourth")
        .output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = body(&t, "pm-a1")?;
    let order: Vec<_> = ["first", "second", "third", "fourth"]
        .iter()
        .map(|w| text.find(w))
        .collect();
    assert!(order.iter().all(Option::is_some), "{text}");
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
    Ok(())
}

#[test]
fn append_refuses_two_texts_or_none_and_changes_nothing() -> TestResult {
    let t = two_tasks()?;
    let before = t.snapshot()?;
    let twice = t.pm(&["append", "pm-a1", "one", "--body", "two", "--json"])?;
    assert_eq!(twice.code, 2);
    assert_eq!(twice.error_code()?, "conflicting_arguments");
    let none = t.pm(&["append", "pm-a1", "--json"])?;
    assert_eq!(none.code, 2);
    assert_eq!(none.error_code()?, "missing_required_argument");
    assert_eq!(t.snapshot()?, before);
    Ok(())
}

#[test]
fn close_completed_at_accepts_an_offset_from_the_close_time() -> TestResult {
    let t = two_tasks()?;
    let run = t.pm(&["close", "--id", "pm-a1", "done", "--completed-at", "-2d"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let closed = item(&t, "pm-a1")?;
    let closed_at = closed["closed_at"].as_str().ok_or("closed_at")?;
    let completed_at = closed["completed_at"].as_str().ok_or("completed_at")?;
    let ms = |s: &str| pm_engine::timestamp::parse_timestamp(s).ok_or("not a timestamp");
    assert_eq!(ms(closed_at)? - ms(completed_at)?, 2 * 86_400_000);
    assert_eq!(closed["close_reason"], "done");
    Ok(())
}

#[test]
fn close_completed_at_refuses_a_bad_time_and_changes_nothing() -> TestResult {
    let t = two_tasks()?;
    let before = t.snapshot()?;
    let run = t.pm(&[
        "close",
        "pm-a1",
        "done",
        "--completed-at",
        "someday",
        "--json",
    ])?;
    assert_eq!(run.code, 2);
    assert_eq!(run.error_code()?, "invalid_argument_value");
    assert_eq!(t.snapshot()?, before);
    Ok(())
}

#[test]
fn close_duplicate_of_keeps_given_fields_and_refuses_itself_or_a_missing_target() -> TestResult {
    let t = two_tasks()?;
    let before = t.snapshot()?;
    let itself = t.pm(&["close", "pm-a1", "--duplicate-of", "pm-a1", "--json"])?;
    assert_eq!(itself.code, 2);
    assert_eq!(itself.error_code()?, "invalid_argument_value");
    let missing = t.pm(&["close", "pm-a1", "-d", "pm-zz9", "--json"])?;
    assert_eq!(missing.code, 3);
    assert_eq!(missing.error_code()?, "item_not_found");
    assert_eq!(t.snapshot()?, before);
    let run = t.pm(&["close", "pm-a1", "-d", "pm-a2", "--resolution", "Merged"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let closed = item(&t, "pm-a1")?;
    assert_eq!(closed["duplicate_of"], "pm-a2");
    assert_eq!(closed["resolution"], "Merged");
    assert_eq!(closed["close_reason"], "Merged");
    assert_eq!(closed["actual_result"], "Closed as duplicate of pm-a2.");
    Ok(())
}
