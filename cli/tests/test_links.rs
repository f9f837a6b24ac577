//! `pm files|docs`: `--add` with `--note`, `--add-glob`, `--remove`, `--migrate`,
//! `--append-stable`, `--validate-paths`, `--id` and stdin specs. pm-cli's write transcript
//! steps 024–028 replay byte for byte from its snapshot 023.

use serde_json::Value;

use crate::common::TestTracker;
use crate::common::write_transcript::replay_steps;

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[test]
fn transcript_link_steps_match_pm_cli() -> TestResult {
    replay_steps(24, 28, "024-files")
}

/// A tracker with task pm-k1 and the workspace files `src/a.rs`, `src/b.rs`, `docs/x.md`.
fn linked() -> Result<TestTracker, Box<dyn std::error::Error>> {
    let t = TestTracker::new()?;
    assert_eq!(t.pm(&["init", "--defaults"])?.code, 0);
    let created = t.pm(&["create", "task", "Linked", "--id", "pm-k1"])?;
    assert_eq!(created.code, 0, "{}", created.stderr);
    for file in ["src/a.rs", "src/b.rs", "docs/x.md"] {
        let path = t.workspace().join(file);
        std::fs::create_dir_all(path.parent().ok_or("no parent")?)?;
        std::fs::File::create(path)?;
    }
    Ok(t)
}

fn links(
    t: &TestTracker,
    command: &str,
) -> Result<Vec<(String, String)>, Box<dyn std::error::Error>> {
    let run = t.pm(&[command, "pm-k1", "--json"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out: Value = serde_json::from_str(&run.stdout)?;
    let rows = out[command].as_array().cloned().unwrap_or_default();
    Ok(rows
        .iter()
        .map(|r| {
            let text = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (text("path"), text("note"))
        })
        .collect())
}

fn pair(path: &str, note: &str) -> (String, String) {
    (path.to_string(), note.to_string())
}

#[test]
fn a_glob_links_every_match_sorted_and_keeps_an_existing_note() -> TestResult {
    let t = linked()?;
    let run = t.pm(&["files", "pm-k1", "--add", "src/b.rs", "--note", "kept"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = t.pm(&["files", "pm-k1", "--add-glob", "src/*.rs", "--note", "glob"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        links(&t, "files")?,
        [pair("src/a.rs", "glob"), pair("src/b.rs", "kept")]
    );
    Ok(())
}

#[test]
fn an_explicit_add_replaces_the_note_of_a_linked_path() -> TestResult {
    let t = linked()?;
    assert_eq!(
        t.pm(&["files", "pm-k1", "--add", "path=src/a.rs,note=old"])?
            .code,
        0
    );
    assert_eq!(
        t.pm(&["files", "pm-k1", "--add", "path=src/a.rs,note=new"])?
            .code,
        0
    );
    assert_eq!(links(&t, "files")?, [pair("src/a.rs", "new")]);
    Ok(())
}

#[test]
fn append_stable_keeps_the_stored_order() -> TestResult {
    let t = linked()?;
    assert_eq!(t.pm(&["files", "pm-k1", "--add", "src/b.rs"])?.code, 0);
    let run = t.pm(&["files", "pm-k1", "--add", "src/a.rs", "--append-stable"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let paths: Vec<String> = links(&t, "files")?.into_iter().map(|(p, _)| p).collect();
    assert_eq!(paths, ["src/b.rs", "src/a.rs"]);
    assert_eq!(t.pm(&["files", "pm-k1", "--add", "docs/x.md"])?.code, 0);
    let paths: Vec<String> = links(&t, "files")?.into_iter().map(|(p, _)| p).collect();
    assert_eq!(paths, ["docs/x.md", "src/a.rs", "src/b.rs"]);
    Ok(())
}

#[test]
fn migrate_rewrites_prefixes_and_refuses_when_nothing_matches() -> TestResult {
    let t = linked()?;
    assert_eq!(t.pm(&["docs", "pm-k1", "--add", "docs/x.md"])?.code, 0);
    let run = t.pm(&["docs", "pm-k1", "--migrate", "from=docs/,to=guide/"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(links(&t, "docs")?, [pair("guide/x.md", "")]);
    let refused = t.pm(&["docs", "pm-k1", "--migrate", "from=nope/,to=x/", "--json"])?;
    assert_ne!(refused.code, 0);
    assert!(!refused.error_code()?.is_empty(), "{}", refused.stdout);
    assert_eq!(links(&t, "docs")?, [pair("guide/x.md", "")]);
    Ok(())
}

#[test]
fn validate_paths_refuses_a_missing_path_and_writes_nothing() -> TestResult {
    let t = linked()?;
    let before = t.snapshot()?;
    let run = t.pm(&[
        "docs",
        "pm-k1",
        "--add",
        "docs/missing.md",
        "--validate-paths",
        "--json",
    ])?;
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(run.error_code()?, "invalid_argument_value");
    assert!(run.stdout.contains("docs/missing.md"), "{}", run.stdout);
    assert_eq!(t.snapshot()?, before);
    let run = t.pm(&["docs", "pm-k1", "--add", "docs/x.md", "--validate-paths"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    Ok(())
}

#[test]
fn validate_paths_warns_about_a_linked_path_that_went_missing() -> TestResult {
    let t = linked()?;
    assert_eq!(t.pm(&["files", "pm-k1", "--add", "src/a.rs"])?.code, 0);
    std::fs::remove_file(t.workspace().join("src/a.rs"))?;
    let run = t.pm(&["files", "pm-k1", "--validate-paths"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("warning:linked_path_invalid:src/a.rs:does_not_exist"),
        "{}",
        run.stderr
    );
    Ok(())
}

#[test]
fn note_without_an_add_is_refused() -> TestResult {
    let t = linked()?;
    let run = t.pm(&["files", "pm-k1", "--note", "orphan", "--json"])?;
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(run.error_code()?, "invalid_argument_value");
    Ok(())
}

#[test]
fn the_id_flag_and_stdin_specs_link_and_unlink() -> TestResult {
    let t = linked()?;
    let mut cmd = t.pm_command(&["files", "--id", "pm-k1", "--add", "-"]);
    let out = assert_cmd::Command::from_std(std::mem::replace(
        &mut cmd,
        std::process::Command::new("true"),
    ))
    .write_stdin("src/a.rs\n- src/b.rs\n\n")
    .output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        links(&t, "files")?,
        [pair("src/a.rs", ""), pair("src/b.rs", "")]
    );
    let run = t.pm(&["files", "--id", "pm-k1", "--remove", "src/a.rs"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(links(&t, "files")?, [pair("src/b.rs", "")]);
    let unlinked = t.pm(&["files", "pm-k1", "--remove", "src/a.rs", "--json"])?;
    assert_ne!(unlinked.code, 0);
    Ok(())
}

#[test]
fn paths_are_anchored_at_the_workspace_root_whatever_the_cwd() -> TestResult {
    let t = linked()?;
    let sub = t.workspace().join("src");
    let run = t.pm_in(&sub, &["files", "pm-k1", "--add-glob", "src/a*.rs"], &[])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(links(&t, "files")?, [pair("src/a.rs", "")]);
    Ok(())
}
