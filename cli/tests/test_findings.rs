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

/// Whether a report's `warnings` hold `token`.
fn warns(report: &Value, token: &str) -> bool {
    report["warnings"]
        .as_array()
        .is_some_and(|w| w.contains(&json!(token)))
}

#[test]
fn validate_names_a_delete_killed_before_its_history_entry() -> TestResult {
    let t = two_tasks()?;
    let parked = t.park_at(&["delete", "pm-a001"], "after_item_write")?;
    parked.kill()?;
    assert!(!t.root().join("tasks/pm-a001.toon").exists());
    let run = t.pm(&[
        "validate",
        "--check-history-drift",
        "--strict-exit",
        "--json",
    ])?;
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
    assert_eq!(
        (&row["id"], &row["problem"]),
        (&json!("pm-a001"), &json!("interrupted_delete"))
    );
    let detail = row["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("history/pm-a001.jsonl"), "{detail}");
    assert!(detail.contains("pm history-repair pm-a001"), "{detail}");
    // The fix it names records the removal; afterwards the tracker validates clean.
    let run = t.pm(&["history-repair", "pm-a001"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = t.pm(&[
        "validate",
        "--check-history-drift",
        "--strict-exit",
        "--json",
    ])?;
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
    assert_eq!(
        drift["details"]["drift_rows"][0]["problem"],
        "chain_mismatch"
    );
    let run = t.pm(&["health", "--json"])?;
    let health: Value = run.json()?;
    assert_eq!(health["ok"], false);
    assert!(
        warns(&health, "history_drift_chain_mismatch:pm-a001"),
        "{health}"
    );
    Ok(())
}

/// Returns the findings of a health report whose code is `code`.
fn findings<'a>(report: &'a Value, code: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .map(|f| f.iter().filter(|f| f["code"] == code).collect())
        .unwrap_or_default()
}

#[test]
fn a_type_folder_that_cannot_be_listed_fails_health_and_validate() -> TestResult {
    let t = two_tasks()?;
    t.pm(&["create", "issue", "Crash on save", "--id", "pm-b001"])?;
    // A file where the type folder should be: listing it fails for every user, root included.
    let issues = t.root().join("issues");
    std::fs::remove_dir_all(&issues)?;
    pm_engine::atomic::write(&issues, b"not a folder\n")?;
    let list: Value = t.pm(&["list", "--json"])?.json()?;
    assert_eq!(list["completeness"]["status"], "partial");

    let run = t.pm(&["health", "--strict-exit", "--json"])?;
    assert_eq!(run.code, 1, "{}", run.stdout);
    // --strict-exit prints the summary; the details come with the default mode.
    let health: Value = t.pm(&["health", "--json"])?.json()?;
    assert_eq!(health["ok"], false);
    let found = findings(&health, "integrity_item_folder_unreadable");
    assert_eq!(found.len(), 1, "{health}");
    assert_eq!(
        found[0]["warning"],
        "integrity_item_folder_unreadable:issues"
    );
    assert_eq!(found[0]["severity"], "gate_failing");
    assert!(
        found[0]["remediation"]
            .as_str()
            .is_some_and(|r| r.contains("issues"))
    );
    let integrity = &check(&health, "integrity")?["details"];
    assert_eq!(integrity["item_folders_unreadable"][0]["folder"], "issues");

    let run = t.pm(&["validate", "--json"])?;
    let report: Value = run.json()?;
    assert_eq!(report["ok"], false);
    assert!(
        warns(&report, "validate_storage_unreadable_item_folders:1"),
        "{report}"
    );
    let group = &check(&report, "storage_integrity")?["details"]["unreadable_item_folders"];
    assert_eq!(group["count"], 1);
    assert_eq!(group["folders"][0]["folder"], "issues");
    assert!(group["fix"].as_str().is_some_and(|f| !f.is_empty()));
    // The stream of the unlisted item is not mistaken for an interrupted delete.
    let drift = &check(&report, "history_drift")?["details"];
    assert_eq!(drift["counts"]["interrupted_deletes"], 0);
    Ok(())
}

#[test]
fn health_names_an_id_stored_twice() -> TestResult {
    let t = two_tasks()?;
    let features = t.root().join("features");
    std::fs::create_dir_all(&features)?;
    std::fs::copy(
        t.root().join("tasks/pm-a002.toon"),
        features.join("pm-a002.toon"),
    )?;
    let run = t.pm(&["health", "--json"])?;
    let health: Value = run.json()?;
    assert_eq!(health["ok"], false);
    let found = findings(&health, "integrity_duplicate_item_id");
    assert_eq!(found.len(), 1, "{health}");
    assert_eq!(found[0]["warning"], "integrity_duplicate_item_id:pm-a002");
    let message = found[0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("features/pm-a002.toon") && message.contains("tasks/pm-a002.toon"),
        "{message}"
    );
    assert_eq!(
        check(&health, "integrity")?["details"]["duplicate_item_ids"],
        json!([{"id": "pm-a002", "paths": ["features/pm-a002.toon", "tasks/pm-a002.toon"]}])
    );
    Ok(())
}

#[test]
fn a_writer_lock_that_is_a_directory_is_named_with_its_fix() -> TestResult {
    let t = two_tasks()?;
    assert_eq!(t.pm(&["reindex"])?.code, 0);
    let lock = t.root().join("runtime/index/writer.lock");
    std::fs::remove_file(&lock)?;
    std::fs::create_dir(&lock)?;
    let health: Value = t.pm(&["health", "--json"])?.json()?;
    assert_eq!(health["ok"], false);
    let index = check(&health, "index")?;
    assert_eq!(index["details"]["state"], "writer_lock_unusable");
    let found = findings(&health, "index_writer_lock_unusable");
    assert_eq!(found.len(), 1, "{health}");
    assert_eq!(found[0]["remediation"], "pm gc --scope index");
    let run = t.pm(&["reindex"])?;
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("writer.lock is a directory"),
        "{}",
        run.stderr
    );
    // The fix it names works: the index is rebuilt by the next read, nothing lost.
    assert_eq!(t.pm(&["gc", "--scope", "index"])?.code, 0);
    let list: Value = t.pm(&["list", "--json"])?.json()?;
    assert_eq!(list["count"], 2);
    let health: Value = t.pm(&["health", "--json"])?.json()?;
    assert_eq!(check(&health, "index")?["details"]["state"], "fresh");
    Ok(())
}
