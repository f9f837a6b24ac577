//! The `agenda` block of `pm context`: upcoming deadlines, reminders and scheduled events of
//! non-terminal items from now on, earliest first, with pm's row shape and summary counts.

use std::collections::BTreeSet;

use pm_engine::summary::ItemSummary;
use pm_engine::timestamp::parse_timestamp;
use serde_json::{Map, Value, json};

/// The agenda of a context read.
#[derive(Clone, Debug, PartialEq)]
pub struct Agenda {
    /// Number of events listed.
    pub count: usize,
    /// `{summary, events}`.
    pub value: Value,
}

struct Event {
    at_ms: i64,
    kind: &'static str,
    reminder_text: Value,
    title: Value,
    end: Value,
    location: Value,
    all_day: Value,
    timezone: Value,
    recurring: Value,
    rule: Value,
}

impl Event {
    fn bare(at_ms: i64, kind: &'static str) -> Event {
        Event {
            at_ms,
            kind,
            reminder_text: Value::Null,
            title: Value::Null,
            end: Value::Null,
            location: Value::Null,
            all_day: Value::Null,
            timezone: Value::Null,
            recurring: Value::Null,
            rule: Value::Null,
        }
    }
}

fn events_of(s: &ItemSummary, now_ms: i64) -> Vec<Event> {
    let mut out = Vec::new();
    if let Some(ms) = s.deadline_ms.filter(|ms| *ms >= now_ms) {
        out.push(Event::bare(ms, "deadline"));
    }
    let rows = |key: &str| {
        s.light
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    for r in rows("reminders") {
        let Some(ms) = r
            .get("at")
            .and_then(Value::as_str)
            .and_then(parse_timestamp)
        else {
            continue;
        };
        if ms >= now_ms {
            let mut e = Event::bare(ms, "reminder");
            e.reminder_text = r.get("text").cloned().unwrap_or(Value::Null);
            out.push(e);
        }
    }
    for r in rows("events") {
        let Some(ms) = r
            .get("start_at")
            .and_then(Value::as_str)
            .and_then(parse_timestamp)
        else {
            continue;
        };
        if ms >= now_ms {
            let get = |k: &str| r.get(k).cloned().unwrap_or(Value::Null);
            let mut e = Event::bare(ms, "event");
            e.title = get("title");
            e.end = get("end_at");
            e.location = get("location");
            e.all_day = json!(r.get("all_day") == Some(&Value::Bool(true)));
            e.timezone = get("timezone");
            e.recurring = json!(r.get("recurrence").is_some_and(|v| !v.is_null()));
            e.rule = get("recurrence");
            out.push(e);
        }
    }
    out
}

/// Builds the agenda of `corpus` items in scope from `now_ms`, at most `limit` events.
pub fn agenda(
    corpus: &[ItemSummary],
    now_ms: i64,
    limit: usize,
    in_scope: &dyn Fn(&ItemSummary) -> bool,
) -> Agenda {
    let mut all: Vec<(Event, &ItemSummary)> = corpus
        .iter()
        .filter(|s| !s.is_terminal() && in_scope(s))
        .flat_map(|s| events_of(s, now_ms).into_iter().map(move |e| (e, s)))
        .collect();
    all.sort_by(|(a, sa), (b, sb)| a.at_ms.cmp(&b.at_ms).then_with(|| sa.id.cmp(&sb.id)));
    all.truncate(limit);
    let mut items = BTreeSet::new();
    let (mut deadlines, mut reminders, mut scheduled) = (0, 0, 0);
    let rows: Vec<Value> = all
        .iter()
        .map(|(e, s)| {
            items.insert(s.id.as_str());
            match e.kind {
                "deadline" => deadlines += 1,
                "reminder" => reminders += 1,
                _ => scheduled += 1,
            }
            let at = pm_engine::clock::format_iso_ms(e.at_ms);
            let mut row = Map::new();
            row.insert("at".into(), json!(at));
            row.insert("date".into(), json!(&at[..10]));
            row.insert("kind".into(), json!(e.kind));
            row.insert("reminder_text".into(), e.reminder_text.clone());
            row.insert("event_title".into(), e.title.clone());
            row.insert("event_end".into(), e.end.clone());
            row.insert("event_location".into(), e.location.clone());
            row.insert("event_all_day".into(), e.all_day.clone());
            row.insert("event_timezone".into(), e.timezone.clone());
            row.insert("event_recurring".into(), e.recurring.clone());
            row.insert("event_recurrence_rule".into(), e.rule.clone());
            row.insert("item_id".into(), json!(s.id));
            row.insert("item_title".into(), json!(s.title));
            row.insert("item_type".into(), json!(s.item_type));
            row.insert("item_status".into(), json!(s.status));
            row.insert("item_priority".into(), json!(s.priority));
            row.insert(
                "item_assignee".into(),
                s.light.get("assignee").cloned().unwrap_or(Value::Null),
            );
            row.insert(
                "item_deadline".into(),
                s.light.get("deadline").cloned().unwrap_or(Value::Null),
            );
            row.insert("item_tags".into(), json!(s.tags));
            Value::Object(row)
        })
        .collect();
    let count = rows.len();
    Agenda {
        count,
        value: json!({
            "summary": {
                "events": count,
                "items": items.len(),
                "deadlines": deadlines,
                "reminders": reminders,
                "scheduled": scheduled,
            },
            "events": rows,
        }),
    }
}
