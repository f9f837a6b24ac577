//! `pm validate --check-history-drift`: the real tracker verifies end to end; tampered, torn and
//! edited files reported for exactly the affected item; `--counts`, `--strict-exit` and refused
//! flags. The other checks are in `test_validate_checks.rs`.

use std::error::Error;

use serde_json::{Value, json};

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn Error>>;

fn drift_details(report: &Value) -> Result<&Value, Box<dyn Error>> {
    let checks = report["checks"].as_array().ok_or("checks")?;
    let check = checks
        .iter()
        .find(|c| c["name"] == "history_drift")
        .ok_or("no history_drift check")?;
    Ok(&check["details"])
}

#[test]
fn the_real_tracker_verifies() -> TestResult {
    let corpus = pm_testkit::shared_corpus()?;
    let t = TestTracker::new()?;
    let pm_path = corpus.join(".agents/pm").display().to_string();
    let env = [("PM_PATH", pm_path.as_str())];
    let args = [
        "validate",
        "--check-history-drift",
        "--strict-exit",
        "--json",
    ];
    let run = t.pm_in(&corpus, &args, &env)?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0), "{}", run.stdout);
    let report: Value = run.json()?;
    assert_eq!(
        (report["ok"].clone(), report["has_warnings"].clone()),
        (json!(true), json!(false))
    );
    let details = drift_details(&report)?;
    assert_eq!(details["checked_items"], 2536);
    assert_eq!(details["drifted_items_count"], 0);
    assert_eq!(details["drift_rows"], json!([]));
    assert!(details["streams_checked"].as_u64().unwrap_or(0) > 2536);
    for count in details["counts"].as_object().ok_or("counts")?.values() {
        assert_eq!(count, 0);
    }
    Ok(())
}

/// Breaks three items of the sample in three different ways.
fn break_sample(t: &TestTracker) -> TestResult {
    let pm = t.workspace().join(".agents/pm");
    // A tampered history line: entry 2 of gd-i1 now records other comment text.
    let path = pm.join("history/gd-i1.jsonl");
    let text = std::fs::read_to_string(&path)?.replacen("both pump cycles", "one pump cycle", 1);
    pm_engine::atomic::write(&path, text.as_bytes())?;
    // A torn last line: an append to gd-t4 stopped half way.
    let path = pm.join("history/gd-t4.jsonl");
    let mut bytes = std::fs::read(&path)?;
    bytes.extend_from_slice(b"{\"ts\":\"2026-03-06T10:00:00.000Z\",\"op\":\"upd");
    pm_engine::atomic::write(&path, &bytes)?;
    // An item file edited by hand: gd-c1's title no longer matches its history.
    let path = pm.join("chores/gd-c1.toon");
    let text = std::fs::read_to_string(&path)?.replacen("Pin the", "Pin down the", 1);
    pm_engine::atomic::write(&path, text.as_bytes())?;
    Ok(())
}

#[test]
fn each_damage_is_reported_for_exactly_its_item() -> TestResult {
    let t = TestTracker::sample()?;
    break_sample(&t)?;
    let run = t.pm(&["validate", "--check-history-drift", "--json"])?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0));
    let report: Value = run.json()?;
    // The chain that no longer replays (gd-i1) makes the check an error: not ok.
    assert_eq!(
        (report["ok"].clone(), report["has_warnings"].clone()),
        (json!(false), json!(true))
    );
    assert_eq!(report["checks"][0]["status"], "error");
    assert!(report.get("checks_not_implemented").is_none());
    assert_eq!(
        report["warnings"],
        json!([
            "validate_history_drift_chain_mismatches:1",
            "validate_history_drift_hash_mismatches:1",
            "validate_history_drift_unreadable_streams:1"
        ])
    );
    let details = drift_details(&report)?;
    assert_eq!(details["drifted_items"], json!(["gd-c1", "gd-i1", "gd-t4"]));
    assert_eq!(
        details["counts"],
        json!({
            "missing_streams": 0, "unreadable_streams": 1, "hash_mismatches": 1,
            "chain_mismatches": 1, "workspace_state_mismatches": 0, "workspace_state_missing": 0,
            "workspace_state_unreadable": 0, "unreadable_items": 0,
            "interrupted_deletes": 0
        })
    );
    let rows: Vec<(String, String)> = details["drift_rows"]
        .as_array()
        .ok_or("rows")?
        .iter()
        .map(|r| (r["id"].to_string(), r["problem"].to_string()))
        .collect();
    assert_eq!(
        rows,
        [
            ("\"gd-c1\"".into(), "\"hash_mismatch\"".into()),
            ("\"gd-i1\"".into(), "\"chain_mismatch\"".into()),
            ("\"gd-t4\"".into(), "\"torn_tail\"".into()),
        ]
    );
    let row = |i: usize| details["drift_rows"][i]["detail"].as_str().unwrap_or("");
    assert!(
        row(0).starts_with("chores/gd-c1.toon hashes to "),
        "{}",
        row(0)
    );
    assert_eq!(
        row(1),
        "after_hash_mismatch:entry_2, before_hash_mismatch:entry_3, after_hash_mismatch:entry_3"
    );
    assert!(row(2).starts_with("line 3: unterminated"), "{}", row(2));

    let strict = t.pm(&["validate", "--check-history-drift", "--strict-exit"])?;
    assert_eq!((strict.stderr.as_str(), strict.code), ("", 1));
    assert!(
        strict.stdout.starts_with("ok: false\nhas_warnings: true\n"),
        "{}",
        strict.stdout
    );
    Ok(())
}

