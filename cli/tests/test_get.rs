//! `pm get`: byte-equal to pm-cli's goldens (fx-100, mutation transcript steps 33–34, the real
//! tracker) apart from our added `item_hash` line, which must equal the last `after_hash`;
//! depths, aliases and refusals.

use std::error::Error;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{Run, TestTracker};

type TestResult = Result<(), Box<dyn Error>>;

/// The environment of the `reads/` goldens (INDEX.json), besides `PM_PATH`.
pub const READS_ENV: [(&str, &str); 4] = [
    ("PM_CLOCK", "2026-09-01T00:00:00.000Z"),
    ("PM_CLOCK_TICK_MS", "1"),
    ("PM_SEED", "anchor-golden"),
    ("PM_AUTHOR", "anchor-golden"),
];

/// Splits our `item_hash` line (TOON `item_hash: "…"`, JSON `  "item_hash": "…",`) out of
/// `stdout`; returns the rest and the hash.
fn split_item_hash(stdout: &str) -> Result<(String, String), Box<dyn Error>> {
    let mut rest = String::new();
    let mut hash = None;
    for line in stdout.split_inclusive('\n') {
        let value = line
            .strip_prefix("item_hash: \"")
            .or_else(|| line.strip_prefix("  \"item_hash\": \""));
        match value {
            Some(v) if hash.is_none() => hash = Some(v.chars().take(64).collect::<String>()),
            _ => rest.push_str(line),
        }
    }
    Ok((rest, hash.ok_or("no item_hash line")?))
}

/// Returns the `after_hash` of the last entry of `history/<id>.jsonl` under `tracker_root`.
pub fn last_after_hash(tracker_root: &Path, id: &str) -> Result<String, Box<dyn Error>> {
    let text = std::fs::read_to_string(tracker_root.join(format!("history/{id}.jsonl")))?;
    let last = text
        .lines()
        .rfind(|l| !l.trim().is_empty())
        .ok_or("empty stream")?;
    let entry: Value = serde_json::from_str(last)?;
    Ok(entry["after_hash"]
        .as_str()
        .ok_or("no after_hash")?
        .to_string())
}

/// Runs `get` in TOON and JSON and compares both with the goldens `<golden>.{toon,json}`.
fn assert_matches_golden(
    run: impl Fn(&[&str]) -> Result<Run, Box<dyn Error>>,
    id: &str,
    golden: &Path,
    tracker_root: &Path,
) -> TestResult {
    for (extra, ext) in [(None, "toon"), (Some("--json"), "json")] {
        let mut args = vec!["get", id];
        args.extend(extra);
        let out = run(&args)?;
        assert_eq!((out.stderr.as_str(), out.code), ("", 0), "{ext}");
        let (rest, hash) = split_item_hash(&out.stdout)?;
        let expected = std::fs::read_to_string(golden.with_extension(ext))?;
        assert_eq!(rest, expected, "{} ({ext})", golden.display());
        assert_eq!(hash, last_after_hash(tracker_root, id)?, "{ext}");
    }
    Ok(())
}

#[test]
fn fx100_get_matches_the_golden() -> TestResult {
    let t = TestTracker::fx100()?;
    let root = t.workspace().join(".agents/pm");
    let pm_path = root.display().to_string();
    let mut env = READS_ENV.to_vec();
    env.push(("PM_PATH", &pm_path));
    let golden = pm_testkit::shared_file("golden/reads/fx-100/get.toon");
    assert_matches_golden(
        |args| t.pm_in(&t.workspace(), args, &env),
        "pm-s0000000",
        &golden,
        &root,
    )
}

