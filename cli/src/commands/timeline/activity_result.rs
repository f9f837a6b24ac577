//! The typed result of `pm activity`: the envelope's keys in output order (the row key named
//! by the mode first), conditional keys skipped when absent.

use std::collections::BTreeMap;

use pm_engine::Notice;
use pm_engine::read::history_view::{CompactRow, HistoryProjection};
use pm_engine::read::{OmissionReceipt, ProvenanceRow};
use serde::Serialize;
use serde_json::{Map, Value};

/// The whole `activity` read envelope before the shared read-output step.
#[derive(Serialize)]
pub struct ActivityResult {
    #[serde(flatten)]
    pub rows: ActivityRows,
    pub compact: bool,
    pub projection: HistoryProjection,
    pub omission_receipt: OmissionReceipt,
    pub count: usize,
    pub total_count: usize,
    pub page_start: usize,
    pub limit: Option<usize>,
    pub omitted_count: usize,
    pub has_more: bool,
    pub next_cursor: Option<String>,
    pub activity_summary: ActivitySummary,
    /// Present when the page was bounded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied_bound: Option<AppliedBound>,
    /// Present when the event read had notices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<Warning>>,
}

/// The page's rows under the key of their mode.
#[derive(Serialize)]
pub enum ActivityRows {
    #[serde(rename = "activity_digest")]
    Digest(Vec<DigestEntry>),
    #[serde(rename = "compact_activity")]
    Compact(Vec<EventEntry>),
    #[serde(rename = "provenance_activity")]
    Provenance(Vec<EventEntry>),
    #[serde(rename = "activity")]
    Full(Vec<EventEntry>),
}

/// One item's aggregate over the window, with its current type, status and title (`null` for
/// a deleted item or the workspace stream).
#[derive(Serialize)]
pub struct DigestEntry {
    pub id: String,
    #[serde(rename = "type")]
    pub item_type: Value,
    pub status: Value,
    pub title: Value,
    pub event_count: usize,
    pub first_ts: String,
    pub last_ts: String,
    pub operations: String,
}

/// One event row: the stream id, then the row of the mode.
#[derive(Serialize)]
pub struct EventEntry {
    pub id: String,
    #[serde(flatten)]
    pub row: EventBody,
}

/// The keys after an event row's `id`.
#[derive(Serialize)]
#[serde(untagged)]
pub enum EventBody {
    Compact(CompactRow),
    Provenance(ProvenanceRow),
    /// The position, then every key of the history entry (none when the stream no longer
    /// holds it).
    Full {
        index: usize,
        #[serde(flatten)]
        entry: Map<String, Value>,
    },
    /// An entry that does not parse: what the event projection knows of it.
    Unparsed(UnparsedEvent),
}

/// The projection's facts about an entry that does not parse.
#[derive(Serialize)]
pub struct UnparsedEvent {
    pub index: usize,
    pub ts: String,
    pub op: String,
    pub author: String,
    /// Compact rows only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_ops: Option<i64>,
}

/// `activity_summary`: the window and counts over every matching event.
#[derive(Serialize)]
pub struct ActivitySummary {
    pub window: Window,
    pub event_count: usize,
    pub item_count: usize,
    pub author_count: usize,
    pub operation_counts: BTreeMap<String, usize>,
}

/// The window `[from, to)`, ISO-8601 with milliseconds.
#[derive(Serialize)]
pub struct Window {
    pub from: String,
    pub to: String,
}

/// The row limit the page was cut at and where it came from.
#[derive(Serialize)]
pub struct AppliedBound {
    pub kind: &'static str,
    pub source: &'static str,
    pub value: usize,
}

/// A notice of the event read.
#[derive(Serialize)]
pub struct Warning {
    pub code: String,
    pub message: String,
}

impl Warning {
    /// The warnings of `notices`, `None` when there are none.
    pub fn of(notices: &[Notice]) -> Option<Vec<Warning>> {
        (!notices.is_empty()).then(|| {
            notices
                .iter()
                .map(|n| Warning {
                    code: n.code.clone(),
                    message: n.message.clone(),
                })
                .collect()
        })
    }
}

