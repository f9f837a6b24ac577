//! Symlinks inside a tracker (git checks them out): for each kind of link, every write and read
//! leaves the tree the link points to exactly as it was (hashed before and after), the item
//! behind the link is refused with `path_unsafe`, `validate` and `health` name the link, and the
//! index answers what the scan answers.

use std::collections::BTreeMap;
use std::error::Error;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{Run, TestTracker};

type TestResult = Result<(), Box<dyn Error>>;

/// The sample item every case points a link at (a Task).
const ID: &str = "gd-t1";

/// One kind of link: the tracker-relative path replaced by a link into the decoy tree.
struct Case {
    name: &'static str,
    /// The tracker-relative path that becomes a link.
    link: &'static str,
    /// Whether a mutation of `ID` is refused as `path_unsafe`.
    refuses_item: bool,
    /// The path `validate` and `health` name.
    reported: &'static str,
}

const CASES: [Case; 8] = [
    Case {
        name: "stream",
        link: "history/gd-t1.jsonl",
        refuses_item: true,
        reported: "history/gd-t1.jsonl",
    },
    Case {
        name: "type folder",
        link: "tasks",
        refuses_item: true,
        reported: "tasks",
    },
    Case {
        name: "history folder",
        link: "history",
        refuses_item: true,
        reported: "history",
    },
    Case {
        name: "checkpoints folder",
        link: "checkpoints",
        refuses_item: false,
        reported: "checkpoints",
    },
    Case {
        name: "item file",
        link: "tasks/gd-t1.toon",
        refuses_item: true,
        reported: "tasks/gd-t1.toon",
    },
    Case {
        name: "locks folder",
        link: "locks",
        refuses_item: true,
        reported: "locks",
    },
    Case {
        name: "lock file",
        link: "locks/gd-t1.lock",
        refuses_item: true,
        reported: "locks/gd-t1.lock",
    },
    Case {
        name: "runtime folder",
        link: "runtime",
        refuses_item: false,
        reported: "runtime",
    },
];

/// Every command run against each case: writes of the linked item, writes elsewhere, and the
/// reads that list every file.
const COMMANDS: &[&[&str]] = &[
    &["comments", ID, "--add", "through a link?"],
    &["update", ID, "--priority", "1"],
    &[
        "create", "--type", "Task", "--title", "New", "--id", "gd-t9",
    ],
    &["comments", "gd-t2", "--add", "elsewhere"],
    &["history-repair", ID],
    &["history-repair", "--all"],
    &["get", ID],
    &["history", ID, "--verify"],
    &["list"],
    &["list", "--no-index"],
    &["activity"],
    &["validate"],
    &["health"],
    &["reindex"],
    &["gc"],
];

/// Path → what it is (file bytes, link target or directory) for every entry under `dir`.
fn tree(dir: &Path) -> Result<BTreeMap<PathBuf, Vec<u8>>, Box<dyn Error>> {
    let mut out = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current)? {
            let entry = entry?;
            let path = entry.path();
            let kind = entry.file_type()?;
            let value = if kind.is_symlink() {
                let mut v = b"link:".to_vec();
                v.extend(std::fs::read_link(&path)?.as_os_str().as_encoded_bytes());
                v
            } else if kind.is_dir() {
                pending.push(path.clone());
                b"dir".to_vec()
            } else {
                let meta = entry.metadata()?;
                let mut v = std::fs::read(&path)?;
                v.extend(format!(":{}", meta.len()).into_bytes());
                v
            };
            out.insert(path.strip_prefix(dir)?.to_path_buf(), value);
        }
    }
    Ok(out)
}

/// Replaces `rel` by a link to a copy of it (or to an empty folder or a bystander file) in the
/// decoy tree; returns the decoy root.
fn plant(t: &TestTracker, rel: &str) -> Result<PathBuf, Box<dyn Error>> {
    let decoy = t.outside().join("decoy");
    std::fs::create_dir_all(&decoy)?;
    pm_engine::atomic::write(&decoy.join("bystander.txt"), b"not tracker data\n")?;
    let real = t.root().join(rel);
    let target = decoy.join(rel.replace('/', "_"));
    if real.is_dir() {
        copy_dir(&real, &target)?;
        std::fs::remove_dir_all(&real)?;
    } else if real.is_file() {
        std::fs::copy(&real, &target)?;
        std::fs::remove_file(&real)?;
    } else if rel.ends_with(".lock") {
        std::fs::create_dir_all(real.parent().ok_or("no parent")?)?;
        pm_engine::atomic::write(&target, b"{\"unrelated\":true}\n")?;
    } else {
        std::fs::create_dir_all(&target)?;
        pm_engine::atomic::write(&target.join("keep.txt"), b"someone else's folder\n")?;
    }
    std::os::unix::fs::symlink(&target, &real)?;
    Ok(decoy)
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), Box<dyn Error>> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()))?;
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