#[test]
fn self_tracker_get_matches_the_golden() -> TestResult {
    let corpus = pm_testkit::shared_corpus()?;
    let t = TestTracker::new()?;
    let root = corpus.join(".agents/pm");
    let pm_path = root.display().to_string();
    let mut env = READS_ENV.to_vec();
    env.push(("PM_PATH", &pm_path));
    let golden = pm_testkit::shared_file("golden/reads/self-tracker/get.toon");
    assert_matches_golden(
        |args| t.pm_in(&corpus, args, &env),
        "pm-mi2x",
        &golden,
        &root,
    )
}

/// Returns the transcript extraction (read-only) and the directory of snapshot `name`.
pub fn transcript_snapshot(name: &str) -> Result<(PathBuf, PathBuf), Box<dyn Error>> {
    let base = pm_testkit::shared_extraction("golden/mutation-transcript.tar.gz")?;
    let transcript = base.join("mutation-transcript");
    let snapshot = transcript.join("snapshots").join(name);
    Ok((transcript, snapshot))
}

/// The environment of transcript step `step` (commands.json: pinned clock at minute `step`).
pub fn transcript_env(step: u32) -> Vec<(&'static str, String)> {
    vec![
        ("PM_PATH", ".agents/pm".into()),
        ("PM_CLOCK", format!("2026-09-01T00:{step:02}:00.000Z")),
        ("PM_CLOCK_TICK_MS", "0".into()),
        ("PM_SEED", "golden-transcript".into()),
        ("PM_AUTHOR", "golden-author".into()),
    ]
}

#[test]
fn transcript_gets_match_the_golden() -> TestResult {
    for (step, before, name, id) in [
        (33, "32-update", "33-get", "pm-t001"),
        (34, "33-get", "34-get", "pm-i001"),
    ] {
        let (transcript, snapshot) = transcript_snapshot(before)?;
        let t = TestTracker::from_tree(&snapshot)?;
        let env = transcript_env(step);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let golden = transcript.join(format!("stdout/toon/{name}.toon"));
        let json_golden = transcript.join(format!("stdout/json/{name}.json"));
        let root = t.workspace().join(".agents/pm");
        for (extra, path) in [(None, &golden), (Some("--json"), &json_golden)] {
            let mut args = vec!["get", id];
            args.extend(extra);
            let out = t.pm_in(&t.workspace(), &args, &env)?;
            assert_eq!((out.stderr.as_str(), out.code), ("", 0), "{name}");
            let (rest, hash) = split_item_hash(&out.stdout)?;
            assert_eq!(rest, std::fs::read_to_string(path)?, "{}", path.display());
            assert_eq!(hash, last_after_hash(&root, id)?);
        }
    }
    Ok(())
}

fn get_json(t: &TestTracker, args: &[&str]) -> Result<Value, Box<dyn Error>> {
    let run = t.pm(args)?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0), "{args:?}");
    Ok(serde_json::from_str(&run.stdout)?)
}

