//! Every lock of a tracker, judged once for reports: `pm health`, `pm validate` and
//! `pm gc --scope locks` read the same classes, owners and fixes from here. Reading only.

use std::ffi::OsStr;
use std::path::Path;

use serde::Serialize;

use super::LOCKS_FOLDER;
use super::assess::{Verdict, assess};
use super::gate::Gate;
use super::info::{LockFile, LockRead, read_lock_in};
use super::owner::OwnerState;
use crate::clock::EpochMs;
use crate::confine::Root;
use crate::error::{Error, Result};
use crate::tracker::Tracker;

/// What a lock is, for reports. Every lock file is in exactly one class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LockClass {
    /// Held within its ttl by an owner that is alive or cannot be judged from here.
    Active,
    /// Old by its ttl, but its owner process is provably alive: never broken; wait or stop it.
    LivePastTtl,
    /// Its owner process is provably gone (this host): any writer takes it over at once.
    OwnerGone,
    /// Its ttl passed and its owner cannot be proven alive (another host, a pm-cli lock whose
    /// pid is not running).
    Expired,
    /// Its ttl passed, but the pm-cli lock (no host) names a pid that runs here: maybe the
    /// owner, maybe a reused pid; only `--force` removes it.
    ExpiredPidRunning,
    /// The lock file cannot be read (or is not a regular file).
    Unreadable,
    /// The lock file holds no valid lock body.
    Unparseable,
}

impl LockClass {
    /// Returns the class's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            LockClass::Active => "active",
            LockClass::LivePastTtl => "live_past_ttl",
            LockClass::OwnerGone => "owner_gone",
            LockClass::Expired => "expired",
            LockClass::ExpiredPidRunning => "expired_pid_running",
            LockClass::Unreadable => "unreadable",
            LockClass::Unparseable => "unparseable",
        }
    }
}

/// One lock file as judged for reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SurveyedLock {
    /// The lock id (the file name without `.lock`).
    pub id: String,
    /// The path relative to the tracker root (`locks/<id>.lock`).
    pub path: String,
    /// Its class.
    pub class: LockClass,
    /// The recorded owner (the mutation author).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The recorded pid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The recorded host (absent in pm-cli locks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// When the lock was taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The lock's own ttl.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_seconds: Option<u64>,
    /// What is known of the owner from this machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner_state: Option<OwnerState>,
    /// Why the body could not be used (pm's token, e.g. `lock_info_invalid_json`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<&'static str>,
    /// For an unreadable or unparseable lock: whether it is past the grace a pm-cli writer
    /// needs between creating the file and writing its body (a settled one is a defect).
    pub settled: bool,
    /// Whether `pm gc --scope locks` removes it (owner gone, or expired).
    pub removable: bool,
    /// The holder's token, to tell the same lock from a new one taken in its place.
    #[serde(skip)]
    pub token: Option<String>,
}

impl SurveyedLock {
    /// Returns one sentence naming the lock, its owner, pid and host and what is wrong.
    pub fn describe(&self) -> String {
        let who = match (&self.owner, self.pid) {
            (Some(owner), Some(pid)) => format!(
                "held by {owner} (pid {pid} on {}, since {})",
                self.host.as_deref().unwrap_or("an unrecorded host"),
                self.created_at.as_deref().unwrap_or("?"),
            ),
            _ => format!(
                "unusable ({})",
                self.problem.unwrap_or("lock_info_read_failed")
            ),
        };
        let what = match self.class {
            LockClass::Active => "active",
            LockClass::LivePastTtl => "its owner is alive, but its ttl has passed",
            LockClass::OwnerGone => "its owner process is gone",
            LockClass::Expired => "its ttl passed and its owner cannot be proven alive",
            LockClass::ExpiredPidRunning => {
                "its ttl passed; it records no host and its pid runs on this host"
            }
            LockClass::Unreadable => "the file cannot be read",
            LockClass::Unparseable => "the file holds no valid lock body",
        };
        format!("lock {} {who}: {what}", self.id)
    }

    /// Returns how to fix it; `None` for an active lock.
    pub fn fix(&self) -> Option<String> {
        let pid = self.pid.unwrap_or(0);
        match self.class {
            LockClass::Active => None,
            LockClass::OwnerGone | LockClass::Expired => Some("pm gc --scope locks".into()),
            LockClass::LivePastTtl => Some(format!(
                "owner pid {pid} is alive since {}; wait or stop it",
                self.created_at.as_deref().unwrap_or("?")
            )),
            LockClass::ExpiredPidRunning => Some(format!(
                "pid {pid} runs on this host; if it is not a pm process working on {}, rerun \
                 the blocked command with --force",
                self.id
            )),
            LockClass::Unreadable | LockClass::Unparseable => Some(format!(
                "inspect {}; once no pm process is writing {}, delete it (the next writer \
                 replaces it, with --force where governance requires it)",
                self.path, self.id
            )),
        }
    }

