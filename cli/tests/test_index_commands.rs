//! `pm reindex`, `pm reindex --check`, `pm health` (index check), `pm gc` and the global
//! `--no-index` / `PM_NO_INDEX=1` switch, end to end on the fx-100 fixture.

use serde_json::{Value, json};

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn index_details(
    t: &TestTracker,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<Value, Box<dyn std::error::Error>> {
    let mut argv = vec!["health", "--json"];
    argv.extend_from_slice(args);
    let run = t.pm_in(&t.workspace(), &argv, env)?;
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    let out: Value = run.json()?;
    Ok(index_check(&out)?["details"].clone())
}

/// Returns the `index` check of a health report.
fn index_check(out: &Value) -> Result<&Value, Box<dyn std::error::Error>> {
    Ok(out["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == "index"))
        .ok_or("no index check")?)
}

#[test]
fn reindex_builds_and_check_agrees() -> TestResult {
    let t = TestTracker::fx100()?;
    assert_eq!(index_details(&t, &[], &[])?["state"], "missing");
    let run = t.pm(&["reindex", "--json"])?;
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    let out: Value = run.json()?;
    assert_eq!(out["ok"], true);
    assert_eq!(out["mode"], "rebuild");
    assert_eq!(
        (
            out["items"].as_u64(),
            out["streams"].as_u64(),
            out["events"].as_u64()
        ),
        (Some(100), Some(100), Some(100))
    );
    assert_eq!(out["database"], "runtime/index/index-000001.sqlite");

    let details = index_details(&t, &[], &[])?;
    assert_eq!(
        (details["state"].as_str(), details["items"].as_u64()),
        (Some("fresh"), Some(100))
    );

    let run = t.pm(&["reindex", "--check", "--json"])?;
    assert_eq!(run.code, 0);
    let out: Value = run.json()?;
    assert_eq!(
        (out["ok"].as_bool(), out["consistent"].as_bool()),
        (Some(true), Some(true))
    );
    assert_eq!(out["differences"], Value::Array(vec![]));
    Ok(())
}

#[test]
fn check_reports_an_external_edit() -> TestResult {
    let t = TestTracker::fx100()?;
    t.pm(&["reindex"])?;
    let path = t.workspace().join(".agents/pm/tasks/pm-s0000001.toon");
    let text = std::fs::read_to_string(&path)?.replace("priority: 1", "priority: 0");
    pm_engine::atomic::write(&path, text.as_bytes())?;
    let run = t.pm(&["reindex", "--check", "--json"])?;
    assert_eq!(run.code, 1, "an inconsistent index fails the check");
    let out: Value = run.json()?;
    assert_eq!(
        (out["ok"].as_bool(), out["state"].as_str()),
        (Some(false), Some("stale"))
    );
    assert_eq!(out["pending_changes"].as_u64(), Some(1));
    assert_eq!(out["differences"][0]["path"], "tasks/pm-s0000001.toon");
    assert_eq!(out["differences"][0]["kind"], "differs");
    assert_eq!(
        index_details(&t, &[], &[])?["pending_changes"].as_u64(),
        Some(1)
    );
    Ok(())
}

#[test]
fn health_names_a_corrupt_index_and_no_index_disables_it() -> TestResult {
    let t = TestTracker::fx100()?;
    t.pm(&["reindex"])?;
    let db = t
        .workspace()
        .join(".agents/pm/runtime/index/index-000001.sqlite");
    pm_engine::atomic::write(&db, &[7u8; 4096])?;
    let run = t.pm(&["health", "--json"])?;
    assert_eq!(run.code, 0);
    let out: Value = run.json()?;
    assert_eq!(out["ok"], false);
    assert_eq!(index_check(&out)?["status"], "warn");
    assert_eq!(index_check(&out)?["details"]["state"], "corrupt");
    assert_eq!(out["failed_because"], serde_json::json!(["index_corrupt"]));
    let finding = out["findings"]
        .as_array()
        .and_then(|f| f.last())
        .ok_or("findings")?;
    assert_eq!(finding["check"], "index");
    assert_eq!(
        index_details(&t, &[], &[("PM_NO_INDEX", "1")])?["state"],
        "disabled"
    );
    assert_eq!(
        index_details(&t, &["--no-index"], &[])?["state"],
        "disabled"
    );
    // A rebuild repairs it; the authoritative files were never touched.
    let run = t.pm(&["reindex", "--json"])?;
    assert_eq!(run.code, 0);
    assert_eq!(index_details(&t, &[], &[])?["state"], "fresh");
    Ok(())
}

#[test]
fn reindex_refuses_to_write_through_a_symlinked_runtime() -> TestResult {
    let t = TestTracker::fx100()?;
    let outside = t.outside().join("elsewhere");
    std::fs::create_dir_all(&outside)?;
    std::os::unix::fs::symlink(&outside, t.workspace().join(".agents/pm/runtime"))?;
    let run = t.pm(&["reindex", "--json"])?;
    assert_eq!(run.code, 1);
    let out: Value = run.json()?;
    assert_eq!(out["error"]["code"], "index_unavailable");
    assert_eq!(std::fs::read_dir(&outside)?.count(), 0);
    assert_eq!(index_details(&t, &[], &[])?["state"], "unsafe_symlink");
    Ok(())
}

#[test]
fn gc_scopes() -> TestResult {
    let t = TestTracker::fx100()?;
    let run = t.pm(&["gc", "--scope", "index,bogus", "--json"])?;
    assert_eq!(run.code, 2);
    let out: Value = run.json()?;
    assert_eq!(out["error"]["code"], "invalid_argument_value");
    assert_eq!(out["error"]["recovery"]["allowed_values"][0], "index");

    t.pm(&["reindex"])?;
    let locks = t.workspace().join(".agents/pm/locks");
    // pm-cli locks (no host) whose pid never runs (pid_max is at most 2^22).
    let lock = |created: &str| {
        format!(
            "{{\n  \"id\": \"x\",\n  \"pid\": 2147483647,\n  \"owner\": \"o\",\n  \"created_at\": \"{created}\",\n  \"ttl_seconds\": 60\n}}\n"
        )
    };
    pm_engine::atomic::write(
        &locks.join("pm-old.lock"),
        lock("2026-08-31T00:00:00.000Z").as_bytes(),
    )?;
    pm_engine::atomic::write(
        &locks.join("pm-new.lock"),
        lock("2026-09-01T00:00:00.000Z").as_bytes(),
    )?;
    pm_engine::atomic::write(&locks.join("pm-bad.lock"), b"not json")?;

    let out: Value = t
        .pm(&[
            "gc",
            "--scope",
            "index",
            "--scope",
            "locks",
            "--dry-run",
            "--json",
        ])?
        .json()?;
    assert_eq!(out["dry_run"], true);
    assert!(t.workspace().join(".agents/pm/runtime/index").exists());
    assert!(locks.join("pm-old.lock").exists());

    let run = t.pm(&["gc", "--scope", "index,locks", "--json"])?;
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    let out: Value = run.json()?;
    assert_eq!(out["scopes"][0]["scope"], "index");
    assert_eq!(out["scopes"][0]["removed"][0], "runtime/index");
    assert_eq!(out["scopes"][1]["removed"][0], "locks/pm-old.lock");
    assert_eq!(
        out["scopes"][1]["retained"],
        json!(["locks/pm-bad.lock", "locks/pm-new.lock"])
    );
    let reasons: Vec<&Value> = out["scopes"][1]["retained_reasons"]
        .as_array()
        .map(|r| r.iter().map(|r| &r["reason"]).collect())
        .unwrap_or_default();
    assert_eq!(reasons, [&json!("unparseable"), &json!("active")]);
    assert!(!t.workspace().join(".agents/pm/runtime/index").exists());
    assert!(!locks.join("pm-old.lock").exists() && locks.join("pm-new.lock").exists());
    assert_eq!(index_details(&t, &[], &[])?["state"], "missing");
    Ok(())
}

#[test]
fn index_freshness_mode_comes_from_the_environment() -> TestResult {
    let t = TestTracker::fx100()?;
    let list = ["list", "--status", "all", "--limit", "5", "--json"];
    let full = t.pm(&list)?;
    assert_eq!(full.code, 0);
    let dirs = t.pm_in(
        &t.workspace(),
        &list,
        &[("PM_INDEX_FRESHNESS", "directories")],
    )?;
    assert_eq!((dirs.code, dirs.stderr.as_str()), (0, ""));
    let items = |run: &crate::common::Run| -> Result<Value, Box<dyn std::error::Error>> {
        Ok(run.json::<Value>()?["items"].clone())
    };
    assert_eq!(items(&dirs)?, items(&full)?);
    // `get` of a container reads its children through the index in the same mode.
    let all = t.pm(&["list", "--status", "all", "--limit", "200", "--json"])?;
    let all = all.json::<Value>()?["items"].clone();
    let parent = all
        .as_array()
        .and_then(|items| items.iter().find_map(|i| i["parent"].as_str()))
        .ok_or("a child with a parent")?
        .to_string();
    let parent = parent.as_str();
    let get = ["get", parent, "--json"];
    let dirs = t.pm_in(
        &t.workspace(),
        &get,
        &[("PM_INDEX_FRESHNESS", "directories")],
    )?;
    assert_eq!((dirs.code, dirs.stderr.as_str()), (0, ""));
    let children = |run: &crate::common::Run| -> Result<Value, Box<dyn std::error::Error>> {
        Ok(run.json::<Value>()?["children"].clone())
    };
    assert!(
        children(&dirs)?.is_object() || children(&dirs)?.is_array(),
        "{}",
        dirs.stdout
    );
    assert_eq!(children(&dirs)?, children(&t.pm(&get)?)?);
    let bad = t.pm_in(&t.workspace(), &list, &[("PM_INDEX_FRESHNESS", "dirs")])?;
    assert_eq!(bad.code, 2);
    let out: Value = bad.json()?;
    assert_eq!(out["error"]["code"], "invalid_argument_value");
    assert!(
        out["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("PM_INDEX_FRESHNESS")),
        "{out}"
    );
    Ok(())
}
