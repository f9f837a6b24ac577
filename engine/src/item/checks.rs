//! Read checks on item metadata (pm's `assertValidFrontMatter`): what makes
//! an item file unreadable. Runs before canonicalization; messages follow pm's wording.

use super::canon::js;
use super::canon::{CanonSchema, UnknownFieldPolicy};
use super::keys::{
    self, CONFIDENCE_TEXT_VALUES, RECURRENCE_FREQUENCIES, SEVERITY_VALUES, WEEKDAYS,
};
use crate::collate::locale_compare;
use crate::error::ItemInvalidKind;
use crate::timestamp::{compare_timestamp_strings, is_valid_timestamp};
use serde_json::{Map, Value};
use std::cmp::Ordering;

/// A failed read check: the `item_document_invalid` reason and pm's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckFailure {
    /// `missing_required_field`, `schema_validation_error` or `unknown_status`.
    pub kind: ItemInvalidKind,
    /// The message after pm's `Invalid item front matter: ` prefix.
    pub detail: String,
}

type Check = Result<(), CheckFailure>;

fn fail(detail: impl Into<String>) -> Check {
    Err(CheckFailure {
        kind: ItemInvalidKind::Schema,
        detail: detail.into(),
    })
}

fn ensure(condition: bool, detail: &str) -> Check {
    if condition { Ok(()) } else { fail(detail) }
}

/// Runs every read check on `metadata` in pm's order and applies the runtime-field coercion
/// of the schema's custom fields in place. The first failing check is returned.
///
/// # Errors
/// Returns the first [`CheckFailure`].
pub fn check_metadata(metadata: &mut Map<String, Value>, schema: &CanonSchema) -> Check {
    let item_type = check_required(metadata)?;
    check_status(metadata, schema)?;
    check_priority_and_tags(metadata)?;
    check_confidence(metadata)?;
    check_severity(metadata)?;
    if metadata.get("regression").is_some_and(|v| !v.is_boolean()) {
        return fail("regression must be a boolean");
    }
    for field in ["created_at", "updated_at", "deadline"] {
        check_timestamp(metadata, field)?;
    }
    check_reminders(metadata)?;
    check_events(metadata)?;
    for field in ["closed_at", "completed_at"] {
        check_timestamp(metadata, field)?;
    }
    for field in ["source_type", "source_owner", "design", "external_ref"] {
        if metadata.get(field).is_some_and(|v| !v.is_string()) {
            return fail(format!("{field} must be a string"));
        }
    }
    check_type_options(metadata)?;
    schema
        .check_fields(metadata, &item_type)
        .map_err(|e| CheckFailure {
            kind: if e.missing {
                ItemInvalidKind::MissingRequiredField
            } else {
                ItemInvalidKind::Schema
            },
            detail: e.detail,
        })?;
    check_unknown_fields(metadata, schema)
}

/// Returns the metadata keys that neither pm nor `schema` defines, `localeCompare` sorted
/// (what the `warn` policy reports as `item_unknown_schema_fields:a,b`).
pub fn unknown_fields(metadata: &Map<String, Value>, schema: &CanonSchema) -> Vec<String> {
    let mut unknown: Vec<String> = metadata
        .keys()
        .filter(|k| !keys::is_static_key(k) && !schema.defines_field(k))
        .cloned()
        .collect();
    js::sort_by(&mut unknown, |a, b| locale_compare(a, b));
    unknown
}

fn check_unknown_fields(metadata: &Map<String, Value>, schema: &CanonSchema) -> Check {
    if schema.unknown_field_policy != UnknownFieldPolicy::Reject {
        return Ok(());
    }
    let unknown = unknown_fields(metadata, schema);
    if unknown.is_empty() {
        return Ok(());
    }
    fail(format!(
        "unknown schema fields are not allowed: {}",
        unknown.join(", ")
    ))
}

/// Checks the required string fields, `type` and `pm_format_version`; returns the type.
fn check_required(metadata: &Map<String, Value>) -> Result<String, CheckFailure> {
    for field in ["id", "title", "description", "created_at", "updated_at"] {
        match metadata.get(field) {
            Some(Value::String(_)) => {}
            found => {
                return Err(CheckFailure {
                    kind: if found.is_none() {
                        ItemInvalidKind::MissingRequiredField
                    } else {
                        ItemInvalidKind::Schema
                    },
                    detail: format!("{field} is required and must be a string"),
                });
            }
        }
    }
    let item_type = match metadata.get("type") {
        Some(Value::String(t)) if !js::trim(t).is_empty() => t.clone(),
        found => {
            return Err(CheckFailure {
                kind: missing_or_schema(found),
                detail: "type must be a non-empty string".into(),
            });
        }
    };
    if let Some(v) = metadata.get("pm_format_version")
        && !(js::is_integer(v) && js::number(v).is_some_and(|n| n >= 1.0))
    {
        fail("pm_format_version must be an integer >= 1")?;
    }
    Ok(item_type)
}

