//! Crash safety: 100 mutations, each stopped at a seeded-random protocol point
//! (`PM_FAULT_POINT`) and killed with SIGKILL there. Per item the tracker must then be unchanged,
//! fully changed, or in the one torn state the protocol documents (file ahead of history), which
//! the drift check reports exactly and `pm history-repair` fixes.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pm_engine::clock::format_iso_ms;
use pm_engine::hash::{EMPTY_DOC_HASH, HashEpoch, item_hash};
use pm_engine::history::{check_drift, read_stream, verify_chain};
use pm_engine::item::ItemDoc;
use pm_engine::item::ItemFormat;
use pm_engine::item::canon::CanonSchema;
use pm_engine::item::codec::parse_item;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const ITEMS: [&str; 3] = ["pm-k1", "pm-k2", "pm-k3"];
const POINTS: [&str; 3] = ["after_lock", "after_item_write", "after_history_append"];
/// Far enough apart that a crashed process's lock is stale (ttl 1800 s) at the next command.
const STEP_MS: i64 = 3_600_000;

/// A tiny deterministic generator (xorshift64*), so the test needs no extra crate.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }
}

struct Env {
    ws: PathBuf,
    home: PathBuf,
    step: i64,
}

impl Env {
    fn command(&mut self, args: &[&str]) -> Command {
        self.step += 1;
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pm"));
        cmd.env_clear()
            .current_dir(&self.ws)
            .env("HOME", &self.home)
            .env("PM_GLOBAL_PATH", &self.home)
            .env("PM_AUTHOR", "crash-test")
            .env("PM_SEED", "crash")
            .env("PM_CLOCK_TICK_MS", "0")
            .env("PM_LOCK_WAIT_MS", "0")
            .env(
                "PM_CLOCK",
                format_iso_ms(1_788_220_800_000 + self.step * STEP_MS),
            )
            .args(args);
        cmd
    }

    fn run(&mut self, args: &[&str]) -> Result<String, Box<dyn std::error::Error>> {
        let out = self.command(args).output()?;
        if !out.status.success() {
            return Err(format!("{args:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
        }
        Ok(String::from_utf8(out.stdout)?)
    }

    /// Runs `args` with `PM_FAULT_POINT=point`, waits for the process to announce the point,
    /// and kills it there.
    fn crash(&mut self, args: &[&str], point: &str) -> TestResult {
        let mut child = self
            .command(args)
            .env("PM_FAULT_POINT", point)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let mut line = String::new();
        BufReader::new(stderr).read_line(&mut line)?;
        assert_eq!(line.trim(), format!("fault:{point}"), "{args:?}");
        child.kill()?;
        child.wait()?;
        Ok(())
    }

    fn root(&self) -> PathBuf {
        self.ws.join(".agents/pm")
    }
}

/// An item file: its path and bytes.
type ItemFile = Option<(PathBuf, Vec<u8>)>;

/// The item file (any folder) and history bytes of `id`.
fn state(root: &Path, id: &str) -> Result<(ItemFile, Vec<u8>), Box<dyn std::error::Error>> {
    let mut file = None;
    for folder in ["tasks", "chores"] {
        let path = root.join(folder).join(format!("{id}.toon"));
        if path.is_file() {
            file = Some((path.clone(), std::fs::read(&path)?));
        }
    }
    let history = std::fs::read(root.join(format!("history/{id}.jsonl")))?;
    Ok((file, history))
}

fn doc_of(file: &ItemFile) -> Result<ItemDoc, Box<dyn std::error::Error>> {
    Ok(match file {
        Some((path, bytes)) => parse_item(bytes, ItemFormat::Toon, path, &CanonSchema::NONE)?,
        None => ItemDoc::empty(),
    })
}

#[test]
fn killed_mutations_leave_consistent_or_repairable_items() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let mut env = Env {
        ws: tmp.path().join("work"),
        home: tmp.path().join("home"),
        step: 0,
    };
    std::fs::create_dir_all(&env.ws)?;
    std::fs::create_dir_all(&env.home)?;
    env.run(&["init", "--defaults"])?;
    for id in ITEMS {
        env.run(&["create", "task", id, "--id", id])?;
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut seen = [0usize; 3];
    for k in 0..100 {
        let id = ITEMS[rng.below(ITEMS.len())];
        let point_index = rng.below(POINTS.len());
        let point = POINTS[point_index];
        seen[point_index] += 1;
        let priority = rng.below(5).to_string();
        let text = format!("comment {k}");
        let kind = if k % 7 == 3 { "Chore" } else { "Task" };
        let args: Vec<&str> = match rng.below(4) {
            0 => vec!["update", id, "--priority", &priority],
            1 => vec!["comments", id, "--add", &text],
            2 => vec!["update", id, "--type", kind],
            _ => vec!["update", id, "--add-tags", &text],
        };
        let root = env.root();
        let (file_before, history_before) = state(&root, id)?;
        env.crash(&args, point)?;
        let (file_after, history_after) = state(&root, id)?;
        let entries = read_stream(&root.join(format!("history/{id}.jsonl")), id)?.entries;
        assert!(verify_chain(&entries).is_ok(), "step {k}: chain");
        let drift = check_drift(&doc_of(&file_after)?, &entries, HashEpoch::V2);
        match point {
            "after_lock" => {
                assert_eq!(file_after, file_before, "step {k}: file changed");
                assert_eq!(history_after, history_before, "step {k}: history changed");
            }
            "after_item_write" => {
                // The documented torn state: history untouched, the file one write ahead, and
                // the drift check names both revisions exactly.
                assert_eq!(history_after, history_before, "step {k}: history changed");
                let last = entries
                    .last()
                    .map_or(EMPTY_DOC_HASH, |e| e.after_hash.as_str());
                let found = item_hash(&doc_of(&file_after)?, HashEpoch::V2);
                let drift = drift.ok_or(format!("step {k}: torn state not reported"))?;
                assert_eq!(
                    (drift.expected.as_str(), drift.found.as_str()),
                    (last, found.as_str())
                );
            }
            _ => {
                assert!(drift.is_none(), "step {k}: fully changed item drifts");
                assert!(
                    history_after.len() > history_before.len(),
                    "step {k}: no entry appended"
                );
            }
        }
        // The documented recovery: the crashed process's lock has a gone owner, so
        // history-repair takes it over and appends the missing entry if the file is ahead
        // (the report says whether the stream `changed`).
        let report: serde_json::Value =
            serde_json::from_str(&env.run(&["--json", "history-repair", id, "--force"])?)?;
        assert_eq!(
            report["changed"],
            point == "after_item_write",
            "step {k}: {report}"
        );
        let (file_repaired, _) = state(&root, id)?;
        assert_eq!(
            file_repaired, file_after,
            "step {k}: repair changed the file"
        );
        let entries = read_stream(&root.join(format!("history/{id}.jsonl")), id)?.entries;
        assert!(
            verify_chain(&entries).is_ok(),
            "step {k}: chain after repair"
        );
        assert!(
            check_drift(&doc_of(&file_repaired)?, &entries, HashEpoch::V2).is_none(),
            "step {k}: drift after repair"
        );
        assert!(
            !root.join(format!("locks/{id}.lock")).exists(),
            "step {k}: lock left"
        );
    }
    assert!(
        seen.iter().all(|n| *n > 10),
        "every fault point is exercised: {seen:?}"
    );
    Ok(())
}
