use super::*;
use crate::clock::EpochMs;
use std::fs;
use std::io::Write;
use std::sync::{Arc, Barrier};

type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;
const T0: EpochMs = 1_788_220_800_000; // 2026-09-01T00:00:00.000Z

fn opts(wait_ms: u64) -> LockOptions {
    LockOptions {
        owner: "tester".into(),
        ttl_seconds: 1800,
        wait_ms,
        force: false,
        force_required_for_stale_lock: true,
    }
}

/// A pid no process has: a child that already exited and was reaped.
fn dead_pid() -> std::io::Result<u32> {
    let mut child = std::process::Command::new("true").spawn()?;
    let pid = child.id();
    child.wait()?;
    Ok(pid)
}

fn plant(tracker: &Tracker, info: &LockInfo) -> std::io::Result<()> {
    fs::create_dir_all(tracker.locks_dir())?;
    fs::File::create(tracker.lock_path(&info.id))?.write_all(info.to_file_text().as_bytes())
}

/// A lock as pm-cli writes it: no host, start or token.
fn legacy(id: &str, pid: u32, created_at: &str) -> LockInfo {
    LockInfo {
        id: id.into(),
        pid,
        owner: "ghost".into(),
        created_at: created_at.into(),
        ttl_seconds: 1800,
        host: None,
        process_start: None,
        token: None,
    }
}

fn owned_by_me(id: &str, created_at: &str) -> LockInfo {
    let me = ProcessIdentity::current();
    LockInfo {
        host: Some(me.host.clone()),
        process_start: me.start.clone(),
        token: Some("someone-else".into()),
        ..legacy(id, me.pid, created_at)
    }
}

/// A reader racing with lock creation must never see an empty or partial body (it would
/// judge such a lock malformed).
#[test]
fn a_lock_is_never_visible_without_its_body() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let root = Root::open(tmp.path())?;
    let dir = root.dir(Path::new("."), false)?.ok_or("root")?;
    let path = tmp.path().join("pm-race.lock");
    let info = owned_by_me("pm-race", "2026-09-01T00:00:00.000Z");
    let done = std::sync::atomic::AtomicBool::new(false);
    let torn = std::thread::scope(|scope| -> std::result::Result<usize, Error> {
        let reader = scope.spawn(|| {
            let mut torn = 0usize;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if matches!(read_lock_info(&path), LockRead::Malformed(_)) {
                    torn += 1;
                }
            }
            torn
        });
        for _ in 0..300 {
            assert!(create_lock_file(&dir, OsStr::new("pm-race.lock"), &info)?);
            dir.unlink(OsStr::new("pm-race.lock"))?;
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(reader.join().unwrap_or(usize::MAX))
    })?;
    assert_eq!(torn, 0, "a reader saw a lock without its body");
    assert_eq!(
        fs::read_dir(tmp.path())?.count(),
        0,
        "no staging files left"
    );
    Ok(())
}

#[test]
fn lock_file_body_names_its_owner_and_release_removes_it() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let tracker = Tracker::at(tmp.path());
    let clock = Clock::pinned(T0, 0);
    let guard = acquire(&tracker, "pm-48nj", &opts(0), &clock)?;
    let text = fs::read_to_string(guard.path())?;
    let me = ProcessIdentity::current();
    let token = guard.info().token.clone().ok_or("token")?;
    assert_eq!(token.len(), 32);
    let start = match &me.start {
        Some(start) => format!(",\n  \"process_start\": \"{start}\""),
        None => String::new(),
    };
    let expected = format!(
        "{{\n  \"id\": \"pm-48nj\",\n  \"pid\": {},\n  \"owner\": \"tester\",\n  \"created_at\": \"2026-09-01T00:00:00.000Z\",\n  \"ttl_seconds\": 1800,\n  \"host\": \"{}\"{start},\n  \"token\": \"{token}\"\n}}\n",
        me.pid, me.host
    );
    assert_eq!(text, expected);
    assert_eq!(LockInfo::parse(&text).as_ref(), Some(guard.info()));
    let path = guard.path().to_path_buf();
    guard.check_held()?;
    drop(guard);
    assert!(!path.exists());
    acquire(&tracker, "pm-48nj", &opts(0), &clock)?.release()?;
    assert!(!path.exists());
    Ok(())
}

#[test]
fn a_held_lock_fails_fast_with_its_owner() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let tracker = Tracker::at(tmp.path());
    plant(
        &tracker,
        &legacy("pm-a", std::process::id(), "2026-09-01T00:00:00.000Z"),
    )?;
    let clock = Clock::pinned(T0 + 1000, 0);
    match acquire(&tracker, "pm-a", &opts(0), &clock) {
        Err(Error::LockHeld {
            owner,
            pid,
            waited_ms,
            ..
        }) => assert_eq!(
            (owner.as_str(), pid, waited_ms),
            ("ghost", std::process::id(), 0)
        ),
        other => panic!("expected LockHeld, got {other:?}"),
    }
    assert!(
        tracker.lock_path("pm-a").exists(),
        "a held lock is never removed"
    );
    Ok(())
}