fn missing_or_schema(found: Option<&Value>) -> ItemInvalidKind {
    if found.is_none() {
        ItemInvalidKind::MissingRequiredField
    } else {
        ItemInvalidKind::Schema
    }
}

fn check_status(metadata: &Map<String, Value>, schema: &CanonSchema) -> Check {
    let status = match metadata.get("status") {
        Some(Value::String(s)) if !js::trim(s).is_empty() => s,
        found => {
            return Err(CheckFailure {
                kind: missing_or_schema(found),
                detail: "status must be a non-empty string".into(),
            });
        }
    };
    if schema.resolve_status(status).is_some() {
        return Ok(());
    }
    Err(CheckFailure {
        kind: ItemInvalidKind::UnknownStatus,
        detail: format!(
            "status must be one of: {}",
            schema.status_domain().join(", ")
        ),
    })
}

fn check_priority_and_tags(metadata: &Map<String, Value>) -> Check {
    let priority = metadata.get("priority");
    let valid = priority.is_some_and(|p| {
        js::is_integer(p) && js::number(p).is_some_and(|n| (0.0..=4.0).contains(&n))
    });
    if !valid {
        return Err(CheckFailure {
            kind: missing_or_schema(priority),
            detail: "priority must be an integer 0..4".into(),
        });
    }
    let Some(tags) = metadata.get("tags").and_then(Value::as_array) else {
        return Err(CheckFailure {
            kind: missing_or_schema(metadata.get("tags")),
            detail: "tags must be an array".into(),
        });
    };
    ensure(
        tags.iter().all(Value::is_string),
        "tags entries must be strings",
    )
}

fn check_confidence(metadata: &Map<String, Value>) -> Check {
    match metadata.get("confidence") {
        None => Ok(()),
        Some(v @ Value::Number(_)) => ensure(
            js::is_integer(v) && js::number(v).is_some_and(|n| (0.0..=100.0).contains(&n)),
            "confidence number value must be an integer 0..100",
        ),
        Some(Value::String(s)) => {
            let t = js::lowercase(js::trim(s));
            if t == "med" || CONFIDENCE_TEXT_VALUES.contains(&t.as_str()) {
                Ok(())
            } else {
                fail("confidence string value must be one of: low, medium, high, med")
            }
        }
        Some(_) => fail("confidence must be a number or string"),
    }
}

fn check_severity(metadata: &Map<String, Value>) -> Check {
    match metadata.get("severity") {
        None => Ok(()),
        Some(Value::String(s)) => {
            let t = js::lowercase(js::trim(s));
            if t == "med" || SEVERITY_VALUES.contains(&t.as_str()) {
                Ok(())
            } else {
                fail("severity value must be one of: low, medium, high, critical, med")
            }
        }
        Some(_) => fail("severity must be a string"),
    }
}

/// Checks an optional timestamp field (required ones were checked to be strings already).
fn check_timestamp(record: &Map<String, Value>, field: &str) -> Check {
    check_timestamp_named(record, field, field)
}

fn check_timestamp_named(record: &Map<String, Value>, field: &str, name: &str) -> Check {
    match record.get(field) {
        None => Ok(()),
        Some(Value::String(s)) => ensure(
            is_valid_timestamp(s),
            &format!("{name} must be a valid ISO timestamp"),
        ),
        Some(_) => fail(format!("{name} must be a string")),
    }
}

fn check_reminders(metadata: &Map<String, Value>) -> Check {
    let Some(reminders) = metadata.get("reminders") else {
        return Ok(());
    };
    let Some(list) = reminders.as_array() else {
        return fail("reminders must be an array");
    };
    for reminder in list {
        let Some(r) = reminder.as_object() else {
            return fail("reminders entries must be objects");
        };
        ensure(
            r.get("at").is_some_and(Value::is_string),
            "reminder.at must be a string",
        )?;
        check_timestamp_named(r, "at", "reminder.at")?;
        let Some(text) = r.get("text").and_then(Value::as_str) else {
            return fail("reminder.text must be a string");
        };
        ensure(
            !js::trim(text).is_empty(),
            "reminder.text must not be empty",
        )?;
    }
    Ok(())
}

