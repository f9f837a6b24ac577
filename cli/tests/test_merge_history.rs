//! The history side of `pm merge`, with real `git` in temp repositories: the history driver
//! merges two branches' tails into a chain that verifies; a merge made without it (git's
//! `union` driver, the item taken from one side) is repaired by `pm merge reconcile`; a dry run
//! writes nothing; `pm merge report` lists clone-local receipts. The write transcript's
//! reconcile steps give pm's bytes.

use std::path::Path;

use pm_engine::history::{read_stream, verify_chain};
use pm_engine::merge::receipts::{Receipt, ReceiptState, ReceiptStore};
use serde_json::Value;

use crate::common::TestTracker;
use crate::common::git_repo::git_at;
use crate::common::write_transcript::{transcript, transcript_pm};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Runs git in the `TestTracker` workspace `dir` with the hermetic environment (`HOME` being
/// the tracker's empty home next to it); fails on a non-zero exit unless `allow_fail`.
fn git_run(
    dir: &Path,
    args: &[&str],
    allow_fail: bool,
) -> Result<String, Box<dyn std::error::Error>> {
    let home = dir.with_file_name("home");
    let out = git_at(dir, &home, "2026-09-03T00:00:00.000Z", args)?;
    let text = format!("{}{}", out.stdout, out.stderr);
    if !allow_fail && out.code != 0 {
        return Err(format!("git {args:?}: {text}").into());
    }
    Ok(text)
}

fn git(dir: &Path, args: &[&str]) -> Result<String, Box<dyn std::error::Error>> {
    git_run(dir, args, false)
}

fn ok(t: &TestTracker, args: &[&str]) -> TestResult {
    let run = t.pm(args)?;
    assert_eq!(run.code, 0, "pm {args:?}: {}{}", run.stdout, run.stderr);
    Ok(())
}

/// A git repository with a tracker holding `pm-m1`, committed on `main`; `history_driver`
/// routes history streams to `pm merge driver history`, otherwise git's `union` driver
/// concatenates them (a merge made without pm's drivers).
fn repo(history_driver: bool) -> Result<TestTracker, Box<dyn std::error::Error>> {
    let t = TestTracker::new()?;
    let ws = t.workspace();
    git(&ws, &["init", "-q", "-b", "main"])?;
    ok(&t, &["init", "--defaults"])?;
    ok(
        &t,
        &[
            "create", "--type", "Task", "--title", "Original", "--id", "pm-m1",
        ],
    )?;
    let attributes = if history_driver {
        let pm = env!("CARGO_BIN_EXE_pm");
        git(
            &ws,
            &[
                "config",
                "merge.pm-history.driver",
                &format!("'{pm}' merge driver history %O %A %B"),
            ],
        )?;
        ".agents/pm/history/*.jsonl merge=pm-history\n"
    } else {
        ".agents/pm/history/*.jsonl merge=union\n"
    };
    pm_engine::atomic::write(&ws.join(".gitattributes"), attributes.as_bytes())?;
    git(&ws, &["add", "-A"])?;
    git(&ws, &["commit", "-q", "-m", "base"])?;
    Ok(t)
}

/// Branch `b` changes the title and adds a comment; `main` changes the priority and adds a
/// comment; then `main` merges `b`. The item file conflicts (both rewrite `updated_at`) and is
/// resolved by taking theirs, as a person without pm's item driver would.
fn diverge_and_merge(t: &TestTracker) -> Result<String, Box<dyn std::error::Error>> {
    let ws = t.workspace();
    git(&ws, &["checkout", "-q", "-b", "b"])?;
    ok(t, &["update", "pm-m1", "--title", "Renamed on b"])?;
    ok(t, &["comments", "pm-m1", "--add", "from b"])?;
    git(&ws, &["add", "-A"])?;
    git(&ws, &["commit", "-q", "-m", "b"])?;
    git(&ws, &["checkout", "-q", "main"])?;
    ok(t, &["update", "pm-m1", "--priority", "0"])?;
    ok(t, &["comments", "pm-m1", "--add", "from main"])?;
    git(&ws, &["add", "-A"])?;
    git(&ws, &["commit", "-q", "-m", "main"])?;
    let merge = git_run(&ws, &["merge", "--no-edit", "b"], true)?;
    let item = ".agents/pm/tasks/pm-m1.toon";
    git_run(&ws, &["checkout", "--theirs", "--", item], true)?;
    git(&ws, &["add", "-A"])?;
    git(&ws, &["commit", "-q", "--no-edit"])?;
    Ok(merge)
}

fn stream_verifies(t: &TestTracker) -> Result<bool, Box<dyn std::error::Error>> {
    let entries = read_stream(&t.root().join("history/pm-m1.jsonl"), "pm-m1")?.entries;
    Ok(verify_chain(&entries).is_ok())
}

/// `history --verify` and `validate --check-history-drift` both pass.
fn assert_clean(t: &TestTracker) -> TestResult {
    let run = t.pm(&["history", "pm-m1", "--verify", "--json"])?;
    let doc: Value = serde_json::from_str(&run.stdout)?;
    assert_eq!(doc["verification"]["ok"], true, "{doc}");
    assert_eq!(doc["verification"]["current_matches_latest"], true, "{doc}");
    let run = t.pm(&[
        "validate",
        "--check-history-drift",
        "--strict-exit",
        "--json",
    ])?;
    assert_eq!(run.code, 0, "{}", run.stdout);
    Ok(())
}

fn reconcile_json(t: &TestTracker, args: &[&str]) -> Result<Value, Box<dyn std::error::Error>> {
    let mut argv = vec!["merge", "reconcile"];
    argv.extend(args);
    argv.push("--json");
    let run = t.pm(&argv)?;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    Ok(serde_json::from_str(&run.stdout)?)
}

#[test]
fn the_history_driver_merges_both_tails_into_a_chain_that_verifies() -> TestResult {
    let t = repo(true)?;
    let merge = diverge_and_merge(&t)?;
    assert!(merge.contains("strategy: \"union_reanchor\""), "{merge}");
    assert!(
        !merge.contains("CONFLICT (content): Merge conflict in .agents/pm/history"),
        "{merge}"
    );
    // Every entry of both branches, once, in ts order, and the chain verifies.
    let entries = read_stream(&t.root().join("history/pm-m1.jsonl"), "pm-m1")?.entries;
    let ops: Vec<&str> = entries.iter().map(|e| e.op.as_str()).collect();
    assert_eq!(
        ops,
        ["create", "update", "comment_add", "update", "comment_add"]
    );
    let ts: Vec<&str> = entries.iter().map(|e| e.ts.as_str()).collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]), "{ts:?}");
    assert!(verify_chain(&entries).is_ok());
    // The item was taken from one side, so the replayed union differs from the file: one
    // reconcile entry records it, then everything verifies.
    let doc = reconcile_json(&t, &[])?;
    assert_eq!(doc["repair"]["streams"][0]["id"], "pm-m1", "{doc}");
    assert_eq!(doc["repair"]["streams"][0]["reconciled_with_item"], true);
    assert_clean(&t)?;
    let last = entries.len();
    let entries = read_stream(&t.root().join("history/pm-m1.jsonl"), "pm-m1")?.entries;
    assert_eq!(entries.len(), last + 1);
    assert_eq!(entries[last].op, "merge_reconcile");
    // A second reconcile finds nothing to do.
    let doc = reconcile_json(&t, &[])?;
    assert_eq!(doc["repair"]["streams"], serde_json::json!([]), "{doc}");
    Ok(())
}

