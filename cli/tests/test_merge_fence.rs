//! `pm merge install` and the item, JSON and relationship drivers, with real `git` in temp
//! repositories: the fence bytes against pm-cli's write transcript, idempotence, discovery
//! from a subdirectory, the refusal outside git, and merge scenarios (disjoint fields, the
//! same field, add/add, annotations on both sides, a rebase). The transcript's own merge
//! inputs are replayed through our item driver at the end.

use std::error::Error;
use std::path::PathBuf;

use crate::common::git_repo::{GitRepo as Repo, PM};

type TestResult = Result<(), Box<dyn Error>>;

/// Returns pm-cli's write transcript, extracted once per test run.
fn transcript() -> Result<PathBuf, Box<dyn Error>> {
    Ok(pm_testkit::shared_extraction("golden/write-transcript.tar.gz")?.join("write-transcript"))
}

/// Creates `pm-t1` on main, then runs `left` on a branch `feature` and `right` on main.
fn diverge(repo: &Repo, left: &[&[&str]], right: &[&[&str]]) -> TestResult {
    repo.ok(&repo.pm(&[
        "create",
        "task",
        "Shared task",
        "--id",
        "pm-t1",
        "--priority",
        "2",
        "--tags",
        "a,b",
    ])?)?;
    repo.commit("base")?;
    repo.ok(&repo.git(&["checkout", "-q", "-b", "feature"])?)?;
    for args in left {
        repo.ok(&repo.pm(args)?)?;
    }
    repo.commit("feature")?;
    repo.ok(&repo.git(&["checkout", "-q", "main"])?)?;
    for args in right {
        repo.ok(&repo.pm(args)?)?;
    }
    repo.commit("main")
}

