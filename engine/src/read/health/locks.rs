//! The `locks` health check: pm's four counts, then (only when there is something to say, so a
//! tracker without such locks prints pm's bytes) the owner-aware breakdown, one entry per lock
//! that is not plainly active, and the writer debris of killed writers. Reading only.

use serde_json::{Map, Value, json};

use super::{HealthFinding, ID_LIST_LIMIT};
use crate::clock::EpochMs;
use crate::debris::{self, Debris};
use crate::lock::{LockClass, LockCounts, SurveyedLock, survey_locks};
use crate::read::view::TrackerView;

/// The command that removes writer debris.
pub const DEBRIS_FIX: &str = "pm gc --scope debris";
/// How many debris paths a finding's message names.
const MESSAGE_PATHS: usize = 10;

/// Returns the finding token code of a lock class (pm's `stale_lock` for an expired lock).
fn finding_code(class: LockClass) -> Option<&'static str> {
    match class {
        LockClass::Active => None,
        LockClass::LivePastTtl => Some("lock_live_past_ttl"),
        LockClass::OwnerGone => Some("lock_owner_gone"),
        LockClass::Expired => Some("stale_lock"),
        LockClass::ExpiredPidRunning => Some("lock_expired_pid_running"),
        LockClass::Unreadable => Some("lock_unreadable"),
        LockClass::Unparseable => Some("lock_unparseable"),
    }
}

/// Returns a lock's report entry: the surveyed fields plus its `fix`.
pub(crate) fn lock_entry(lock: &SurveyedLock) -> Value {
    let mut value = serde_json::to_value(lock).unwrap_or(Value::Null);
    if let (Value::Object(map), Some(fix)) = (&mut value, lock.fix()) {
        map.insert("fix".into(), Value::from(fix));
    }
    value
}

/// Returns the abandoned debris of the tracker of `view` (fresh leftovers may belong to a
/// writer at work and are not reported).
///
/// # Errors
/// As [`debris::survey`].
pub(crate) fn abandoned_debris(view: &TrackerView) -> crate::Result<Vec<Debris>> {
    let mut found = debris::survey(view.tracker(), &view.schema().types)?;
    found.retain(Debris::abandoned);
    Ok(found)
}

/// Returns a message naming up to ten debris paths.
pub(crate) fn debris_message(found: &[Debris]) -> String {
    let mut names: Vec<&str> = found
        .iter()
        .take(MESSAGE_PATHS)
        .map(|d| d.path.as_str())
        .collect();
    let more = found.len().saturating_sub(MESSAGE_PATHS);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    if names.is_empty() {
        names.push("none");
    }
    format!(
        "{} leftover(s) of killed writers, older than 10 minutes: {}{more}",
        found.len(),
        names.join(", ")
    )
}

/// The `locks` check at `now_ms` (the command's clock; each lock is judged with its own ttl).
pub(super) fn locks(view: &TrackerView, now_ms: EpochMs) -> (Value, Vec<HealthFinding>) {
    let mut findings = Vec::new();
    let surveyed = match survey_locks(view.tracker(), now_ms) {
        Ok(locks) => locks,
        Err(err) => {
            findings.push(
                HealthFinding::new(
                    "locks",
                    format!("lock_survey_failed:{}", err.code().as_str()),
                    true,
                    None,
                )
                .with_message(err.to_string()),
            );
            Vec::new()
        }
    };
    let counts = LockCounts::of(&surveyed);
    let mut details = Map::new();
    for (key, n) in [
        ("active_lock_count", counts.active),
        ("stale_lock_count", counts.stale()),
        ("unreadable_lock_count", counts.unreadable),
        ("unparseable_lock_count", counts.unparseable),
    ] {
        details.insert(key.into(), json!(n));
    }
    let problems: Vec<&SurveyedLock> = surveyed.iter().filter(|l| l.is_problem()).collect();
    for lock in &problems {
        let Some(code) = finding_code(lock.class) else {
            continue;
        };
        // A live owner past its ttl is worth knowing, not a defect; every other one blocks
        // writers (or needs a human) until it is removed.
        let gate_failing = lock.class != LockClass::LivePastTtl;
        findings.push(
            HealthFinding::new(
                "locks",
                format!("{code}:{}", lock.id),
                gate_failing,
                lock.fix(),
            )
            .with_message(lock.describe()),
        );
    }
    if !problems.is_empty() {
        for (key, n) in [
            ("owner_gone_lock_count", counts.owner_gone),
            ("expired_lock_count", counts.expired),
            ("expired_pid_running_lock_count", counts.expired_pid_running),
            ("live_past_ttl_lock_count", counts.live_past_ttl),
        ] {
            details.insert(key.into(), json!(n));
        }
        let entries: Vec<Value> = problems.iter().map(|l| lock_entry(l)).collect();
        details.insert("locks".into(), Value::Array(entries));
    }
    match abandoned_debris(view) {
        Ok(found) if found.is_empty() => {}
        Ok(found) => {
            findings.push(
                HealthFinding::new(
                    "locks",
                    format!("writer_debris:{}", found.len()),
                    false,
                    Some(DEBRIS_FIX.into()),
                )
                .with_message(debris_message(&found)),
            );
            let paths: Vec<&str> = found
                .iter()
                .take(ID_LIST_LIMIT)
                .map(|d| d.path.as_str())
                .collect();
            details.insert(
                "writer_debris".into(),
                json!({
                    "count": found.len(),
                    "paths": paths,
                    "truncated": found.len() > ID_LIST_LIMIT,
                    "fix": DEBRIS_FIX,
                }),
            );
        }
        Err(err) => findings.push(
            HealthFinding::new(
                "locks",
                format!("writer_debris_survey_failed:{}", err.code().as_str()),
                false,
                None,
            )
            .with_message(err.to_string()),
        ),
    }
    (Value::Object(details), findings)
}

