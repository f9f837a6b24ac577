//! `validate` and `health` find what reads would trip over: an interrupted delete (a real
//! process killed between removing the file and recording the delete), a type folder that
//! cannot be listed, one id in two folders, a forged `after_hash`, and an index whose writer
//! lock cannot be taken. Each finding carries a code, a count, the path and the fix, and the
//! `--strict-exit` exit code follows it.

use serde_json::{Value, json};

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A fresh tracker with two tasks.
fn two_tasks() -> Result<TestTracker, Box<dyn std::error::Error>> {
    let t = TestTracker::new()?;
    t.pm(&["init", "--defaults"])?;
    for (id, title) in [("pm-a001", "First"), ("pm-a002", "Second")] {
        let run = t.pm(&["create", "task", title, "--id", id])?;
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    Ok(t)
}

fn check<'a>(report: &'a Value, name: &str) -> Result<&'a Value, Box<dyn std::error::Error>> {
    report["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == name))
        .ok_or_else(|| format!("no {name} check in {report}").into())
}

#[test]
fn validate_names_a_delete_killed_before_its_history_entry() -> TestResult {
    let t = two_tasks()?;
    let parked = t.park_at(&["delete", "pm-a001"], "after_item_write")?;
    parked.kill()?;
    assert!(!t.root().join("tasks/pm-a001.toon").exists());
    let run = t.pm(&["validate", "--check-history-drift", "--strict-exit", "--json"])?;
    assert_eq!(run.code, 1, "{}", run.stdout);
    let report: Value = run.json()?;
    assert_eq!(
        report["warnings"],
        json!(["validate_history_drift_interrupted_deletes:1"])
    );
    let details = &check(&report, "history_drift")?["details"];
    assert_eq!(details["counts"]["interrupted_deletes"], 1);
    assert_eq!(details["drifted_items"], json!(["pm-a001"]));
    let row = &details["drift_rows"][0];
    assert_eq!((&row["id"], &row["problem"]), (&json!("pm-a001"), &json!("interrupted_delete")));
    let detail = row["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("history/pm-a001.jsonl"), "{detail}");
    assert!(detail.contains("pm history-repair pm-a001"), "{detail}");
    // The fix it names records the removal; afterwards the tracker validates clean.
    let run = t.pm(&["history-repair", "pm-a001"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = t.pm(&["validate", "--check-history-drift", "--strict-exit", "--json"])?;
    assert_eq!(run.code, 0, "{}", run.stdout);
    Ok(())
}

#[test]
fn validate_fails_a_forged_after_hash() -> TestResult {
    let t = two_tasks()?;
    t.pm(&["update", "pm-a001", "--priority", "1"])?;
    let item = t.root().join("tasks/pm-a001.toon");
    let text = std::fs::read_to_string(&item)?.replace("priority: 1", "priority: 3");
    pm_engine::atomic::write(&item, text.as_bytes())?;
    // Forge the last entry so that it claims the hand-edited file.
    let doc = pm_engine::item::codec::parse_item(
        text.as_bytes(),
        pm_engine::item::ItemFormat::Toon,
        &item,
        &pm_engine::item::canon::CanonSchema::NONE,
    )?;
    let forged = pm_engine::hash::item_hash(&doc, pm_engine::hash::HashEpoch::V2);
    let stream = t.root().join("history/pm-a001.jsonl");
    let mut lines: Vec<Value> = std::fs::read_to_string(&stream)?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let last = lines.last_mut().ok_or("empty stream")?;
    last["after_hash"] = json!(forged);
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    pm_engine::atomic::write(&stream, body.as_bytes())?;

    let run = t.pm(&["validate", "--check-history-drift", "--json"])?;
    assert_eq!(run.code, 0);
    let report: Value = run.json()?;
    assert_eq!(report["ok"], false, "{report}");
    let drift = check(&report, "history_drift")?;
    assert_eq!(drift["status"], "error");
    assert_eq!(drift["details"]["drift_rows"][0]["problem"], "chain_mismatch");
    let run = t.pm(&["health", "--json"])?;
    let health: Value = run.json()?;
    assert_eq!(health["ok"], false);
    assert!(
        health["warnings"]
            .as_array()
            .is_some_and(|w| w.contains(&json!("history_drift_chain_mismatch:pm-a001"))),
        "{health}"
    );
    Ok(())
}