#[test]
fn counts_drop_the_rows() -> TestResult {
    let t = TestTracker::sample()?;
    break_sample(&t)?;
    let report: Value = t.pm(&["validate", "--counts", "--json"])?.json()?;
    let details = drift_details(&report)?;
    for key in ["drifted_items", "drift_rows", "workspace_state_missing"] {
        assert!(details.get(key).is_none(), "{key}");
    }
    assert_eq!(details["drifted_items_count"], 3);
    assert_eq!(details["counts"]["chain_mismatches"], 1);
    assert_eq!(
        report["projection"],
        json!({"mode": "counts", "declared_field_groups": [{"name": "diagnostic_rows", "restore_with": "--full"}],
               "included_field_groups": []})
    );
    assert_eq!(
        report["omission_receipt"],
        json!({"has_omissions": true, "omitted_field_group_count": 1,
               "omitted_field_groups": [{"name": "diagnostic_rows", "restore_with": "--full"}]})
    );
    Ok(())
}

#[test]
fn clean_sample_in_toon() -> TestResult {
    let t = TestTracker::sample()?;
    let run = t.pm(&["validate", "--check-history-drift"])?;
    assert_eq!(
        (run.stdout.as_str(), run.stderr.as_str(), run.code),
        (
            "ok: true\nhas_warnings: false\nchecks:\n  - name: \"history_drift\"\n    status: \"ok\"\n    \
             ok: true\n    details:\n      checked_items: 12\n      drifted_items_count: 0\n      \
             drifted_items_truncated: false\n      counts:\n        missing_streams: 0\n        \
             unreadable_streams: 0\n        hash_mismatches: 0\n        chain_mismatches: 0\n        \
             workspace_state_mismatches: 0\n        workspace_state_missing: 0\n        \
             workspace_state_unreadable: 0\n        unreadable_items: 0\n        \
             interrupted_deletes: 0\n      streams_checked: 12\n      \
             drift_rows_truncated: false\ngenerated_at: \"2026-09-01T00:00:00.000Z\"\nprojection:\n  \
             mode: \"full\"\n  declared_field_groups[1]{name,restore_with}:\n    \
             diagnostic_rows,\"--full\"\n  included_field_groups:\n    - \"diagnostic_rows\"\n\
             omission_receipt:\n  has_omissions: false\n  omitted_field_group_count: 0\n  \
             omitted_field_groups: []\n",
            "",
            0
        )
    );
    Ok(())
}

#[test]
fn refusals() -> TestResult {
    let t = TestTracker::sample()?;
    let run = t.pm(&["validate", "--counts", "--full"])?;
    assert_eq!((run.stdout.as_str(), run.code), ("", 2));
    assert!(
        run.stderr.starts_with("error[conflicting_arguments]: "),
        "{}",
        run.stderr
    );

    let outside = TestTracker::new()?;
    let run = outside.pm(&["validate"])?;
    assert_eq!((run.stdout.as_str(), run.code), ("", 3));
    assert!(
        run.stderr.starts_with("error[not_in_project]: "),
        "{}",
        run.stderr
    );
    Ok(())
}