impl ActivityResult {
    /// The value the shared read-output step takes.
    pub fn into_value(self) -> pm_engine::Result<Value> {
        serde_json::to_value(self)
            .map_err(|e| pm_engine::Error::internal(format!("activity result: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(rows: ActivityRows, limit: Option<usize>) -> ActivityResult {
        ActivityResult {
            rows,
            compact: true,
            projection: HistoryProjection {
                mode: "compact",
                row_key: "compact_activity",
            },
            omission_receipt: OmissionReceipt::complete(),
            count: 1,
            total_count: 2,
            page_start: 0,
            limit,
            omitted_count: 1,
            has_more: true,
            next_cursor: Some("c".into()),
            activity_summary: ActivitySummary {
                window: Window {
                    from: "f".into(),
                    to: "t".into(),
                },
                event_count: 2,
                item_count: 1,
                author_count: 1,
                operation_counts: BTreeMap::from([("create".into(), 2)]),
            },
            applied_bound: limit.map(|value| AppliedBound {
                kind: "limit",
                source: "explicit",
                value,
            }),
            warnings: Warning::of(&[Notice::new("c", "m")]),
        }
    }

    fn text(result: ActivityResult) -> String {
        serde_json::to_string(&result.into_value().unwrap()).unwrap()
    }

    #[test]
    fn keys_keep_output_order() {
        let row = EventEntry {
            id: "a".into(),
            row: EventBody::Unparsed(UnparsedEvent {
                index: 1,
                ts: "t".into(),
                op: "create".into(),
                author: "x".into(),
                patch_ops: Some(3),
            }),
        };
        let receipt = serde_json::to_string(&OmissionReceipt::complete()).unwrap();
        assert_eq!(
            text(result(ActivityRows::Compact(vec![row]), Some(1))),
            [
                r#"{"compact_activity":[{"id":"a","index":1,"ts":"t","op":"create","#,
                r#""author":"x","patch_ops":3}],"compact":true,"#,
                r#""projection":{"mode":"compact","row_key":"compact_activity"},"#,
                r#""omission_receipt":"#,
                &receipt,
                r#","count":1,"total_count":2,"page_start":0,"limit":1,"omitted_count":1,"#,
                r#""has_more":true,"next_cursor":"c","activity_summary":{"window":"#,
                r#"{"from":"f","to":"t"},"event_count":2,"item_count":1,"author_count":1,"#,
                r#""operation_counts":{"create":2}},"#,
                r#""applied_bound":{"kind":"limit","source":"explicit","value":1},"#,
                r#""warnings":[{"code":"c","message":"m"}]}"#,
            ]
            .concat()
        );
    }

    #[test]
    fn digest_and_full_rows_keep_output_order() {
        let digest = DigestEntry {
            id: "a".into(),
            item_type: Value::Null,
            status: "open".into(),
            title: "t".into(),
            event_count: 1,
            first_ts: "f".into(),
            last_ts: "l".into(),
            operations: "create:1".into(),
        };
        let text = text(result(ActivityRows::Digest(vec![digest]), None));
        assert!(text.starts_with(concat!(
            r#"{"activity_digest":[{"id":"a","type":null,"status":"open","title":"t","#,
            r#""event_count":1,"first_ts":"f","last_ts":"l","operations":"create:1"}],"#,
        )));
        assert!(!text.contains("applied_bound"));
        let mut entry = Map::new();
        entry.insert("ts".into(), "t".into());
        let full = EventEntry {
            id: "a".into(),
            row: EventBody::Full { index: 2, entry },
        };
        let value = serde_json::to_value(ActivityRows::Full(vec![full])).unwrap();
        assert_eq!(
            value.to_string(),
            r#"{"activity":[{"id":"a","index":2,"ts":"t"}]}"#
        );
    }
}
