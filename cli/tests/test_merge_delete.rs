//! Issue 23's "edit vs delete" merge, with real `git` and the installed drivers: one branch
//! edits `pm-e1` (fields and a comment), the other deletes it, and either branch merges the
//! other. git reports a modify/delete conflict on the item file (the item driver is not run)
//! and merges the history stream with our driver, which keeps the deleting side's closing
//! `delete` last. Keeping the deletion (`git rm`) leaves a deleted-item stream that verifies as
//! is and that `pm restore` can bring back; keeping the edit (`git add`) leaves a chain that
//! ends deleted, which `pm merge reconcile` rolls forward to the kept file.

use std::error::Error;

use pm_engine::history::{DELETE_OP, HistoryEntry, read_stream};
use serde_json::Value;

use crate::common::git_repo::{GitRepo, Out};

type TestResult = Result<(), Box<dyn Error>>;

const ITEM: &str = ".agents/pm/tasks/pm-e1.toon";
const COMMENT: &str = "edited on the edit branch";

/// A git repository holding a tracker with the drivers installed (the shared hermetic
/// [`GitRepo`]), plus the checks these scenarios repeat.
struct Repo {
    git: GitRepo,
}

impl Repo {
    /// `git init`, `pm init --defaults`, `pm merge install`.
    fn new() -> Result<Repo, Box<dyn Error>> {
        let git = GitRepo::new()?;
        git.install()?;
        Ok(Repo { git })
    }

    fn pm(&self, args: &[&str]) -> Result<Out, Box<dyn Error>> {
        self.git.pm(args)
    }

    fn pm_ok(&self, args: &[&str]) -> Result<Out, Box<dyn Error>> {
        let out = self.git.pm(args)?;
        self.git.ok(&out).map_err(|e| format!("pm {args:?}: {e}"))?;
        Ok(out)
    }

    fn git_ok(&self, args: &[&str]) -> Result<Out, Box<dyn Error>> {
        let out = self.git.git(args)?;
        self.git
            .ok(&out)
            .map_err(|e| format!("git {args:?}: {e}"))?;
        Ok(out)
    }

    fn pm_json(&self, args: &[&str]) -> Result<Value, Box<dyn Error>> {
        let mut argv = args.to_vec();
        argv.push("--json");
        Ok(serde_json::from_str(&self.pm(&argv)?.stdout)?)
    }

    fn commit(&self, message: &str) -> TestResult {
        self.git.commit(message)
    }

    fn stream(&self) -> Result<Vec<HistoryEntry>, Box<dyn Error>> {
        let path = self.git.root.join(".agents/pm/history/pm-e1.jsonl");
        Ok(read_stream(&path, "pm-e1")?.entries)
    }

    /// `git status --porcelain` lines.
    fn status(&self) -> Result<Vec<String>, Box<dyn Error>> {
        let out = self.git_ok(&["status", "--porcelain"])?;
        Ok(out.stdout.lines().map(String::from).collect())
    }

    /// `validate --check-history-drift` passes with no warning.
    fn assert_validates(&self) -> TestResult {
        let out = self.pm(&[
            "validate",
            "--check-history-drift",
            "--strict-exit",
            "--json",
        ])?;
        assert_eq!(out.code, 0, "{}", out.stdout);
        Ok(())
    }
}

/// Which branch merges which, and which branch wrote first.
#[derive(Clone, Copy, Debug)]
struct Case {
    /// The deleting branch is merged into the editing one (else the other way round).
    into_edit: bool,
    /// The delete happened before the edits (its `ts` is earlier).
    delete_first: bool,
}

const CASES: [Case; 4] = [
    Case {
        into_edit: true,
        delete_first: false,
    },
    Case {
        into_edit: false,
        delete_first: false,
    },
    Case {
        into_edit: true,
        delete_first: true,
    },
    Case {
        into_edit: false,
        delete_first: true,
    },
];