    /// Whether reports flag it: every class but `active`, and unusable files only once settled.
    pub fn is_problem(&self) -> bool {
        match self.class {
            LockClass::Active => false,
            LockClass::Unreadable | LockClass::Unparseable => self.settled,
            _ => true,
        }
    }
}

/// Judges one lock file: `file` as read, at the command's `now_ms`, with the lock's own ttl
/// (the ttl `pm gc` and pm's health check use; a malformed body is judged by its file age).
pub fn survey_one(id: &str, file: &LockFile, now_ms: EpochMs) -> Option<SurveyedLock> {
    let ttl = match &file.read {
        LockRead::Missing => return None,
        LockRead::Held(info) => info.ttl_seconds,
        LockRead::Malformed(_) => 0,
    };
    let judged = assess(file, ttl, now_ms)?;
    let mut out = SurveyedLock {
        id: id.to_string(),
        path: format!("{LOCKS_FOLDER}/{id}.lock"),
        class: LockClass::Active,
        owner: None,
        pid: None,
        host: None,
        created_at: None,
        ttl_seconds: None,
        owner_state: judged.owner,
        problem: None,
        settled: judged.expired,
        removable: false,
        token: None,
    };
    match &file.read {
        LockRead::Missing => return None,
        LockRead::Malformed(why) => {
            out.problem = Some(why);
            out.class = if *why == "lock_info_read_failed" {
                LockClass::Unreadable
            } else {
                LockClass::Unparseable
            };
            return Some(out);
        }
        LockRead::Held(info) => {
            out.owner = Some(info.owner.clone());
            out.pid = Some(info.pid);
            out.host = info.host.clone();
            out.created_at = Some(info.created_at.clone());
            out.ttl_seconds = Some(info.ttl_seconds);
            out.token = info.token.clone();
        }
    }
    out.class = match judged.verdict {
        Verdict::Held if judged.alive_past_ttl() => LockClass::LivePastTtl,
        Verdict::Held => LockClass::Active,
        Verdict::OwnerGone => LockClass::OwnerGone,
        Verdict::Expired => LockClass::Expired,
        Verdict::ExpiredPidRunning => LockClass::ExpiredPidRunning,
    };
    out.removable = matches!(out.class, LockClass::OwnerGone | LockClass::Expired);
    Some(out)
}

/// Judges every `locks/*.lock` file of `tracker` at `now_ms`, sorted by file name. A missing
/// `locks/` is no lock; a lock file that is a symlink is unreadable (never followed).
///
/// # Errors
/// `Error::PathUnsafe` when `locks/` is a symlink or not a directory; `Error::Io` when it
/// cannot be listed.
pub fn survey_locks(tracker: &Tracker, now_ms: EpochMs) -> Result<Vec<SurveyedLock>> {
    if !tracker.root().is_dir() {
        return Ok(Vec::new());
    }
    let root = Root::open(tracker.root())?;
    let Some(dir) = root.dir(Path::new(LOCKS_FOLDER), false)? else {
        return Ok(Vec::new());
    };
    let mut names: Vec<String> = dir
        .names()?
        .into_iter()
        .filter_map(|n| n.into_string().ok())
        .filter(|n| n.len() > ".lock".len() && n.ends_with(".lock"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let file = match read_lock_in(&dir, OsStr::new(&name)) {
            Ok(file) => file,
            Err(Error::PathUnsafe { .. }) => LockFile {
                read: LockRead::Malformed("lock_info_read_failed"),
                file_age_ms: None,
            },
            Err(err) => return Err(err),
        };
        let id = name.trim_end_matches(".lock");
        out.extend(survey_one(id, &file, now_ms));
    }
    Ok(out)
}

/// Removes the lock `surveyed` names when it is still that lock and still removable (owner
/// gone or expired), judged again at `now_ms` under the lock's stale-cleanup gate, so a lock
/// a writer took over in the meantime is never removed. Returns false when it was kept.
///
/// # Errors
/// `Error::PathUnsafe` for a symlinked `locks/` or lock file; `Error::Io` when the lock cannot
/// be read or removed.
pub fn remove_surveyed(
    tracker: &Tracker,
    surveyed: &SurveyedLock,
    now_ms: EpochMs,
) -> Result<bool> {
    if !surveyed.removable {
        return Ok(false);
    }
    let root = Root::open(tracker.root())?;
    let Some(dir) = root.dir(Path::new(LOCKS_FOLDER), false)? else {
        return Ok(false);
    };
    let name = std::ffi::OsString::from(format!("{}.lock", surveyed.id));
    let Some(_gate) = Gate::acquire(&dir, &name) else {
        return Ok(false);
    };
    let file = read_lock_in(&dir, &name)?;
    let same = survey_one(&surveyed.id, &file, now_ms).is_some_and(|now| {
        now.removable
            && (&now.owner, now.pid, &now.host, &now.created_at, &now.token)
                == (
                    &surveyed.owner,
                    surveyed.pid,
                    &surveyed.host,
                    &surveyed.created_at,
                    &surveyed.token,
                )
    });
    if !same {
        return Ok(false);
    }
    dir.unlink(&name)
}

/// Counts of a survey, by class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockCounts {
    /// [`LockClass::Active`].
    pub active: usize,
    /// [`LockClass::LivePastTtl`].
    pub live_past_ttl: usize,
    /// [`LockClass::OwnerGone`].
    pub owner_gone: usize,
    /// [`LockClass::Expired`].
    pub expired: usize,
    /// [`LockClass::ExpiredPidRunning`].
    pub expired_pid_running: usize,
    /// [`LockClass::Unreadable`].
    pub unreadable: usize,
    /// [`LockClass::Unparseable`].
    pub unparseable: usize,
}

