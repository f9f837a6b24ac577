//! `pm health`: fx-100 output equals pm's golden (TOON and JSON) apart from the documented
//! deltas (no telemetry, extensions or vectorization checks; our `index` check; full drift
//! verification; clock reads); the 100-warning cap; `--summary`, `--brief`, `--strict-exit`.

use std::error::Error;

use serde_json::{Value, json};

use crate::common::TestTracker;
use crate::test_get::READS_ENV;

type TestResult = Result<(), Box<dyn Error>>;

/// pm checks we do not have (docs/compatibility.md).
const PM_ONLY: [&str; 3] = ["telemetry", "extensions", "vectorization"];

fn run_fx100(t: &TestTracker, args: &[&str]) -> Result<(String, i32), Box<dyn Error>> {
    let root = t.workspace();
    let pm_path = root.join(".agents/pm").display().to_string();
    let mut env = READS_ENV.to_vec();
    env.push(("PM_PATH", &pm_path));
    let mut argv = vec!["health"];
    argv.extend_from_slice(args);
    let run = t.pm_in(&root, &argv, &env)?;
    assert_eq!(run.stderr, "", "{argv:?}");
    Ok((
        run.stdout.replace(&root.display().to_string(), "[TRACKER]"),
        run.code,
    ))
}

/// Removes the TOON blocks of the named checks (`  - name: "<n>"` up to the next check or
/// top-level key).
fn drop_toon_checks(text: &str, names: &[&str]) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in text.lines() {
        if line.starts_with("  - name: ") {
            skipping = names.iter().any(|n| line == format!("  - name: \"{n}\""));
        } else if !line.starts_with(' ') {
            skipping = false;
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Masks what legitimately differs: the clock read count and the drift verification mode.
fn mask(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.trim_start().starts_with("generated_at")
                || l.trim_start().starts_with("\"generated_at\"")
            {
                "<generated_at>".to_string()
            } else {
                l.replace("\"full\"", "\"metadata\"")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn fx100_matches_the_golden() -> TestResult {
    let t = TestTracker::fx100()?;
    let golden_path =
        |ext: &str| pm_testkit::shared_file(&format!("golden/reads/fx-100/health.{ext}"));
    let (json_out, code) = run_fx100(&t, &["--json"])?;
    assert_eq!(code, 0);
    let mut ours: Value = serde_json::from_str(&json_out)?;
    let mut golden: Value = serde_json::from_str(&std::fs::read_to_string(golden_path("json"))?)?;
    let keep = |v: &mut Value, drop: &[&str]| {
        if let Some(checks) = v["checks"].as_array_mut() {
            checks.retain(|c| !drop.iter().any(|d| c["name"] == *d));
        }
    };
    keep(&mut ours, &["index"]);
    keep(&mut golden, &PM_ONLY);
    assert_eq!(
        mask(&serde_json::to_string_pretty(&ours)?),
        mask(&serde_json::to_string_pretty(&golden)?)
    );

    let (toon, code) = run_fx100(&t, &[])?;
    assert_eq!(code, 0);
    let golden_toon = std::fs::read_to_string(golden_path("toon"))?;
    assert_eq!(
        mask(&drop_toon_checks(&toon, &["index"])),
        mask(&drop_toon_checks(&golden_toon, &PM_ONLY))
    );
    Ok(())
}

#[test]
fn warnings_are_capped_at_100() -> TestResult {
    let t = TestTracker::fx100()?;
    let locks = t.workspace().join(".agents/pm/locks");
    for i in 0..120 {
        // No host and a pid that never runs (pid_max is at most 2^22): expired, owner unknown.
        let body = json!({"id": format!("pm-l{i:03}"), "pid": 2_147_483_647_u32, "owner": "gone",
                          "created_at": "2020-01-01T00:00:00.000Z", "ttl_seconds": 60});
        pm_engine::atomic::write(
            &locks.join(format!("pm-l{i:03}.lock")),
            body.to_string().as_bytes(),
        )?;
    }
    // Each lock finding names its owner, and the check lists each lock: past the default
    // output budget, which would compact the lists this test counts.
    let (out, code) = run_fx100(&t, &["--json", "--output-budget", "100000"])?;
    assert_eq!(code, 0);
    let report: Value = serde_json::from_str(&out)?;
    assert_eq!(report["warning_count"], 120);
    assert_eq!(report["warnings_truncated"], true);
    assert_eq!(report["warnings"].as_array().map(Vec::len), Some(100));
    assert_eq!(report["findings"].as_array().map(Vec::len), Some(100));
    assert_eq!(report["warnings"][0], "stale_lock:pm-l000");
    assert_eq!(report["findings"][0]["remediation"], "pm gc --scope locks");
    // An expired lock blocks its item until it is removed: the gate fails.
    assert_eq!(report["ok"], false);
    assert_eq!(report["failed_because"].as_array().map(Vec::len), Some(100));
    let locks_check = &report["checks"][4];
    assert_eq!(
        (
            locks_check["name"].clone(),
            locks_check["details"]["stale_lock_count"].clone()
        ),
        (json!("locks"), json!(120))
    );
    Ok(())
}

#[test]
fn projections_and_strict_exit() -> TestResult {
    let t = TestTracker::fx100()?;
    let (out, code) = run_fx100(&t, &["--summary", "--json"])?;
    assert_eq!(code, 0);
    let report: Value = serde_json::from_str(&out)?;
    assert_eq!(report["checks"][0]["details"], json!({}));
    assert_eq!(report["projection"]["mode"], "summary");
    assert_eq!(
        report["omission_receipt"]["omitted_field_groups"][0]["name"],
        "full_check_details"
    );
    let (out, _) = run_fx100(&t, &["--brief", "--json"])?;
    let report: Value = serde_json::from_str(&out)?;
    let optional = &report["checks"][1]["details"]["optional"];
    assert_eq!(optional.as_array().map(Vec::len), Some(5));
    // A missing required directory fails the gate: exit 1 under --strict-exit, summary kept.
    std::fs::remove_dir_all(t.workspace().join(".agents/pm/schema"))?;
    let (out, code) = run_fx100(&t, &["--strict-exit", "--json"])?;
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&out)?;
    assert_eq!(report["ok"], false);
    assert_eq!(
        report["failed_because"],
        json!(["directory_missing:schema"])
    );
    assert_eq!(report["projection"]["mode"], "summary");
    let (_, code) = run_fx100(&t, &["--json"])?;
    assert_eq!(code, 0);
    Ok(())
}