/// Creates `pm-e1` on main, edits it on `edit` and deletes it on `del`, merges per `case` and
/// returns the repository in the conflicted merge.
fn conflicted_merge(case: Case) -> Result<Repo, Box<dyn Error>> {
    let repo = Repo::new()?;
    repo.pm_ok(&[
        "create",
        "task",
        "Shared task",
        "--id",
        "pm-e1",
        "--priority",
        "2",
    ])?;
    repo.commit("base")?;
    let edit = |repo: &Repo| -> TestResult {
        repo.git_ok(&["checkout", "-q", "-b", "edit", "main"])?;
        repo.pm_ok(&["update", "pm-e1", "--priority", "0", "--add-tags", "x"])?;
        repo.pm_ok(&["comments", "pm-e1", "--add", COMMENT])?;
        repo.commit("edit")
    };
    let delete = |repo: &Repo| -> TestResult {
        repo.git_ok(&["checkout", "-q", "-b", "del", "main"])?;
        repo.pm_ok(&["delete", "pm-e1"])?;
        repo.commit("delete")
    };
    if case.delete_first {
        delete(&repo)?;
        edit(&repo)?;
    } else {
        edit(&repo)?;
        delete(&repo)?;
    }
    let (current, other) = if case.into_edit {
        ("edit", "del")
    } else {
        ("del", "edit")
    };
    repo.git_ok(&["checkout", "-q", current])?;
    let merge = repo.git.git(&["merge", "--no-edit", other])?;
    assert_ne!(merge.code, 0, "{case:?}: the item file conflicts");
    let text = format!("{}{}", merge.stdout, merge.stderr);
    assert!(
        text.contains("CONFLICT (modify/delete)"),
        "{case:?}: {text}"
    );
    assert!(
        text.contains("strategy: \"union_reanchor\""),
        "{case:?}: {text}"
    );
    // Only the item file is left to resolve; the history driver merged the stream.
    let unmerged: Vec<String> = repo
        .status()?
        .into_iter()
        .filter(|l| !l.starts_with("M ") && !l.starts_with("A "))
        .collect();
    let expected = if case.into_edit { "UD " } else { "DU " };
    assert_eq!(unmerged, [format!("{expected}{ITEM}")], "{case:?}");
    // Both branches' entries, the delete last, in a chain that verifies.
    let ops: Vec<String> = repo.stream()?.into_iter().map(|e| e.op).collect();
    assert_eq!(
        ops,
        ["create", "update", "comment_add", DELETE_OP],
        "{case:?}"
    );
    Ok(repo)
}

#[test]
fn keeping_the_deletion_leaves_a_deleted_item_stream_that_restore_brings_back() -> TestResult {
    for case in CASES {
        let repo = conflicted_merge(case)?;
        repo.git_ok(&["rm", "-q", ITEM])?;
        repo.git_ok(&["commit", "-q", "--no-edit"])?;
        let doc = repo.pm_json(&["history", "pm-e1", "--verify"])?;
        assert_eq!(doc["verification"]["ok"], true, "{case:?}: {doc}");
        repo.assert_validates()?;
        // Nothing for reconcile to record.
        let doc = repo.pm_json(&["merge", "reconcile"])?;
        assert_eq!(doc["repair"]["streams"], serde_json::json!([]), "{case:?}");
        // The state before the delete holds both branches' work: restore brings it back.
        repo.pm_ok(&["restore", "pm-e1", "3"])?;
        let item = std::fs::read_to_string(repo.git.root.join(ITEM))?;
        assert!(item.contains(COMMENT), "{case:?}: {item}");
        let got = repo.pm_json(&["get", "pm-e1"])?;
        assert_eq!(got["item"]["priority"], 0, "{case:?}");
        let doc = repo.pm_json(&["history", "pm-e1", "--verify"])?;
        assert_eq!(doc["verification"]["current_matches_latest"], true);
        repo.assert_validates()?;
    }
    Ok(())
}

#[test]
fn keeping_the_edit_is_rolled_forward_by_reconcile() -> TestResult {
    for case in CASES {
        let repo = conflicted_merge(case)?;
        repo.git_ok(&["add", ITEM])?;
        repo.git_ok(&["commit", "-q", "--no-edit"])?;
        // The file is back but the merged chain ends deleted: drift until reconciled.
        let doc = repo.pm_json(&["history", "pm-e1", "--verify"])?;
        assert_eq!(doc["verification"]["ok"], false, "{case:?}: {doc}");
        let drift = repo.pm_json(&["validate", "--check-history-drift"])?;
        assert_eq!(
            drift["checks"][0]["details"]["drift_rows"][0]["problem"], "hash_mismatch",
            "{case:?}: {drift}"
        );
        let doc = repo.pm_json(&["merge", "reconcile"])?;
        let streams = &doc["repair"]["streams"];
        assert_eq!(streams[0]["id"], "pm-e1", "{case:?}: {doc}");
        assert_eq!(streams[0]["reconciled_with_item"], true);
        assert_eq!(doc["validation"]["ok"], true, "{case:?}: {doc}");
        let entries = repo.stream()?;
        assert_eq!(entries.len(), 5);
        assert_eq!(entries[4].op, "merge_reconcile");
        let doc = repo.pm_json(&["history", "pm-e1", "--verify"])?;
        assert_eq!(doc["verification"]["ok"], true, "{case:?}: {doc}");
        assert_eq!(doc["verification"]["current_matches_latest"], true);
        repo.assert_validates()?;
        let got = repo.pm_json(&["get", "pm-e1"])?;
        assert_eq!(got["item"]["priority"], 0, "{case:?}");
        assert_eq!(got["item"]["tags"], serde_json::json!(["x"]), "{case:?}");
        let item = std::fs::read_to_string(repo.git.root.join(ITEM))?;
        assert!(item.contains(COMMENT), "{case:?}: {item}");
        repo.commit("reconcile")?;
        assert!(repo.status()?.is_empty());
    }
    Ok(())
}
