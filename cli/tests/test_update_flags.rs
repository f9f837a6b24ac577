//! `pm update`: `--id`, `-b/--body`, `--body-file`, `--clear-<collection>`, `--remove-ac`,
//! `--completed-at`, `--order/--rank`, `--regression`, `--expected/--actual`. pm-cli's write
//! transcript steps 029 and 031 replay byte for byte from its snapshots 028 and 030.

use serde_json::Value;

use crate::common::write_transcript::replay_steps;
use crate::common::{Run, TestTracker};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[test]
fn transcript_update_body_and_actual_matches_pm_cli() -> TestResult {
    replay_steps(29, 29, "029-update")
}

#[test]
fn transcript_update_clear_collections_matches_pm_cli() -> TestResult {
    replay_steps(31, 31, "031-update")
}

/// A tracker with the task pm-u1 (criteria `a; b`).
fn task() -> Result<TestTracker, Box<dyn std::error::Error>> {
    let t = TestTracker::new()?;
    assert_eq!(t.pm(&["init", "--defaults"])?.code, 0);
    let created = t.pm(&[
        "create", "task", "Task", "--id", "pm-u1", "--ac", "a", "--ac", "b",
    ])?;
    assert_eq!(created.code, 0, "{}", created.stderr);
    Ok(t)
}

fn item(t: &TestTracker) -> Result<Value, Box<dyn std::error::Error>> {
    let run = t.pm(&["get", "pm-u1", "--json"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out: Value = serde_json::from_str(&run.stdout)?;
    Ok(out["item"].clone())
}

fn ok(run: Run) -> TestResult {
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    Ok(())
}

#[test]
fn short_flags_id_flag_and_body_file_set_the_fields() -> TestResult {
    let t = task()?;
    ok(t.pm(&[
        "update",
        "--id",
        "pm-u1",
        "-t",
        "Renamed",
        "-s",
        "in_progress",
    ])?)?;
    ok(t.pm(&[
        "update",
        "pm-u1",
        "-p",
        "0",
        "-d",
        "About",
        "-b",
        "Short body",
    ])?)?;
    let got = item(&t)?;
    assert_eq!(got["title"], "Renamed");
    assert_eq!(got["status"], "in_progress");
    assert_eq!(got["priority"], 0);
    assert_eq!(got["description"], "About");
    assert_eq!(got["body"], "Short body");
    {
        use std::io::Write;
        let mut file = std::fs::File::create(t.workspace().join("body.md"))?;
        file.write_all(b"From a file\n")?;
    }
    ok(t.pm(&["update", "pm-u1", "--body-file", "body.md"])?)?;
    assert_eq!(item(&t)?["body"], "From a file");
    let missing = t.pm(&["update", "pm-u1", "--body-file", "nope.md", "--json"])?;
    assert_eq!(missing.code, 2);
    assert_eq!(missing.error_code()?, "invalid_argument_value");
    let both = t.pm(&[
        "update",
        "pm-u1",
        "-b",
        "x",
        "--body-file",
        "body.md",
        "--json",
    ])?;
    assert_eq!(both.code, 2, "{}", both.stdout);
    Ok(())
}

#[test]
fn remove_ac_removes_an_exact_criterion_and_refuses_an_unknown_one() -> TestResult {
    let t = task()?;
    ok(t.pm(&["update", "pm-u1", "--remove-ac", "a", "--add-ac", "c"])?)?;
    assert_eq!(item(&t)?["acceptance_criteria"], "b; c");
    let before = t.snapshot()?;
    let run = t.pm(&["update", "pm-u1", "--remove-ac", "zz", "--json"])?;
    assert_eq!(run.code, 2);
    assert_eq!(run.error_code()?, "invalid_argument_value");
    assert_eq!(t.snapshot()?, before);
    Ok(())
}

#[test]
fn order_regression_and_result_aliases_are_typed_fields() -> TestResult {
    let t = task()?;
    ok(t.pm(&["update", "pm-u1", "--rank", "3", "--regression"])?)?;
    ok(t.pm(&[
        "update",
        "pm-u1",
        "--expected",
        "works",
        "--actual",
        "fails",
    ])?)?;
    let got = item(&t)?;
    assert_eq!(got["order"], 3);
    assert_eq!(got["regression"], true);
    assert_eq!(got["expected_result"], "works");
    assert_eq!(got["actual_result"], "fails");
    ok(t.pm(&["update", "pm-u1", "--regression", "false", "--order", "-1"])?)?;
    let got = item(&t)?;
    assert_eq!(
        (got["regression"].as_bool(), got["order"].as_i64()),
        (Some(false), Some(-1))
    );
    let bad = t.pm(&["update", "pm-u1", "--order", "first", "--json"])?;
    assert_eq!(bad.error_code()?, "invalid_argument_value");
    Ok(())
}

#[test]
fn completed_at_corrects_a_closed_item_only() -> TestResult {
    let t = task()?;
    let before = t.snapshot()?;
    let open = t.pm(&["update", "pm-u1", "--completed-at", "-1d", "--json"])?;
    assert_eq!(open.code, 2);
    assert_eq!(open.error_code()?, "invalid_argument_value");
    assert_eq!(t.snapshot()?, before);
    ok(t.pm(&["close", "pm-u1", "done"])?)?;
    ok(t.pm(&["update", "pm-u1", "--completed-at", "2026-01-02T03:04:05Z"])?)?;
    assert_eq!(item(&t)?["completed_at"], "2026-01-02T03:04:05.000Z");
    Ok(())
}

#[test]
fn clear_flags_empty_collections_and_conflict_with_their_value_flag() -> TestResult {
    let t = task()?;
    ok(t.pm(&["create", "task", "Other", "--id", "pm-u2"])?)?;
    ok(t.pm(&["update", "pm-u1", "--dep", "pm-u2"])?)?;
    assert_eq!(item(&t)?["dependencies"].as_array().map(Vec::len), Some(1));
    let both = t.pm(&[
        "update",
        "pm-u1",
        "--dep",
        "pm-u2",
        "--clear-deps",
        "--json",
    ])?;
    assert_eq!(both.code, 2);
    ok(t.pm(&["update", "pm-u1", "--clear-deps"])?)?;
    assert!(item(&t)?.get("dependencies").is_none());
    Ok(())
}