#[test]
fn a_merge_without_the_drivers_is_repaired_by_reconcile_and_a_dry_run_writes_nothing() -> TestResult
{
    let t = repo(false)?;
    diverge_and_merge(&t)?;
    // git's union driver glued both tails together: the chain breaks.
    assert!(!stream_verifies(&t)?);
    let before = t.snapshot()?;
    let doc = reconcile_json(&t, &["--dry-run"])?;
    assert_eq!(doc["dry_run"], true);
    assert_eq!(doc["repair"]["drifted_streams"], 1, "{doc}");
    assert_eq!(doc["repair"]["streams"][0]["outcome"], "repaired");
    let changed: Vec<String> = t
        .snapshot()?
        .into_iter()
        .filter(|(k, v)| before.get(k) != Some(v) && !k.contains("runtime") && !k.contains("locks"))
        .map(|(k, _)| k)
        .collect();
    assert!(changed.is_empty(), "the dry run wrote {changed:?}");
    let doc = reconcile_json(&t, &["--message", "merged by hand"])?;
    assert_eq!(doc["dry_run"], false);
    assert_eq!(doc["validation"]["ok"], true, "{doc}");
    assert_clean(&t)?;
    let text = std::fs::read_to_string(t.root().join("history/pm-m1.jsonl"))?;
    let last: Value = serde_json::from_str(text.lines().last().ok_or("empty stream")?)?;
    assert_eq!(last["op"], "merge_reconcile");
    assert_eq!(last["message"], "merged by hand");
    assert!(last["context"]["reanchor"].is_object(), "{last}");
    // Earlier lines are never rewritten.
    let before_text = String::from_utf8(
        before
            .get(".agents/pm/history/pm-m1.jsonl")
            .ok_or("stream in snapshot")?
            .clone(),
    )?;
    assert!(text.starts_with(&before_text));
    Ok(())
}

