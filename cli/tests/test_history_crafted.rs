//! Crafted history lines against the commands that read every stream (`validate`, `health`,
//! `history --verify`, `history-repair`): each answers with a structured result or refusal,
//! never with a panic (`internal_error`), and `--json` output stays one JSON document.

use std::error::Error;

use serde_json::{Value, json};

use crate::common::{Run, TestTracker};

type TestResult = Result<(), Box<dyn Error>>;

/// The sample item whose stream is crafted.
const ID: &str = "gd-t1";

/// Returns the sample tracker with `gd-t1`'s stream replaced by `bytes`.
fn tracker_with_stream(bytes: &[u8]) -> Result<TestTracker, Box<dyn Error>> {
    let t = TestTracker::sample()?;
    pm_engine::atomic::write(&stream_path(&t), bytes)?;
    Ok(t)
}

fn stream_path(t: &TestTracker) -> std::path::PathBuf {
    t.root().join(format!("history/{ID}.jsonl"))
}

/// Returns the sample stream of `gd-t1` with one more line: a copy of the last entry with
/// `patch` instead of its own, chained to it.
fn with_entry(t: &TestTracker, patch: Value) -> Result<(Vec<u8>, usize), Box<dyn Error>> {
    let text = std::fs::read_to_string(stream_path(t))?;
    let last: Value = serde_json::from_str(text.lines().last().ok_or("empty stream")?)?;
    let mut entry = last.clone();
    entry["patch"] = patch;
    entry["before_hash"] = last["after_hash"].clone();
    let count = text.lines().count() + 1;
    Ok((format!("{text}{entry}\n").into_bytes(), count))
}

/// Runs `pm args… --json` and checks that it answered: no panic, no internal error, stdout
/// one JSON document. Returns the document.
fn answered(t: &TestTracker, args: &[&str]) -> Result<(Value, Run), Box<dyn Error>> {
    let mut args = args.to_vec();
    args.push("--json");
    let run = t.pm(&args)?;
    let what = format!("{args:?} (exit {}): {}{}", run.code, run.stdout, run.stderr);
    assert_ne!(run.code, 101, "{what}");
    assert!(
        !what.contains("internal_error") && !what.contains("panicked"),
        "{what}"
    );
    let doc: Value = serde_json::from_str(&run.stdout).map_err(|e| format!("{e}: {what}"))?;
    assert_ne!(doc["error"]["code"], "internal_error", "{what}");
    Ok((doc, run))
}

/// The stream readers all answer on `t`: the four that read every stream, and the index
/// build and event reads that project them.
fn all_answer(t: &TestTracker) -> TestResult {
    for args in [
        &["validate"][..],
        &["health"],
        &["history", ID, "--verify", "--diff"],
        &["history-repair", ID],
        &["reindex"],
        &["activity"],
        &["get", ID, "--at", "2"],
    ] {
        answered(t, args)?;
    }
    Ok(())
}

