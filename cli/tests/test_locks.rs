//! Owned locks with real processes: a live owner is never overtaken however old its lock is, a
//! dead owner's lock is taken over at once, and the lock settings are bounded.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI64, Ordering};

use pm_engine::clock::format_iso_ms;
use pm_engine::history::{read_stream, verify_chain};
use serde_json::Value;

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const T0: i64 = 1_788_220_800_000; // 2026-09-01T00:00:00.000Z

/// Sets `settings.json` keys (dotted paths) of the tracker.
fn set_settings(root: &Path, edits: &[(&str, Value)]) -> TestResult {
    let path = root.join("settings.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&path)?)?;
    for (key, value) in edits {
        let mut slot = &mut doc;
        for part in key.split('.') {
            slot = slot
                .as_object_mut()
                .ok_or("settings path crosses a non-object")?
                .entry(part)
                .or_insert(Value::Object(serde_json::Map::new()));
        }
        *slot = value.clone();
    }
    pm_engine::atomic::write(&path, serde_json::to_string_pretty(&doc)?.as_bytes())?;
    Ok(())
}

fn pm_at(ws: &Path, home: &Path, clock_ms: i64, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pm"));
    cmd.env_clear()
        .current_dir(ws)
        .env("HOME", home)
        .env("PM_GLOBAL_PATH", home)
        .env("PM_AUTHOR", "lock-test")
        .env("PM_CLOCK", format_iso_ms(clock_ms))
        .env("PM_CLOCK_TICK_MS", "0")
        .args(args);
    cmd
}

/// Starts `pm args` parked right after it took its lock (killed by the caller).
fn park_holding_lock(
    ws: &Path,
    home: &Path,
    clock_ms: i64,
    args: &[&str],
) -> Result<Child, Box<dyn std::error::Error>> {
    let mut child = pm_at(ws, home, clock_ms, args)
        .env("PM_FAULT_POINT", "after_lock")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut line = String::new();
    BufReader::new(child.stderr.take().ok_or("stderr")?).read_line(&mut line)?;
    assert_eq!(line.trim(), "fault:after_lock");
    Ok(child)
}

fn comments_of(root: &Path, id: &str) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(root.join(format!("tasks/{id}.toon")))?;
    Ok(text
        .lines()
        .filter_map(|l| l.split_once(",lock-test,").map(|(_, t)| t.to_string()))
        .collect())
}

