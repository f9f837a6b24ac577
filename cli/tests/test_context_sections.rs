//! `context --depth standard|deep|full` and `--section`: which sections a
//! read includes, their order and rows, the settings toggles, refusals, and equal answers from
//! the index and scan paths.

use std::error::Error;

use serde_json::{Value, json};

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn Error>>;

fn json_of(t: &TestTracker, args: &[&str]) -> Result<Value, Box<dyn Error>> {
    let run = t.pm(args)?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0), "{args:?}");
    Ok(serde_json::from_str(&run.stdout)?)
}

fn ids(rows: &Value) -> Vec<&str> {
    rows.as_array()
        .map(|a| a.iter().filter_map(|r| r["id"].as_str()).collect())
        .unwrap_or_default()
}

const STANDARD: [&str; 7] = [
    "hierarchy",
    "activity",
    "progress",
    "blockers",
    "recently_created",
    "unparented",
    "workload",
];

#[test]
fn depths_select_sections_in_order() -> TestResult {
    let t = TestTracker::sample()?;
    let brief = json_of(&t, &["context", "--json"])?;
    assert_eq!(brief["depth"], "brief");
    assert_eq!(brief["sections_included"], json!([]));
    assert!(brief.get("hierarchy").is_none());

    let standard = json_of(&t, &["context", "--depth", "standard", "--json"])?;
    assert_eq!(standard["sections_included"], json!(STANDARD));
    let keys: Vec<&String> = standard.as_object().ok_or("env")?.keys().collect();
    let at = |k: &str| keys.iter().position(|x| *x == k);
    assert!(at("agenda") < at("hierarchy") && at("hierarchy") < at("workload"));
    assert!(at("workload") < at("omission_receipt"));

    let deep = json_of(&t, &["context", "--depth", "deep", "--json"])?;
    let full = json_of(&t, &["context", "--depth", "full", "--json"])?;
    assert_eq!(
        deep["sections_included"],
        json!([
            "hierarchy",
            "activity",
            "progress",
            "blockers",
            "recently_created",
            "unparented",
            "files",
            "workload",
            "staleness",
            "tests"
        ])
    );
    assert_eq!(deep["sections_included"], full["sections_included"]);
    // The omission receipt lists only what the read left out.
    let omitted: Vec<&str> = deep["omission_receipt"]["omitted_field_groups"]
        .as_array()
        .ok_or("groups")?
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    assert_eq!(omitted, ["workspace_memory"]);
    // Every other restore hint of a brief read brings its section back.
    for group in brief["omission_receipt"]["omitted_field_groups"]
        .as_array()
        .ok_or("groups")?
    {
        let (Some(name), Some(restore)) = (group["name"].as_str(), group["restore_with"].as_str())
        else {
            continue;
        };
        if name == "workspace_memory" {
            continue;
        }
        let mut args = vec!["context"];
        args.extend(restore.split(' '));
        args.push("--json");
        let restored = json_of(&t, &args)?;
        assert!(
            restored.get(name).is_some(),
            "{restore} does not restore {name}"
        );
    }
    Ok(())
}

#[test]
fn section_rows_describe_the_tracker() -> TestResult {
    let t = TestTracker::sample()?;
    let deep = json_of(&t, &["context", "--depth", "deep", "--json"])?;
    let feature = deep["hierarchy"]
        .as_array()
        .ok_or("hierarchy")?
        .iter()
        .find(|r| r["id"] == "gd-f1")
        .ok_or("gd-f1 in hierarchy")?;
    assert_eq!(
        (
            feature["children_total"].clone(),
            feature["children_closed"].clone()
        ),
        (json!(3), json!(1))
    );
    let progress = &deep["progress"];
    let by_status: u64 = progress["by_status"]
        .as_object()
        .ok_or("by_status")?
        .values()
        .filter_map(Value::as_u64)
        .sum();
    assert_eq!(progress["total"], json!(by_status));
    assert_eq!(
        progress["total"].as_u64(),
        Some(progress["closed"].as_u64().unwrap_or(0) + progress["active"].as_u64().unwrap_or(0))
    );
    assert!(ids(&deep["unparented"]).iter().all(|id| *id != "gd-t2"));
    assert_eq!(ids(&deep["tests"]), ["gd-t3"]);
    // A mutation is the newest activity; the stale window comes from --stale-threshold.
    let run = t.pm(&["update", "gd-c1", "--priority", "1"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let with_activity = json_of(
        &t,
        &[
            "context",
            "--section",
            "activity",
            "--activity-limit",
            "2",
            "--json",
        ],
    )?;
    assert_eq!(with_activity["sections_included"], json!(["activity"]));
    let rows = with_activity["activity"].as_array().ok_or("activity")?;
    assert!(rows.len() <= 2 && !rows.is_empty());
    assert_eq!(
        (rows[0]["id"].clone(), rows[0]["op"].clone()),
        (json!("gd-c1"), json!("update"))
    );
    let none_stale = json_of(
        &t,
        &[
            "context",
            "--section",
            "staleness",
            "--stale-threshold",
            "100000",
            "--json",
        ],
    )?;
    assert_eq!(none_stale["staleness"], json!([]));
    Ok(())
}

#[test]
fn sections_flag_toggles_and_refusals() -> TestResult {
    let t = TestTracker::sample()?;
    let picked = json_of(
        &t,
        &[
            "context",
            "--section",
            "workload,progress",
            "--section",
            "hierarchy",
            "--json",
        ],
    )?;
    assert_eq!(
        picked["sections_included"],
        json!(["hierarchy", "progress", "workload"])
    );
    for bad in [
        ["context", "--section", "nope"],
        ["context", "--section", "workspace_memory"],
        ["context", "--depth", "wide"],
    ] {
        let run = t.pm(&bad)?;
        assert_eq!(run.code, 2, "{bad:?}");
        assert!(
            run.stderr.starts_with("error[invalid_argument_value]"),
            "{}",
            run.stderr
        );
    }
    // settings.context.sections toggles remove a depth's section; default_depth applies.
    let settings_path = t.workspace().join(".agents/pm/settings.json");
    let mut settings: Value = serde_json::from_str(&std::fs::read_to_string(&settings_path)?)?;
    settings["context"] = json!({"default_depth": "standard", "sections": {"hierarchy": false}});
    pm_engine::atomic::write(
        &settings_path,
        serde_json::to_string_pretty(&settings)?.as_bytes(),
    )?;
    let toggled = json_of(&t, &["context", "--json"])?;
    assert_eq!(toggled["depth"], "standard");
    assert_eq!(toggled["sections_included"], json!(STANDARD[1..]));
    Ok(())
}

#[test]
fn index_and_scan_agree() -> TestResult {
    let t = TestTracker::sample()?;
    // Each command runs one second later on the test clock: compare without the clock.
    let unclocked = |mut v: Value| {
        if let Some(m) = v.as_object_mut() {
            m.shift_remove("now");
            m.shift_remove("window");
        }
        v
    };
    for depth in ["standard", "deep"] {
        let index = json_of(&t, &["context", "--depth", depth, "--json"])?;
        let scan = json_of(&t, &["context", "--depth", depth, "--json", "--no-index"])?;
        assert_eq!(unclocked(index), unclocked(scan), "{depth}");
    }
    Ok(())
}
