//! Mutation commands end to end: receipts, history lines, `--expect-hash`, and every refusal the
//! issue lists (each must exit with pm's code and leave every tracker byte unchanged).

use serde_json::Value;

use crate::common::{AUTHOR, ErrorEnvelope, TestTracker};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A tracker with two tasks: pm-a (claimed by another author, in progress) and pm-b (closed).
fn seeded() -> Result<TestTracker, Box<dyn std::error::Error>> {
    let t = TestTracker::new()?;
    for args in [
        &["init", "--defaults"][..],
        &["create", "task", "Alpha", "--id", "pm-a"],
        &["create", "task", "Beta", "--id", "pm-b"],
        &["claim", "pm-a", "--author", "someone-else"],
        &["close", "pm-b", "done"],
    ] {
        let run = t.pm(args)?;
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    }
    Ok(t)
}

fn history(t: &TestTracker, id: &str) -> Result<Vec<Value>, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(t.root().join(format!("history/{id}.jsonl")))?;
    Ok(text
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?)
}

/// Runs a refused command in text and JSON mode and checks code, exit and unchanged bytes.
fn refuses(t: &TestTracker, args: &[&str], code: &str, exit: i32) -> TestResult {
    let before = t.snapshot()?;
    let run = t.pm(args)?;
    assert_eq!(run.code, exit, "{args:?}: {}", run.stderr);
    assert!(
        run.stderr.starts_with(&format!("error[{code}]")),
        "{args:?}: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains("hint: "),
        "{args:?} has no recovery hint"
    );
    let mut json_args = vec!["--json"];
    json_args.extend_from_slice(args);
    let run = t.pm(&json_args)?;
    assert_eq!(run.code, exit, "{args:?}");
    let env: ErrorEnvelope = run.json()?;
    assert_eq!(env.error.code, code, "{args:?}");
    assert!(!env.error.changed, "{args:?}");
    assert_eq!(t.snapshot()?, before, "{args:?} changed the tracker");
    Ok(())
}

#[test]
fn bad_input_refuses_without_writing() -> TestResult {
    let t = seeded()?;
    refuses(
        &t,
        &["update", "pm-a", "--status", "doing"],
        "invalid_argument_value",
        2,
    )?;
    refuses(&t, &["create", "taks", "X"], "invalid_argument_value", 2)?;
    refuses(
        &t,
        &["update", "pm-a", "--priority", "9"],
        "invalid_argument_value",
        2,
    )?;
    refuses(
        &t,
        &["update", "pm-a", "--deadline", "someday"],
        "invalid_argument_value",
        2,
    )?;
    refuses(
        &t,
        &["update", "pm-a", "--stauts", "open"],
        "unknown_option",
        2,
    )?;
    refuses(&t, &["update", "pm-a", "--bogus"], "unknown_option", 2)?;
    refuses(
        &t,
        &["create", "task", "X", "--id", "none"],
        "invalid_item_id",
        2,
    )?;
    refuses(
        &t,
        &["create", "task", "X", "--id", "null"],
        "invalid_item_id",
        2,
    )?;
    refuses(
        &t,
        &["update", "null", "--priority", "1"],
        "invalid_item_id",
        2,
    )?;
    refuses(&t, &["close", "pm-b", "again"], "item_already_closed", 4)?;
    refuses(&t, &["claim", "pm-a"], "already_claimed_by", 4)?;
    refuses(
        &t,
        &["create", "task", "X", "--dep", "id=pm-zz,kind=blocks"],
        "dependency_target_unresolved",
        3,
    )?;
    refuses(
        &t,
        &["update", "pm-b", "--dep", "pm-zz"],
        "dependency_target_unresolved",
        3,
    )?;
    refuses(
        &t,
        &["deps", "pm-b", "--add", "pm-zz"],
        "dependency_target_unresolved",
        3,
    )?;
    refuses(
        &t,
        &["create", "task", "X", "--parent", "pm-zz"],
        "dependency_target_unresolved",
        3,
    )?;
    refuses(
        &t,
        &["create", "task", "Dup", "--id", "pm-a"],
        "item_id_collision",
        4,
    )?;
    refuses(
        &t,
        &["update", "pm-zz", "--priority", "1"],
        "item_not_found",
        3,
    )?;
    refuses(&t, &["item", "reopen", "pm-a", "why"], "item_not_closed", 4)?;
    refuses(&t, &["release", "pm-b"], "item_not_claimed", 4)?;
    refuses(
        &t,
        &[
            "--expect-hash",
            &"0".repeat(64),
            "update",
            "pm-b",
            "--priority",
            "1",
        ],
        "item_revision_conflict",
        4,
    )?;
    Ok(())
}

#[test]
fn held_lock_past_the_wait_budget_is_a_lock_conflict() -> TestResult {
    let t = seeded()?;
    let lock = t.root().join("locks/pm-b.lock");
    let body = format!(
        "{{\n  \"id\": \"pm-b\",\n  \"pid\": {},\n  \"owner\": \"other\",\n  \"created_at\": \"2026-09-01T00:00:30.000Z\",\n  \"ttl_seconds\": 1800\n}}\n",
        std::process::id()
    );
    pm_engine::atomic::write(&lock, body.as_bytes())?;
    let before = t.snapshot()?;
    let run = t.pm_in(
        &t.workspace(),
        &["--json", "update", "pm-b", "--priority", "1"],
        &[("PM_LOCK_WAIT_MS", "0")],
    )?;
    assert_eq!(run.code, 4);
    let env: ErrorEnvelope = run.json()?;
    assert_eq!(env.error.code, "lock_conflict");
    assert!(!env.error.changed);
    assert!(env.error.hint.is_some_and(|h| h.contains("pm-b.lock")));
    assert_eq!(t.snapshot()?, before);
    Ok(())
}