fn receipt(id: &str, item: &str, lossy: bool) -> Receipt {
    let decisions = if lossy {
        serde_json::from_value(serde_json::json!([{
            "field": "title", "base": "Original", "ours": "a", "theirs": "b",
            "retained": "a", "discarded": "b"
        }]))
        .expect("decision")
    } else {
        Vec::new()
    };
    Receipt {
        version: 1,
        id: id.into(),
        item_path: format!(".agents/pm/tasks/{item}.toon"),
        item_id: item.into(),
        requested_preference: "ours".into(),
        conflict_resolution: "stable_value_order".into(),
        fields_from_theirs: vec!["title".into()],
        union_fields: Vec::new(),
        decisions,
        state: ReceiptState::Pending,
        created_at: "2026-09-02T01:52:00.000Z".into(),
        value_availability: "clone_local".into(),
        reconciled_at: None,
    }
}

#[test]
fn report_lists_pending_receipts_and_reconcile_records_them() -> TestResult {
    let t = repo(true)?;
    let store = ReceiptStore::locate(&t.root(), &t.workspace());
    assert!(store.clone_dir.is_some());
    store.write(&receipt("r-1", "pm-m1", false))?;
    let run = t.pm(&["merge", "report", "--json"])?;
    let doc: Value = serde_json::from_str(&run.stdout)?;
    assert_eq!(doc["count"], 1, "{doc}");
    assert_eq!(doc["receipts"][0]["value_availability"], "clone_local");
    let doc = reconcile_json(&t, &[])?;
    assert_eq!(doc["receipts"]["reconciled"], 1, "{doc}");
    assert_eq!(doc["repair"]["streams"][0]["reconciled_with_item"], false);
    let text = std::fs::read_to_string(t.root().join("history/pm-m1.jsonl"))?;
    let last: Value = serde_json::from_str(text.lines().last().ok_or("empty")?)?;
    assert_eq!(last["op"], "merge_reconcile");
    assert_eq!(last["patch"], serde_json::json!([]));
    assert_eq!(last["context"]["merge"]["receipts"][0]["receipt_id"], "r-1");
    assert_clean(&t)?;
    let run = t.pm(&["merge", "report", "--json"])?;
    let doc: Value = serde_json::from_str(&run.stdout)?;
    assert_eq!(doc["count"], 0);
    let run = t.pm(&["merge", "report", "--include-reconciled", "--json"])?;
    let doc: Value = serde_json::from_str(&run.stdout)?;
    assert_eq!(doc["receipts"][0]["state"], "reconciled", "{doc}");
    // A discarded value needs --force.
    store.write(&receipt("r-2", "pm-m1", true))?;
    let run = t.pm(&["merge", "reconcile", "--json"])?;
    assert_eq!(run.code, 4, "{}", run.stdout);
    assert!(
        run.stdout
            .contains("merge_reconcile_discards_require_acceptance"),
        "{}",
        run.stdout
    );
    reconcile_json(&t, &["--force"])?;
    assert_clean(&t)?;
    Ok(())
}

/// Every file of the tracker and the clone-local receipts (the transcript's snapshot view).
fn tree(
    ws: &Path,
) -> Result<std::collections::BTreeMap<String, Vec<u8>>, Box<dyn std::error::Error>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![ws.join(".agents/pm"), ws.join(".git/pm-merge-receipts")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let rel = path.strip_prefix(ws)?.to_string_lossy().into_owned();
            if rel.contains("runtime") || rel.contains("locks") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(rel, std::fs::read(&path)?);
            }
        }
    }
    Ok(out)
}

/// The parts of a reconcile document pm's bytes are matched on: everything but the nested
/// validation (whose storage_integrity git analysis is pm-cli's) and the repair report's
/// `preserved_*` fields (ours; pm-cli always reports them empty).
fn comparable(mut doc: Value) -> Value {
    if let Some(map) = doc.as_object_mut() {
        map.remove("validation");
    }
    if let Some(streams) = doc["repair"]["streams"].as_array_mut() {
        for s in streams {
            if let Some(r) = s.get_mut("reconciliation").and_then(Value::as_object_mut) {
                r.retain(|k, _| !k.starts_with("preserved") || k == "preserved_field_count");
                r.insert("preserved_field_count".into(), Value::from(0));
            }
        }
    }
    doc
}

/// One transcript step: (minute, argv, golden step name).
type Step = (u32, &'static [&'static str], &'static str);