/// `{"op":"replace","path":"","value":5}` as a patch op made `validate`, `health`,
/// `history --verify` and `history-repair` panic for the whole tracker.
#[test]
fn regression_root_replace_panic() -> TestResult {
    let t = TestTracker::sample()?;
    let (bytes, entries) = with_entry(&t, json!([{"op": "replace", "path": "", "value": 5}]))?;
    pm_engine::atomic::write(&stream_path(&t), &bytes)?;
    let issue = format!("patch_apply_failed:entry_{entries}");

    let (doc, _) = answered(&t, &["history", ID, "--verify"])?;
    let verification = &doc["verification"];
    assert_eq!(verification["ok"], false, "{doc}");
    assert_eq!(verification["entries"], entries);
    assert_eq!(verification["errors"], json!([issue]), "{doc}");

    let (doc, _) = answered(&t, &["validate"])?;
    let drift = doc["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["name"] == "history_drift"))
        .ok_or("no history_drift check")?;
    assert_eq!(
        drift["details"]["drift_rows"],
        json!([{"id": ID, "problem": "chain_mismatch", "detail": issue}]),
        "{doc}"
    );

    let (doc, _) = answered(&t, &["health"])?;
    assert_eq!(
        doc["failed_because"],
        json!([format!("history_drift_chain_mismatch:{ID}")])
    );

    // history-repair re-anchors the chain at the unappliable entry: the crafted line stays,
    // a marker follows it, and the stream verifies.
    let (doc, run) = answered(&t, &["history-repair", ID])?;
    assert_eq!(run.code, 0, "{doc}");
    assert_eq!(doc["history"]["verify_ok"], true, "{doc}");
    let after = std::fs::read(stream_path(&t))?;
    assert!(after.starts_with(&bytes), "earlier lines are untouched");
    let (doc, _) = answered(&t, &["history", ID, "--verify"])?;
    assert_eq!(doc["verification"]["ok"], true, "{doc}");
    Ok(())
}

/// Operations that nest a value one level deeper per round (past the replay's nesting bound)
/// and copies of a value into itself (past the replay's copy budget).
fn unbounded_patches() -> [Value; 2] {
    let mut nesting = vec![json!({"op": "add", "path": "/metadata/nest", "value": {}})];
    for _ in 0..1100 {
        nesting.extend([
            json!({"op": "add", "path": "/metadata/n", "value": {}}),
            json!({"op": "move", "from": "/metadata/nest", "path": "/metadata/n/x"}),
            json!({"op": "move", "from": "/metadata/n", "path": "/metadata/nest"}),
        ]);
    }
    let mut doubling = vec![json!({"op": "add", "path": "/metadata/a", "value": [0]})];
    doubling.extend(std::iter::repeat_n(
        json!({"op": "copy", "from": "/metadata/a", "path": "/metadata/a/-"}),
        40,
    ));
    [Value::Array(nesting), Value::Array(doubling)]
}

/// Root operations that break the state, also after earlier operations of the same patch,
/// and operations that would nest or grow the state without bound.
#[test]
fn crafted_root_operations_are_chain_issues() -> TestResult {
    let mut patches = vec![
        json!([{"op": "remove", "path": ""}]),
        json!([{"op": "add", "path": "", "value": [1]}]),
        json!([{"op": "replace", "path": "/metadata/title", "value": "x"},
               {"op": "replace", "path": "", "value": null}]),
        json!([{"op": "move", "from": "/metadata", "path": ""}]),
        json!([{"op": "copy", "from": "/body", "path": ""}]),
        json!([{"op": "replace", "path": "/body", "value": {"a": 1}}]),
    ];
    patches.extend(unbounded_patches());
    for patch in patches {
        let t = TestTracker::sample()?;
        let (bytes, entries) = with_entry(&t, patch.clone())?;
        pm_engine::atomic::write(&stream_path(&t), &bytes)?;
        let (doc, _) = answered(&t, &["history", ID, "--verify"])?;
        assert_eq!(
            doc["verification"]["errors"],
            json!([format!("patch_apply_failed:entry_{entries}")]),
            "{doc}"
        );
        all_answer(&t)?;
    }
    Ok(())
}

/// Torn, forged and conflicted streams: structured answers from every reader.
#[test]
fn forged_streams_are_structured_answers() -> TestResult {
    let t = TestTracker::sample()?;
    let text = std::fs::read_to_string(stream_path(&t))?;
    let first = text.lines().next().ok_or("empty stream")?;
    let cut = &first[..first.len() / 2];
    let streams: Vec<Vec<u8>> = vec![
        format!("{text}{cut}").into_bytes(),
        [
            first.as_bytes(),
            b"\n{\"ts\":\"\xff\xfe\"}\n",
            text.as_bytes(),
        ]
        .concat(),
        format!("{first}\n[1,2]\n").into_bytes(),
        format!("{first}\n<<<<<<< HEAD\n{first}\n=======\n>>>>>>> theirs\n").into_bytes(),
        format!("\u{feff}{}", text.replace('\n', "\r\n")).into_bytes(),
        text.replacen("\"before_hash\":\"", "\"before_hash\":5,\"x\":\"", 1)
            .into_bytes(),
        text.replacen("\"patch\":[", "\"patch\":[7,", 1)
            .into_bytes(),
        format!("{text}{{\"op\":\"replace\",\"path\":\"\",\"value\":5}}\n").into_bytes(),
    ];
    for bytes in streams {
        let t = tracker_with_stream(&bytes)?;
        all_answer(&t)?;
    }
    Ok(())
}
