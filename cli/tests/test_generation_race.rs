//! Reads racing index generation switches, with real processes: writers mutate items, a loop
//! runs `pm reindex` (each run switches `CURRENT` to a new generation and removes the old
//! file), and readers run `list`, `next` and `context` until 200 reads have completed. A read
//! that chose the removed file used to wait out r2d2's 30 s checkout timeout; now every read
//! must finish within a second, exit 0 and print the same counts as before the race.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde::de::DeserializeOwned;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Items of the generated tracker: a read takes tens of milliseconds, far below the bound.
const ITEMS: &str = "200";
/// Reads to complete before the writers and reindex loops stop.
const READS: usize = 200;
const READERS: usize = 3;
const WRITERS: usize = 2;
const REINDEX_LOOPS: usize = 1;
/// The longest a read may take: a stall bound, not a benchmark. A stalled read waits on a lock
/// (up to `PM_LOCK_WAIT_MS`, two minutes here); an unstalled one takes tens of milliseconds, up
/// to about 1.5 s when the whole test suite shares two cores, and once took over 5 s on a
/// machine also running other builds. 20 s still tells a stall from a slow machine.
const READ_BOUND: Duration = Duration::from_secs(20);
/// Items the writers mutate.
const MUTATED: usize = 6;

/// A read command and what its JSON must say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Read {
    List,
    Next,
    Context,
}

impl Read {
    const ALL: [Read; 3] = [Read::List, Read::Next, Read::Context];

    fn args(self) -> &'static [&'static str] {
        match self {
            Read::List => &["list", "--json"],
            Read::Next => &["next", "--json"],
            Read::Context => &["context", "--json"],
        }
    }

    /// Returns the count the read's answer reports (writers change priorities and comments
    /// only, so it must not change during the race).
    fn count(self, stdout: &[u8]) -> Result<usize, serde_json::Error> {
        match self {
            Read::List => {
                let out: ListOut = serde_json::from_slice(stdout)?;
                Ok(out.total)
            }
            Read::Next => {
                let out: NextOut = serde_json::from_slice(stdout)?;
                Ok(out.summary.candidates)
            }
            Read::Context => {
                let out: ContextOut = serde_json::from_slice(stdout)?;
                Ok(out.summary.active_items)
            }
        }
    }
}

#[derive(Deserialize)]
struct Row {
    id: String,
}

#[derive(Deserialize)]
struct ListOut {
    items: Vec<Row>,
    total: usize,
}

#[derive(Deserialize)]
struct NextSummary {
    candidates: usize,
}

#[derive(Deserialize)]
struct NextOut {
    summary: NextSummary,
}

#[derive(Deserialize)]
struct ContextSummary {
    active_items: usize,
}

#[derive(Deserialize)]
struct ContextOut {
    summary: ContextSummary,
}

#[derive(Deserialize)]
struct ReindexOut {
    generation: u64,
}

/// The hermetic environment of every run.
#[derive(Clone)]
struct Env {
    ws: PathBuf,
    home: PathBuf,
}

impl Env {
    fn run(&self, args: &[&str], author: &str) -> std::io::Result<Output> {
        Command::new(env!("CARGO_BIN_EXE_pm"))
            .env_clear()
            .current_dir(&self.ws)
            .env("HOME", &self.home)
            .env("PM_GLOBAL_PATH", &self.home)
            .env("PM_AUTHOR", author)
            .env("NO_COLOR", "1")
            // Writers queue on item locks instead of failing (reads take none).
            .env("PM_LOCK_WAIT_MS", "120000")
            .args(args)
            .output()
    }

