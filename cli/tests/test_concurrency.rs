//! Concurrent writers with real processes: 8 workers × 50 mutations (comments and tag
//! additions) on the same 3 items. Every history line must be present, every chain must verify,
//! every file must match its last entry, and no update may be lost.

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Barrier};

use pm_engine::hash::{HashEpoch, item_hash};
use pm_engine::history::{read_stream, verify_chain};
use pm_engine::item::canon::CanonSchema;
use pm_engine::item::codec::parse_item;
use pm_engine::item::{ItemDoc, ItemFormat};
use serde_json::Value;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const WORKERS: usize = 8;
const PER_WORKER: usize = 50;
const ITEMS: [&str; 3] = ["pm-c1", "pm-c2", "pm-c3"];

fn pm(ws: &Path, home: &Path, args: &[&str], author: &str) -> Result<(), String> {
    let output = Command::new(env!("CARGO_BIN_EXE_pm"))
        .env_clear()
        .current_dir(ws)
        .env("HOME", home)
        .env("PM_GLOBAL_PATH", home)
        .env("PM_AUTHOR", author)
        .env("PM_LOCK_WAIT_MS", "120000")
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

fn read_doc(root: &Path, id: &str) -> Result<ItemDoc, Box<dyn std::error::Error>> {
    let path = root.join(format!("tasks/{id}.toon"));
    let bytes = std::fs::read(&path)?;
    Ok(parse_item(
        &bytes,
        ItemFormat::Toon,
        &path,
        &CanonSchema::NONE,
    )?)
}

#[test]
fn eight_writers_lose_nothing() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let ws = tmp.path().join("work");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&ws)?;
    std::fs::create_dir_all(&home)?;
    pm(&ws, &home, &["init", "--defaults"], "setup")?;
    for id in ITEMS {
        pm(&ws, &home, &["create", "task", id, "--id", id], "setup")?;
    }
    let barrier = Arc::new(Barrier::new(WORKERS));
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let (ws, home, barrier) = (ws.clone(), home.clone(), Arc::clone(&barrier));
            std::thread::spawn(move || -> Result<(), String> {
                let author = format!("worker-{w}");
                barrier.wait();
                for i in 0..PER_WORKER {
                    let id = ITEMS[(w + i) % ITEMS.len()];
                    let token = format!("w{w}i{i}");
                    if i % 2 == 0 {
                        pm(&ws, &home, &["comments", id, "--add", &token], &author)?;
                    } else {
                        pm(&ws, &home, &["update", id, "--add-tags", &token], &author)?;
                    }
                }
                Ok(())
            })
        })
        .collect();
    for worker in workers {
        worker.join().map_err(|_| "worker panicked")??;
    }

    let root = ws.join(".agents/pm");
    let mut total = 0;
    let mut seen_tokens = Vec::new();
    for id in ITEMS {
        let stream = read_stream(&root.join(format!("history/{id}.jsonl")), id)?;
        assert!(stream.torn_tail.is_none(), "{id}");
        total += stream.entries.len() - 1;
        let report = verify_chain(&stream.entries);
        assert!(report.is_ok(), "{id}: {:?}", report.issues);
        let doc = read_doc(&root, id)?;
        let last = stream.entries.last().ok_or("empty stream")?;
        assert_eq!(
            item_hash(&doc, HashEpoch::V2),
            last.after_hash,
            "{id} drifted"
        );
        if let Some(Value::Array(comments)) = doc.metadata.get("comments") {
            seen_tokens.extend(
                comments
                    .iter()
                    .filter_map(|c| c["text"].as_str())
                    .map(String::from),
            );
        }
        if let Some(Value::Array(tags)) = doc.metadata.get("tags") {
            seen_tokens.extend(tags.iter().filter_map(Value::as_str).map(String::from));
        }
    }
    assert_eq!(total, WORKERS * PER_WORKER, "history lines");
    seen_tokens.sort();
    let mut expected: Vec<String> = (0..WORKERS)
        .flat_map(|w| (0..PER_WORKER).map(move |i| format!("w{w}i{i}")))
        .collect();
    expected.sort();
    assert_eq!(seen_tokens, expected, "every comment and tag survives");
    Ok(())
}