fn pm_json(t: &TestTracker, args: &[&str]) -> Result<(Run, Value), Box<dyn Error>> {
    let mut args = args.to_vec();
    args.push("--json");
    let run = t.pm(&args)?;
    let what = format!("{args:?} (exit {}): {}{}", run.code, run.stdout, run.stderr);
    assert_ne!(run.code, 101, "{what}");
    assert!(!what.contains("internal_error"), "{what}");
    let doc: Value = serde_json::from_str(&run.stdout).map_err(|e| format!("{e}: {what}"))?;
    Ok((run, doc))
}

#[test]
fn no_command_reads_or_writes_through_any_tracker_symlink() -> TestResult {
    for case in &CASES {
        let t = TestTracker::sample()?;
        assert_eq!(t.pm(&["reindex"])?.code, 0);
        let decoy = plant(&t, case.link)?;
        let before = tree(&decoy)?;
        for args in COMMANDS {
            pm_json(&t, args)?;
        }
        assert_eq!(
            tree(&decoy)?,
            before,
            "{}: the decoy tree changed",
            case.name
        );

        let (run, doc) = pm_json(&t, &["comments", ID, "--add", "again"])?;
        if case.refuses_item {
            assert_eq!(
                (run.code, doc["error"]["code"].as_str()),
                (4, Some("path_unsafe")),
                "{}: {doc}",
                case.name
            );
        }
        let (_, doc) = pm_json(&t, &["health"])?;
        let finding = format!("integrity_path_unsafe:{}", case.reported);
        assert!(
            doc["failed_because"]
                .as_array()
                .is_some_and(|f| f.iter().any(|v| v == finding.as_str())),
            "{}: {doc}",
            case.name
        );
        let (run, doc) = pm_json(&t, &["validate"])?;
        assert_ne!(run.code, 101);
        let storage = doc["checks"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["name"] == "storage_integrity"))
            .ok_or("no storage check")?;
        let paths = &storage["details"]["unsafe_paths"]["paths"];
        assert!(
            paths
                .as_array()
                .is_some_and(|p| p.iter().any(|v| v == case.reported)),
            "{}: {storage}",
            case.name
        );
        assert_eq!(
            tree(&decoy)?,
            before,
            "{}: the decoy tree changed",
            case.name
        );
    }
    Ok(())
}

/// A linked item file or type folder: `get` refuses it, and the index lists what the scan lists.
#[test]
fn reads_refuse_a_linked_item_and_the_index_agrees_with_the_scan() -> TestResult {
    for link in ["tasks/gd-t1.toon", "tasks"] {
        let t = TestTracker::sample()?;
        plant(&t, link)?;
        let (run, doc) = pm_json(&t, &["get", ID])?;
        assert_eq!(
            (run.code, &doc["error"]["code"]),
            (4, &Value::from("path_unsafe"))
        );
        let listed = |extra: &[&str]| -> Result<Value, Box<dyn Error>> {
            let mut args = vec!["list", "--limit", "100"];
            args.extend_from_slice(extra);
            let (_, mut doc) = pm_json(&t, &args)?;
            let map = doc.as_object_mut().ok_or("not an object")?;
            for volatile in ["source", "now"] {
                map.remove(volatile);
            }
            Ok(doc)
        };
        let (index, scan) = (listed(&[])?, listed(&["--no-index"])?);
        assert_eq!(index, scan, "{link}");
        let ids: Vec<&str> = index["items"]
            .as_array()
            .ok_or("items")?
            .iter()
            .filter_map(|i| i["id"].as_str())
            .collect();
        assert!(!ids.contains(&ID), "{link}: {ids:?}");
        assert_eq!(index["completeness"]["status"], "partial", "{link}");
    }
    Ok(())
}