/// Eight writers whose clocks are a minute apart, so every lock a waiter meets is far past the
/// one-second ttl while its owner is still writing. Taking such a lock over would lose the
/// owner's write; every comment must survive and every chain verify.
#[test]
fn live_owners_past_their_ttl_are_never_overtaken() -> TestResult {
    const WRITERS: usize = 8;
    const PER_WRITER: usize = 63;
    const ITEMS: [&str; 3] = ["pm-l1", "pm-l2", "pm-l3"];
    let t = TestTracker::new()?;
    let (ws, home) = (t.workspace(), t.outside());
    assert_eq!(t.pm(&["init", "--defaults"])?.code, 0);
    for id in ITEMS {
        assert_eq!(
            t.pm(&["create", "--type", "Task", "--title", id, "--id", id])?
                .code,
            0
        );
    }
    // ttl 1 s, and no --force needed to clear a stale lock: only ownership can protect it.
    set_settings(
        &t.root(),
        &[
            ("locks.ttl_seconds", Value::from(1)),
            ("governance.preset", Value::from("minimal")),
        ],
    )?;
    let clock = AtomicI64::new(T0 + 3_600_000);
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (ws, home, clock) = (&ws, &home, &clock);
                s.spawn(move || {
                    let mut failed = Vec::new();
                    for k in 0..PER_WRITER {
                        let id = ITEMS[(w + k) % ITEMS.len()];
                        let text = format!("w{w}-{k}");
                        let at = clock.fetch_add(60_000, Ordering::SeqCst);
                        let out = pm_at(ws, home, at, &["comments", id, "--add", &text])
                            .env("PM_LOCK_WAIT_MS", "120000")
                            .output();
                        match out {
                            Ok(o) if o.status.success() => {}
                            Ok(o) => failed
                                .push(format!("{text}: {}", String::from_utf8_lossy(&o.stderr))),
                            Err(e) => failed.push(format!("{text}: {e}")),
                        }
                    }
                    failed
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    assert!(failures.is_empty(), "{failures:?}");
    let mut seen = BTreeMap::new();
    for id in ITEMS {
        for text in comments_of(&t.root(), id)? {
            *seen.entry(text).or_insert(0) += 1;
        }
        let entries = read_stream(&t.root().join(format!("history/{id}.jsonl")), id)?.entries;
        assert!(verify_chain(&entries).is_ok(), "{id} chain");
    }
    assert_eq!(seen.len(), WRITERS * PER_WRITER, "lost comments");
    assert!(seen.values().all(|n| *n == 1), "a comment appears twice");
    let run = t.pm(&["validate", "--check-history-drift", "--strict-exit"])?;
    assert_eq!(run.code, 0, "{}", run.stdout);
    eprintln!(
        "{} comments by {WRITERS} writers with a 1 s ttl: 0 lost",
        seen.len()
    );
    Ok(())
}

#[test]
fn a_dead_owners_lock_is_taken_over_at_once_and_a_live_one_never() -> TestResult {
    let t = TestTracker::new()?;
    let (ws, home) = (t.workspace(), t.outside());
    assert_eq!(t.pm(&["init", "--defaults"])?.code, 0);
    assert_eq!(
        t.pm(&["create", "--type", "Task", "--title", "x", "--id", "pm-d"])?
            .code,
        0
    );
    let lock = t.root().join("locks/pm-d.lock");
    // A live holder, its lock a day past the ttl for the next writer: refused even with --force.
    let mut holder = park_holding_lock(&ws, &home, T0, &["comments", "pm-d", "--add", "held"])?;
    let late = T0 + 86_400_000;
    let out = pm_at(
        &ws,
        &home,
        late,
        &["comments", "pm-d", "--add", "late", "--force", "--json"],
    )
    .env("PM_LOCK_WAIT_MS", "300")
    .output()?;
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err: Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(err["error"]["code"], "lock_conflict");
    assert!(std::fs::read_to_string(&lock)?.contains(&format!("\"pid\": {}", holder.id())));
    // The holder dies: the very next writer takes the lock over without waiting or --force.
    holder.kill()?;
    holder.wait()?;
    let out = pm_at(
        &ws,
        &home,
        T0 + 1000,
        &["comments", "pm-d", "--add", "after"],
    )
    .env("PM_LOCK_WAIT_MS", "0")
    .output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!lock.exists(), "the new holder released the lock");
    assert_eq!(comments_of(&t.root(), "pm-d")?, ["after"]);
    Ok(())
}

fn refusal(run: &crate::common::Run) -> Result<Value, Box<dyn std::error::Error>> {
    let doc: Value = serde_json::from_str(&run.stdout)?;
    Ok(doc["error"].clone())
}

#[test]
fn lock_settings_outside_their_domain_refuse_writes_and_name_the_key() -> TestResult {
    let t = TestTracker::new()?;
    assert_eq!(t.pm(&["init", "--defaults"])?.code, 0);
    assert_eq!(
        t.pm(&["create", "--type", "Task", "--title", "x", "--id", "pm-s"])?
            .code,
        0
    );
    for (key, value, shown) in [
        ("locks.ttl_seconds", Value::from(0), "0"),
        ("locks.ttl_seconds", Value::from(-1), "-1"),
        (
            "locks.wait_ms",
            Value::from(1_000_000_000_000_000_i64),
            "1000000000000000",
        ),
    ] {
        set_settings(
            &t.root(),
            &[
                ("locks.ttl_seconds", Value::from(1800)),
                ("locks.wait_ms", Value::from(3000)),
            ],
        )?;
        set_settings(&t.root(), &[(key, value)])?;
        let before = t.snapshot()?;
        let run = t.pm(&["comments", "pm-s", "--add", "x", "--json"])?;
        assert_eq!(run.code, 2, "{key}={shown}: {}", run.stdout);
        let err = refusal(&run)?;
        assert_eq!(err["code"], "settings_invalid");
        let message = err["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(key) && message.contains(shown) && message.contains("from"),
            "{message}"
        );
        assert_eq!(t.snapshot()?, before, "a refused write changes nothing");
        assert_eq!(t.pm(&["list"])?.code, 0, "reads still answer");
    }
    set_settings(
        &t.root(),
        &[
            ("locks.ttl_seconds", Value::from(1800)),
            ("locks.wait_ms", Value::from(3000)),
        ],
    )?;
    for bad in ["abc", "-5", "1e3", "600001"] {
        let run = t.pm_in(
            &t.workspace(),
            &["comments", "pm-s", "--add", "x", "--json"],
            &[("PM_LOCK_WAIT_MS", bad)],
        )?;
        assert_eq!(run.code, 2, "PM_LOCK_WAIT_MS={bad}");
        let err = refusal(&run)?;
        assert_eq!(err["code"], "settings_invalid");
        assert!(
            err["message"]
                .as_str()
                .unwrap_or_default()
                .contains("PM_LOCK_WAIT_MS")
        );
    }
    let run = t.pm_in(
        &t.workspace(),
        &["comments", "pm-s", "--add", "ok"],
        &[("PM_LOCK_WAIT_MS", " 600000 ")],
    )?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    Ok(())
}

#[test]
fn oversized_items_and_overlong_ids_are_refused_up_front() -> TestResult {
    let t = TestTracker::new()?;
    assert_eq!(t.pm(&["init", "--defaults"])?.code, 0);
    set_settings(&t.root(), &[("limits.item_max_bytes", Value::from(4096))])?;
    let before = t.snapshot()?;
    let big = "x".repeat(5000);
    let run = t.pm(&[
        "create",
        "--type",
        "Task",
        "--title",
        "big",
        "--description",
        &big,
        "--json",
    ])?;
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(refusal(&run)?["code"], "item_too_large");
    assert_eq!(t.snapshot()?, before, "nothing written");
    // An item that grew past the limit by hand is refused before it is read.
    assert_eq!(
        t.pm(&[
            "create", "--type", "Task", "--title", "small", "--id", "pm-g"
        ])?
        .code,
        0
    );
    let path = t.root().join("tasks/pm-g.toon");
    let mut text = std::fs::read_to_string(&path)?;
    text = text.replace("description: \"\"", &format!("description: {big}"));
    pm_engine::atomic::write(&path, text.as_bytes())?;
    let run = t.pm(&["comments", "pm-g", "--add", "x", "--json"])?;
    assert_eq!(refusal(&run)?["code"], "item_too_large", "{}", run.stdout);
    // Ids: the longest id whose longest file name (a history temp file) fits in 255 bytes.
    let longest = format!("pm-{}", "a".repeat(pm_engine::ids::MAX_ID_LEN - 3));
    let too_long = format!("{longest}b");
    let run = t.pm(&[
        "create", "--type", "Task", "--title", "long", "--id", &too_long, "--json",
    ])?;
    assert_eq!(run.code, 2);
    let err = refusal(&run)?;
    assert_eq!(err["code"], "invalid_item_id");
    assert!(
        err["message"]
            .as_str()
            .unwrap_or_default()
            .contains(&pm_engine::ids::MAX_ID_LEN.to_string())
    );
    let run = t.pm(&[
        "create", "--type", "Task", "--title", "long", "--id", &longest,
    ])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(t.pm(&["comments", &longest, "--add", "fits"])?.code, 0);
    Ok(())
}