fn tags(item: &serde_json::Value) -> Vec<String> {
    item["tags"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn install_matches_pm_cli_and_is_idempotent_from_a_subdirectory() -> TestResult {
    let base = transcript()?;
    let repo = Repo::bare_git()?;
    // The tracker and .gitattributes as pm-cli left them just before its `merge install`.
    pm_testkit::copy_tree(
        &base.join("snapshots/102-merge-install/.agents"),
        &repo.root.join(".agents"),
    )?;
    let sub = repo.root.join(".agents/pm/tasks");
    let scrub = |text: &str| {
        text.replace(&format!("'{PM}'"), "'[PM]'")
            .replace(&repo.root.display().to_string(), "[TRACKER]")
    };
    let golden_text = |rel: &str| -> Result<String, Box<dyn Error>> {
        let text = std::fs::read_to_string(base.join(rel))?;
        Ok(text.replace("'[NODE]' '[PM_CLI_JS]'", "'[PM]'"))
    };

    // First install: everything is new.
    let first = repo.run(PM, &sub, &["merge", "install"])?;
    repo.ok(&first)?;
    assert!(
        first.stdout.contains("  changed: true\n"),
        "{}",
        first.stdout
    );
    let attributes = repo.read(".gitattributes")?;
    assert_eq!(
        attributes,
        std::fs::read_to_string(base.join("snapshots/103-merge-install/.gitattributes"))?
    );
    let config = repo.read(".git/config")?;
    let pm_sections = &config[config
        .find("[merge \"pm-item-toon\"]")
        .ok_or("no section")?..];
    assert_eq!(
        scrub(pm_sections),
        golden_text("snapshots/103-merge-install/.git/config")?
    );

    // Again, as a dry run and for real, in TOON and JSON: pm-cli's bytes (`changed: false`).
    for (args, golden_rel, clock) in [
        (
            &["merge", "install", "--dry-run"][..],
            "stdout/toon/102-merge-install.toon",
            "2026-09-02T01:42:00.000Z",
        ),
        (
            &["merge", "install"][..],
            "stdout/toon/103-merge-install.toon",
            "2026-09-02T01:43:00.000Z",
        ),
        (
            &["merge", "install", "--json"][..],
            "stdout/json/103-merge-install.json",
            "2026-09-02T01:43:00.000Z",
        ),
    ] {
        let mut cmd = repo.command(PM, &sub, args);
        cmd.env("PM_CLOCK", clock);
        let out = cmd.output()?;
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(
            scrub(&String::from_utf8(out.stdout)?),
            golden_text(golden_rel)?,
            "{args:?}"
        );
    }
    assert_eq!(repo.read(".gitattributes")?, attributes);
    assert_eq!(repo.read(".git/config")?, config);
    Ok(())
}

#[test]
fn init_in_git_installs_the_fence_unless_told_not_to() -> TestResult {
    let repo = Repo::bare_git()?;
    let init = repo.pm(&["init", "--defaults"])?;
    repo.ok(&init)?;
    assert!(
        init.stdout.contains("updated:merge_fence:"),
        "{}",
        init.stdout
    );
    // pm-cli's init in the write transcript wrote the same block (the built-in type folders).
    let golden = transcript()?.join("snapshots/000-init/.gitattributes");
    assert_eq!(
        repo.read(".gitattributes")?,
        std::fs::read_to_string(golden)?
    );
    assert!(
        repo.read(".git/config")?
            .contains("[merge \"pm-item-toon\"]")
    );
    // A second init of the same tracker changes nothing and says nothing about the fence.
    let again = repo.pm(&["init", "--defaults"])?;
    assert!(!again.stdout.contains("merge_fence"), "{}", again.stdout);

    let bare = Repo::bare_git()?;
    let skipped = bare.pm(&["init", "--defaults", "--no-merge-fence"])?;
    bare.ok(&skipped)?;
    assert!(
        !skipped.stdout.contains("merge_fence"),
        "{}",
        skipped.stdout
    );
    assert!(!bare.root.join(".gitattributes").exists());
    assert!(!bare.read(".git/config")?.contains("pm-item-toon"));
    Ok(())
}

#[test]
fn install_keeps_other_attributes_and_replaces_its_own_block() -> TestResult {
    let repo = Repo::new()?;
    pm_engine::atomic::write(
        &repo.root.join(".gitattributes"),
        "*.png binary\n".as_bytes(),
    )?;
    repo.install()?;
    let text = repo.read(".gitattributes")?;
    assert!(
        text.starts_with("*.png binary\n\n# pm-cli:merge-drivers:v2:start\n"),
        "{text}"
    );
    repo.ok(&repo.pm(&["merge", "install"])?)?;
    assert_eq!(repo.read(".gitattributes")?, text);
    Ok(())
}

#[test]
fn install_outside_git_is_merge_root_not_found() -> TestResult {
    let t = crate::common::TestTracker::new()?;
    assert_eq!(t.pm(&["init", "--defaults"])?.code, 0);
    let run = t.pm(&["merge", "install", "--json"])?;
    assert_eq!(run.code, 3);
    let envelope: crate::common::ErrorEnvelope = serde_json::from_str(&run.stdout)?;
    assert_eq!(envelope.error.code, "merge_root_not_found");
    assert!(!t.workspace().join(".gitattributes").exists());
    Ok(())
}

/// A merge in a linked worktree: the clone-local receipt goes to the clone's common git
/// directory (where every worktree's `merge report` reads it), and after `merge reconcile
/// --force` every chain verifies.
#[test]
fn a_merge_in_a_linked_worktree_keeps_receipts_in_the_clone() -> TestResult {
    let repo = Repo::new()?;
    repo.install()?;
    diverge(
        &repo,
        &[&["update", "pm-t1", "--title", "Title from feature"]],
        &[&["update", "pm-t1", "--title", "Title from main"]],
    )?;
    let wt = repo.root.with_file_name("linked");
    let wt_arg = wt.to_string_lossy().into_owned();
    repo.ok(&repo.git(&["worktree", "add", "-q", "-b", "review", &wt_arg, "main"])?)?;
    let merge = repo.run("git", &wt, &["merge", "--no-edit", "feature"])?;
    assert_ne!(merge.code, 0, "{}", merge.stdout);
    assert_eq!(
        std::fs::read_dir(repo.root.join(".git/pm-merge-receipts"))?.count(),
        1
    );
    let report = repo.run(PM, &wt, &["merge", "report", "--json"])?;
    repo.ok(&report)?;
    let report: serde_json::Value = serde_json::from_str(&report.stdout)?;
    assert_eq!(report["count"], 1, "{report}");
    assert_eq!(
        report["receipts"][0]["value_availability"], "clone_local",
        "{report}"
    );
    repo.ok(&repo.run("git", &wt, &["add", "-A"])?)?;
    repo.ok(&repo.run("git", &wt, &["commit", "-q", "--no-edit"])?)?;
    repo.ok(&repo.run(PM, &wt, &["merge", "reconcile", "--force"])?)?;
    repo.ok(&repo.run(PM, &wt, &["history", "pm-t1", "--verify"])?)?;
    let drift = repo.run(PM, &wt, &["validate", "--check-history-drift", "--json"])?;
    let drift: serde_json::Value = serde_json::from_str(&drift.stdout)?;
    assert_eq!(drift["ok"], true, "{drift}");
    Ok(())
}

#[test]
fn disjoint_field_edits_merge_cleanly() -> TestResult {
    let repo = Repo::new()?;
    repo.install()?;
    diverge(
        &repo,
        &[&["update", "pm-t1", "--priority", "0"]],
        &[&["update", "pm-t1", "--add-tags", "c"]],
    )?;
    let merge = repo.git(&["merge", "--no-edit", "feature"])?;
    repo.ok(&merge)?;
    assert!(
        merge.stdout.contains("artifact: \"item\""),
        "{}",
        merge.stdout
    );
    assert_eq!(repo.unmerged()?, Vec::<String>::new());
    let item = repo.item("pm-t1")?;
    assert_eq!(item["priority"], 0);
    assert_eq!(tags(&item), ["a", "b", "c"]);
    // The receipt in both stores, one with values and one with hashes only.
    let receipts: Vec<_> =
        std::fs::read_dir(repo.root.join(".agents/pm/merge-receipts"))?.collect();
    assert_eq!(receipts.len(), 1);
    assert_eq!(
        std::fs::read_dir(repo.root.join(".git/pm-merge-receipts"))?.count(),
        1
    );
    Ok(())
}

#[test]
fn the_same_field_goes_to_the_preferred_side_and_stops_git() -> TestResult {
    let repo = Repo::new()?;
    repo.install()?;
    diverge(
        &repo,
        &[&["update", "pm-t1", "--title", "Title from feature"]],
        &[&[
            "update",
            "pm-t1",
            "--title",
            "Title from main",
            "--add-tags",
            "m",
        ]],
    )?;
    let merge = repo.git(&["merge", "--no-edit", "feature"])?;
    assert_ne!(merge.code, 0);
    assert!(
        merge
            .stdout
            .contains("CONFLICT (content): Merge conflict in .agents/pm/tasks/pm-t1.toon")
    );
    assert!(
        merge.stdout.contains("conflicts:\n  - \"title\""),
        "{}",
        merge.stdout
    );
    assert_eq!(repo.unmerged()?, [".agents/pm/tasks/pm-t1.toon"]);
    // The file is a valid item holding our title (default --prefer ours) and our tag.
    let text = repo.read(".agents/pm/tasks/pm-t1.toon")?;
    assert!(text.contains("title: Title from main\n"), "{text}");
    assert!(!text.contains("<<<<<<<"));
    let receipts = repo.root.join(".git/pm-merge-receipts");
    let receipt = std::fs::read_dir(&receipts)?.next().ok_or("no receipt")??;
    let receipt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(receipt.path())?)?;
    assert_eq!(receipt["decisions"][0]["retained"], "Title from main");
    assert_eq!(receipt["decisions"][0]["discarded"], "Title from feature");
    assert_eq!(receipt["conflict_resolution"], "preferred_side");
    Ok(())
}

#[test]
fn prefer_theirs_keeps_the_merged_in_value() -> TestResult {
    let repo = Repo::new()?;
    repo.install()?;
    let driver =
        format!("'{PM}' merge driver item \"%O\" \"%A\" \"%B\" --item-path %P --prefer theirs");
    repo.ok(&repo.git(&["config", "merge.pm-item-toon.driver", &driver])?)?;
    diverge(
        &repo,
        &[&["update", "pm-t1", "--title", "Title from feature"]],
        &[&["update", "pm-t1", "--title", "Title from main"]],
    )?;
    assert_ne!(repo.git(&["merge", "--no-edit", "feature"])?.code, 0);
    assert!(
        repo.read(".agents/pm/tasks/pm-t1.toon")?
            .contains("title: Title from feature\n")
    );
    Ok(())
}

#[test]
fn new_items_on_both_branches_merge_cleanly() -> TestResult {
    let repo = Repo::new()?;
    repo.install()?;
    diverge(
        &repo,
        &[&["create", "task", "From feature", "--id", "pm-f1"]],
        &[&["create", "task", "From main", "--id", "pm-m1"]],
    )?;
    repo.ok(&repo.git(&["merge", "--no-edit", "feature"])?)?;
    assert_eq!(repo.item("pm-f1")?["title"], "From feature");
    assert_eq!(repo.item("pm-m1")?["title"], "From main");
    Ok(())
}

#[test]
fn annotations_on_both_sides_are_all_kept_once() -> TestResult {
    let repo = Repo::new()?;
    repo.install()?;
    diverge(
        &repo,
        &[
            &["comments", "pm-t1", "--add", "Comment from feature"],
            &["notes", "pm-t1", "--add", "Note from feature"],
        ],
        &[
            &["comments", "pm-t1", "--add", "Comment from main"],
            &["learnings", "pm-t1", "--add", "Learning from main"],
        ],
    )?;
    repo.ok(&repo.git(&["merge", "--no-edit", "feature"])?)?;
    let text = repo.read(".agents/pm/tasks/pm-t1.toon")?;
    let texts = |key: &str| -> Vec<String> {
        let Some(start) = text.find(&format!("\n{key}[")) else {
            return Vec::new();
        };
        text[start + 1..]
            .lines()
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .filter_map(|l| l.rsplit(',').next().map(String::from))
            .collect()
    };
    let mut comments = texts("comments");
    comments.sort();
    assert_eq!(
        comments,
        ["Comment from feature", "Comment from main"],
        "{text}"
    );
    assert_eq!(texts("notes"), ["Note from feature"]);
    assert_eq!(texts("learnings"), ["Learning from main"]);
    Ok(())
}

#[test]
fn a_rebase_replays_field_edits_through_the_driver() -> TestResult {
    let repo = Repo::new()?;
    repo.install()?;
    diverge(
        &repo,
        &[&["update", "pm-t1", "--priority", "0"]],
        &[&["update", "pm-t1", "--add-tags", "c"]],
    )?;
    repo.ok(&repo.git(&["checkout", "-q", "feature"])?)?;
    let rebase = repo.git(&["rebase", "main"])?;
    repo.ok(&rebase)?;
    let item = repo.item("pm-t1")?;
    assert_eq!(item["priority"], 0);
    assert_eq!(tags(&item), ["a", "b", "c"]);
    Ok(())
}

#[test]
fn json_documents_merge_key_by_key() -> TestResult {
    let repo = Repo::new()?;
    repo.install()?;
    let file = ".agents/pm/search/eval-queries.json";
    std::fs::create_dir_all(repo.root.join(".agents/pm/search"))?;
    pm_engine::atomic::write(
        &repo.root.join(file),
        "{\n  \"a\": 1,\n  \"b\": 1\n}\n".as_bytes(),
    )?;
    repo.commit("base")?;
    repo.ok(&repo.git(&["checkout", "-q", "-b", "feature"])?)?;
    pm_engine::atomic::write(
        &repo.root.join(file),
        "{\n  \"a\": 2,\n  \"b\": 1\n}\n".as_bytes(),
    )?;
    repo.commit("feature")?;
    repo.ok(&repo.git(&["checkout", "-q", "main"])?)?;
    pm_engine::atomic::write(
        &repo.root.join(file),
        "{\n  \"a\": 1,\n  \"b\": 3\n}\n".as_bytes(),
    )?;
    repo.commit("main")?;
    // eval-queries.json is un-ignored by pm's .gitignore block, so git tracks and merges it.
    repo.ok(&repo.git(&["merge", "--no-edit", "feature"])?)?;
    assert_eq!(repo.read(file)?, "{\n  \"a\": 2,\n  \"b\": 3\n}\n");
    Ok(())
}

/// pm-cli's own merges in the write transcript, replayed through our item driver: step 112
/// (disjoint fields: theirs' title, ours' priority and comment) must give pm-cli's bytes;
/// step 124 (both changed the title) gives pm-cli's file except the title, where pm-cli keeps
/// the value that sorts first and we keep ours (`--prefer ours`, docs/compatibility.md).
#[test]
fn transcript_merges_replay_through_our_item_driver() -> TestResult {
    let snaps = transcript()?.join("snapshots");
    let cases = [
        (
            "features/pm-f001.toon",
            "104-git-commit",
            "111-git-commit",
            "107-git-commit",
            "112-git-merge",
            None,
        ),
        (
            "epics/pm-e001.toon",
            "117-git-commit",
            "123-git-commit",
            "120-git-commit",
            "124-git-merge",
            Some(("title: Epic title from C", "title: Epic title from main")),
        ),
    ];
    for (rel, base, ours, theirs, merged, title_swap) in cases {
        let repo = Repo::bare_git()?;
        pm_testkit::copy_tree(
            &snaps.join(ours).join(".agents"),
            &repo.root.join(".agents"),
        )?;
        let item = |snap: &str| snaps.join(snap).join(".agents/pm").join(rel);
        let out_path = repo.root.join("merged.toon");
        let item_path = format!(".agents/pm/{rel}");
        let args = [
            "merge",
            "driver",
            "item",
            &item(base).display().to_string(),
            &item(ours).display().to_string(),
            &item(theirs).display().to_string(),
            "--item-path",
            &item_path,
            "--output",
            &out_path.display().to_string(),
        ]
        .map(String::from);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = repo.pm(&args)?;
        assert_eq!(
            out.code,
            if title_swap.is_some() { 1 } else { 0 },
            "{}",
            out.stdout
        );
        let mut expected = std::fs::read_to_string(item(merged))?;
        if let Some((theirs_title, ours_title)) = title_swap {
            expected = expected.replace(theirs_title, ours_title);
        }
        assert_eq!(std::fs::read_to_string(&out_path)?, expected, "{rel}");
    }
    Ok(())
}
