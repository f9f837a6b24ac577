//! Canonical forms of the calendar collections: `reminders` and `events` with their recurrence
//! rules.

use super::{js, non_empty, object_entries, str_or_empty};
use crate::collate::locale_compare;
use crate::item::keys::{RECURRENCE_FREQUENCIES, WEEKDAYS};
use crate::json::to_compact;
use crate::timestamp::{compare_timestamp_strings, is_valid_timestamp};
use serde_json::{Map, Value};
use std::cmp::Ordering;

/// `reminders`: `{at, text}` with text trimmed; entries with empty text dropped; sorted by at
/// (timestamp), then text.
pub(super) fn reminders(value: Value) -> Option<Value> {
    let mut rows: Vec<Map<String, Value>> = object_entries(value)?
        .filter_map(|mut r| {
            let text = js::take_trimmed(&mut r, "text")?;
            let mut out = Map::new();
            if let Some(at) = r.remove("at") {
                out.insert("at".into(), at);
            }
            out.insert("text".into(), text);
            Some(out)
        })
        .collect();
    js::sort_by(&mut rows, |a, b| {
        compare_timestamp_strings(str_or_empty(a, "at"), str_or_empty(b, "at"))
            .then_with(|| locale_compare(str_or_empty(a, "text"), str_or_empty(b, "text")))
    });
    non_empty(rows.into_iter().map(Value::Object).collect())
}

/// `events`: string fields trimmed (empty ones dropped), recurrence normalized, then sorted by
/// start_at (timestamp), end_at, title, all_day, timezone, location, description and the
/// recurrence's JSON text.
pub(super) fn events(value: Value) -> Option<Value> {
    let mut rows: Vec<Map<String, Value>> = object_entries(value)?.map(event).collect();
    js::sort_by(&mut rows, compare_events);
    non_empty(rows.into_iter().map(Value::Object).collect())
}

fn event(mut e: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(start) = e.remove("start_at") {
        out.insert("start_at".into(), start);
    }
    if let Some(end) = e.remove("end_at").filter(js::truthy) {
        out.insert("end_at".into(), end);
    }
    for key in ["title", "description", "location"] {
        if let Some(s) = js::take_trimmed(&mut e, key) {
            out.insert(key.into(), s);
        }
    }
    if let Some(all_day) = e.remove("all_day") {
        out.insert("all_day".into(), all_day);
    }
    if let Some(tz) = js::take_trimmed(&mut e, "timezone") {
        out.insert("timezone".into(), tz);
    }
    if let Some(rule) = e
        .get("recurrence")
        .and_then(Value::as_object)
        .and_then(recurrence)
    {
        out.insert("recurrence".into(), Value::Object(rule));
    }
    out
}

fn compare_events(a: &Map<String, Value>, b: &Map<String, Value>) -> Ordering {
    let all_day = |m: &Map<String, Value>| m.get("all_day").is_some_and(js::truthy);
    let rule = |m: &Map<String, Value>| {
        m.get("recurrence")
            .map_or_else(|| "{}".to_string(), to_compact)
    };
    compare_timestamp_strings(str_or_empty(a, "start_at"), str_or_empty(b, "start_at"))
        .then_with(|| locale_compare(str_or_empty(a, "end_at"), str_or_empty(b, "end_at")))
        .then_with(|| locale_compare(str_or_empty(a, "title"), str_or_empty(b, "title")))
        .then_with(|| all_day(a).cmp(&all_day(b)))
        .then_with(|| locale_compare(str_or_empty(a, "timezone"), str_or_empty(b, "timezone")))
        .then_with(|| locale_compare(str_or_empty(a, "location"), str_or_empty(b, "location")))
        .then_with(|| {
            locale_compare(
                str_or_empty(a, "description"),
                str_or_empty(b, "description"),
            )
        })
        .then_with(|| locale_compare(&rule(a), &rule(b)))
}

