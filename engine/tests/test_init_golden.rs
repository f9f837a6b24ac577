//! `init_tracker` against the `00-init` snapshot of the mutation transcript golden.

use pm_engine::init::{InitOptions, init_tracker};
use pm_engine::json::to_pretty;
use serde_json::Value;
use std::collections::BTreeMap;
use std::error::Error;
use std::path::Path;

type TestResult = Result<(), Box<dyn Error>>;

/// Directories the golden snapshots leave out.
const SNAPSHOT_EXCLUDED: [&str; 4] = ["runtime", "locks", "transactions", "checkpoints"];

/// Every path under a root (relative, `/`-separated) with its bytes (`None` for a directory).
type Tree = BTreeMap<String, Option<Vec<u8>>>;

/// Returns the [`Tree`] under `root`.
fn tree(root: &Path) -> Result<Tree, Box<dyn Error>> {
    fn walk(root: &Path, dir: &Path, out: &mut Tree) -> Result<(), Box<dyn Error>> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            let rel = path
                .strip_prefix(root)?
                .to_string_lossy()
                .replace('\\', "/");
            if path.is_dir() {
                out.insert(rel, None);
                walk(root, &path, out)?;
            } else {
                out.insert(rel, Some(std::fs::read(&path)?));
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out)?;
    Ok(out)
}

fn without_excluded(tree: Tree) -> Tree {
    tree.into_iter()
        .filter(|(rel, _)| {
            !SNAPSHOT_EXCLUDED.iter().any(|ex| {
                rel.strip_prefix(".agents/pm/")
                    .is_some_and(|r| r == *ex || r.starts_with(&format!("{ex}/")))
            })
        })
        .collect()
}

#[test]
fn init_matches_the_golden_snapshot() -> TestResult {
    let golden = pm_testkit::extract_tar_gz(&pm_testkit::shared_file(
        "golden/mutation-transcript.tar.gz",
    ))?;
    let golden = golden.path().join("mutation-transcript");
    let workspace = tempfile::tempdir()?;
    let ws = workspace.path();
    let opts = InitOptions {
        author_default: Some("golden-author".into()),
        workspace_root: Some(ws.to_path_buf()),
        // pm-cli's init tries the merge fence; outside git it reports not_git_repository.
        merge_fence: Some("/usr/local/bin/pm".into()),
        ..InitOptions::default()
    };
    let report = init_tracker(&ws.join(".agents/pm"), &opts)?;

    let expected = tree(&golden.join("snapshots/00-init"))?;
    let actual = without_excluded(tree(ws)?);
    assert_eq!(
        actual.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (rel, bytes) in &expected {
        assert_eq!(actual.get(rel), Some(bytes), "{rel} differs");
    }
    assert!(ws.join(".agents/pm/locks").is_dir());

    let stdout: Value = serde_json::from_str(&std::fs::read_to_string(
        golden.join("stdout/json/00-init.json"),
    )?)?;
    let placeholder = ws.to_string_lossy().into_owned();
    let render = |p: &Path| p.to_string_lossy().replace(&placeholder, "[TRACKER]");
    let created: Vec<String> = report.created.iter().map(|p| render(p)).collect();
    let golden_created: Vec<String> = stdout["created_dirs"]
        .as_array()
        .ok_or("created_dirs")?
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    assert_eq!(created, golden_created);
    let warnings: Vec<String> = report
        .warnings
        .iter()
        .map(|w| w.replace(&placeholder, "[TRACKER]"))
        .collect();
    let golden_warnings: Vec<String> = stdout["warnings"]
        .as_array()
        .ok_or("warnings")?
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .filter(|w| !w.starts_with("agent_guidance:"))
        .collect();
    assert_eq!(warnings, golden_warnings);
    assert_eq!(
        to_pretty(&Value::Object(report.settings.effective().clone())),
        to_pretty(&stdout["settings"])
    );
    assert!(report.settings_created && report.changed);
    Ok(())
}

#[test]
fn init_is_idempotent() -> TestResult {
    let workspace = tempfile::tempdir()?;
    let root = workspace.path().join(".agents/pm");
    let opts = InitOptions {
        author_default: Some("golden-author".into()),
        ..InitOptions::default()
    };
    init_tracker(&root, &opts)?;
    let before = tree(workspace.path())?;
    let again = init_tracker(&root, &opts)?;
    assert!(!again.changed);
    assert!(again.created.is_empty());
    assert!(!again.settings_created);
    assert!(
        again
            .warnings
            .iter()
            .all(|w| w.starts_with("already_exists:")),
        "{:?}",
        again.warnings
    );
    assert_eq!(again.warnings.len(), 18);
    assert_eq!(tree(workspace.path())?, before);
    Ok(())
}

#[test]
fn root_layout_init_writes_no_gitignore_without_workspace() -> TestResult {
    let workspace = tempfile::tempdir()?;
    let root = workspace.path().join("tracker");
    let report = init_tracker(&root, &InitOptions::default())?;
    assert!(report.workspace_root.is_none());
    assert!(!workspace.path().join(".gitignore").exists());
    assert!(!root.join(".gitignore").exists());
    assert_eq!(report.created.len(), 21);
    Ok(())
}
