//! Crash safety with real processes killed by SIGKILL: every mutation command stopped at every
//! protocol point (`PM_FAULT_POINT`), then 200 mutations killed at random instants. After each
//! kill, one ordinary mutation of the same item must succeed (the dead writer's lock is taken
//! over at once) and leave every stream verifying with its file in step: the next writer rolls
//! a file that is ahead of its history forward first, and cuts a torn last line.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use pm_engine::clock::format_iso_ms;
use pm_engine::hash::{EMPTY_DOC_HASH, HashEpoch, item_hash};
use pm_engine::history::{read_stream, verify_chain};
use pm_engine::item::ItemFormat;
use pm_engine::item::canon::CanonSchema;
use pm_engine::item::codec::parse_item;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const POINTS: [&str; 3] = ["after_lock", "after_item_write", "after_history_append"];
const FOLDERS: [&str; 2] = ["tasks", "chores"];

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
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    home: PathBuf,
    step: i64,
}

impl Env {
    fn new() -> Result<Env, Box<dyn std::error::Error>> {
        let tmp = tempfile::tempdir()?;
        let (ws, home) = (tmp.path().join("work"), tmp.path().join("home"));
        std::fs::create_dir_all(&ws)?;
        std::fs::create_dir_all(&home)?;
        let mut env = Env {
            _tmp: tmp,
            ws,
            home,
            step: 0,
        };
        env.run(&["init", "--defaults"])?;
        Ok(env)
    }

    /// A `pm` command one second after the previous one (so no lock ever expires by its ttl:
    /// only the dead-owner rule can take a crashed writer's lock over) with no lock wait.
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
                format_iso_ms(1_788_220_800_000 + self.step * 1000),
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

    /// Runs `args` with `PM_FAULT_POINT=point`, waits for the process to announce the point and
    /// kills it there; returns false when the command finished without reaching the point.
    fn crash_at(&mut self, args: &[&str], point: &str) -> Result<bool, Box<dyn std::error::Error>> {
        let mut child = self
            .command(args)
            .env("PM_FAULT_POINT", point)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let mut line = String::new();
        BufReader::new(stderr).read_line(&mut line)?;
        let reached = line.trim() == format!("fault:{point}");
        child.kill()?;
        child.wait()?;
        Ok(reached)
    }

    /// Runs `args` and kills it after `delay` (it may have finished already).
    fn kill_after(&mut self, args: &[&str], delay: Duration) -> TestResult {
        let mut child = self
            .command(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        // A deliberate instant, not a wait for a condition: the kill lands wherever the writer is.
        std::thread::sleep(delay);
        child.kill()?;
        child.wait()?;
        Ok(())
    }

    fn root(&self) -> PathBuf {
        self.ws.join(".agents/pm")
    }

    /// One ordinary mutation of `id`: a comment when the item exists, else a create with that id.
    fn ordinary_write(&mut self, id: &str) -> TestResult {
        if item_file(&self.root(), id).is_some() {
            self.run(&["comments", id, "--add", "after the crash"])?;
        } else {
            self.run(&[
                "create",
                "--type",
                "Task",
                "--title",
                "re-created",
                "--id",
                id,
            ])?;
        }
        Ok(())
    }
}

fn item_file(root: &Path, id: &str) -> Option<PathBuf> {
    FOLDERS
        .iter()
        .map(|f| root.join(f).join(format!("{id}.toon")))
        .find(|p| p.is_file())
}

/// Asserts that `id`'s stream verifies and its last `after_hash` is the file's hash.
fn assert_consistent(root: &Path, id: &str, label: &str) -> TestResult {
    let entries = read_stream(&root.join(format!("history/{id}.jsonl")), id)?.entries;
    let report = verify_chain(&entries);
    assert!(report.is_ok(), "{label}: {id} chain: {:?}", report.issues);
    let file_hash = match item_file(root, id) {
        Some(path) => {
            let bytes = std::fs::read(&path)?;
            let doc = parse_item(&bytes, ItemFormat::Toon, &path, &CanonSchema::NONE)?;
            item_hash(&doc, HashEpoch::V2)
        }
        None => EMPTY_DOC_HASH.to_string(),
    };
    let last = entries
        .last()
        .map_or(EMPTY_DOC_HASH, |e| e.after_hash.as_str());
    assert_eq!(last, file_hash, "{label}: {id} drifts");
    assert!(
        !root.join(format!("locks/{id}.lock")).exists(),
        "{label}: {id} lock left"
    );
    Ok(())
}

/// The mutation commands, each for an item in the state it needs; `prepare` brings it there.
struct Case {
    name: &'static str,
    prepare: &'static [&'static [&'static str]],
    args: &'static [&'static str],
}

const ID: &str = "{id}";

const CASES: &[Case] = &[
    Case {
        name: "create",
        prepare: &[],
        args: &["create", "--type", "Task", "--title", "New", "--id", ID],
    },
    Case {
        name: "update",
        prepare: &[],
        args: &["update", ID, "--priority", "1"],
    },
    Case {
        name: "update-move",
        prepare: &[],
        args: &["update", ID, "--type", "Chore"],
    },
    Case {
        name: "close",
        prepare: &[],
        args: &["close", ID, "done"],
    },
    Case {
        name: "reopen",
        prepare: &[&["close", ID, "done"]],
        args: &["item", "reopen", ID, "again"],
    },
    Case {
        name: "claim",
        prepare: &[],
        args: &["claim", ID],
    },
    Case {
        name: "release",
        prepare: &[&["claim", ID]],
        args: &["release", ID],
    },
    Case {
        name: "delete",
        prepare: &[],
        args: &["delete", ID],
    },
    Case {
        name: "restore",
        prepare: &[&["update", ID, "--priority", "0"]],
        args: &["restore", ID, "1"],
    },
    Case {
        name: "append",
        prepare: &[],
        args: &["append", ID, "more text"],
    },
    Case {
        name: "comments",
        prepare: &[],
        args: &["comments", ID, "--add", "a comment"],
    },
    Case {
        name: "notes",
        prepare: &[],
        args: &["notes", ID, "--add", "a note"],
    },
    Case {
        name: "learnings",
        prepare: &[],
        args: &["learnings", ID, "--add", "a learning"],
    },
    Case {
        name: "files",
        prepare: &[],
        args: &["files", ID, "--add", "src/lib.rs"],
    },
    Case {
        name: "docs",
        prepare: &[],
        args: &["docs", ID, "--add", "README.md"],
    },
    Case {
        name: "test",
        prepare: &[],
        args: &["test", ID, "--add", "cargo test"],
    },
    Case {
        name: "deps",
        prepare: &[],
        args: &["deps", ID, "--add", "pm-base"],
    },
    Case {
        name: "history-repair",
        prepare: &[],
        args: &["history-repair", ID],
    },
];

fn bind<'a>(args: &[&'a str], id: &'a str) -> Vec<&'a str> {
    args.iter().map(|a| if *a == ID { id } else { a }).collect()
}

