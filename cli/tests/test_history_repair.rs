//! `pm history-repair`: pm-cli's bytes for `--all` (write transcript steps 094-095: a hand
//! edit found by the drift scan, dry run then apply), the single-item report, `--dry-run`
//! writing nothing, `--message`, and re-anchoring a chain that breaks mid-way.

use pm_engine::history::{read_stream, verify_chain};
use serde_json::Value;

use crate::common::TestTracker;
use crate::common::write_transcript::{transcript, transcript_pm};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[test]
fn history_repair_all_matches_pm_cli_on_the_write_transcript() -> TestResult {
    let golden = transcript()?;
    for json in [false, true] {
        let t = TestTracker::from_tree(&golden.root.join("snapshots/093-validate"))?;
        let ws = t.workspace();
        let (ext, flag) = if json {
            ("json", vec!["--json"])
        } else {
            ("toon", vec![])
        };
        let mut dry = vec!["history-repair", "--all", "--dry-run"];
        dry.extend(&flag);
        let before = t.snapshot()?;
        let (code, out) = transcript_pm(&ws, 94, &dry)?;
        assert_eq!(code, 0);
        let expected = std::fs::read_to_string(
            golden
                .root
                .join(format!("stdout/{ext}/094-history-repair.{ext}")),
        )?;
        assert_eq!(out, expected, "094 ({ext})");
        let changed: Vec<_> = t
            .snapshot()?
            .into_iter()
            .filter(|(k, v)| {
                before.get(k) != Some(v) && !k.contains("runtime") && !k.contains("locks")
            })
            .collect();
        assert!(
            changed.is_empty(),
            "the dry run wrote {:?}",
            changed.iter().map(|(k, _)| k).collect::<Vec<_>>()
        );
        let mut apply = vec!["history-repair", "--all"];
        apply.extend(&flag);
        let (code, out) = transcript_pm(&ws, 95, &apply)?;
        assert_eq!(code, 0);
        let expected = std::fs::read_to_string(
            golden
                .root
                .join(format!("stdout/{ext}/095-history-repair.{ext}")),
        )?;
        assert_eq!(out, expected, "095 ({ext})");
        let stream = ".agents/pm/history/pm-f001.jsonl";
        assert_eq!(
            std::fs::read(ws.join(stream))?,
            std::fs::read(
                golden
                    .root
                    .join("snapshots/095-history-repair")
                    .join(stream)
            )?,
            "the repair entry is pm-cli's, byte for byte"
        );
    }
    Ok(())
}

fn init_with(id: &str) -> Result<TestTracker, Box<dyn std::error::Error>> {
    let t = TestTracker::new()?;
    assert_eq!(t.pm(&["init", "--defaults"])?.code, 0);
    assert_eq!(
        t.pm(&["create", "--type", "Task", "--title", "One", "--id", id])?
            .code,
        0
    );
    Ok(t)
}

#[test]
fn one_item_dry_run_writes_nothing_then_repair_records_the_message() -> TestResult {
    let t = init_with("pm-r1")?;
    let path = t.root().join("tasks/pm-r1.toon");
    let text = std::fs::read_to_string(&path)?.replace("title: One", "title: Two");
    pm_engine::atomic::write(&path, text.as_bytes())?;
    let before = std::fs::read(t.root().join("history/pm-r1.jsonl"))?;
    let run = t.pm(&["history-repair", "pm-r1", "--dry-run", "--json"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout)?;
    assert_eq!(report["dry_run"], true);
    assert_eq!(report["changed"], true);
    assert_eq!(report["history"]["reconciled_with_item"], true);
    assert_eq!(report["history"]["verify_ok"], true);
    assert_eq!(report["item"]["matched_chain_before"], false);
    assert_eq!(report["reconciliation"]["reverted_fields"][0], "title");
    assert_eq!(
        std::fs::read(t.root().join("history/pm-r1.jsonl"))?,
        before,
        "dry run wrote"
    );
    let run = t.pm(&[
        "history-repair",
        "--id",
        "pm-r1",
        "--message",
        "fixed the title by hand",
        "--json",
    ])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let history = std::fs::read_to_string(t.root().join("history/pm-r1.jsonl"))?;
    let last: Value = serde_json::from_str(history.lines().last().ok_or("line")?)?;
    assert_eq!(last["op"], "history_repair");
    assert_eq!(last["message"], "fixed the title by hand");
    // Clean now: a second run changes nothing and says so.
    let run = t.pm(&["history-repair", "pm-r1", "--json"])?;
    let report: Value = serde_json::from_str(&run.stdout)?;
    assert_eq!(report["changed"], false);
    assert_eq!(report["warnings"][0], "history_repair_no_changes");
    assert_eq!(
        std::fs::read_to_string(t.root().join("history/pm-r1.jsonl"))?,
        history
    );
    // Neither an id nor --all, or both: usage errors.
    assert_eq!(t.pm(&["history-repair"])?.code, 2);
    assert_eq!(t.pm(&["history-repair", "pm-r1", "--all"])?.code, 2);
    assert_eq!(t.pm(&["history-repair", "pm-nope"])?.code, 3);
    Ok(())
}

/// A stream whose chain breaks in the middle (an entry that chains from a state it never had,
/// as an old hand merge leaves) is re-anchored by an appended marker: every earlier line stays
/// as it was and the stream verifies, for us and for the next writer.
#[test]
fn a_chain_broken_mid_way_is_re_anchored_without_rewriting_it() -> TestResult {
    let t = init_with("pm-r2")?;
    assert_eq!(t.pm(&["update", "pm-r2", "--priority", "1"])?.code, 0);
    assert_eq!(t.pm(&["update", "pm-r2", "--priority", "0"])?.code, 0);
    let stream = t.root().join("history/pm-r2.jsonl");
    let text = std::fs::read_to_string(&stream)?;
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    // Entry 2 now claims another prior state: the chain breaks at entry 2.
    let mut second: Value = serde_json::from_str(&lines[1])?;
    second["before_hash"] = Value::from("0".repeat(64));
    lines[1] = serde_json::to_string(&second)?;
    let broken = format!("{}\n", lines.join("\n"));
    pm_engine::atomic::write(&stream, broken.as_bytes())?;
    assert!(!verify_chain(&read_stream(&stream, "pm-r2")?.entries).is_ok());
    let run = t.pm(&["history-repair", "pm-r2", "--json"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout)?;
    assert_eq!(report["history"]["chain_drift_before"], true);
    assert_eq!(report["history"]["verify_ok"], true, "{report}");
    assert_eq!(report["history"]["reanchored"], serde_json::json!([2, 3]));
    let after = std::fs::read_to_string(&stream)?;
    assert!(after.starts_with(&broken), "earlier lines are untouched");
    let marker: Value = serde_json::from_str(after.lines().last().ok_or("marker")?)?;
    assert_eq!(marker["context"]["reanchor"]["from_entry"], 2);
    assert!(verify_chain(&read_stream(&stream, "pm-r2")?.entries).is_ok());
    assert_eq!(t.pm(&["comments", "pm-r2", "--add", "after"])?.code, 0);
    let run = t.pm(&["validate", "--check-history-drift", "--strict-exit"])?;
    assert_eq!(run.code, 0, "{}", run.stdout);
    // --all finds nothing left to do.
    let run = t.pm(&["history-repair", "--all", "--json"])?;
    let report: Value = serde_json::from_str(&run.stdout)?;
    assert_eq!(report["drifted_streams"], 0, "{report}");
    Ok(())
}