/// A recurrence rule: freq lowercased (an unknown freq drops the rule), interval kept only
/// above 1, weekdays in Monday-first order, month days numeric, exdates by time; each list
/// de-duplicated.
fn recurrence(r: &Map<String, Value>) -> Option<Map<String, Value>> {
    let freq = js::lowercase(js::trim(r.get("freq")?.as_str()?));
    if !RECURRENCE_FREQUENCIES.contains(&freq.as_str()) {
        return None;
    }
    let mut out = Map::new();
    out.insert("freq".into(), Value::String(freq));
    if let Some(interval) = r
        .get("interval")
        .filter(|v| js::number(v).is_some_and(|n| n > 1.0))
    {
        out.insert("interval".into(), interval.clone());
    }
    if let Some(count) = r.get("count") {
        out.insert("count".into(), count.clone());
    }
    if let Some(until) = r.get("until").and_then(js::trimmed_non_empty) {
        out.insert("until".into(), Value::String(until.into()));
    }
    let list = |key: &str| {
        r.get(key)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    };

    let mut weekdays: Vec<usize> = Vec::new();
    for day in list("by_weekday").iter().filter_map(Value::as_str) {
        let day = js::lowercase(js::trim(day));
        if let Some(i) = WEEKDAYS.iter().position(|w| *w == day)
            && !weekdays.contains(&i)
        {
            weekdays.push(i);
        }
    }
    weekdays.sort_unstable();
    if let Some(v) = non_empty(
        weekdays
            .iter()
            .map(|i| Value::String(WEEKDAYS[*i].into()))
            .collect(),
    ) {
        out.insert("by_weekday".into(), v);
    }

    let mut month_days: Vec<f64> = Vec::new();
    for day in list("by_month_day").iter().filter(|v| js::is_integer(v)) {
        let d = js::number(day).unwrap_or(0.0);
        if (1.0..=31.0).contains(&d) && !month_days.contains(&d) {
            month_days.push(d);
        }
    }
    js::sort_by(&mut month_days, |a, b| {
        a.partial_cmp(b).unwrap_or(Ordering::Equal)
    });
    if let Some(v) = non_empty(month_days.into_iter().map(js::to_value).collect()) {
        out.insert("by_month_day".into(), v);
    }

    let mut exdates: Vec<&str> = Vec::new();
    for d in list("exdates").iter().filter_map(Value::as_str) {
        let d = js::trim(d);
        if is_valid_timestamp(d) && !exdates.contains(&d) {
            exdates.push(d);
        }
    }
    js::sort_by(&mut exdates, |a, b| compare_timestamp_strings(a, b));
    if let Some(v) = non_empty(
        exdates
            .into_iter()
            .map(|d| Value::String(d.into()))
            .collect(),
    ) {
        out.insert("exdates".into(), v);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reminders_trim_drop_and_sort() {
        let v = json!([
            {"at": "2026-02-01T00:00:00.000Z", "text": " later "},
            {"at": "2026-01-01T00:00:00.000Z", "text": "  "},
            {"text": "b", "at": "2026-01-01T00:00:00.000Z", "x": 1}
        ]);
        assert_eq!(
            reminders(v.clone()),
            Some(json!([
                {"at": "2026-01-01T00:00:00.000Z", "text": "b"},
                {"at": "2026-02-01T00:00:00.000Z", "text": "later"}
            ]))
        );
    }

    #[test]
    fn events_normalize_recurrence_and_sort() {
        let v = json!([
            {"start_at": "2026-03-01T10:00:00.000Z", "title": " B ", "location": " ", "all_day": false,
             "recurrence": {"freq": " WEEKLY ", "interval": 1, "by_weekday": ["Fri", "mon", "fri", "xx"],
                            "by_month_day": [3, 1, 3, 40, 2.5], "until": " ",
                            "exdates": ["2026-03-10T10:00:00.000Z", "bad", "2026-03-03T10:00:00.000Z"]}},
            {"start_at": "2026-03-01T10:00:00.000Z", "title": "A", "end_at": "",
             "recurrence": {"freq": "hourly"}}
        ]);
        assert_eq!(
            events(v.clone()),
            Some(json!([
                {"start_at": "2026-03-01T10:00:00.000Z", "title": "A"},
                {"start_at": "2026-03-01T10:00:00.000Z", "title": "B", "all_day": false,
                 "recurrence": {"freq": "weekly", "by_weekday": ["mon", "fri"], "by_month_day": [1, 3],
                                "exdates": ["2026-03-03T10:00:00.000Z", "2026-03-10T10:00:00.000Z"]}}
            ]))
        );
    }
}
