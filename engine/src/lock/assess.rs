//! Judging a lock found on disk: may a waiter take it over, and does that need `--force`.
//! One rule for the acquirer, `pm health`, `pm validate` and `pm gc`.

use serde::Serialize;

use super::info::{LockFile, LockRead};
use super::owner::{OwnerState, owner_state};
use crate::clock::EpochMs;

/// A malformed lock younger than this may be a pm-cli lock being written (pm-cli creates the
/// file, then writes its body); it is left alone until then.
pub const MALFORMED_GRACE_MS: EpochMs = 2_000;

/// What may be done with a lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Held: wait for it. Its owner is alive (however old the lock is), or cannot be judged
    /// and the ttl has not passed.
    Held,
    /// The owner is provably gone (this host, process not running or its pid reused): take
    /// it over now, no `--force` needed.
    OwnerGone,
    /// The ttl passed and the owner cannot be proven alive (another host, a pm-cli lock whose
    /// pid is not running, a malformed body): remove it, with `--force` where governance asks.
    Expired,
    /// The ttl passed, but the pm-cli lock's pid runs on this host (maybe the owner, maybe a
    /// reused pid): only `--force` removes it.
    ExpiredPidRunning,
}

impl Verdict {
    /// Returns the verdict's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Held => "held",
            Verdict::OwnerGone => "owner_gone",
            Verdict::Expired => "expired",
            Verdict::ExpiredPidRunning => "expired_pid_running",
        }
    }

    /// Whether removing the lock needs `--force` (given `governance_requires_force`, pm's
    /// `governance.force_required_for_stale_lock`); `None` when it may not be removed at all.
    pub fn needs_force(self, governance_requires_force: bool) -> Option<bool> {
        match self {
            Verdict::Held => None,
            Verdict::OwnerGone => Some(false),
            Verdict::Expired => Some(governance_requires_force),
            Verdict::ExpiredPidRunning => Some(true),
        }
    }
}

/// A judged lock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Assessment {
    /// What is known of the owner (`None` for a malformed body).
    pub owner: Option<OwnerState>,
    /// Whether `created_at + ttl` lies in the past (always true for a malformed body past its
    /// grace).
    pub expired: bool,
    /// What may be done with it.
    pub verdict: Verdict,
}

impl Assessment {
    /// Whether the lock is old by its ttl while its owner is still alive (`health` reports it;
    /// it is never broken).
    pub fn alive_past_ttl(&self) -> bool {
        self.expired && self.owner == Some(OwnerState::Alive)
    }
}

/// Judges `file` with the acquirer's `ttl_seconds` at `now_ms` (the command's clock, the one
/// `created_at` was written with); `None` when there is no lock.
pub fn assess(file: &LockFile, ttl_seconds: u64, now_ms: EpochMs) -> Option<Assessment> {
    let info = match &file.read {
        LockRead::Missing => return None,
        LockRead::Held(info) => info,
        LockRead::Malformed(_) => {
            let settled = file.file_age_ms.is_none_or(|age| age >= MALFORMED_GRACE_MS);
            return Some(Assessment {
                owner: None,
                expired: settled,
                verdict: if settled {
                    Verdict::Expired
                } else {
                    Verdict::Held
                },
            });
        }
    };
    let expired = match crate::timestamp::parse_timestamp(&info.created_at) {
        Some(created) => now_ms.saturating_sub(created) > (ttl_seconds as i64).saturating_mul(1000),
        None => true,
    };
    let owner = owner_state(
        info.host.as_deref(),
        info.pid,
        info.process_start.as_deref(),
    );
    let verdict = match (owner, expired) {
        (OwnerState::Gone, _) => Verdict::OwnerGone,
        (OwnerState::Alive, _) => Verdict::Held,
        (OwnerState::OtherHost | OwnerState::PidNotRunning, true) => Verdict::Expired,
        (OwnerState::PidRunning, true) => Verdict::ExpiredPidRunning,
        (_, false) => Verdict::Held,
    };
    Some(Assessment {
        owner: Some(owner),
        expired,
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::super::info::LockInfo;
    use super::super::owner::ProcessIdentity;
    use super::*;

    const T0: EpochMs = 1_788_220_800_000; // 2026-09-01T00:00:00.000Z

    fn held(host: Option<&str>, pid: u32, start: Option<&str>, created_at: &str) -> LockFile {
        LockFile {
            read: LockRead::Held(LockInfo {
                id: "pm-a".into(),
                pid,
                owner: "o".into(),
                created_at: created_at.into(),
                ttl_seconds: 1,
                host: host.map(String::from),
                process_start: start.map(String::from),
                token: Some("t".into()),
            }),
            file_age_ms: Some(0),
        }
    }

    fn verdict(file: &LockFile, now: EpochMs) -> Option<Verdict> {
        assess(file, 1800, now).map(|a| a.verdict)
    }

    #[test]
    fn a_live_owner_is_never_broken_however_old() {
        let me = ProcessIdentity::current();
        let lock = held(
            Some(&me.host),
            me.pid,
            me.start.as_deref(),
            "2020-01-01T00:00:00.000Z",
        );
        let judged = assess(&lock, 1800, T0).expect("a lock");
        assert_eq!(judged.verdict, Verdict::Held);
        assert!(judged.alive_past_ttl());
        assert_eq!(judged.verdict.needs_force(false), None);
    }

    #[test]
    fn ttl_decides_only_for_owners_that_cannot_be_checked() {
        let old = "2026-08-31T23:29:59.999Z"; // 1800.001 s before T0
        let fresh = "2026-08-31T23:30:00.000Z"; // exactly the ttl: not expired
        let other = held(Some("elsewhere.invalid"), 1, None, old);
        assert_eq!(verdict(&other, T0), Some(Verdict::Expired));
        let other = held(Some("elsewhere.invalid"), 1, None, fresh);
        assert_eq!(verdict(&other, T0), Some(Verdict::Held));
        let me = std::process::id();
        assert_eq!(
            verdict(&held(None, me, None, old), T0),
            Some(Verdict::ExpiredPidRunning)
        );
        assert_eq!(
            verdict(&held(None, me, None, fresh), T0),
            Some(Verdict::Held)
        );
        assert_eq!(Verdict::ExpiredPidRunning.needs_force(false), Some(true));
        assert_eq!(Verdict::Expired.needs_force(false), Some(false));
        assert_eq!(Verdict::Expired.needs_force(true), Some(true));
    }

    #[test]
    fn malformed_bodies_get_a_grace_period() {
        let mut file = LockFile {
            read: LockRead::Malformed("lock_info_invalid_json"),
            file_age_ms: Some(10),
        };
        assert_eq!(verdict(&file, T0), Some(Verdict::Held));
        file.file_age_ms = Some(MALFORMED_GRACE_MS);
        assert_eq!(verdict(&file, T0), Some(Verdict::Expired));
        let missing = LockFile {
            read: LockRead::Missing,
            file_age_ms: None,
        };
        assert_eq!(verdict(&missing, T0), None);
    }
}
