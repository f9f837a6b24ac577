//! The derived facets of a standard `pm get`: linked artifacts, claim state (from history) and
//! the schedule. Each is a plain serializable value computed from the item and its stream.

use std::cmp::Ordering;

use serde::Serialize;
use serde_json::Value;

use crate::collate::locale_compare;
use crate::history::HistoryEntry;
use crate::item::ItemDoc;
use crate::item::canon::js;

/// The eight collection arrays a standard read replaces by their counts, in pm's order.
pub const COLLECTIONS: [&str; 8] = [
    "comments",
    "notes",
    "learnings",
    "files",
    "tests",
    "docs",
    "reminders",
    "events",
];

/// Item types that always have a schedule facet.
const SCHEDULED_TYPES: [&str; 3] = ["event", "meeting", "reminder"];

/// `linked{files, tests, docs}`: the item's linked artifacts as stored.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Linked {
    /// Linked files.
    pub files: Vec<Value>,
    /// Linked test commands.
    pub tests: Vec<Value>,
    /// Linked documents.
    pub docs: Vec<Value>,
}

/// One claim or release event from history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClaimEvent {
    /// When it happened.
    pub ts: String,
    /// Who did it.
    pub author: String,
    /// The entry message (`null` when the entry has none).
    pub message: Option<String>,
}

/// `claim_state{claimed, assignee, last_claim, last_release}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClaimState {
    /// Whether the item has a non-empty assignee.
    pub claimed: bool,
    /// The trimmed assignee, or `null`.
    pub assignee: Option<String>,
    /// The latest `claim` entry, or `null`.
    pub last_claim: Option<ClaimEvent>,
    /// The latest `release` entry, or `null`.
    pub last_release: Option<ClaimEvent>,
}

/// `schedule{deadline, start_at, end_at, location, reminders, events}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Schedule {
    /// The deadline, or `null`.
    pub deadline: Value,
    /// Start of the earliest event, or `null`.
    pub start_at: Value,
    /// End of the earliest event, or `null`.
    pub end_at: Value,
    /// Location of the earliest event, or `null`.
    pub location: Value,
    /// Every reminder as stored.
    pub reminders: Vec<Value>,
    /// Every event, ordered by `start_at` (`localeCompare`).
    pub events: Vec<Value>,
}

/// Returns the stored array `key` of `doc` (absent or not an array: empty).
pub fn collection(doc: &ItemDoc, key: &str) -> Vec<Value> {
    match doc.metadata.get(key) {
        Some(Value::Array(items)) => items.clone(),
        _ => Vec::new(),
    }
}

