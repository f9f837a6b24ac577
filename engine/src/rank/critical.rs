//! The critical-work order shared by `context` and `next` (index-ranking-bench §4.1): status
//! rank, priority, explicit order, earliest deadline, most recently updated, id.

use std::cmp::Ordering;

use crate::collate::locale_compare;
use crate::rank::item::RankItem;
use crate::schema::RuntimeSchema;
use crate::schema::StatusRole;
use crate::timestamp::compare_timestamp_strings;

/// Returns the status rank: in progress 0, open 1, blocked 2, draft 3, another active status 4,
/// another blocked status 5, any other status 6, terminal 7.
pub fn status_rank(status: &str, schema: &RuntimeSchema) -> u8 {
    let reg = &schema.statuses;
    let id = reg.resolve(status).unwrap_or(status);
    if reg.is_terminal(id) {
        return 7;
    }
    if Some(id) == reg.in_progress_status() {
        return 0;
    }
    if id == reg.open_status() {
        return 1;
    }
    if Some(id) == reg.blocked_status() {
        return 2;
    }
    if Some(id) == reg.draft_status() {
        return 3;
    }
    if reg.has_role(id, StatusRole::Active) {
        return 4;
    }
    if reg.has_role(id, StatusRole::Blocked) {
        return 5;
    }
    6
}

/// Returns true when `status` is the in-progress status.
pub fn is_in_progress(status: &str, schema: &RuntimeSchema) -> bool {
    let reg = &schema.statuses;
    let id = reg.resolve(status).unwrap_or(status);
    Some(id) == reg.in_progress_status()
}

fn optional<T>(a: Option<T>, b: Option<T>, cmp: impl Fn(T, T) -> Ordering) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(x), Some(y)) => cmp(x, y),
    }
}

/// Canonical ISO text of a timestamp for ordering (empty when it does not parse).
fn sortable(ms: Option<i64>) -> String {
    ms.map(crate::clock::format_iso_ms).unwrap_or_default()
}

/// Compares two items by criticality (pm's `compareCriticalItems`).
pub fn compare_critical(a: &RankItem, b: &RankItem, schema: &RuntimeSchema) -> Ordering {
    status_rank(&a.status, schema)
        .cmp(&status_rank(&b.status, schema))
        .then(a.priority.cmp(&b.priority))
        .then_with(|| {
            optional(a.order, b.order, |x, y| {
                x.partial_cmp(&y).unwrap_or(Ordering::Equal)
            })
        })
        .then_with(|| {
            optional(a.deadline.as_deref(), b.deadline.as_deref(), |x, y| {
                compare_timestamp_strings(x, y)
            })
        })
        .then_with(|| {
            let updated =
                compare_timestamp_strings(&sortable(b.updated_ms), &sortable(a.updated_ms));
            if updated == Ordering::Equal {
                locale_compare(&a.id, &b.id)
            } else {
                updated
            }
        })
}
