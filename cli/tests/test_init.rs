//! `pm init`: the receipt against pm-cli's golden (step 00 of the mutation transcript, minus the
//! fields listed in docs/compatibility.md), the files it writes, and its refusals.

use std::io::Write;

use serde_json::Value;

use crate::common::{ErrorEnvelope, TestTracker, archive_files};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The environment of transcript step 00.
const GOLDEN_ENV: [(&str, &str); 5] = [
    ("PM_PATH", ".agents/pm"),
    ("PM_CLOCK", "2026-09-01T00:00:00.000Z"),
    ("PM_CLOCK_TICK_MS", "0"),
    ("PM_SEED", "golden-transcript"),
    ("PM_AUTHOR", "golden-author"),
];

/// Lines of pm-cli's receipt that describe features this pm does not have.
const DROPPED_NEXT_STEPS: [&str; 4] = [
    "Add optional packages for richer workflows: pm install calendar --project, pm install templates --project, pm install guide-shell --project",
    "Or install everything bundled: pm init --with-packages (idempotent on re-run)",
    "Supported agent harnesses are attributed automatically; use --author or PM_AUTHOR only when an explicit identity override is required.",
    "Add workflow guidance later: pm init --agent-guidance add",
];

/// Returns files of the mutation transcript (paths relative to `mutation-transcript/`).
fn golden(relative: &[&str]) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let full: Vec<String> = relative
        .iter()
        .map(|r| format!("mutation-transcript/{r}"))
        .collect();
    let full: Vec<&str> = full.iter().map(String::as_str).collect();
    archive_files("golden/mutation-transcript.tar.gz", &full)
}

#[test]
fn json_receipt_matches_pm_cli_without_unsupported_features() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm_in(
        &t.workspace(),
        &["init", "--defaults", "--json"],
        &GOLDEN_ENV,
    )?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0));

    let [golden] = &golden(&["stdout/json/00-init.json"])?[..] else {
        return Err("one file expected".into());
    };
    let mut expected: Value = serde_json::from_str(golden)?;
    let receipt = expected.as_object_mut().ok_or("receipt is not an object")?;
    receipt.shift_remove("agent_guidance");
    for (key, dropped) in [
        ("warnings", &["agent_guidance:missing_non_interactive"][..]),
        ("next_steps", &DROPPED_NEXT_STEPS[..]),
    ] {
        if let Some(Value::Array(list)) = receipt.get_mut(key) {
            list.retain(|v| !dropped.iter().any(|d| v == d));
        }
    }
    let expected = pm_engine::json::to_pretty(&expected) + "\n";
    assert_eq!(t.redact(&run.stdout), expected);
    Ok(())
}

#[test]
fn toon_receipt_matches_pm_cli_without_unsupported_features() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm_in(&t.workspace(), &["init", "--defaults"], &GOLDEN_ENV)?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0));

    let [golden] = &golden(&["stdout/toon/00-init.toon"])?[..] else {
        return Err("one file expected".into());
    };
    let mut expected = String::new();
    let mut skipping_block = false;
    for line in golden.lines() {
        if skipping_block && line.starts_with(' ') {
            continue;
        }
        skipping_block = line == "telemetry:" || line == "agent_guidance:";
        let dropped_step = DROPPED_NEXT_STEPS
            .iter()
            .any(|s| line == format!("  - {}", serde_json::to_string(s).unwrap_or_default()));
        if skipping_block
            || dropped_step
            || line == "  - \"agent_guidance:missing_non_interactive\""
        {
            continue;
        }
        expected.push_str(line);
        expected.push('\n');
    }
    assert_eq!(t.redact(&run.stdout), expected);
    Ok(())
}

#[test]
fn writes_pm_cli_tracker_files() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm_in(&t.workspace(), &["init", "--defaults"], &GOLDEN_ENV)?;
    assert_eq!(run.code, 0);
    let seeds = ["types", "statuses", "fields", "workflows"];
    let mut files = vec![
        ".agents/pm/settings.json".to_owned(),
        ".gitignore".to_owned(),
    ];
    files.extend(seeds.iter().map(|s| format!(".agents/pm/schema/{s}.json")));
    let golden_paths: Vec<String> = files
        .iter()
        .map(|f| format!("snapshots/00-init/{f}"))
        .collect();
    let golden_paths: Vec<&str> = golden_paths.iter().map(String::as_str).collect();
    for (file, expected) in files.iter().zip(golden(&golden_paths)?) {
        let written = std::fs::read_to_string(t.workspace().join(file))?;
        assert_eq!(written, expected, "{file}");
    }
    Ok(())
}