#[test]
fn a_live_owner_is_never_overtaken_however_old_even_with_force() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let tracker = Tracker::at(tmp.path());
    plant(
        &tracker,
        &owned_by_me("pm-live", "2020-01-01T00:00:00.000Z"),
    )?;
    let forced = LockOptions {
        force: true,
        ttl_seconds: 1,
        ..opts(50)
    };
    let err = acquire(&tracker, "pm-live", &forced, &Clock::pinned(T0, 0)).expect_err("held");
    assert_eq!(err.code().as_str(), "lock_conflict");
    let kept = fs::read_to_string(tracker.lock_path("pm-live"))?;
    assert!(kept.contains("someone-else"), "{kept}");
    Ok(())
}

#[test]
fn a_gone_owner_is_taken_over_at_once_without_force() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let tracker = Tracker::at(tmp.path());
    let me = ProcessIdentity::current();
    let dead = LockInfo {
        host: Some(me.host.clone()),
        ..legacy("pm-dead", dead_pid()?, "2026-09-01T00:00:00.000Z")
    };
    plant(&tracker, &dead)?;
    // Not expired (created at T0, read at T0), governance wants --force for stale locks: the
    // owner is provably gone, so neither matters.
    let guard = acquire(&tracker, "pm-dead", &opts(0), &Clock::pinned(T0, 0))?;
    assert_eq!(guard.info().owner, "tester");
    // A reused pid (same host and pid, another start) is gone too.
    drop(guard);
    if me.start.is_some() {
        let reused = LockInfo {
            process_start: Some("another-boot:1".into()),
            ..owned_by_me("pm-dead", "2026-09-01T00:00:00.000Z")
        };
        plant(&tracker, &reused)?;
        acquire(&tracker, "pm-dead", &opts(0), &Clock::pinned(T0, 0))?.release()?;
    }
    Ok(())
}

#[test]
fn second_holder_in_another_thread_is_refused() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let tracker = Arc::new(Tracker::at(tmp.path()));
    let held = Arc::new(Barrier::new(2));
    let tried = Arc::new(Barrier::new(2));
    let holder = {
        let (tracker, held, tried) = (Arc::clone(&tracker), Arc::clone(&held), Arc::clone(&tried));
        std::thread::spawn(move || -> Result<()> {
            let guard = acquire(&tracker, "pm-t", &opts(0), &Clock::pinned(T0, 0))?;
            held.wait();
            tried.wait();
            guard.release()
        })
    };
    held.wait();
    let clock = Clock::pinned(T0, 0);
    let refused = acquire(&tracker, "pm-t", &opts(0), &clock);
    assert_eq!(
        refused.map(|_| ()).map_err(|e| e.code().as_str()),
        Err("lock_conflict")
    );
    tried.wait();
    holder.join().map_err(|_| "holder panicked")??;
    let guard = acquire(&tracker, "pm-t", &opts(0), &clock)?;
    assert_eq!(guard.info().owner, "tester");
    Ok(())
}

#[test]
fn expired_locks_of_unprovable_owners_need_force_when_governance_says_so() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let tracker = Tracker::at(tmp.path());
    let clock = Clock::pinned(T0, 0);
    // 1800.001 s old, a pm-cli lock whose pid is not running here.
    plant(
        &tracker,
        &legacy("pm-s", dead_pid()?, "2026-08-31T23:29:59.999Z"),
    )?;
    match acquire(&tracker, "pm-s", &opts(0), &clock) {
        Err(Error::LockStale { ttl_seconds, .. }) => assert_eq!(ttl_seconds, 1800),
        other => panic!("expected LockStale, got {other:?}"),
    }
    let forced = LockOptions {
        force: true,
        ..opts(0)
    };
    let guard = acquire(&tracker, "pm-s", &forced, &clock)?;
    assert_eq!(guard.info().owner, "tester");
    assert!(
        !tmp.path().join("locks/pm-s.lock.stale-cleanup").exists(),
        "gate removed"
    );
    drop(guard);
    // Another host's expired lock: removable, here without force (governance relaxed).
    let relaxed = LockOptions {
        force_required_for_stale_lock: false,
        ..opts(0)
    };
    let other_host = LockInfo {
        host: Some("elsewhere.invalid".into()),
        ..legacy("pm-s", 1, "2026-08-31T23:29:59.999Z")
    };
    plant(&tracker, &other_host)?;
    acquire(&tracker, "pm-s", &relaxed, &clock)?.release()?;
    // A pm-cli lock whose pid runs here: only --force removes it, even when relaxed.
    plant(
        &tracker,
        &legacy("pm-s", std::process::id(), "2026-08-31T23:29:59.999Z"),
    )?;
    let err = acquire(&tracker, "pm-s", &relaxed, &clock).expect_err("needs force");
    assert_eq!(err.code().as_str(), "lock_stale");
    let relaxed_forced = LockOptions {
        force: true,
        ..relaxed.clone()
    };
    acquire(&tracker, "pm-s", &relaxed_forced, &clock)?.release()?;
    Ok(())
}