#[test]
fn reconcile_and_report_match_pm_on_the_write_transcript() -> TestResult {
    let golden = transcript()?;
    let snap = |s: &str| golden.root.join("snapshots").join(s);
    let stdout = |s: &str| std::fs::read_to_string(golden.root.join("stdout").join(s));
    // (start snapshot, [(minute, argv, golden step)], end snapshot)
    let runs: [(&str, &[Step], &str); 2] = [
        (
            "114-merge-report",
            &[
                (114, &["merge", "report"], "114-merge-report"),
                (
                    115,
                    &["merge", "reconcile", "--dry-run"],
                    "115-merge-reconcile",
                ),
                (116, &["merge", "reconcile"], "116-merge-reconcile"),
            ],
            "116-merge-reconcile",
        ),
        (
            "126-merge-report",
            &[
                (126, &["merge", "report"], "126-merge-report"),
                (
                    129,
                    &["merge", "reconcile", "--force"],
                    "129-merge-reconcile",
                ),
            ],
            "129-merge-reconcile",
        ),
    ];
    for (start, steps, end) in runs {
        for json in [false, true] {
            let t = TestTracker::from_tree(&snap(start))?;
            let ws = t.workspace();
            for (minute, argv, step) in steps {
                let mut argv = argv.to_vec();
                if json {
                    argv.push("--json");
                }
                let (code, out) = transcript_pm(&ws, *minute, &argv)?;
                assert_eq!(code, 0, "{step}: {out}");
                let expected = if json {
                    stdout(&format!("json/{step}.json"))?
                } else {
                    stdout(&format!("toon/{step}.toon"))?
                };
                if step.ends_with("report") {
                    assert_eq!(out, expected, "{step}");
                } else if json {
                    let ours: Value = serde_json::from_str(&out)?;
                    let pm: Value = serde_json::from_str(&expected)?;
                    assert_eq!(comparable(ours), comparable(pm), "{step}");
                }
            }
            assert_eq!(tree(&ws)?, tree(&snap(end))?, "tree after {end}");
        }
    }
    Ok(())
}

#[test]
fn health_requires_merge_drivers_only_when_asked_and_validate_notes_them() -> TestResult {
    let t = TestTracker::new()?;
    git(&t.workspace(), &["init", "-q", "-b", "main"])?;
    ok(&t, &["init", "--defaults", "--no-merge-fence"])?;
    let health = |args: &[&str]| -> Result<Value, Box<dyn std::error::Error>> {
        let mut argv = vec!["health"];
        argv.extend(args);
        argv.push("--json");
        Ok(serde_json::from_str(&t.pm(&argv)?.stdout)?)
    };
    let advisory = health(&[])?;
    let warnings = advisory["warnings"].to_string();
    assert!(
        warnings.contains("merge_driver_configuration_missing:5"),
        "{advisory}"
    );
    assert!(
        !advisory["failed_because"]
            .to_string()
            .contains("merge_driver")
    );
    let integrity = |doc: &Value| {
        doc["checks"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["name"] == "integrity"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(
        integrity(&advisory)["details"]["merge_driver_configuration"]["required"],
        false
    );
    let required = health(&["--require-merge-drivers"])?;
    assert_eq!(required["ok"], false, "{required}");
    assert!(
        required["failed_because"]
            .to_string()
            .contains("merge_driver_configuration_missing:5")
    );
    let run = t.pm(&[
        "health",
        "--require-merge-drivers",
        "--strict-exit",
        "--json",
    ])?;
    assert_eq!(run.code, 1);
    // validate notes the missing drivers without warning about them.
    let run = t.pm(&["validate", "--check-storage-integrity", "--json"])?;
    let doc: Value = serde_json::from_str(&run.stdout)?;
    let storage = &doc["checks"][0]["details"];
    assert_eq!(
        storage["merge_driver_configuration"]["status"], "missing",
        "{doc}"
    );
    assert_eq!(doc["has_warnings"], false, "{doc}");
    // One driver of five is a drifted configuration: blocking in health, a warning in validate.
    let pm = env!("CARGO_BIN_EXE_pm");
    let driver = format!("'{pm}' merge driver history %O %A %B");
    git(
        &t.workspace(),
        &["config", "merge.pm-history.driver", &driver],
    )?;
    let drift = health(&[])?;
    assert!(
        drift["failed_because"]
            .to_string()
            .contains("merge_driver_configuration_drift:4"),
        "{drift}"
    );
    let run = t.pm(&["validate", "--check-storage-integrity", "--json"])?;
    assert!(
        run.stdout
            .contains("validate_merge_driver_configuration_drift:4")
    );
    // `pm merge install` writes exactly the configuration health requires.
    ok(&t, &["merge", "install"])?;
    let installed = health(&["--require-merge-drivers"])?;
    assert!(
        !installed["failed_because"]
            .to_string()
            .contains("merge_driver"),
        "{installed}"
    );
    Ok(())
}
