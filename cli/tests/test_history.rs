//! `pm history`: transcript step 35 byte for byte, raw and limited views, `--verify` on a clean,
//! tampered, torn and deleted stream, and `--strict-exit`.

use std::error::Error;

use serde_json::Value;

use crate::common::TestTracker;
use crate::test_get::{transcript_env, transcript_snapshot};

type TestResult = Result<(), Box<dyn Error>>;

#[test]
fn transcript_history_matches_the_golden() -> TestResult {
    let (transcript, snapshot) = transcript_snapshot("34-get")?;
    let t = TestTracker::from_tree(&snapshot)?;
    let env = transcript_env(35);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    for (extra, golden) in [
        (None, "stdout/toon/35-history.toon"),
        (Some("--json"), "stdout/json/35-history.json"),
    ] {
        let mut args = vec!["history", "pm-i001"];
        args.extend(extra);
        let run = t.pm_in(&t.workspace(), &args, &env)?;
        assert_eq!(
            (run.stdout, run.stderr.as_str(), run.code),
            (std::fs::read_to_string(transcript.join(golden))?, "", 0),
            "{golden}"
        );
    }
    Ok(())
}

fn json_of(t: &TestTracker, args: &[&str]) -> Result<Value, Box<dyn Error>> {
    let run = t.pm(args)?;
    assert_eq!(
        (run.stderr.as_str(), run.code),
        ("", 0),
        "{args:?}: {}",
        run.stdout
    );
    Ok(serde_json::from_str(&run.stdout)?)
}

fn stream_lines(t: &TestTracker, id: &str) -> Result<Vec<Value>, Box<dyn Error>> {
    let text =
        std::fs::read_to_string(t.workspace().join(format!(".agents/pm/history/{id}.jsonl")))?;
    Ok(text
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?)
}

#[test]
fn full_and_limited_views() -> TestResult {
    let t = TestTracker::sample()?;
    let full = json_of(&t, &["history", "gd-t2", "--full", "--json"])?;
    assert_eq!(full["history"], Value::Array(stream_lines(&t, "gd-t2")?));
    assert!(full.get("compact_history").is_none());
    assert_eq!(full["compact"], false);
    assert_eq!(
        full["projection"],
        serde_json::json!({"mode": "full", "row_key": "history"})
    );
    assert_eq!(full["omission_receipt"]["has_omissions"], false);
    assert_eq!(
        (full["count"].clone(), full["limit"].clone()),
        (5.into(), Value::Null)
    );

    let limited = json_of(&t, &["history", "t2", "--limit", "2", "--json"])?;
    let rows = limited["compact_history"].as_array().ok_or("rows")?;
    let summary: Vec<(u64, &str)> = rows
        .iter()
        .filter_map(|r| Some((r["index"].as_u64()?, r["op"].as_str()?)))
        .collect();
    assert_eq!(summary, [(4, "claim"), (5, "update")]);
    assert_eq!(
        rows[0]["changed_fields"],
        serde_json::json!(["assignee", "claim_principal", "updated_at"])
    );
    assert_eq!(
        (limited["count"].clone(), limited["limit"].clone()),
        (2.into(), 2.into())
    );

    let run = t.pm(&["history", "gd-t2", "--limit", "1"])?;
    assert_eq!(
        (run.stdout.as_str(), run.stderr.as_str(), run.code),
        (
            "id: \"gd-t2\"\ncompact_history:\n  - index: 5\n    ts: \"2026-03-05T09:05:00.000Z\"\n    \
             op: \"update\"\n    author: \"sample-author\"\n    patch_ops: 2\n    changed_fields:\n      \
             - \"status\"\n      - \"updated_at\"\ncompact: true\nprojection:\n  mode: \"compact\"\n  \
             row_key: \"compact_history\"\nomission_receipt:\n  has_omissions: true\n  \
             omitted_field_group_count: 1\n  omitted_field_groups[1]{name,restore_with}:\n    \
             raw_history,\"--full\"\ncount: 1\nlimit: 1\n",
            "",
            0
        )
    );
    Ok(())
}

#[test]
fn verify_reports_a_clean_stream() -> TestResult {
    let t = TestTracker::sample()?;
    let out = json_of(
        &t,
        &["history", "gd-i1", "--verify", "--strict-exit", "--json"],
    )?;
    let v = &out["verification"];
    assert_eq!(v["ok"], true);
    assert_eq!(v["entries"], 3);
    assert_eq!(v["errors"], serde_json::json!([]));
    assert_eq!(v["current_matches_latest"], true);
    assert_eq!(v["current_item_hash"], v["latest_after_hash"]);
    assert!(v.get("torn_tail").is_none());
    Ok(())
}

/// Replaces the first occurrence of `from` in line `line` (1-based) of a stream.
fn tamper(t: &TestTracker, id: &str, line: usize, from: &str, to: &str) -> TestResult {
    let path = t.workspace().join(format!(".agents/pm/history/{id}.jsonl"));
    let text = std::fs::read_to_string(&path)?;
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    assert!(lines[line - 1].contains(from), "{from} not in line {line}");
    lines[line - 1] = lines[line - 1].replacen(from, to, 1);
    pm_engine::atomic::write(&path, format!("{}\n", lines.join("\n")).as_bytes())?;
    Ok(())
}