fn keys(value: &Value) -> Vec<String> {
    value
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn depths_shape_the_envelope() -> TestResult {
    let t = TestTracker::sample()?;
    let standard = get_json(&t, &["get", "gd-f1", "--json"])?;
    assert_eq!(
        keys(&standard),
        [
            "item",
            "item_hash",
            "linked",
            "claim_state",
            "children",
            "omission_receipt"
        ]
    );
    assert_eq!(standard["children"]["count"], 3);
    assert_eq!(standard["children"]["sample_limit"], 0);
    assert_eq!(standard["claim_state"]["assignee"], "field-tech");

    let brief = get_json(&t, &["get", "gd-f1", "--depth", "brief", "--json"])?;
    assert_eq!(keys(&brief), ["item", "item_hash", "omission_receipt"]);
    assert!(brief["item"].get("body").is_none());
    let omitted: Vec<&str> = brief["omission_receipt"]["omitted_field_groups"]
        .as_array()
        .ok_or("groups")?
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    assert_eq!(omitted, ["children", "claim_state"]);

    let deep = get_json(&t, &["get", "gd-f1", "--full", "--json"])?;
    assert_eq!(deep["item"]["comments"], Value::Array(Vec::new()));
    assert_eq!(deep["children"]["sample_limit"], 20);
    let sample: Vec<&str> = deep["children"]["sample"]
        .as_array()
        .ok_or("sample")?
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert_eq!(sample, ["gd-i1", "gd-t1", "gd-t2"]);
    assert_eq!(
        deep,
        get_json(&t, &["get", "gd-f1", "--depth", "full", "--json"])?
    );
    assert_eq!(deep["item_hash"], standard["item_hash"]);
    Ok(())
}

#[test]
fn claim_history_and_schedule_facets() -> TestResult {
    let t = TestTracker::sample()?;
    let task = get_json(&t, &["get", "t2", "--json"])?;
    assert_eq!(
        task["claim_state"],
        serde_json::json!({
            "claimed": true,
            "assignee": "field-tech",
            "last_claim": {"ts": "2026-03-05T09:00:00.000Z", "author": "field-tech", "message": "Back on it"},
            "last_release": {"ts": "2026-03-04T17:00:00.000Z", "author": "field-tech", "message": null}
        })
    );
    assert!(task.get("children").is_none());
    let milestone = get_json(&t, &["get", "gd-m1", "--json"])?;
    assert_eq!(
        milestone["schedule"]["deadline"],
        "2026-04-22T00:00:00.000Z"
    );
    assert_eq!(milestone["children"]["count"], 0);
    assert_eq!(milestone["children"]["continuation"], Value::Null);
    Ok(())
}

#[test]
fn aliases_print_the_same_result() -> TestResult {
    let t = TestTracker::sample()?;
    let get = t.pm(&["get", "gd-i1"])?;
    assert_eq!((get.stderr.as_str(), get.code), ("", 0));
    assert!(
        get.stdout.starts_with("item:\n  id: \"gd-i1\"\n"),
        "{}",
        get.stdout
    );
    for alias in ["fetch", "read", "show", "view"] {
        let run = t.pm(&[alias, "gd-i1"])?;
        assert_eq!(
            (run.stdout.as_str(), run.stderr.as_str(), run.code),
            (get.stdout.as_str(), "", 0),
            "{alias}"
        );
    }
    Ok(())
}

#[test]
fn refusals() -> TestResult {
    let t = TestTracker::sample()?;
    let run = t.pm(&["get", "gd-nope"])?;
    assert_eq!((run.stdout.as_str(), run.code), ("", 3));
    assert!(
        run.stderr
            .starts_with("error[item_not_found]: Item gd-nope not found\n"),
        "{}",
        run.stderr
    );

    let run = t.pm(&["get", "gd-i1", "--depth", "wide"])?;
    assert_eq!((run.stdout.as_str(), run.code), ("", 2));
    assert!(
        run.stderr.starts_with("error[invalid_argument_value]: "),
        "{}",
        run.stderr
    );

    let run = t.pm(&["get", "gd-i1", "--depth", "deep", "--full"])?;
    assert_eq!((run.stdout.as_str(), run.code), ("", 2));
    assert!(
        run.stderr.starts_with("error[conflicting_arguments]: "),
        "{}",
        run.stderr
    );

    let run = t.pm(&["get", "gd-i1", "--fields", "x"])?;
    assert_eq!((run.stdout.as_str(), run.code), ("", 2));
    assert!(
        run.stderr
            .starts_with("error[command_failed]: Unknown --fields selector(s) for get: x."),
        "{}",
        run.stderr
    );
    let run = t.pm(&["get", "gd-i1", "--at", "x"])?;
    assert_eq!((run.stdout.as_str(), run.code), ("", 2));
    assert!(
        run.stderr.starts_with("error[invalid_argument_value]: "),
        "{}",
        run.stderr
    );

    let run = t.pm(&["get", "gd-nope", "--json"])?;
    assert_eq!(run.code, 3);
    assert_eq!(
        run.stderr,
        "error[item_not_found]: Item gd-nope not found\n"
    );
    let envelope: crate::common::ErrorEnvelope = run.json()?;
    assert_eq!(envelope.error.code, "item_not_found");
    Ok(())
}

/// `--at` replays history: after an update, `--at 1` (and `--at <instant before it>`) print
/// what `get` printed before it, plus the reconstruction keys; bad points are refused.
#[test]
fn at_replays_history_to_a_version_or_instant() -> TestResult {
    let t = TestTracker::fx100()?;
    let get = |args: &[&str]| -> Result<Value, Box<dyn Error>> {
        let mut argv = vec!["get", "pm-s0000000", "--json"];
        argv.extend(args);
        let out = t.pm(&argv)?;
        assert_eq!(out.code, 0, "{args:?}: {}", out.stdout);
        out.json()
    };
    let before = get(&[])?;
    let out = t.pm(&["update", "pm-s0000000", "--title", "Renamed"])?;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(get(&[])?["item"]["title"], "Renamed");
    for point in ["1", "2026-06-01T00:00:00.000Z"] {
        let mut at = get(&["--at", point])?;
        let object = at.as_object_mut().ok_or("object")?;
        assert_eq!(
            object.shift_remove("reconstructed"),
            Some(Value::Bool(true))
        );
        assert_eq!(object.shift_remove("as_of_version"), Some(Value::from(1)));
        assert_eq!(
            object.shift_remove("as_of_timestamp"),
            Some(Value::from("2026-01-01T00:00:00.000Z"))
        );
        assert_eq!(at, before, "--at {point}");
    }
    assert_eq!(get(&["--at", "2"])?["item"]["title"], "Renamed");
    for bad in ["0", "9", "soon"] {
        let out = t.pm(&["get", "pm-s0000000", "--at", bad])?;
        assert_eq!(out.code, 2, "--at {bad}");
    }
    Ok(())
}

#[test]
fn get_for_inspect_attaches_the_intent_receipt_and_enforces_its_budget() -> TestResult {
    let t = TestTracker::fx100()?;
    let run = t.pm(&["get", "pm-s0000000", "--for", "inspect", "--json"])?;
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{}", run.stdout);
    let v: Value = run.json()?;
    let receipt = &v["context_intent"];
    assert_eq!(receipt["command"], "get");
    assert_eq!(receipt["intent"], "inspect");
    assert_eq!(receipt["declared_token_budget"], 3200);
    assert_eq!(receipt["degradation"], "standard_item");
    assert_eq!(receipt["within_budget"], true);
    assert_eq!(receipt["estimated_tokens"], run.stdout.len().div_ceil(4));
    assert!(
        v["item"]["body"].is_string(),
        "inspect keeps the standard depth"
    );

    // A budget too small for the item leaves the receipt and a retry command (exit 2).
    let run = t.pm(&[
        "get",
        "pm-s0000000",
        "--for",
        "inspect",
        "--token-budget",
        "256",
        "--json",
    ])?;
    assert_eq!(run.code, 2, "{}", run.stdout);
    let v: Value = run.json()?;
    assert_eq!(v["context_intent"]["degradation"], "budget_receipt_only");
    assert!(
        v["budget_exceeded"]["restore_with"]
            .as_str()
            .is_some_and(|s| s.starts_with("pm get pm-s0000000 --for inspect --token-budget "))
    );

    let run = t.pm(&["get", "pm-s0000000", "--for", "triage", "--json"])?;
    assert_eq!(run.code, 2);
    assert!(
        run.stdout.contains("unknown_context_intent"),
        "{}",
        run.stdout
    );
    let run = t.pm(&["get", "pm-s0000000", "--token-budget", "900", "--json"])?;
    assert_eq!(run.code, 2);
    assert!(
        run.stdout.contains("missing_required_option"),
        "{}",
        run.stdout
    );
    Ok(())
}
