//! `pm validate` checks: fx-100 output equals pm's golden (TOON and JSON) apart from the
//! documented `history_drift` extras; one damaged item per check is reported by exactly that
//! check for exactly that item; `--strict-exit`; stable problem counts on the real corpus.

use std::error::Error;
use std::path::Path;

use serde_json::{Value, json};

use crate::common::TestTracker;
use crate::test_get::READS_ENV;

type TestResult = Result<(), Box<dyn Error>>;

/// Our `history_drift` keys that pm does not print (docs/compatibility.md).
const DRIFT_EXTRAS: [&str; 3] = ["streams_checked", "drift_rows", "drift_rows_truncated"];

/// Runs `pm validate <args>` on the fx-100 copy of `t` with the golden environment and returns
/// stdout with the tracker root replaced by `[TRACKER]`.
fn run_fx100(t: &TestTracker, args: &[&str]) -> Result<(String, i32), Box<dyn Error>> {
    let root = t.workspace();
    let pm_path = root.join(".agents/pm").display().to_string();
    let mut env = READS_ENV.to_vec();
    env.push(("PM_PATH", &pm_path));
    let mut argv = vec!["validate"];
    argv.extend_from_slice(args);
    let run = t.pm_in(&root, &argv, &env)?;
    assert_eq!(run.stderr, "", "{argv:?}");
    let stdout = run.stdout.replace(&root.display().to_string(), "[TRACKER]");
    Ok((stdout, run.code))
}

fn golden(name: &str) -> Result<String, Box<dyn Error>> {
    Ok(std::fs::read_to_string(pm_testkit::shared_file(&format!(
        "golden/reads/fx-100/{name}"
    )))?)
}

fn check<'a>(report: &'a Value, name: &str) -> Result<&'a Value, Box<dyn Error>> {
    let checks = report["checks"].as_array().ok_or("checks")?;
    Ok(checks
        .iter()
        .find(|c| c["name"] == name)
        .ok_or_else(|| format!("no {name} check"))?)
}

