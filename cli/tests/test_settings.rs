//! Settings are obeyed key by key (issue 21, items 1 and 2): `id_prefix` and `author_default`
//! hold under every `governance.duplicate_detection_mode`; an invalid settings.json makes every
//! write refuse with `settings_invalid` (exit 2) and every read answer with a warning naming
//! the key.

use std::error::Error;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn Error>>;

/// Returns `testdata/trackers/settings-dup-<mode>`: pm's full init settings with
/// `id_prefix: zq-`, `author_default: zq-author` and the duplicate mode.
fn fixture(mode: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../testdata/trackers/settings-dup-{mode}"))
}

fn settings_path(t: &TestTracker) -> PathBuf {
    t.workspace().join(".agents/pm/settings.json")
}

/// Returns the fixture's settings.json after `edit` (applied to the copy, never in place).
fn edited(t: &TestTracker, edit: impl FnOnce(&mut Value)) -> Result<String, Box<dyn Error>> {
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(settings_path(t))?)?;
    edit(&mut doc);
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}

#[test]
fn regression_issue_21_create_obeys_prefix_and_author_under_every_duplicate_mode() -> TestResult {
    for mode in ["off", "advisory", "strict"] {
        let t = TestTracker::from_tree(&fixture(mode))?;
        let run = t.pm_unset(&["create", "task", "Mode check", "--json"], &["PM_AUTHOR"])?;
        assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{mode}: {run:?}");
        let receipt: Value = run.json()?;
        let id = receipt["id"].as_str().unwrap_or_default().to_string();
        assert!(id.starts_with("zq-"), "{mode}: {id}");
        let stream =
            std::fs::read_to_string(t.workspace().join(format!(".agents/pm/history/{id}.jsonl")))?;
        let entry: Value = serde_json::from_str(stream.lines().next().unwrap_or_default())?;
        assert_eq!(entry["author"], json!("zq-author"), "{mode}");
        assert_eq!(entry["author_source"], json!("configured"), "{mode}");

        // The configured author's own claim is not "held by others".
        let claim = t.pm_unset(&["claim", &id, "--json"], &["PM_AUTHOR"])?;
        assert_eq!(claim.code, 0, "{mode}: {claim:?}");
        let next = t.pm_unset(&["next", "--json"], &["PM_AUTHOR"])?;
        assert_eq!((next.code, next.stderr.as_str()), (0, ""), "{mode}");
        let next: Value = next.json()?;
        assert_eq!(next["held_by_others"], json!([]), "{mode}");
        assert_eq!(next["recommended"]["id"], json!(id), "{mode}");
    }
    Ok(())
}

/// One invalid settings.json: its text and the key every report must name.
fn invalid_cases(t: &TestTracker) -> Result<Vec<(String, &'static str)>, Box<dyn Error>> {
    Ok(vec![
        (
            edited(t, |d| d["ids"]["token_length"] = json!(20))?,
            "ids.token_length",
        ),
        (
            r#"{"version": 1, "id_prefix": "zq-", "#.to_string(),
            "settings.json",
        ),
        (
            edited(t, |d| d["author_default"] = json!(5))?,
            "author_default",
        ),
        (
            edited(t, |d| d["locks"]["ttl_seconds"] = json!("1800"))?,
            "locks.ttl_seconds",
        ),
        (
            edited(t, |d| {
                d["governance"]["duplicate_detection_mode"] = json!("sometimes")
            })?,
            "governance.duplicate_detection_mode",
        ),
    ])
}