fn check_events(metadata: &Map<String, Value>) -> Check {
    let Some(events) = metadata.get("events") else {
        return Ok(());
    };
    let Some(list) = events.as_array() else {
        return fail("events must be an array");
    };
    for event in list {
        let Some(e) = event.as_object() else {
            return fail("events entries must be objects");
        };
        let Some(start) = e.get("start_at").and_then(Value::as_str) else {
            return fail("event.start_at must be a string");
        };
        ensure(
            is_valid_timestamp(start),
            "event.start_at must be a valid ISO timestamp",
        )?;
        if e.contains_key("end_at") {
            check_timestamp_named(e, "end_at", "event.end_at")?;
            let end = e.get("end_at").and_then(Value::as_str).unwrap_or_default();
            ensure(
                compare_timestamp_strings(end, start) == Ordering::Greater,
                "event.end_at must be after event.start_at",
            )?;
        }
        for field in ["title", "description", "location", "timezone"] {
            match e.get(field) {
                None => {}
                Some(Value::String(s)) => {
                    ensure(
                        !js::trim(s).is_empty(),
                        &format!("event.{field} must not be empty"),
                    )?;
                }
                Some(_) => fail(format!("event.{field} must be a string"))?,
            }
        }
        if e.get("all_day").is_some_and(|v| !v.is_boolean()) {
            return fail("event.all_day must be a boolean");
        }
        if let Some(rule) = e.get("recurrence") {
            check_recurrence(rule, start)?;
        }
    }
    Ok(())
}

fn check_recurrence(rule: &Value, start: &str) -> Check {
    let Some(r) = rule.as_object() else {
        return fail("event.recurrence must be an object");
    };
    let Some(freq) = r.get("freq").and_then(Value::as_str) else {
        return fail("event.recurrence.freq must be a string");
    };
    ensure(
        RECURRENCE_FREQUENCIES.contains(&js::lowercase(js::trim(freq)).as_str()),
        "event.recurrence.freq must be one of: daily, weekly, monthly, yearly",
    )?;
    for field in ["interval", "count"] {
        if let Some(v) = r.get(field) {
            ensure(
                js::is_integer(v) && js::number(v).is_some_and(|n| n >= 1.0),
                &format!("event.recurrence.{field} must be an integer >= 1"),
            )?;
        }
    }
    check_timestamp_named(r, "until", "event.recurrence.until")?;
    if let Some(days) = r.get("by_weekday") {
        let Some(days) = days.as_array() else {
            return fail("event.recurrence.by_weekday must be an array");
        };
        for day in days {
            let Some(day) = day.as_str() else {
                return fail("event.recurrence.by_weekday entries must be strings");
            };
            ensure(
                WEEKDAYS.contains(&js::lowercase(js::trim(day)).as_str()),
                "event.recurrence.by_weekday entries must be one of: mon, tue, wed, thu, fri, sat, sun",
            )?;
        }
    }
    if let Some(days) = r.get("by_month_day") {
        let Some(days) = days.as_array() else {
            return fail("event.recurrence.by_month_day must be an array");
        };
        ensure(
            days.iter().all(|d| {
                js::is_integer(d) && js::number(d).is_some_and(|n| (1.0..=31.0).contains(&n))
            }),
            "event.recurrence.by_month_day entries must be integers 1..31",
        )?;
    }
    if let Some(dates) = r.get("exdates") {
        let Some(dates) = dates.as_array() else {
            return fail("event.recurrence.exdates must be an array");
        };
        for d in dates {
            let Some(d) = d.as_str() else {
                return fail("event.recurrence.exdates entries must be strings");
            };
            ensure(
                is_valid_timestamp(d),
                "event.recurrence.exdates entries must be valid ISO timestamps",
            )?;
        }
    }
    if let Some(until) = r.get("until").and_then(Value::as_str) {
        ensure(
            compare_timestamp_strings(until, start) != Ordering::Less,
            "event.recurrence.until must be at or after event.start_at",
        )?;
    }
    Ok(())
}