#[test]
fn fx100_matches_the_golden() -> TestResult {
    let t = TestTracker::fx100()?;
    let (json_out, code) = run_fx100(&t, &["--json"])?;
    assert_eq!(code, 0);
    let mut ours: Value = serde_json::from_str(&json_out)?;
    let drift = ours["checks"][6]["details"]
        .as_object_mut()
        .ok_or("drift details")?;
    for key in DRIFT_EXTRAS {
        assert!(drift.shift_remove(key).is_some(), "{key}");
    }
    let counts = drift["counts"].as_object_mut().ok_or("counts")?;
    assert_eq!(counts.shift_remove("unreadable_items"), Some(json!(0)));
    assert_eq!(counts.shift_remove("interrupted_deletes"), Some(json!(0)));
    let expected = golden("validate.json")?;
    assert_eq!(
        serde_json::to_string_pretty(&ours)? + "\n",
        expected,
        "JSON differs beyond the documented history_drift extras"
    );

    let (toon, code) = run_fx100(&t, &[])?;
    assert_eq!(code, 0);
    let without_extras: String = toon
        .lines()
        .filter(|l| {
            let key = l.trim_start();
            !(key.starts_with("streams_checked:")
                || key.starts_with("drift_rows_truncated:")
                || key.starts_with("unreadable_items:")
                || key.starts_with("interrupted_deletes:"))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(without_extras, golden("validate.toon")?);
    Ok(())
}

/// Rewrites a tracker file by replacing `from` with `to` (exactly once).
fn edit(root: &Path, rel: &str, from: &str, to: &str) -> TestResult {
    let path = root.join(".agents/pm").join(rel);
    let text = std::fs::read_to_string(&path)?;
    assert!(text.contains(from), "{rel}: {from}");
    pm_engine::atomic::write(&path, text.replacen(from, to, 1).as_bytes())?;
    Ok(())
}

/// Breaks one fx-100 item for each check.
fn break_fx100(root: &Path) -> TestResult {
    edit(
        root,
        "epics/pm-s0000000.toon",
        "author: pm-corpus-agent-0\n",
        "",
    )?;
    edit(
        root,
        "tasks/pm-s0000001.toon",
        "resolution: Synthetic benchmark work completed\n",
        "",
    )?;
    edit(
        root,
        "epics/pm-s000000k.toon",
        "body:",
        "blocked_reason: work is closed\nbody:",
    )?;
    edit(
        root,
        "epics/pm-s0000014.toon",
        "parent: pm-s0000000",
        "parent: pm-s9999999",
    )?;
    edit(
        root,
        "tasks/pm-s000000h.toon",
        "body:",
        "files[1]{path,scope}:\n  gone/missing.txt,project\nbody:",
    )?;
    edit(
        root,
        "tasks/pm-s000000i.toon",
        "body:",
        "tests[1]{command,scope}:\n  \"pm get pm-s9999998 --json\",project\nbody:",
    )?;
    edit(
        root,
        "tasks/pm-s0000011.toon",
        "body:",
        "pm_format_version: 2\nbody:",
    )?;
    let stream = root.join(".agents/pm/history/pm-s0000012.jsonl");
    let mut bytes = std::fs::read(&stream)?;
    bytes.extend_from_slice(b"<<<<<<< HEAD\n");
    pm_engine::atomic::write(&stream, &bytes)?;
    Ok(())
}

#[test]
fn each_check_reports_exactly_its_damaged_item() -> TestResult {
    let t = TestTracker::fx100()?;
    break_fx100(&t.workspace())?;
    let (out, code) = run_fx100(&t, &["--json"])?;
    assert_eq!(code, 0);
    let report: Value = serde_json::from_str(&out)?;
    let d = |name: &str| -> Result<Value, Box<dyn Error>> {
        Ok(check(&report, name)?["details"].clone())
    };
    let metadata = d("metadata")?;
    assert_eq!(metadata["counts"]["missing_author"], 1);
    assert_eq!(metadata["missing_author_item_ids"], json!(["pm-s0000000"]));
    let resolution = d("resolution")?;
    assert_eq!(
        resolution["missing_resolution_rows"],
        json!(["pm-s0000001:resolution"])
    );
    let lifecycle = d("lifecycle")?;
    assert_eq!(
        lifecycle["active_closure_like_metadata_rows"],
        json!(["pm-s000000k:blocked_reason"])
    );
    let references = d("dependency_references")?;
    assert_eq!(
        references["dangling_reference_rows"],
        json!(["pm-s0000014:pm-s9999999:parent"])
    );
    assert_eq!(
        references["remediation_hints"],
        json!(["pm update pm-s0000014 --unset parent"])
    );
    let files = d("files")?;
    assert_eq!(files["missing_linked_paths"], json!(["gone/missing.txt"]));
    let row = files["missing_linked_path_rows"][0].as_str().unwrap_or("");
    assert!(
        row.starts_with("gone/missing.txt:deleted owner=pm-s000000h "),
        "{row}"
    );
    let commands = d("command_references")?;
    assert_eq!(commands["stale_pm_ids"], json!(["pm-s9999998"]));
    assert_eq!(commands["linked_commands_scanned"], 1);
    let format = check(&report, "format_version")?;
    assert_eq!(
        (
            format["status"].clone(),
            format["details"]["ahead_items"].clone()
        ),
        (json!("error"), json!(["pm-s0000011"]))
    );
    let storage = d("storage_integrity")?;
    assert_eq!(
        storage["history_conflict_marker_streams"],
        json!(["pm-s0000012"])
    );
    assert_eq!(storage["unreadable_item_files"], json!([]));
    let drift = d("history_drift")?;
    assert_eq!(
        drift["drifted_items"],
        json!([
            "pm-s0000000",
            "pm-s0000001",
            "pm-s000000h",
            "pm-s000000i",
            "pm-s000000k",
            "pm-s0000011",
            "pm-s0000012",
            "pm-s0000014"
        ])
    );
    assert_eq!(report["ok"], false);
    assert_eq!(
        report["warnings"],
        json!([
            "validate_command_references_stale_pm_ids:1",
            "validate_dangling_dependency_references:1",
            "validate_files_missing_linked_paths:1",
            "validate_format_version_ahead_items:1",
            "validate_history_drift_hash_mismatches:7",
            "validate_history_drift_unreadable_streams:1",
            "validate_lifecycle_active_closure_like_metadata:1",
            "validate_lifecycle_active_terminal_parent:11",
            "validate_metadata_missing_author:1",
            "validate_resolution_missing_fields:1",
            "validate_storage_history_conflict_markers:1"
        ])
    );
    // One check flag runs one check (lifecycle brings dependency_references along).
    let (out, _) = run_fx100(&t, &["--check-lifecycle", "--json"])?;
    let only: Value = serde_json::from_str(&out)?;
    let names: Vec<&Value> = only["checks"]
        .as_array()
        .ok_or("checks")?
        .iter()
        .map(|c| &c["name"])
        .collect();
    assert_eq!(
        names,
        [&json!("lifecycle"), &json!("dependency_references")]
    );
    Ok(())
}

#[test]
fn toon_lists_five_and_strict_exit_fails_on_warnings() -> TestResult {
    let t = TestTracker::fx100()?;
    let (toon, code) = run_fx100(&t, &["--check-lifecycle", "--strict-exit"])?;
    assert_eq!(code, 1);
    assert!(
        toon.contains("active_terminal_parent_items: 11\n"),
        "{toon}"
    );
    assert!(
        toon.contains("        - \"pm-s0000025:pm-s000001f:closed\"\n      active_terminal_parent_rows_truncated: true\n"),
        "{toon}"
    );
    let (_, code) = run_fx100(&t, &["--check-metadata", "--strict-exit"])?;
    assert_eq!(code, 0);
    let (counts, _) = run_fx100(&t, &["--counts", "--check-lifecycle", "--json"])?;
    let counts: Value = serde_json::from_str(&counts)?;
    let details = &check(&counts, "lifecycle")?["details"];
    assert!(details.get("active_terminal_parent_rows").is_none());
    assert_eq!(details["active_terminal_parent_items"], 11);
    Ok(())
}

#[test]
fn real_corpus_problem_counts_are_stable() -> TestResult {
    let corpus = pm_testkit::extract_corpus()?;
    let t = TestTracker::new()?;
    let root = corpus.path();
    let pm_path = root.join(".agents/pm").display().to_string();
    let env = [("PM_PATH", pm_path.as_str())];
    let run = t.pm_in(
        root,
        &["validate", "--json", "--output-budget", "unbounded"],
        &env,
    )?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0));
    let report: Value = run.json()?;
    // docs/compatibility.md "validate on the real corpus" lists these numbers.
    assert_eq!(
        report["warnings"],
        json!([
            "validate_files_missing_linked_paths:1681",
            "validate_legacy_hierarchy_cardinality_violation:7",
            "validate_legacy_hierarchy_parent_divergence:7",
            "validate_metadata_duplicate_issue_codes:2",
            "validate_metadata_missing_close_reason:16",
            "validate_resolution_missing_fields:295"
        ])
    );
    let status: Vec<(String, String)> = report["checks"]
        .as_array()
        .ok_or("checks")?
        .iter()
        .map(|c| (c["name"].to_string(), c["status"].to_string()))
        .collect();
    let warn = ["metadata", "resolution", "lifecycle", "files"];
    for (name, s) in &status {
        let expected = if warn.contains(&name.trim_matches('"')) {
            "\"warn\""
        } else {
            "\"ok\""
        };
        assert_eq!(s, expected, "{name}");
    }
    let d = |name: &str| -> Result<Value, Box<dyn Error>> {
        Ok(check(&report, name)?["details"].clone())
    };
    assert_eq!(d("metadata")?["checked_items"], 2536);
    assert_eq!(d("resolution")?["checked_closed_items"], 2217);
    assert_eq!(d("lifecycle")?["checked_active_items"], 305);
    assert_eq!(d("files")?["linked_project_paths"], 1721);
    assert_eq!(d("command_references")?["linked_commands_scanned"], 4033);
    assert_eq!(
        d("command_references")?["unique_referenced_pm_ids_count"],
        4
    );
    assert_eq!(d("storage_integrity")?["history_streams_scanned"], 2551);
    Ok(())
}