#[test]
fn every_mutation_killed_at_every_point_then_one_write_leaves_a_verifying_stream() -> TestResult {
    let mut env = Env::new()?;
    env.run(&[
        "create", "--type", "Task", "--title", "Base", "--id", "pm-base",
    ])?;
    let mut crashed = 0;
    for (c, case) in CASES.iter().enumerate() {
        for (p, point) in POINTS.iter().enumerate() {
            let id = format!("pm-m{c}p{p}");
            if case.name != "create" {
                env.run(&["create", "--type", "Task", "--title", "Item", "--id", &id])?;
            }
            for step in case.prepare {
                env.run(&bind(step, &id))?;
            }
            let args = bind(case.args, &id);
            let reached = env.crash_at(&args, point)?;
            // history-repair writes no item file, so only its lock point is ever reached.
            assert!(
                reached || case.name == "history-repair",
                "{} never reached {point}",
                case.name
            );
            crashed += usize::from(reached);
            env.ordinary_write(&id)?;
            assert_consistent(&env.root(), &id, &format!("{} at {point}", case.name))?;
        }
    }
    assert!(crashed >= CASES.len() * POINTS.len() - 2, "{crashed} kills");
    Ok(())
}

#[test]
fn two_hundred_random_kills_each_followed_by_one_write_leave_verifying_streams() -> TestResult {
    const ITEMS: [&str; 4] = ["pm-k1", "pm-k2", "pm-k3", "pm-k4"];
    let mut env = Env::new()?;
    for id in ITEMS {
        env.run(&["create", "--type", "Task", "--title", id, "--id", id])?;
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for k in 0..200 {
        let id = ITEMS[rng.below(ITEMS.len())];
        let priority = rng.below(5).to_string();
        let text = format!("comment {k}");
        let kind = if k % 7 == 3 { "Chore" } else { "Task" };
        let args: Vec<&str> = if item_file(&env.root(), id).is_none() {
            vec!["create", "--type", "Task", "--title", "back", "--id", id]
        } else {
            match rng.below(6) {
                0 => vec!["update", id, "--priority", &priority],
                1 => vec!["comments", id, "--add", &text],
                2 => vec!["update", id, "--type", kind],
                3 => vec!["update", id, "--add-tags", &text],
                4 => vec!["delete", id],
                _ => vec!["notes", id, "--add", &text],
            }
        };
        // Debug-build mutations take 5-40 ms; kill anywhere in that span.
        let delay = Duration::from_micros(rng.below(40_000) as u64);
        env.kill_after(&args, delay)?;
        env.ordinary_write(id)?;
        for each in ITEMS {
            assert_consistent(
                &env.root(),
                each,
                &format!("kill {k} ({args:?} after {delay:?})"),
            )?;
        }
    }
    let out = env.run(&[
        "validate",
        "--check-history-drift",
        "--strict-exit",
        "--json",
    ])?;
    let report: serde_json::Value = serde_json::from_str(&out)?;
    assert_eq!(report["ok"], true, "{report}");
    Ok(())
}
