//! What killed writers leave behind: a lock whose owner was SIGKILLed is `owner_gone` (not
//! active) in `health` and `validate` and goes with `pm gc --scope locks`; a live owner's lock
//! past its ttl is reported and never removed; writer debris (our temp names, older than 10
//! minutes) is reported and removed by `pm gc --scope debris`, fresh and foreign files stay.

use std::error::Error;
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn Error>>;

/// A reader clock years after the writer's (2026-09-01): every lock is past its ttl.
const FAR_FUTURE: &str = "2031-01-01T00:00:00.000Z";

fn tracker_with_item() -> Result<TestTracker, Box<dyn Error>> {
    let t = TestTracker::new()?;
    for args in [
        &["init", "--defaults"][..],
        &["create", "task", "Leftovers", "--id", "pm-k1"][..],
    ] {
        let run = t.pm(args)?;
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    }
    Ok(t)
}

fn json_of(
    t: &TestTracker,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<(Value, i32), Box<dyn Error>> {
    let run = t.pm_in(&t.workspace(), args, env)?;
    assert_eq!(run.stderr, "", "{args:?}");
    Ok((serde_json::from_str(&run.stdout)?, run.code))
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["name"] == name))
        .unwrap_or(&Value::Null)
}

fn finding<'a>(report: &'a Value, warning: &str) -> &'a Value {
    report["findings"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["warning"] == warning))
        .unwrap_or(&Value::Null)
}

fn scope<'a>(gc: &'a Value, name: &str) -> &'a Value {
    gc["scopes"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["scope"] == name))
        .unwrap_or(&Value::Null)
}

/// Writes `rel` under the tracker root and makes it old (2023) unless `fresh`.
fn plant(root: &Path, rel: &str, fresh: bool) -> TestResult {
    let path = root.join(rel);
    pm_engine::atomic::write(&path, b"half written")?;
    if !fresh {
        age(&path)?;
    }
    Ok(())
}

fn age(path: &Path) -> TestResult {
    std::fs::File::open(path)?.set_modified(UNIX_EPOCH + Duration::from_secs(1_700_000_000))?;
    Ok(())
}

#[test]
fn a_killed_writers_lock_is_owner_gone_and_gc_removes_it() -> TestResult {
    let t = tracker_with_item()?;
    let writer = t.park_at(&["update", "pm-k1", "--priority", "1"], "after_lock")?;
    let pid = writer.pid();
    writer.kill()?;
    let lock = t.root().join("locks/pm-k1.lock");
    assert!(lock.exists(), "the killed writer left its lock");

    let (health, code) = json_of(&t, &["health", "--json"], &[])?;
    assert_eq!(code, 0);
    let details = &check(&health, "locks")["details"];
    assert_eq!(
        (
            &details["active_lock_count"],
            &details["stale_lock_count"],
            &details["owner_gone_lock_count"]
        ),
        (&json!(0), &json!(1), &json!(1))
    );
    assert_eq!(check(&health, "locks")["status"], "warn");
    assert_eq!(health["ok"], false);
    let found = finding(&health, "lock_owner_gone:pm-k1");
    assert_eq!(found["severity"], "gate_failing");
    assert_eq!(found["remediation"], "pm gc --scope locks");
    let message = found["message"].as_str().unwrap_or("");
    assert!(message.contains(&format!("pid {pid}")), "{message}");
    assert!(message.contains("test-author"), "{message}");
    assert_eq!(details["locks"][0]["pid"], pid);
    assert_eq!(details["locks"][0]["owner_state"], "gone");
    assert!(details["locks"][0]["host"].is_string());
    let strict = t.pm(&["health", "--strict-exit", "--json"])?;
    assert_eq!(strict.code, 1);

    let (validate, _) = json_of(
        &t,
        &["validate", "--check-storage-integrity", "--json"],
        &[],
    )?;
    let storage = &check(&validate, "storage_integrity");
    assert_eq!(storage["status"], "warn");
    assert_eq!(
        storage["details"]["dead_locks"]["paths"],
        json!(["locks/pm-k1.lock"])
    );
    assert_eq!(
        storage["details"]["dead_locks"]["fix"],
        "pm gc --scope locks"
    );
    assert_eq!(
        validate["warnings"],
        json!(["validate_storage_dead_locks:1"])
    );
    let strict = t.pm(&["validate", "--check-storage-integrity", "--strict-exit"])?;
    assert_eq!(strict.code, 1);

    let (dry, code) = json_of(&t, &["gc", "--scope", "locks", "--dry-run", "--json"], &[])?;
    assert_eq!(code, 0);
    assert_eq!(scope(&dry, "locks")["removed"], json!(["locks/pm-k1.lock"]));
    assert!(lock.exists());
    let (gc, code) = json_of(&t, &["gc", "--scope", "locks", "--json"], &[])?;
    assert_eq!(code, 0);
    assert_eq!(scope(&gc, "locks")["removed"], json!(["locks/pm-k1.lock"]));
    assert!(!lock.exists());

    // Clean again: pm's four keys only, and the next writer goes through.
    let (health, _) = json_of(&t, &["health", "--json"], &[])?;
    assert_eq!(
        check(&health, "locks")["details"],
        json!({"active_lock_count": 0, "stale_lock_count": 0,
               "unreadable_lock_count": 0, "unparseable_lock_count": 0})
    );
    assert_eq!(t.pm(&["update", "pm-k1", "--priority", "1"])?.code, 0);
    Ok(())
}