fn check_type_options(metadata: &Map<String, Value>) -> Check {
    let Some(options) = metadata.get("type_options") else {
        return Ok(());
    };
    let Some(options) = options.as_object() else {
        return fail("type_options must be an object");
    };
    for (key, value) in options {
        ensure(
            !js::trim(key).is_empty(),
            "type_options keys must be non-empty",
        )?;
        let Some(text) = value.as_str() else {
            return fail("type_options values must be strings");
        };
        ensure(
            !js::trim(text).is_empty(),
            "type_options values must be non-empty strings",
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Map<String, Value> {
        json!({
            "id": "pm-a1", "title": "T", "description": "", "type": "Task", "status": "open",
            "priority": 2, "tags": [], "created_at": "2026-01-01T00:00:00.000Z",
            "updated_at": "2026-01-01T00:00:00.000Z"
        })
        .as_object()
        .cloned()
        .unwrap_or_default()
    }

    fn check_with(edit: impl FnOnce(&mut Map<String, Value>)) -> Check {
        let mut m = base();
        edit(&mut m);
        check_metadata(&mut m, &CanonSchema::NONE)
    }

    fn kind_of(result: Check) -> Option<ItemInvalidKind> {
        result.err().map(|e| e.kind)
    }

    #[test]
    fn a_minimal_item_passes() {
        assert_eq!(check_with(|_| {}), Ok(()));
    }

    #[test]
    fn missing_required_fields_are_reported_as_such() {
        for field in keys::REQUIRED_FIELDS {
            let r = check_with(|m| {
                m.shift_remove(*field);
            });
            assert_eq!(
                kind_of(r),
                Some(ItemInvalidKind::MissingRequiredField),
                "{field}"
            );
        }
        let r = check_with(|m| {
            m.insert("title".into(), json!(5));
        });
        assert_eq!(kind_of(r), Some(ItemInvalidKind::Schema));
    }

    #[test]
    fn priority_must_be_an_integer_in_range() {
        for bad in [json!(5), json!(-1), json!(1.5), json!("2")] {
            let r = check_with(|m| {
                m.insert("priority".into(), bad.clone());
            });
            assert_eq!(
                r.map_err(|e| e.detail),
                Err("priority must be an integer 0..4".to_string()),
                "{bad}"
            );
        }
        assert_eq!(
            check_with(|m| {
                m.insert("priority".into(), json!(4.0));
            }),
            Ok(())
        );
    }

    #[test]
    fn unknown_status_is_unreadable() {
        let r = check_with(|m| {
            m.insert("status".into(), json!("review"));
        });
        assert_eq!(kind_of(r), Some(ItemInvalidKind::UnknownStatus));
        assert_eq!(
            check_with(|m| {
                m.insert("status".into(), json!("Cancelled"));
            }),
            Ok(())
        );
    }

    #[test]
    fn optional_fields_are_checked() {
        let cases = [
            (
                "confidence",
                json!(101),
                "confidence number value must be an integer 0..100",
            ),
            (
                "confidence",
                json!("sure"),
                "confidence string value must be one of: low, medium, high, med",
            ),
            ("severity", json!(1), "severity must be a string"),
            ("regression", json!("yes"), "regression must be a boolean"),
            (
                "deadline",
                json!("soon"),
                "deadline must be a valid ISO timestamp",
            ),
            ("closed_at", json!(null), "closed_at must be a string"),
            (
                "pm_format_version",
                json!(0),
                "pm_format_version must be an integer >= 1",
            ),
            ("design", json!(1), "design must be a string"),
            (
                "type_options",
                json!({"k": " "}),
                "type_options values must be non-empty strings",
            ),
            (
                "reminders",
                json!([{"at": "2026-01-01T00:00:00.000Z", "text": " "}]),
                "reminder.text must not be empty",
            ),
            (
                "events",
                json!([{"start_at": "2026-01-02T00:00:00.000Z", "end_at": "2026-01-01T00:00:00.000Z"}]),
                "event.end_at must be after event.start_at",
            ),
            (
                "events",
                json!([{"start_at": "2026-01-02T00:00:00.000Z", "recurrence": {"freq": "daily", "by_month_day": [0]}}]),
                "event.recurrence.by_month_day entries must be integers 1..31",
            ),
            ("tags", json!(["a", 1]), "tags entries must be strings"),
        ];
        for (field, value, message) in cases {
            let r = check_with(|m| {
                m.insert(field.into(), value.clone());
            });
            assert_eq!(
                r.map_err(|e| e.detail),
                Err(message.to_string()),
                "{field}={value}"
            );
        }
        assert_eq!(
            check_with(|m| {
                m.insert("pm_format_version".into(), json!(2));
            }),
            Ok(())
        );
        assert_eq!(
            check_with(|m| {
                m.insert("confidence".into(), json!(" Med "));
            }),
            Ok(())
        );
    }

    #[test]
    fn unknown_fields_are_listed_and_rejected_on_request() {
        let mut m = base();
        m.insert("zz".into(), json!(1));
        m.insert("Aa".into(), json!(1));
        assert_eq!(unknown_fields(&m, &CanonSchema::NONE), ["Aa", "zz"]);
        let extension = vec!["zz".to_string()];
        let reject = CanonSchema {
            unknown_field_policy: UnknownFieldPolicy::Reject,
            extension_fields: &extension,
            ..CanonSchema::NONE
        };
        assert_eq!(
            check_metadata(&mut m, &reject).map_err(|e| e.detail),
            Err("unknown schema fields are not allowed: Aa".to_string())
        );
    }
}