    /// Runs `args`, failing unless it exits 0.
    fn ok(&self, args: &[&str], author: &str) -> Result<Output, String> {
        let out = self
            .run(args, author)
            .map_err(|e| format!("{args:?}: {e}"))?;
        if out.status.success() {
            Ok(out)
        } else {
            Err(format!(
                "{args:?} exited {:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    fn json<T: DeserializeOwned>(&self, args: &[&str]) -> Result<T, String> {
        let out = self.ok(args, "setup")?;
        serde_json::from_slice(&out.stdout).map_err(|e| format!("{args:?}: {e}"))
    }
}

/// One completed read.
struct Timed {
    read: Read,
    elapsed: Duration,
    /// The count it reported, or why it failed.
    outcome: Result<usize, String>,
}

fn timed_read(env: &Env, read: Read) -> Timed {
    let start = Instant::now();
    let out = env.run(read.args(), "reader");
    let elapsed = start.elapsed();
    let outcome = match out {
        Err(e) => Err(e.to_string()),
        Ok(out) if !out.status.success() => Err(format!(
            "exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )),
        Ok(out) => read
            .count(&out.stdout)
            .map_err(|e| format!("bad JSON: {e}")),
    };
    Timed {
        read,
        elapsed,
        outcome,
    }
}

/// Starts `n` threads running `step(thread, round)` after the barrier until `stop`; each
/// returns how many rounds it completed.
fn loops(
    n: usize,
    barrier: &Arc<Barrier>,
    stop: &Arc<AtomicBool>,
    step: impl Fn(usize, usize) -> Result<(), String> + Send + Sync + 'static,
) -> Vec<JoinHandle<Result<usize, String>>> {
    let step = Arc::new(step);
    (0..n)
        .map(|t| {
            let (barrier, stop, step) = (Arc::clone(barrier), Arc::clone(stop), Arc::clone(&step));
            std::thread::spawn(move || {
                barrier.wait();
                let mut round = 0;
                while !stop.load(Ordering::Relaxed) {
                    step(t, round)?;
                    round += 1;
                }
                Ok(round)
            })
        })
        .collect()
}

fn join_all<T>(handles: Vec<JoinHandle<Result<T, String>>>) -> Result<Vec<T>, String> {
    handles
        .into_iter()
        .map(|h| h.join().map_err(|_| "thread panicked".to_string())?)
        .collect()
}

fn setup(root: &Path) -> Result<Env, Box<dyn std::error::Error>> {
    let env = Env {
        ws: root.join("work"),
        home: root.join("home"),
    };
    std::fs::create_dir_all(&env.home)?;
    let outside = Env {
        ws: root.to_path_buf(),
        home: env.home.clone(),
    };
    let out = env.ws.to_string_lossy();
    outside.ok(
        &["bench", "generate", "--items", ITEMS, "--out", &out],
        "setup",
    )?;
    env.ok(&["reindex"], "setup")?;
    Ok(env)
}

#[test]
fn reads_racing_generation_switches_never_stall() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let env = setup(tmp.path())?;
    let listed: ListOut = env.json(&["list", "--json", "--limit", &MUTATED.to_string()])?;
    let ids: Arc<Vec<String>> = Arc::new(listed.items.into_iter().map(|r| r.id).collect());
    assert_eq!(ids.len(), MUTATED, "items to mutate");
    let mut expected = Vec::new();
    for read in Read::ALL {
        let out = env.ok(read.args(), "setup")?;
        expected.push((read, read.count(&out.stdout)?));
    }

    let barrier = Arc::new(Barrier::new(READERS + WRITERS + REINDEX_LOOPS));
    let stop = Arc::new(AtomicBool::new(false));
    let writers = {
        let (env, ids) = (env.clone(), Arc::clone(&ids));
        loops(WRITERS, &barrier, &stop, move |w, round| {
            let id = &ids[(w + round) % ids.len()];
            let author = format!("writer-{w}");
            let priority = (round % 5).to_string();
            let text = format!("w{w} r{round}");
            let args: [&str; 4] = if round % 2 == 0 {
                ["comments", id, "--add", &text]
            } else {
                ["update", id, "--priority", &priority]
            };
            env.ok(&args, &author).map(drop)
        })
    };
    let generations = Arc::new(AtomicUsize::new(0));
    let reindexers = {
        let (env, generations) = (env.clone(), Arc::clone(&generations));
        loops(REINDEX_LOOPS, &barrier, &stop, move |_, _| {
            let built: ReindexOut = env.json(&["reindex", "--json"])?;
            generations.fetch_max(built.generation as usize, Ordering::Relaxed);
            Ok(())
        })
    };
    let claimed = Arc::new(AtomicUsize::new(0));
    let readers: Vec<JoinHandle<Result<Vec<Timed>, String>>> = (0..READERS)
        .map(|r| {
            let (env, barrier, claimed) = (env.clone(), Arc::clone(&barrier), Arc::clone(&claimed));
            std::thread::spawn(move || {
                barrier.wait();
                let mut done = Vec::new();
                while claimed.fetch_add(1, Ordering::Relaxed) < READS {
                    done.push(timed_read(
                        &env,
                        Read::ALL[(r + done.len()) % Read::ALL.len()],
                    ));
                }
                Ok(done)
            })
        })
        .collect();
    let reads: Result<Vec<Timed>, String> =
        join_all(readers).map(|r| r.into_iter().flatten().collect());
    stop.store(true, Ordering::Relaxed);
    let writes: usize = join_all(writers)?.into_iter().sum();
    let reindexes: usize = join_all(reindexers)?.into_iter().sum();
    let reads = reads?;
    assert_eq!(reads.len(), READS);

    let mut times: Vec<Duration> = reads.iter().map(|t| t.elapsed).collect();
    times.sort();
    let (p50, max) = (times[times.len() / 2], times[times.len() - 1]);
    let stalled: Vec<&Timed> = reads.iter().filter(|t| t.elapsed > READ_BOUND).collect();
    eprintln!(
        "generation race: {} reads (p50 {p50:?}, max {max:?}, {} over {READ_BOUND:?}), \
         {writes} writes, {reindexes} reindexes (last generation {})",
        reads.len(),
        stalled.len(),
        generations.load(Ordering::Relaxed),
    );
    assert!(reindexes >= 3, "the race needs generation switches");
    for t in &reads {
        let want = expected.iter().find(|(r, _)| *r == t.read).map(|(_, c)| *c);
        match &t.outcome {
            Ok(count) => assert_eq!(Some(*count), want, "{:?} count", t.read),
            Err(e) => panic!("{:?} failed after {:?}: {e}", t.read, t.elapsed),
        }
    }
    let slow: Vec<(Read, Duration)> = stalled.iter().map(|t| (t.read, t.elapsed)).collect();
    assert!(slow.is_empty(), "reads over {READ_BOUND:?}: {slow:?}");
    Ok(())
}
