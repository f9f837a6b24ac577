//! The next ordinary write repairs what it finds: a hand edit of an item file, a torn last
//! history line, and a conflicting git merge resolved by hand (real `git` in a temp repository).
//! After one `comments --add` each stream verifies and validate finds no drift; streams that
//! readers reject are refused, and `history-repair` reports and fixes what it can.

use std::path::Path;

use pm_engine::history::{read_stream, verify_chain};
use serde_json::Value;

use crate::common::TestTracker;
use crate::common::git_repo::git_at;

/// The pinned clock of git's commits.
const CLOCK: &str = "2026-09-03T00:00:00.000Z";

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn assert_verifies(t: &TestTracker, id: &str) -> TestResult {
    let entries = read_stream(&t.root().join(format!("history/{id}.jsonl")), id)?.entries;
    let report = verify_chain(&entries);
    assert!(report.is_ok(), "{id}: {:?}", report.issues);
    let run = t.pm(&[
        "validate",
        "--check-history-drift",
        "--strict-exit",
        "--json",
    ])?;
    assert_eq!(run.code, 0, "{}", run.stdout);
    let run = t.pm(&["history", id, "--verify", "--json"])?;
    let doc: Value = serde_json::from_str(&run.stdout)?;
    assert_eq!(doc["verification"]["ok"], true, "{doc}");
    Ok(())
}

fn tracker_with(id: &str) -> Result<TestTracker, Box<dyn std::error::Error>> {
    let t = TestTracker::new()?;
    assert_eq!(t.pm(&["init", "--defaults"])?.code, 0);
    let run = t.pm(&[
        "create", "--type", "Task", "--title", "Original", "--id", id,
    ])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    Ok(t)
}