#[test]
fn a_live_owner_past_its_ttl_is_reported_and_never_removed() -> TestResult {
    let t = tracker_with_item()?;
    let writer = t.park_at(&["update", "pm-k1", "--priority", "1"], "after_lock")?;
    let pid = writer.pid();
    let lock = t.root().join("locks/pm-k1.lock");
    let later = [("PM_CLOCK", FAR_FUTURE)];

    let (health, _) = json_of(&t, &["health", "--json"], &later)?;
    let details = &check(&health, "locks")["details"];
    assert_eq!(
        (
            &details["active_lock_count"],
            &details["live_past_ttl_lock_count"],
            &details["owner_gone_lock_count"]
        ),
        (&json!(0), &json!(1), &json!(0))
    );
    let found = finding(&health, "lock_live_past_ttl:pm-k1");
    assert_eq!(found["severity"], "advisory");
    let fix = found["remediation"].as_str().unwrap_or("");
    assert!(
        fix.starts_with(&format!("owner pid {pid} is alive since 2026-09-01T"))
            && fix.ends_with("; wait or stop it"),
        "{fix}"
    );
    assert_eq!(check(&health, "locks")["status"], "ok");

    let (validate, _) = json_of(
        &t,
        &["validate", "--check-storage-integrity", "--json"],
        &later,
    )?;
    let group = &check(&validate, "storage_integrity")["details"]["live_locks_past_ttl"];
    assert_eq!(group["paths"], json!(["locks/pm-k1.lock"]));
    assert_eq!(group["locks"][0]["pid"], pid);
    assert_eq!(
        validate["warnings"],
        json!(["validate_storage_live_locks_past_ttl:1"])
    );

    for args in [
        &["gc", "--scope", "locks", "--json"][..],
        &["gc", "--json"][..],
    ] {
        let (gc, code) = json_of(&t, args, &later)?;
        assert_eq!(code, 0);
        let locks = scope(&gc, "locks");
        assert_eq!(locks["removed"], json!([]), "{args:?}");
        assert_eq!(locks["retained"], json!(["locks/pm-k1.lock"]));
        assert_eq!(locks["retained_reasons"][0]["reason"], "live_past_ttl");
        assert!(lock.exists(), "{args:?}");
    }
    writer.kill()?;
    Ok(())
}

#[test]
fn writer_debris_is_reported_and_only_old_own_names_are_removed() -> TestResult {
    let t = tracker_with_item()?;
    let root = t.root();
    let old = [
        ".settings.json.4242.3.0a1b2c3d.tmp",
        "history/.pm-k1.jsonl.4242.2.0a1b2c3d.tmp",
        "locks/pm-k1.lock.4242-0123456789abcdef.tmp",
        "locks/pm-z.lock.stale-cleanup",
        "tasks/.pm-k1.toon.4242.1.deadbeef.tmp",
    ];
    for rel in old {
        if rel.ends_with(".stale-cleanup") {
            plant(&root, &format!("{rel}/owner.json"), false)?;
            age(&root.join(rel))?;
        } else {
            plant(&root, rel, false)?;
        }
    }
    let fresh = "tasks/.pm-k2.toon.4242.4.deadbeef.tmp";
    plant(&root, fresh, true)?;
    let foreign = ["tasks/.notes.tmp", "schema/.notes.tmp", "locks/notes.tmp"];
    for rel in foreign {
        plant(&root, rel, false)?;
    }

    let (validate, _) = json_of(
        &t,
        &["validate", "--check-storage-integrity", "--json"],
        &[],
    )?;
    let storage = check(&validate, "storage_integrity");
    assert_eq!(storage["status"], "warn");
    let group = &storage["details"]["writer_debris"];
    assert_eq!(group["paths"], json!(old));
    assert_eq!(
        (&group["count"], &group["fix"]),
        (&json!(5), &json!("pm gc --scope debris"))
    );
    assert_eq!(
        validate["warnings"],
        json!(["validate_storage_writer_debris:5"])
    );
    let strict = t.pm(&["validate", "--check-storage-integrity", "--strict-exit"])?;
    assert_eq!(strict.code, 1);

    let (health, _) = json_of(&t, &["health", "--json"], &[])?;
    let debris = &check(&health, "locks")["details"]["writer_debris"];
    assert_eq!(debris["paths"], json!(old));
    let found = finding(&health, "writer_debris:5");
    assert_eq!(found["remediation"], "pm gc --scope debris");
    assert!(found["message"].as_str().unwrap_or("").contains(old[4]));

    let (dry, _) = json_of(&t, &["gc", "--scope", "debris", "--dry-run", "--json"], &[])?;
    assert_eq!(scope(&dry, "debris")["removed"], json!(old));
    assert!(old.iter().all(|rel| root.join(rel).exists()));

    // The default run includes the debris scope.
    let (gc, code) = json_of(&t, &["gc", "--json"], &[])?;
    assert_eq!(code, 0);
    let debris = scope(&gc, "debris");
    assert_eq!(debris["removed"], json!(old));
    assert_eq!(debris["retained"], json!([fresh]));
    assert_eq!(
        debris["retained_reasons"][0]["reason"],
        "younger_than_10_minutes"
    );
    for rel in old {
        assert!(!root.join(rel).exists(), "{rel}");
    }
    for rel in foreign.iter().chain([&fresh]) {
        assert!(root.join(rel).exists(), "{rel}");
    }
    let (validate, _) = json_of(
        &t,
        &["validate", "--check-storage-integrity", "--json"],
        &[],
    )?;
    assert_eq!(check(&validate, "storage_integrity")["status"], "ok");
    assert_eq!(validate["warnings"], json!([]));
    Ok(())
}