impl LockCounts {
    /// Counts `locks` by class.
    pub fn of(locks: &[SurveyedLock]) -> LockCounts {
        let mut c = LockCounts::default();
        for lock in locks {
            *match lock.class {
                LockClass::Active => &mut c.active,
                LockClass::LivePastTtl => &mut c.live_past_ttl,
                LockClass::OwnerGone => &mut c.owner_gone,
                LockClass::Expired => &mut c.expired,
                LockClass::ExpiredPidRunning => &mut c.expired_pid_running,
                LockClass::Unreadable => &mut c.unreadable,
                LockClass::Unparseable => &mut c.unparseable,
            } += 1;
        }
        c
    }

    /// pm's `stale_lock_count`: every readable lock that is not plainly active (the sum of
    /// the owner-gone, expired, expired-pid-running and live-past-ttl counts).
    pub fn stale(&self) -> usize {
        self.owner_gone + self.expired + self.expired_pid_running + self.live_past_ttl
    }
}

#[cfg(test)]
mod tests {
    use super::super::info::LockInfo;
    use super::super::owner::ProcessIdentity;
    use super::*;

    type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

    const NOW: EpochMs = 1_788_220_800_000; // 2026-09-01T00:00:00.000Z
    const OLD: &str = "2026-08-31T00:00:00.000Z";
    const FRESH: &str = "2026-08-31T23:59:00.000Z";

    fn info(host: Option<&str>, pid: u32, start: Option<&str>, created_at: &str) -> LockInfo {
        LockInfo {
            id: "pm-a".into(),
            pid,
            owner: "alice".into(),
            created_at: created_at.into(),
            ttl_seconds: 600,
            host: host.map(String::from),
            process_start: start.map(String::from),
            token: Some("t".into()),
        }
    }

    fn judged(info: LockInfo) -> Option<SurveyedLock> {
        let file = LockFile {
            read: LockRead::Held(info),
            file_age_ms: Some(0),
        };
        survey_one("pm-a", &file, NOW)
    }

    fn class(info: LockInfo) -> Option<(LockClass, bool)> {
        judged(info).map(|l| (l.class, l.removable))
    }

    #[cfg(unix)]
    #[test]
    fn classes_follow_the_owner_and_the_locks_own_ttl() -> TestResult {
        let me = ProcessIdentity::current();
        let (host, start) = (Some(me.host.as_str()), me.start.as_deref());
        assert_eq!(
            class(info(host, me.pid, start, FRESH)),
            Some((LockClass::Active, false))
        );
        let live = judged(info(host, me.pid, start, OLD)).ok_or("a lock")?;
        assert_eq!(
            (live.class, live.removable),
            (LockClass::LivePastTtl, false)
        );
        assert!(live.is_problem());
        assert_eq!(
            live.fix(),
            Some(format!(
                "owner pid {} is alive since {OLD}; wait or stop it",
                me.pid
            ))
        );
        let mut child = std::process::Command::new("true").spawn()?;
        let dead = child.id();
        child.wait()?;
        // A gone owner is reported at once, inside its ttl.
        let gone = judged(info(host, dead, None, FRESH)).ok_or("a lock")?;
        assert_eq!((gone.class, gone.removable), (LockClass::OwnerGone, true));
        assert_eq!(gone.fix().as_deref(), Some("pm gc --scope locks"));
        let text = gone.describe();
        for part in ["pm-a", "alice", &format!("pid {dead}"), &me.host] {
            assert!(text.contains(part), "{text}");
        }
        let far = Some("elsewhere.invalid");
        assert_eq!(
            class(info(far, 1, None, OLD)),
            Some((LockClass::Expired, true))
        );
        assert_eq!(
            class(info(far, 1, None, FRESH)),
            Some((LockClass::Active, false))
        );
        assert_eq!(
            class(info(None, me.pid, None, OLD)),
            Some((LockClass::ExpiredPidRunning, false))
        );
        assert_eq!(
            class(info(None, dead, None, OLD)),
            Some((LockClass::Expired, true))
        );
        Ok(())
    }