#[test]
fn regression_issue_21_writes_refuse_invalid_settings() -> TestResult {
    let t = TestTracker::from_tree(&fixture("advisory"))?;
    let created = t.pm(&["create", "task", "Existing", "--json"])?;
    let id = created.json::<Value>()?["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for (text, key) in invalid_cases(&t)? {
        pm_engine::atomic::write(&settings_path(&t), text.as_bytes())?;
        let before = t.snapshot()?;
        for args in [
            vec!["create", "task", "Refused", "--json"],
            vec!["update", &id, "--title", "Renamed", "--json"],
            vec!["close", &id, "done", "--json"],
            vec!["comments", &id, "--add", "note", "--json"],
        ] {
            let run = t.pm(&args)?;
            assert_eq!(run.code, 2, "{key} {args:?}: {run:?}");
            let doc: Value = run.json()?;
            let error = &doc["error"];
            assert_eq!(error["code"], json!("settings_invalid"), "{key}: {doc}");
            let message = error["message"].as_str().unwrap_or_default();
            assert!(message.contains(key), "{key}: {message}");
            assert!(message.contains("expected"), "{key}: {message}");
            let hint = error["hint"].as_str().unwrap_or_default();
            assert!(hint.contains("settings.json"), "{key}: {hint}");
            assert_eq!(
                run.stderr,
                format!("error[settings_invalid]: {message}\n"),
                "{key}"
            );
        }
        let text_run = t.pm(&["create", "task", "Refused"])?;
        assert_eq!(text_run.code, 2);
        assert!(text_run.stdout.is_empty());
        assert!(
            text_run
                .stderr
                .starts_with("error[settings_invalid]: settings ")
                && text_run.stderr.contains(key)
                && text_run.stderr.contains("\nhint: "),
            "{key}: {}",
            text_run.stderr
        );
        assert_eq!(
            t.snapshot()?,
            before,
            "{key}: a refused write changed files"
        );
    }
    Ok(())
}

#[test]
fn regression_issue_21_reads_warn_naming_the_key() -> TestResult {
    let t = TestTracker::from_tree(&fixture("advisory"))?;
    let created = t.pm(&["create", "task", "Visible", "--json"])?;
    let id = created.json::<Value>()?["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for (text, key) in invalid_cases(&t)? {
        pm_engine::atomic::write(&settings_path(&t), text.as_bytes())?;
        let token = format!("settings_invalid:{key}");

        let list = t.pm(&["list", "--json"])?;
        assert_eq!(list.code, 0, "{key}: {list:?}");
        let doc: Value = list.json()?;
        assert_eq!(doc["warnings"], json!([token]), "{key}");
        assert!(list.stderr.is_empty(), "{key}: {}", list.stderr);
        // Only the invalid key falls back: the prefix still finds the item (except when
        // the file does not parse at all).
        if key != "settings.json" {
            assert_eq!(doc["items"][0]["id"], json!(id), "{key}");
        }

        let text_list = t.pm(&["list"])?;
        assert_eq!(text_list.code, 0);
        assert!(
            text_list
                .stderr
                .starts_with(&format!("warning:{token} (settings.json {key}")),
            "{key}: {}",
            text_list.stderr
        );
        assert_eq!(text_list.stderr.lines().count(), 1, "{key}");

        let get = t.pm(&["get", &id, "--json"])?;
        if key != "settings.json" {
            assert_eq!(get.code, 0, "{key}: {get:?}");
            assert_eq!(get.json::<Value>()?["warnings"], json!([token]), "{key}");
        }

        let health = t.pm(&["health", "--json"])?;
        let doc: Value = health.json()?;
        let check = doc["checks"]
            .as_array()
            .and_then(|checks| checks.iter().find(|c| c["name"] == "settings"))
            .cloned()
            .unwrap_or_default();
        assert_eq!(check["status"], json!("warn"), "{key}: {check}");
        assert_eq!(check["details"]["warnings"], json!([token]), "{key}");
        assert_eq!(doc["ok"], json!(false), "{key}");
        let finding = doc["findings"]
            .as_array()
            .and_then(|f| f.iter().find(|f| f["check"] == "settings"))
            .cloned()
            .unwrap_or_default();
        assert_eq!(finding["warning"], json!(token), "{key}");
        assert_eq!(finding["severity"], json!("gate_failing"), "{key}");
        let warnings = doc["warnings"].as_array().cloned().unwrap_or_default();
        assert_eq!(
            warnings.iter().filter(|w| **w == json!(token)).count(),
            1,
            "{key}: {warnings:?}"
        );
    }
    Ok(())
}

#[test]
fn valid_settings_give_no_settings_warning() -> TestResult {
    let t = TestTracker::from_tree(&fixture("strict"))?;
    let list = t.pm(&["list", "--json"])?;
    assert_eq!((list.code, list.stderr.as_str()), (0, ""));
    assert!(list.json::<Value>()?.get("warnings").is_none());
    let health = t.pm(&["health", "--json"])?;
    let doc: Value = health.json()?;
    let check = doc["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["name"] == "settings"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(check["status"], json!("ok"));
    Ok(())
}