#[test]
fn malformed_locks_are_removed_after_their_grace() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let tracker = Tracker::at(tmp.path());
    let clock = Clock::pinned(T0, 0);
    let relaxed = LockOptions {
        force_required_for_stale_lock: false,
        ..opts(0)
    };
    fs::create_dir_all(tracker.locks_dir())?;
    let path = tracker.lock_path("pm-m");
    fs::File::create(&path)?.write_all(b"{not json")?;
    // Fresh: maybe pm-cli writing its body right now.
    let err = acquire(&tracker, "pm-m", &relaxed, &clock).expect_err("in grace");
    assert_eq!(err.code().as_str(), "lock_conflict");
    let old = real_time_ago(Duration::from_secs(60));
    fs::File::options()
        .write(true)
        .open(&path)?
        .set_modified(old)?;
    acquire(&tracker, "pm-m", &relaxed, &clock)?.release()?;
    Ok(())
}

#[test]
fn a_holder_notices_a_takeover_and_leaves_the_new_lock_alone() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let tracker = Tracker::at(tmp.path());
    let guard = acquire(&tracker, "pm-x", &opts(0), &Clock::pinned(T0, 0))?;
    let intruder = owned_by_me("pm-x", "2026-09-01T00:00:01.000Z");
    fs::remove_file(tracker.lock_path("pm-x"))?;
    plant(&tracker, &intruder)?;
    let err = guard.check_held().expect_err("lost");
    assert_eq!(err.code().as_str(), "lock_lost");
    assert!(err.to_string().contains("nothing was written"), "{err}");
    guard.release()?;
    assert_eq!(
        read_lock_info(&tracker.lock_path("pm-x")),
        LockRead::Held(intruder),
        "the new holder's lock survives the old holder's release"
    );
    fs::remove_file(tracker.lock_path("pm-x"))?;
    let guard = acquire(&tracker, "pm-x", &opts(0), &Clock::pinned(T0, 0))?;
    fs::remove_file(tracker.lock_path("pm-x"))?;
    assert_eq!(
        guard.check_held().map_err(|e| e.code().as_str()),
        Err("lock_lost")
    );
    Ok(())
}

#[test]
fn a_busy_gate_blocks_removal_until_it_is_abandoned() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let tracker = Tracker::at(tmp.path());
    plant(
        &tracker,
        &legacy("pm-g", dead_pid()?, "2020-01-01T00:00:00.000Z"),
    )?;
    let gate = tmp.path().join("locks/pm-g.lock.stale-cleanup");
    fs::create_dir(&gate)?;
    let owner = format!("{{\"pid\":{},\"token\":\"t\"}}\n", std::process::id());
    fs::File::create(gate.join("owner.json"))?.write_all(owner.as_bytes())?;
    let forced = LockOptions {
        force: true,
        ..opts(0)
    };
    let clock = Clock::pinned(T0, 0);
    // A fresh gate held by a live process: the stale lock stays and we report it held.
    let err = acquire(&tracker, "pm-g", &forced, &clock).expect_err("gate busy");
    assert_eq!(err.code().as_str(), "lock_conflict");
    // After five minutes the gate is broken even though its owner pid is alive.
    let old = real_time_ago(Duration::from_secs(6 * 60));
    fs::File::open(&gate)?.set_modified(old)?;
    acquire(&tracker, "pm-g", &forced, &clock)?.release()?;
    assert!(!gate.exists());
    Ok(())
}

#[test]
fn unsafe_lock_paths_are_refused_and_nothing_outside_changes() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let clock = Clock::pinned(T0, 0);
    let tracker = Tracker::at(tmp.path().join("t"));
    fs::create_dir_all(tracker.root())?;
    for bad in ["", "a/b", "..", "x..y", "a\\b", "."] {
        let err = acquire(&tracker, bad, &opts(0), &clock).expect_err(bad);
        assert_eq!(err.code().as_str(), "lock_path_unsafe", "{bad:?}");
    }
    #[cfg(unix)]
    {
        let outside = tmp.path().join("outside");
        fs::create_dir_all(&outside)?;
        std::os::unix::fs::symlink(&outside, tracker.locks_dir())?;
        let err = acquire(&tracker, "pm-a", &opts(0), &clock).expect_err("symlinked dir");
        assert_eq!(err.code().as_str(), "path_unsafe");
        assert_eq!(
            fs::read_dir(&outside)?.count(),
            0,
            "nothing written outside"
        );
        fs::remove_file(tracker.locks_dir())?;
        fs::create_dir_all(tracker.locks_dir())?;
        std::os::unix::fs::symlink(outside.join("x"), tracker.lock_path("pm-a"))?;
        let err = acquire(&tracker, "pm-a", &opts(0), &clock).expect_err("symlinked lock");
        assert_eq!(err.code().as_str(), "path_unsafe");
        assert!(!outside.join("x").exists());
    }
    Ok(())
}

/// Returns the real (system clock) instant `ago` before now, for file times.
fn real_time_ago(ago: Duration) -> std::time::SystemTime {
    let now_ms = crate::clock::Clock::System.now_ms().max(0) as u64;
    std::time::UNIX_EPOCH + Duration::from_millis(now_ms) - ago
}