#[cfg(all(test, unix))]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;
    use crate::lock::{LockInfo, ProcessIdentity};
    use crate::settings::SettingsEnv;
    use crate::tracker::Tracker;

    type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

    const NOW: EpochMs = 1_788_220_800_000; // 2026-09-01T00:00:00.000Z

    fn view() -> std::result::Result<(tempfile::TempDir, TrackerView), Box<dyn std::error::Error>> {
        let tmp = tempfile::tempdir()?;
        let root = tmp.path().join(".agents/pm");
        crate::init::init_tracker(&root, &crate::init::InitOptions::default())?;
        let view = TrackerView::open(Tracker::at(&root), &SettingsEnv::default())?;
        Ok((tmp, view))
    }

    fn plant(view: &TrackerView, id: &str, pid: u32, created_at: &str) -> TestResult {
        let me = ProcessIdentity::current();
        let start = if pid == me.pid {
            me.start.clone()
        } else {
            None
        };
        let info = LockInfo {
            id: id.into(),
            pid,
            owner: "alice".into(),
            created_at: created_at.into(),
            ttl_seconds: 1800,
            host: Some(me.host.clone()),
            process_start: start,
            token: Some(format!("token-{id}")),
        };
        crate::atomic::write(
            &view.tracker().lock_path(id),
            info.to_file_text().as_bytes(),
        )?;
        Ok(())
    }

    #[test]
    fn a_tracker_without_such_locks_keeps_pms_four_keys() -> TestResult {
        let (_tmp, view) = view()?;
        let (details, findings) = locks(&view, NOW);
        assert_eq!(
            details,
            json!({"active_lock_count": 0, "stale_lock_count": 0,
                   "unreadable_lock_count": 0, "unparseable_lock_count": 0})
        );
        assert!(findings.is_empty());
        // An active lock of a live owner changes only the count.
        plant(
            &view,
            "pm-live",
            std::process::id(),
            "2026-08-31T23:59:00.000Z",
        )?;
        let (details, findings) = locks(&view, NOW);
        assert_eq!(details["active_lock_count"], 1);
        assert_eq!(details.as_object().map(Map::len), Some(4));
        assert!(findings.is_empty());
        Ok(())
    }

    #[test]
    fn dead_and_stale_locks_and_debris_are_reported_with_their_fix() -> TestResult {
        let (_tmp, view) = view()?;
        let mut child = std::process::Command::new("true").spawn()?;
        let dead = child.id();
        child.wait()?;
        let me = std::process::id();
        plant(&view, "pm-dead", dead, "2026-08-31T23:59:00.000Z")?;
        plant(&view, "pm-long", me, "2026-08-31T00:00:00.000Z")?;
        plant(&view, "pm-live", me, "2026-08-31T23:59:00.000Z")?;
        let temp = view
            .tracker()
            .root()
            .join("tasks/.pm-a.toon.9.1.deadbeef.tmp");
        crate::atomic::write(&temp, b"partial")?;
        std::fs::File::open(&temp)?.set_modified(UNIX_EPOCH + Duration::from_secs(1))?;

        let (details, findings) = locks(&view, NOW);
        let counts: Vec<&Value> = [
            "active_lock_count",
            "stale_lock_count",
            "owner_gone_lock_count",
            "expired_lock_count",
            "live_past_ttl_lock_count",
        ]
        .iter()
        .map(|k| &details[*k])
        .collect();
        assert_eq!(
            counts,
            [&json!(1), &json!(2), &json!(1), &json!(0), &json!(1)]
        );
        let tokens: Vec<(&str, &str)> = findings
            .iter()
            .map(|f| (f.warning.as_str(), f.severity))
            .collect();
        assert_eq!(
            tokens,
            [
                ("lock_owner_gone:pm-dead", "gate_failing"),
                ("lock_live_past_ttl:pm-long", "advisory"),
                ("writer_debris:1", "advisory"),
            ]
        );
        assert_eq!(
            findings[0].remediation.as_deref(),
            Some("pm gc --scope locks")
        );
        let message = findings[0].message.clone().unwrap_or_default();
        assert!(message.contains(&format!("pid {dead}")) && message.contains("alice"));
        assert_eq!(
            findings[1].remediation,
            Some(format!(
                "owner pid {me} is alive since 2026-08-31T00:00:00.000Z; wait or stop it"
            ))
        );
        assert_eq!(findings[2].remediation.as_deref(), Some(DEBRIS_FIX));
        assert_eq!(details["locks"][0]["class"], "owner_gone");
        assert_eq!(details["locks"][1]["owner_state"], "alive");
        assert_eq!(
            details["writer_debris"]["paths"],
            json!(["tasks/.pm-a.toon.9.1.deadbeef.tmp"])
        );
        // The dead lock fails the gate: the check is not `ok`.
        let check = super::super::health_check("locks", details, &findings);
        assert_eq!((check.status, check.ok), ("warn", false));
        Ok(())
    }
}
