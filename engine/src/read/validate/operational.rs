//! What killed writers leave for `storage_integrity`: abandoned writer debris and locks that are
//! dead, unusable or past their ttl, as groups `{code, count, paths, locks?, fix}` (present only
//! when non-empty, so a clean tracker prints pm's bytes). They warn; they are never an error.

use serde_json::{Value, json};

use super::Scope;
use super::items::capped;
use crate::lock::{LockClass, SurveyedLock, survey_locks};
use crate::read::health::{DEBRIS_FIX, abandoned_debris, lock_entry};

/// The lock groups, in report order: detail key, warning code, classes, fix.
const LOCK_GROUPS: [(&str, &str, &[LockClass], &str); 4] = [
    (
        "dead_locks",
        "validate_storage_dead_locks",
        &[LockClass::OwnerGone, LockClass::Expired],
        "pm gc --scope locks",
    ),
    (
        "live_locks_past_ttl",
        "validate_storage_live_locks_past_ttl",
        &[LockClass::LivePastTtl],
        "wait for the owner process or stop it (pm never breaks a live owner's lock)",
    ),
    (
        "pid_running_locks_past_ttl",
        "validate_storage_pid_running_locks_past_ttl",
        &[LockClass::ExpiredPidRunning],
        "if the pid is not a pm process, rerun the blocked command with --force",
    ),
    (
        "unusable_locks",
        "validate_storage_unusable_locks",
        &[LockClass::Unreadable, LockClass::Unparseable],
        "inspect each file; once no pm process is writing it, delete it",
    ),
];

/// Returns `(detail key, group, warning)` per non-empty group. A survey that fails is left to
/// the other checks (the item and history listings report unreadable folders).
pub(crate) fn leftovers(scope: &Scope<'_>) -> Vec<(&'static str, Value, String)> {
    let mut out = Vec::new();
    let debris = abandoned_debris(scope.view).unwrap_or_default();
    if !debris.is_empty() {
        let code = "validate_storage_writer_debris";
        let paths = capped(debris.iter().map(|d| d.path.clone()).collect(), scope.limit);
        let group = json!({
            "code": code,
            "count": debris.len(),
            "paths": paths.values,
            "paths_truncated": paths.truncated,
            "fix": DEBRIS_FIX,
        });
        out.push(("writer_debris", group, format!("{code}:{}", debris.len())));
    }
    let locks = survey_locks(scope.view.tracker(), scope.now_ms).unwrap_or_default();
    for (key, code, classes, fix) in LOCK_GROUPS {
        let members: Vec<&SurveyedLock> = locks
            .iter()
            .filter(|l| l.is_problem() && classes.contains(&l.class))
            .collect();
        if members.is_empty() {
            continue;
        }
        let paths = capped(
            members.iter().map(|l| l.path.clone()).collect(),
            scope.limit,
        );
        let entries = capped(members.iter().map(|l| lock_entry(l)).collect(), scope.limit);
        let group = json!({
            "code": code,
            "count": members.len(),
            "paths": paths.values,
            "paths_truncated": paths.truncated,
            "locks": entries.values,
            "fix": fix,
        });
        out.push((key, group, format!("{code}:{}", members.len())));
    }
    out
}
