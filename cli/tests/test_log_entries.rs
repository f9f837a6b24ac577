//! `pm comments|notes|learnings`: add (operand, `--add`, `--stdin`, `--file`, `--add-json`),
//! `--edit`, `--delete`, `--id`, `--limit`, `--message` and the notes filters. pm-cli's write
//! transcript steps 009–023 replay byte for byte from its snapshot 008.

use crate::common::write_transcript::replay_steps;

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[test]
fn transcript_annotation_steps_match_pm_cli() -> TestResult {
    replay_steps(9, 23, "009-comments")
}

use crate::common::TestTracker;
use serde_json::Value;

/// A tracker with task pm-l1 holding two comments.
fn commented() -> Result<TestTracker, Box<dyn std::error::Error>> {
    let t = TestTracker::new()?;
    assert_eq!(t.pm(&["init", "--defaults"])?.code, 0);
    let created = t.pm(&["create", "task", "Logged", "--id", "pm-l1"])?;
    assert_eq!(created.code, 0, "{}", created.stderr);
    for text in ["one", "two"] {
        assert_eq!(t.pm(&["comments", "pm-l1", text])?.code, 0);
    }
    Ok(t)
}

fn entries(t: &TestTracker, command: &str) -> Result<Vec<Value>, Box<dyn std::error::Error>> {
    let run = t.pm(&[command, "pm-l1", "--json"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out: Value = serde_json::from_str(&run.stdout)?;
    Ok(out[command].as_array().cloned().unwrap_or_default())
}

#[test]
fn the_id_flag_takes_the_item_and_a_single_operand_is_the_text() -> TestResult {
    let t = commented()?;
    let run = t.pm(&["comments", "--id", "pm-l1", "three", "--message", "why"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let texts: Vec<Value> = entries(&t, "comments")?
        .iter()
        .map(|e| e["text"].clone())
        .collect();
    assert_eq!(texts, ["one", "two", "three"]);
    let history = std::fs::read_to_string(t.root().join("history/pm-l1.jsonl"))?;
    let last: Value = serde_json::from_str(history.lines().last().unwrap_or_default())?;
    assert_eq!(
        (last["op"].as_str(), last["message"].as_str()),
        (Some("comment_add"), Some("why"))
    );
    Ok(())
}

#[test]
fn edits_and_deletes_address_stored_positions_and_refuse_others() -> TestResult {
    let t = commented()?;
    let before = t.snapshot()?;
    for args in [
        vec!["comments", "pm-l1", "--edit", "3", "x", "--json"],
        vec!["comments", "pm-l1", "--delete", "0", "--json"],
        vec!["comments", "pm-l1", "--edit", "1", "--json"],
    ] {
        let run = t.pm(&args)?;
        assert_eq!(
            (run.code, run.error_code()?.as_str()),
            (2, "invalid_argument_value"),
            "{args:?}"
        );
    }
    for args in [
        vec!["comments", "pm-l1", "x", "--add", "y", "--json"],
        vec!["comments", "pm-l1", "--delete", "1", "x", "--json"],
        vec![
            "comments", "pm-l1", "--edit", "1", "--delete", "2", "--json",
        ],
    ] {
        let run = t.pm(&args)?;
        assert_eq!(
            (run.code, run.error_code()?.as_str()),
            (2, "conflicting_arguments"),
            "{args:?}"
        );
    }
    assert_eq!(t.snapshot()?, before, "a refused edit writes nothing");
    assert_eq!(t.pm(&["comments", "pm-l1", "--edit", "2", "deux"])?.code, 0);
    assert_eq!(t.pm(&["comments", "pm-l1", "--delete", "1"])?.code, 0);
    let left = entries(&t, "comments")?;
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["text"], "deux");
    assert!(left[0]["edited_at"].is_string());
    Ok(())
}

#[test]
fn add_dash_reads_stdin_and_limit_lists_the_newest() -> TestResult {
    let t = commented()?;
    let cmd = t.pm_command(&["learnings", "pm-l1", "--add", "-", "--json"]);
    let out = assert_cmd::Command::from_std(cmd)
        .write_stdin("from stdin\n")
        .output()?;
    assert!(out.status.success());
    assert_eq!(entries(&t, "learnings")?[0]["text"], "from stdin\n");
    let run = t.pm(&["comments", "pm-l1", "--limit", "1", "--json"])?;
    let out: Value = serde_json::from_str(&run.stdout)?;
    assert_eq!(out["comments"][0]["text"], "two");
    assert_eq!(
        (out["count"].as_u64(), out["total_count"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(out["has_more"], true);
    Ok(())
}

#[test]
fn json_events_are_append_only_and_filterable() -> TestResult {
    let t = commented()?;
    let event = r#"{"type":"risk","b":1,"a":{"d":2,"c":3}}"#;
    assert_eq!(t.pm(&["notes", "pm-l1", "--add-json", event])?.code, 0);
    assert_eq!(t.pm(&["notes", "pm-l1", "a text note"])?.code, 0);
    let stored = entries(&t, "notes")?;
    assert_eq!(
        stored[0]["text"],
        r#"{"a":{"c":3,"d":2},"b":1,"type":"risk"}"#
    );
    assert_eq!(stored[0]["event_type"], "risk");
    let before = t.snapshot()?;
    for flag in ["--edit", "--delete"] {
        let mut args = vec!["notes", "pm-l1", flag, "1", "--json"];
        if flag == "--edit" {
            args.push("changed");
        }
        let run = t.pm(&args)?;
        assert_eq!(
            (run.code, run.error_code()?.as_str()),
            (2, "structured_event_immutable")
        );
    }
    let run = t.pm(&["notes", "pm-l1", "--add-json", "[1]", "--json"])?;
    assert_eq!(
        (run.code, run.error_code()?.as_str()),
        (2, "invalid_argument_value")
    );
    assert_eq!(t.snapshot()?, before);
    let filtered = |args: &[&str]| -> Result<usize, Box<dyn std::error::Error>> {
        let mut all = vec!["notes", "pm-l1", "--json"];
        all.extend_from_slice(args);
        let out: Value = serde_json::from_str(&t.pm(&all)?.stdout)?;
        Ok(out["notes"].as_array().map_or(0, Vec::len))
    };
    assert_eq!(filtered(&[])?, 2);
    assert_eq!(filtered(&["--event-type", "risk"])?, 1);
    assert_eq!(filtered(&["--event-type", "decision"])?, 0);
    assert_eq!(filtered(&["--since", "2000-01-01T00:00:00Z"])?, 1);
    assert_eq!(filtered(&["--since", "2999-01-01T00:00:00Z"])?, 0);
    let run = t.pm(&["notes", "pm-l1", "--since", "soon", "--json"])?;
    assert_eq!(
        (run.code, run.error_code()?.as_str()),
        (2, "invalid_argument_value")
    );
    Ok(())
}