/// Returns the length of the stored array `key` of `doc`.
pub fn collection_len(doc: &ItemDoc, key: &str) -> usize {
    doc.metadata
        .get(key)
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

/// Returns the linked artifacts of `doc`.
pub fn linked(doc: &ItemDoc) -> Linked {
    Linked {
        files: collection(doc, "files"),
        tests: collection(doc, "tests"),
        docs: collection(doc, "docs"),
    }
}

/// Returns the trimmed, non-empty assignee of `doc`.
pub fn assignee(doc: &ItemDoc) -> Option<String> {
    doc.str_field("assignee")
        .map(js::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_string)
}

/// Returns the claim state of `doc` with the latest claim and release of its `history`.
pub fn claim_state(doc: &ItemDoc, history: &[HistoryEntry]) -> ClaimState {
    let last = |op: &str| {
        history
            .iter()
            .rev()
            .find(|entry| entry.op == op)
            .map(|entry| ClaimEvent {
                ts: entry.ts.clone(),
                author: entry.author.clone(),
                message: entry.message.clone(),
            })
    };
    let assignee = assignee(doc);
    ClaimState {
        claimed: assignee.is_some(),
        assignee,
        last_claim: last("claim"),
        last_release: last("release"),
    }
}

/// Returns the schedule of `doc`, or `None` for an item without scheduling data (not an
/// Event, Meeting or Reminder, and no deadline, reminders or events).
pub fn schedule(doc: &ItemDoc) -> Option<Schedule> {
    let item_type = js::trim(doc.str_field("type").unwrap_or_default()).to_lowercase();
    let deadline = doc.metadata.get("deadline").cloned();
    let reminders = collection(doc, "reminders");
    let mut events = collection(doc, "events");
    let scheduled = SCHEDULED_TYPES.contains(&item_type.as_str())
        || deadline.is_some()
        || !reminders.is_empty()
        || !events.is_empty();
    if !scheduled {
        return None;
    }
    events.sort_by(start_order);
    let primary = |key: &str| {
        events
            .first()
            .and_then(|e| e.get(key))
            .cloned()
            .unwrap_or(Value::Null)
    };
    Some(Schedule {
        deadline: deadline.unwrap_or(Value::Null),
        start_at: primary("start_at"),
        end_at: primary("end_at"),
        location: primary("location"),
        reminders,
        events,
    })
}

fn start_order(a: &Value, b: &Value) -> Ordering {
    let start = |v: &Value| {
        v.get("start_at")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    locale_compare(&start(a), &start(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, json};

    fn doc(fields: Value) -> ItemDoc {
        let metadata: Map<String, Value> = fields.as_object().cloned().unwrap_or_default();
        ItemDoc {
            metadata,
            body: String::new(),
        }
    }

    fn entry(op: &str, ts: &str, message: Option<&str>) -> HistoryEntry {
        let mut e = HistoryEntry::new(ts, "agent", op, Vec::new(), "a", "b");
        e.message = message.map(str::to_string);
        e
    }

    #[test]
    fn claim_state_takes_the_latest_claim_and_release() {
        let history = [
            entry("create", "t0", Some("")),
            entry("claim", "t1", Some("first")),
            entry("release", "t2", None),
            entry("claim", "t3", Some("second")),
        ];
        let state = claim_state(&doc(json!({"assignee": "  bot  "})), &history);
        assert!(state.claimed);
        assert_eq!(state.assignee.as_deref(), Some("bot"));
        assert_eq!(
            state.last_claim.map(|c| (c.ts, c.message)),
            Some(("t3".into(), Some("second".into())))
        );
        assert_eq!(state.last_release.map(|r| r.message), Some(None));
        let unclaimed = claim_state(&doc(json!({"assignee": " "})), &[]);
        assert_eq!(
            serde_json::to_value(unclaimed).ok(),
            Some(
                json!({"claimed": false, "assignee": null, "last_claim": null, "last_release": null})
            )
        );
    }

    #[test]
    fn schedule_needs_scheduling_data() {
        assert_eq!(schedule(&doc(json!({"type": "Task"}))), None);
        let meeting = schedule(&doc(json!({"type": "Meeting"}))).map(|s| s.deadline);
        assert_eq!(meeting, Some(Value::Null));
        let events = json!([
            {"start_at": "2026-02-01T10:00:00.000Z", "end_at": "2026-02-01T11:00:00.000Z"},
            {"start_at": "2026-01-05T09:00:00.000Z", "location": "Room 2"}
        ]);
        let s = schedule(&doc(
            json!({"type": "Task", "deadline": "2026-03-01", "events": events}),
        ));
        let s = s.expect("scheduled");
        assert_eq!(s.start_at, json!("2026-01-05T09:00:00.000Z"));
        assert_eq!(s.location, json!("Room 2"));
        assert_eq!(s.end_at, Value::Null);
        assert_eq!(s.deadline, json!("2026-03-01"));
    }

    #[test]
    fn linked_and_counts_read_stored_arrays() {
        let d = doc(json!({"files": [{"path": "a"}], "tests": "oops"}));
        assert_eq!(linked(&d).files.len(), 1);
        assert!(linked(&d).tests.is_empty());
        assert_eq!(collection_len(&d, "files"), 1);
        assert_eq!(collection_len(&d, "notes"), 0);
    }
}