#[test]
fn verify_reports_a_tampered_entry_and_strict_exit_fails() -> TestResult {
    let t = TestTracker::sample()?;
    tamper(&t, "gd-i1", 2, "both pump cycles", "one pump cycle")?;
    let out = json_of(&t, &["history", "gd-i1", "--verify", "--json"])?;
    let v = &out["verification"];
    assert_eq!(v["ok"], false);
    assert_eq!(
        v["errors"],
        serde_json::json!([
            "after_hash_mismatch:entry_2",
            "before_hash_mismatch:entry_3",
            "after_hash_mismatch:entry_3"
        ])
    );
    assert_eq!(v["current_matches_latest"], true);
    // The rows still read.
    assert_eq!(out["count"], 3);

    let strict = t.pm(&["history", "gd-i1", "--verify", "--strict-exit", "--json"])?;
    assert_eq!((strict.stderr.as_str(), strict.code), ("", 1));
    let payload: Value = serde_json::from_str(&strict.stdout)?;
    assert_eq!(payload["verification"]["ok"], false);
    Ok(())
}

#[test]
fn verify_reports_a_torn_tail_and_reads_the_rest() -> TestResult {
    let t = TestTracker::sample()?;
    let path = t.workspace().join(".agents/pm/history/gd-t4.jsonl");
    let mut bytes = std::fs::read(&path)?;
    bytes.extend_from_slice(b"{\"ts\":\"2026-03-06T10:00:00.000Z\",\"author\":\"sam");
    pm_engine::atomic::write(&path, &bytes)?;
    let out = json_of(&t, &["history", "gd-t4", "--verify", "--json"])?;
    assert_eq!(out["count"], 2);
    let v = &out["verification"];
    assert_eq!(v["ok"], false);
    assert_eq!(v["errors"], serde_json::json!(["torn_tail:line_3"]));
    assert_eq!(v["torn_tail"]["line"], 3);
    assert_eq!(v["torn_tail"]["bytes"], 46);
    assert_eq!(v["current_matches_latest"], true);
    Ok(())
}

#[test]
fn deleted_items_keep_their_history() -> TestResult {
    let t = TestTracker::sample()?;
    std::fs::remove_file(t.workspace().join(".agents/pm/chores/gd-c1.toon"))?;
    let run = t.pm(&["get", "gd-c1"])?;
    assert_eq!(run.code, 3, "{}", run.stderr);
    let out = json_of(&t, &["history", "c1", "--verify", "--json"])?;
    assert_eq!(out["id"], "gd-c1");
    assert_eq!(out["count"], 1);
    let v = &out["verification"];
    assert_eq!(v["ok"], true);
    assert!(v.get("current_item_hash").is_none());
    assert!(v.get("current_matches_latest").is_none());
    Ok(())
}

#[test]
fn refusals() -> TestResult {
    let t = TestTracker::sample()?;
    let run = t.pm(&["history", "gd-nope"])?;
    assert_eq!((run.stdout.as_str(), run.code), ("", 3));
    assert!(
        run.stderr
            .starts_with("error[item_not_found]: Item gd-nope not found\n")
    );

    let run = t.pm(&["history", "gd-i1", "--strict-exit"])?;
    assert_eq!((run.stdout.as_str(), run.code), ("", 2));
    assert!(
        run.stderr.starts_with("error[missing_required_argument]: "),
        "{}",
        run.stderr
    );

    let run = t.pm(&["history", "gd-i1", "--full", "--compact"])?;
    assert_eq!((run.stdout.as_str(), run.code), ("", 2));
    assert!(
        run.stderr.starts_with("error[conflicting_arguments]: "),
        "{}",
        run.stderr
    );

    let run = t.pm(&["history", "gd-i1", "--limit", "many"])?;
    assert_eq!((run.stdout.as_str(), run.code), ("", 2));
    assert!(
        run.stderr.starts_with("error[invalid_argument_value]: "),
        "{}",
        run.stderr
    );
    Ok(())
}

#[test]
fn field_filter_and_diff() -> TestResult {
    let t = TestTracker::sample()?;
    let out = json_of(
        &t,
        &["history", "gd-t2", "--field", "status", "--diff", "--json"],
    )?;
    let rows = out["compact_history"].as_array().ok_or("rows")?;
    let indices: Vec<u64> = rows.iter().filter_map(|r| r["index"].as_u64()).collect();
    assert_eq!(indices, [1, 5]);
    assert_eq!(out["field"], "status");
    assert_eq!(
        out["diff"],
        serde_json::json!([
            {"index": 1, "ts": "2026-03-04T10:00:00.000Z", "op": "create", "author": "sample-author",
             "changes": [{"field": "status", "change": "added", "before": null, "after": "open"}]},
            {"index": 5, "ts": "2026-03-05T09:05:00.000Z", "op": "update", "author": "sample-author",
             "changes": [{"field": "status", "change": "changed", "before": "open", "after": "in_progress"}]}
        ])
    );
    // --limit counts after the filter; --full rows get the same diff.
    let last = json_of(
        &t,
        &[
            "history", "gd-t2", "--field", "status", "--limit", "1", "--full", "--diff", "--json",
        ],
    )?;
    assert_eq!(last["count"], 1);
    assert_eq!(last["history"][0]["op"], "update");
    assert_eq!(last["diff"][0]["index"], 5);
    // A diff without a field shows every changed field of each entry.
    let all = json_of(
        &t,
        &["history", "gd-t2", "--diff", "--limit", "1", "--json"],
    )?;
    let fields: Vec<&str> = all["diff"][0]["changes"]
        .as_array()
        .map(|c| c.iter().filter_map(|c| c["field"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(fields, ["status", "updated_at"]);
    // A field no entry touches leaves no rows; an empty name is refused.
    let none = json_of(&t, &["history", "gd-t2", "--field", "deadline", "--json"])?;
    assert_eq!(none["count"], 0);
    let run = t.pm(&["history", "gd-t2", "--field", " "])?;
    assert_eq!(run.code, 2, "{}", run.stderr);
    Ok(())
}