#[test]
fn a_hand_edit_then_a_comment_verifies() -> TestResult {
    let t = tracker_with("pm-h1")?;
    let path = t.root().join("tasks/pm-h1.toon");
    let text = std::fs::read_to_string(&path)?.replace("title: Original", "title: Edited by hand");
    pm_engine::atomic::write(&path, text.as_bytes())?;
    let run = t.pm(&["comments", "pm-h1", "--add", "after the edit"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("warning:history_reconciled:pm-h1:file_ahead_of_history"),
        "{}",
        run.stderr
    );
    assert_verifies(&t, "pm-h1")?;
    let history = std::fs::read_to_string(t.root().join("history/pm-h1.jsonl"))?;
    let repair: Value = serde_json::from_str(history.lines().nth(1).ok_or("line 2")?)?;
    assert_eq!(repair["op"], "history_repair");
    assert_eq!(repair["patch"][0]["value"], "Edited by hand");
    Ok(())
}

#[test]
fn a_torn_tail_then_a_comment_verifies() -> TestResult {
    let t = tracker_with("pm-h2")?;
    let stream = t.root().join("history/pm-h2.jsonl");
    let mut bytes = std::fs::read(&stream)?;
    bytes.extend_from_slice(br#"{"ts":"2026-09-01T00:00:09.000Z","author":"x","op":"comm"#);
    pm_engine::atomic::write(&stream, &bytes)?;
    let run = t.pm(&["comments", "pm-h2", "--add", "after the tear"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("warning:history_torn_tail_removed:pm-h2:line_2"),
        "{}",
        run.stderr
    );
    let text = std::fs::read_to_string(&stream)?;
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        !text.contains(r#""op":"comm{"#),
        "the new line is not glued to the fragment"
    );
    assert_verifies(&t, "pm-h2")
}

#[test]
fn streams_readers_reject_refuse_mutations_and_name_history_repair() -> TestResult {
    let t = tracker_with("pm-h3")?;
    let stream = t.root().join("history/pm-h3.jsonl");
    let good = std::fs::read_to_string(&stream)?;
    for bad in [
        format!("{{not json}}\n{good}"),
        format!("<<<<<<< ours\n{good}=======\n>>>>>>> theirs\n"),
    ] {
        pm_engine::atomic::write(&stream, bad.as_bytes())?;
        let before = t.snapshot()?;
        let run = t.pm(&["comments", "pm-h3", "--add", "x", "--json"])?;
        assert_eq!(run.code, 1, "{}", run.stdout);
        let doc: Value = serde_json::from_str(&run.stdout)?;
        let code = doc["error"]["code"].as_str().unwrap_or_default();
        assert!(
            code == "history_invalid_json" || code == "history_merge_conflict_markers_detected",
            "{code}"
        );
        assert!(
            doc["error"]["hint"]
                .as_str()
                .unwrap_or_default()
                .contains("pm history-repair pm-h3")
        );
        assert_eq!(t.snapshot()?, before, "nothing written");
    }
    Ok(())
}

/// Runs git in the `TestTracker` workspace `dir` with the hermetic environment (`HOME` being
/// the tracker's empty home next to it) and returns stdout and stderr; never fails on git's
/// exit code (a conflicting merge is expected).
fn git(dir: &Path, args: &[&str]) -> Result<String, Box<dyn std::error::Error>> {
    let out = git_at(dir, &dir.with_file_name("home"), CLOCK, args)?;
    Ok(format!("{}{}", out.stdout, out.stderr))
}

/// `git show :<stage>:<path>`: 2 is ours, 3 theirs.
fn stage(dir: &Path, n: u8, rel: &str) -> Result<String, Box<dyn std::error::Error>> {
    let spec = format!(":{n}:{rel}");
    let out = git_at(dir, &dir.with_file_name("home"), CLOCK, &["show", &spec])?;
    if out.code != 0 {
        return Err(format!("git show {spec}: {}", out.stderr).into());
    }
    Ok(out.stdout)
}

/// Two branches change different fields of one item; git conflicts on the item file and on the
/// stream (both appended after the same prefix). A person keeps both tails of the stream and
/// merges the item by hand. The next comment re-anchors the broken chain and everything
/// verifies; earlier lines stay byte for byte.
#[test]
fn a_hand_resolved_git_merge_then_a_comment_verifies() -> TestResult {
    let t = tracker_with("pm-h4")?;
    let ws = t.workspace();
    git(&ws, &["init", "-q", "-b", "main"])?;
    git(&ws, &["add", "-A"])?;
    git(&ws, &["commit", "-qm", "base"])?;
    git(&ws, &["checkout", "-qb", "a"])?;
    assert_eq!(t.pm(&["update", "pm-h4", "--priority", "0"])?.code, 0);
    git(&ws, &["commit", "-qam", "priority"])?;
    git(&ws, &["checkout", "-q", "main"])?;
    git(&ws, &["checkout", "-qb", "b"])?;
    assert_eq!(t.pm(&["update", "pm-h4", "--add-tags", "red"])?.code, 0);
    git(&ws, &["commit", "-qam", "tags"])?;
    git(&ws, &["checkout", "-q", "a"])?;
    let merge = git(&ws, &["merge", "b"])?;
    assert!(merge.contains("CONFLICT"), "{merge}");
    let item_rel = ".agents/pm/tasks/pm-h4.toon";
    let stream_rel = ".agents/pm/history/pm-h4.jsonl";
    // The item: theirs (tags) with our priority.
    let theirs = stage(&ws, 3, item_rel)?;
    assert!(theirs.contains("priority: 2"), "{theirs}");
    let merged = theirs.replace("priority: 2", "priority: 0");
    pm_engine::atomic::write(&ws.join(item_rel), merged.as_bytes())?;
    // The stream: the common prefix, then our tail, then theirs.
    let (ours, theirs) = (stage(&ws, 2, stream_rel)?, stage(&ws, 3, stream_rel)?);
    let (ours, theirs): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), theirs.lines().collect());
    let common = ours.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
    let mut lines: Vec<&str> = ours.clone();
    lines.extend(&theirs[common..]);
    let union = format!("{}\n", lines.join("\n"));
    pm_engine::atomic::write(&ws.join(stream_rel), union.as_bytes())?;
    git(&ws, &["add", "-A"])?;
    git(&ws, &["commit", "-qm", "merged by hand"])?;
    let stream = t.root().join("history/pm-h4.jsonl");
    let entries = read_stream(&stream, "pm-h4")?.entries;
    assert!(
        !verify_chain(&entries).is_ok(),
        "a union of two tails does not chain"
    );
    let run = t.pm(&["comments", "pm-h4", "--add", "after the merge"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("history_reconciled:pm-h4:chain_broken"),
        "{}",
        run.stderr
    );
    let after = std::fs::read_to_string(&stream)?;
    assert!(
        after.starts_with(&union),
        "earlier lines are kept byte for byte"
    );
    assert_verifies(&t, "pm-h4")?;
    let item = std::fs::read_to_string(t.root().join("tasks/pm-h4.toon"))?;
    assert!(
        item.contains("priority: 0") && item.contains("red"),
        "{item}"
    );
    Ok(())
}

/// A writer killed between writing the moved item at its new folder and removing the old file
/// leaves two files with one id. The one whose state the stream records is the old copy: the
/// next write removes it and records the move. Two copies the stream does not explain stay a
/// refusal (the user must choose).
#[test]
fn an_interrupted_move_is_completed_by_the_next_write() -> TestResult {
    let t = tracker_with("pm-h5")?;
    let old = t.root().join("tasks/pm-h5.toon");
    let text = std::fs::read_to_string(&old)?.replace("type: Task", "type: Chore");
    pm_engine::atomic::write(&t.root().join("chores/pm-h5.toon"), text.as_bytes())?;
    let run = t.pm(&["comments", "pm-h5", "--add", "after the move"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("interrupted_move_completed:pm-h5:"),
        "{}",
        run.stderr
    );
    assert!(!old.exists(), "the stale copy is removed");
    assert!(t.root().join("chores/pm-h5.toon").is_file());
    assert_verifies(&t, "pm-h5")?;
    // Two copies, neither recorded: refused, nothing changes.
    let moved = std::fs::read_to_string(t.root().join("chores/pm-h5.toon"))?;
    pm_engine::atomic::write(&old, moved.replace("after the move", "edited").as_bytes())?;
    let chores = t.root().join("chores/pm-h5.toon");
    pm_engine::atomic::write(&chores, moved.replace("after the move", "other").as_bytes())?;
    let before = t.snapshot()?;
    let run = t.pm(&["comments", "pm-h5", "--add", "x", "--json"])?;
    assert_eq!(run.code, 4, "{}", run.stdout);
    let doc: Value = serde_json::from_str(&run.stdout)?;
    assert_eq!(doc["error"]["code"], "duplicate_item_id");
    assert_eq!(t.snapshot()?, before);
    Ok(())
}