#[test]
fn rerun_reports_existing_paths_and_changes_nothing() -> TestResult {
    let t = TestTracker::new()?;
    assert_eq!(t.pm(&["init"])?.code, 0);
    let settings = std::fs::read(t.workspace().join(".agents/pm/settings.json"))?;
    let run = t.pm(&["init", "--json"])?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0));
    let receipt: Value = run.json()?;
    assert_eq!(receipt["created_dirs"], Value::Array(Vec::new()));
    let warnings = receipt["warnings"].as_array().ok_or("no warnings")?;
    assert!(
        warnings
            .iter()
            .all(|w| w.as_str().is_some_and(|w| w.starts_with("already_exists:")))
    );
    assert_eq!(
        std::fs::read(t.workspace().join(".agents/pm/settings.json"))?,
        settings
    );
    Ok(())
}

#[test]
fn init_then_where_finds_the_tracker_from_a_subdirectory() -> TestResult {
    let t = TestTracker::new()?;
    assert_eq!(t.pm(&["init"])?.code, 0);
    let sub = t.workspace().join("src/deep");
    std::fs::create_dir_all(&sub)?;
    let run = t.pm_in(&sub, &["where", "--json"], &[])?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0));
    let out: Value = run.json()?;
    assert_eq!(
        t.redact(out["tracker_root"].as_str().unwrap_or_default()),
        "[TRACKER]/.agents/pm"
    );
    Ok(())
}

#[test]
fn path_like_target_is_a_tracker_path() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm(&["init", "./sandbox-pm", "--json"])?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0));
    let receipt: Value = run.json()?;
    assert_eq!(receipt["target"]["mode"], "tracker-path");
    assert_eq!(
        t.redact(receipt["path"].as_str().unwrap_or_default()),
        "[TRACKER]/sandbox-pm"
    );
    assert!(receipt["target"].get("workspace_root").is_none());
    assert!(t.workspace().join("sandbox-pm/settings.json").is_file());
    Ok(())
}

#[test]
fn prefix_and_preset_are_applied() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm(&["init", "Acme", "--preset", "strict", "--json"])?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0));
    let receipt: Value = run.json()?;
    assert_eq!(receipt["settings"]["id_prefix"], "acme-");
    assert_eq!(receipt["governance_preset"], "strict");
    assert_eq!(receipt["target"]["mode"], "workspace-discovery");
    assert_eq!(receipt["target"]["discovery"], "current");
    Ok(())
}

#[test]
fn refusals() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm(&["init", "--preset", "loose", "--json"])?;
    assert_eq!(run.code, 2);
    let e = run.json::<ErrorEnvelope>()?.error;
    assert_eq!(e.code, "invalid_argument_value");
    assert_eq!(e.refusal.surface, "--preset");
    assert_eq!(
        e.refusal.legal_domain,
        Some(vec!["minimal".into(), "default".into(), "strict".into()])
    );
    assert!(
        !t.workspace().join(".agents").exists(),
        "a refused init writes nothing"
    );

    let run = t.pm(&["--pm-path", "x", "init", "--workspace", "w"])?;
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .starts_with("error[conflicting_arguments]: --workspace cannot be combined")
    );
    assert_eq!(run.code, 2);

    assert_eq!(t.pm(&["init"])?.code, 0);
    let run = t.pm(&["init", "other"])?;
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("without --force"), "{}", run.stderr);
    assert_eq!(run.code, 2);
    let run = t.pm(&["init", "other", "--force", "--json"])?;
    assert_eq!(run.code, 0);
    let receipt: Value = run.json()?;
    assert_eq!(receipt["settings"]["id_prefix"], "other-");
    Ok(())
}

#[test]
fn settings_default_format_applies_without_flags() -> TestResult {
    let t = TestTracker::new()?;
    assert_eq!(t.pm(&["init"])?.code, 0);
    let path = t.workspace().join(".agents/pm/settings.json");
    let mut settings: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    settings["output"]["default_format"] = Value::from("json");
    std::fs::File::create(&path)?.write_all(pm_engine::json::to_pretty(&settings).as_bytes())?;

    let run = t.pm(&["where"])?;
    assert_eq!(run.code, 0);
    let out: Value = run.json()?;
    assert!(out["tracker_root"].is_string());
    let run = t.pm(&["where", "--output-format", "toon"])?;
    assert!(run.stdout.starts_with("tracker_root: "), "{}", run.stdout);
    Ok(())
}