    #[test]
    fn unusable_bodies_are_flagged_once_settled_and_never_removable() {
        let fresh = LockFile {
            read: LockRead::Malformed("lock_info_invalid_json"),
            file_age_ms: Some(10),
        };
        let lock = survey_one("pm-b", &fresh, NOW);
        let lock = lock.as_ref();
        assert_eq!(lock.map(|l| l.class), Some(LockClass::Unparseable));
        assert_eq!(lock.map(SurveyedLock::is_problem), Some(false));
        let settled = LockFile {
            read: LockRead::Malformed("lock_info_read_failed"),
            file_age_ms: None,
        };
        let lock = survey_one("pm-b", &settled, NOW);
        let lock = lock.as_ref();
        assert_eq!(lock.map(|l| l.class), Some(LockClass::Unreadable));
        assert_eq!(
            lock.map(|l| (l.is_problem(), l.removable)),
            Some((true, false))
        );
        let missing = LockFile {
            read: LockRead::Missing,
            file_age_ms: None,
        };
        assert_eq!(survey_one("pm-b", &missing, NOW), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_survey_lists_lock_files_only_and_never_follows_links() -> TestResult {
        let tmp = tempfile::tempdir()?;
        let locks = tmp.path().join("locks");
        let far = info(Some("elsewhere.invalid"), 1, None, OLD);
        crate::atomic::write(&locks.join("pm-b.lock"), far.to_file_text().as_bytes())?;
        crate::atomic::write(&locks.join("pm-a.lock"), b"{")?;
        crate::atomic::write(&locks.join("pm-a.lock.1-0123456789abcdef.tmp"), b"x")?;
        crate::atomic::write(&locks.join(".lock"), b"x")?;
        std::os::unix::fs::symlink(locks.join("pm-b.lock"), locks.join("pm-c.lock"))?;
        let tracker = Tracker::at(tmp.path());
        let found = survey_locks(&tracker, NOW)?;
        let ids: Vec<(&str, LockClass)> = found.iter().map(|l| (l.id.as_str(), l.class)).collect();
        assert_eq!(
            ids,
            [
                ("pm-a", LockClass::Unparseable),
                ("pm-b", LockClass::Expired),
                ("pm-c", LockClass::Unreadable),
            ]
        );
        let counts = LockCounts::of(&found);
        assert_eq!((counts.expired, counts.stale()), (1, 1));
        assert_eq!((counts.unparseable, counts.unreadable), (1, 1));
        assert!(survey_locks(&Tracker::at(tmp.path().join("none")), NOW)?.is_empty());
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn removal_judges_again_and_spares_a_lock_taken_over_meanwhile() -> TestResult {
        let tmp = tempfile::tempdir()?;
        let tracker = Tracker::at(tmp.path());
        let me = ProcessIdentity::current();
        let mut child = std::process::Command::new("true").spawn()?;
        let dead = child.id();
        child.wait()?;
        let path = tracker.lock_path("pm-a");
        let gone = info(Some(&me.host), dead, None, FRESH);
        crate::atomic::write(&path, gone.to_file_text().as_bytes())?;
        let surveyed = survey_locks(&tracker, NOW)?;
        assert_eq!(surveyed.len(), 1);
        // Another writer took the lock over after the survey: same owner name, new token.
        let mut taken = info(Some(&me.host), me.pid, me.start.as_deref(), FRESH);
        taken.token = Some("new".into());
        crate::atomic::write(&path, taken.to_file_text().as_bytes())?;
        assert!(!remove_surveyed(&tracker, &surveyed[0], NOW)?);
        assert!(path.exists());
        let live = survey_locks(&tracker, NOW)?;
        assert_eq!(live[0].class, LockClass::Active);
        assert!(!remove_surveyed(&tracker, &live[0], NOW)?);
        crate::atomic::write(&path, gone.to_file_text().as_bytes())?;
        let again = survey_locks(&tracker, NOW)?;
        assert!(remove_surveyed(&tracker, &again[0], NOW)?);
        assert!(!path.exists());
        assert!(!tracker.locks_dir().join("pm-a.lock.stale-cleanup").exists());
        Ok(())
    }
}