#[test]
fn expect_hash_guards_the_write_and_reports_changes_since() -> TestResult {
    let t = seeded()?;
    let first = history(&t, "pm-b")?;
    let created = first[0]["after_hash"].as_str().ok_or("hash")?.to_string();
    let current = first
        .last()
        .and_then(|e| e["after_hash"].as_str())
        .ok_or("hash")?
        .to_string();
    let run = t.pm(&[
        "--expect-hash",
        &format!("pm-b={current}"),
        "update",
        "pm-b",
        "--priority",
        "1",
    ])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = t.pm(&[
        "--json",
        "--expect-hash",
        &created,
        "update",
        "pm-b",
        "--priority",
        "3",
    ])?;
    assert_eq!(run.code, 4);
    let env: ErrorEnvelope = run.json()?;
    let ctx = env.error.context.ok_or("context")?;
    assert_eq!(ctx["expected_revision"], created.as_str());
    assert_eq!(ctx["expected_revision_recorded"], true);
    let changes = ctx["details"]["changes_since"]
        .as_array()
        .ok_or("changes")?;
    let ops: Vec<&str> = changes.iter().filter_map(|c| c["op"].as_str()).collect();
    assert_eq!(ops, ["update", "close"]);
    assert_eq!(
        changes[0]["fields"],
        serde_json::json!(["updated_at", "priority"])
    );
    // A guard for another item does not bind this write.
    let run = t.pm(&[
        "--expect-hash",
        &format!("pm-a={}", "0".repeat(64)),
        "update",
        "pm-b",
        "--priority",
        "2",
    ])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    Ok(())
}

#[test]
fn receipts_and_history_lines() -> TestResult {
    let t = seeded()?;
    let run = t.pm(&[
        "--json",
        "update",
        "pm-b",
        "--priority",
        "1",
        "--full-changed-fields",
    ])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let full: Value = run.json()?;
    assert_eq!(full["changed_fields"], serde_json::json!(["priority"]));
    assert_eq!(full["item"]["priority"], 1);
    let run = t.pm(&[
        "--output-format",
        "json",
        "update",
        "pm-b",
        "--priority",
        "2",
        "--id-only",
    ])?;
    assert_eq!(
        run.stdout,
        "{\n  \"id\": \"pm-b\",\n  \"status\": \"closed\"\n}\n"
    );
    let run = t.pm(&["claim", "pm-a", "--force"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("previous_assignee: \"someone-else\"\nforced: true"),
        "{}",
        run.stdout
    );
    let run = t.pm(&["update", "pm-a", "--status", "in_progress"])?;
    assert_eq!(run.stderr, "");
    let run = t.pm(&["comments", "pm-a", "--add", "first"])?;
    assert_eq!(run.code, 0);
    let run = t.pm(&["--json", "comments", "pm-a", "--add", "second"])?;
    let out: Value = run.json()?;
    assert_eq!(out["total_count"], 2);
    assert_eq!(out["has_more"], true);
    assert_eq!(out["comments"][0]["text"], "second");
    assert_eq!(
        out["omission_receipt"]["omitted_field_groups"][0]["name"],
        "comments_history"
    );
    let lines = history(&t, "pm-a")?;
    let last = lines.last().ok_or("no history")?;
    assert_eq!(last["op"], "comment_add");
    assert_eq!(last["author"], AUTHOR);
    assert_eq!(last["author_source"], "asserted");
    assert_eq!(last["item_hash_version"], 2);
    assert!(last.get("agent_provenance").is_none());
    let claim = &lines[1];
    assert_eq!(claim["agent_provenance"]["role"]["value"], "implementer");
    // Type change moves the file; history stays under the id.
    let run = t.pm(&["update", "pm-a", "--type", "Chore"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(t.root().join("chores/pm-a.toon").is_file());
    assert!(!t.root().join("tasks/pm-a.toon").exists());
    Ok(())
}

#[test]
fn files_docs_deps_and_restore() -> TestResult {
    let t = seeded()?;
    let abs = t.workspace().join("src/lib.rs").display().to_string();
    let run = t.pm(&[
        "--json",
        "files",
        "pm-b",
        "--add",
        &abs,
        "--add",
        "path=./docs/../README.md,note=a, b",
    ])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out: Value = run.json()?;
    assert_eq!(out["count"], 2);
    let paths: Vec<&str> = out["files"]
        .as_array()
        .ok_or("files")?
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    // Sorted by scope then path (pm-cli's order; `--append-stable` keeps insertion order).
    assert_eq!(paths, ["README.md", "src/lib.rs"]);
    let run = t.pm(&["files", "pm-b", "--remove", "README.md"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = t.pm(&["deps", "pm-b", "--add", "id=pm-a,kind=blocks"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = t.pm(&["deps", "pm-b", "--remove", "pm-a"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = t.pm(&["--json", "delete", "pm-b"])?;
    let out: Value = run.json()?;
    assert_eq!(out["previous_status"], "closed");
    let run = t.pm(&["--json", "restore", "pm-b", "--at", "2"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out: Value = run.json()?;
    assert_eq!(out["status"], "closed");
    let lines = history(&t, "pm-b")?;
    for pair in lines.windows(2) {
        assert_eq!(pair[0]["after_hash"], pair[1]["before_hash"]);
    }
    Ok(())
}
