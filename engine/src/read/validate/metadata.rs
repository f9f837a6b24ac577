//! The `metadata` check (required fields per metadata profile, duplicate title issue codes) and
//! the `resolution` check (resolution fields on done items).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::items::{CheckItem, capped};
use super::{CheckName, Outcome, Scope};
use crate::collate::locale_compare;
use crate::schema::StatusRole;

/// The `core` profile's fields.
const CORE_FIELDS: [&str; 4] = [
    "author",
    "acceptance_criteria",
    "estimated_minutes",
    "close_reason",
];
/// Every field a profile may require (`strict` requires all).
const SUPPORTED_FIELDS: [&str; 9] = [
    "author",
    "acceptance_criteria",
    "estimated_minutes",
    "close_reason",
    "reviewer",
    "risk",
    "confidence",
    "sprint",
    "release",
];
/// The fields of the `resolution` check.
const RESOLUTION_FIELDS: [(&str, &str, &str); 3] = [
    (
        "resolution",
        "--resolution",
        "Describe how this item was resolved",
    ),
    (
        "expected_result",
        "--expected-result",
        "Describe the expected result",
    ),
    (
        "actual_result",
        "--actual-result",
        "Describe the actual result",
    ),
];

/// pm's warning token of a missing field.
fn warning_token(field: &str) -> String {
    match field {
        "estimated_minutes" => "validate_metadata_missing_estimate".into(),
        other => format!("validate_metadata_missing_{other}"),
    }
}

/// pm's count key of a missing field.
fn count_key(field: &str) -> String {
    match field {
        "close_reason" => "closed_missing_close_reason".into(),
        other => format!("missing_{other}"),
    }
}

/// Maps a settings spelling of a field to its name.
fn field_alias(raw: &str) -> Option<&'static str> {
    let normalized = raw.trim().to_lowercase().replace('-', "_");
    match normalized.as_str() {
        "estimate" => Some("estimated_minutes"),
        other => SUPPORTED_FIELDS.into_iter().find(|f| *f == other),
    }
}

/// The resolved metadata profile.
struct Policy {
    profile: String,
    required: Vec<&'static str>,
    custom: Vec<&'static str>,
    fallback_to_core: bool,
    warnings: Vec<String>,
}

fn policy(scope: &Scope<'_>) -> Policy {
    let validation = scope
        .view
        .settings()
        .effective()
        .get("validation")
        .and_then(Value::as_object);
    let profile = validation
        .and_then(|v| v.get("metadata_profile"))
        .and_then(Value::as_str)
        .map(|s| s.trim().to_lowercase())
        .filter(|s| ["core", "strict", "custom"].contains(&s.as_str()))
        .unwrap_or_else(|| "core".into());
    let mut custom: Vec<&'static str> = validation
        .and_then(|v| v.get("metadata_required_fields"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(field_alias)
        .collect();
    custom.sort_by(|a, b| locale_compare(a, b));
    custom.dedup();
    let (required, fallback_to_core, warnings) = match profile.as_str() {
        "strict" => (SUPPORTED_FIELDS.to_vec(), false, Vec::new()),
        "custom" if !custom.is_empty() => (custom.clone(), false, Vec::new()),
        "custom" => (
            CORE_FIELDS.to_vec(),
            true,
            vec!["validate_metadata_custom_profile_missing_required_fields:0".to_string()],
        ),
        _ => (CORE_FIELDS.to_vec(), false, Vec::new()),
    };
    Policy {
        profile,
        required,
        custom,
        fallback_to_core,
        warnings,
    }
}

/// Whether `field` counts as missing on `item` (planning fields are exempt on terminal items
/// unless the profile is `strict`).
fn is_missing(item: &CheckItem, field: &str, scope: &Scope<'_>, strict: bool) -> bool {
    if !strict && item.terminal && matches!(field, "acceptance_criteria" | "estimated_minutes") {
        return false;
    }
    match field {
        "estimated_minutes" => !item
            .doc
            .metadata
            .get(field)
            .and_then(Value::as_f64)
            .is_some_and(f64::is_finite),
        "close_reason" => {
            item.canonical_status == scope.view.schema().statuses.close_status()
                && item.text(field).is_none()
        }
        "confidence" => match item.doc.metadata.get(field) {
            Some(Value::Number(n)) => !n.as_f64().is_some_and(f64::is_finite),
            _ => item.text(field).is_none(),
        },
        other => item.text(other).is_none(),
    }
}

/// Returns the leading issue code of a title (`GH-209`), upper-cased.
fn issue_code(title: &str) -> Option<String> {
    let upper = title.trim().to_uppercase();
    let bytes = upper.as_bytes();
    if !bytes.first().is_some_and(u8::is_ascii_uppercase) {
        return None;
    }
    let mut i = 1;
    while i < bytes.len() && (bytes[i].is_ascii_uppercase() || bytes[i].is_ascii_digit()) {
        i += 1;
    }
    if bytes.get(i) != Some(&b'-') {
        return None;
    }
    let digits = i + 1;
    let mut end = digits;
    while end < bytes.len() && bytes[end].is_ascii_digit() {
        end += 1;
    }
    // The digit run must end at a word boundary (no letter, digit or `_` follows).
    let boundary = bytes
        .get(end)
        .is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'_'));
    (end > digits && boundary).then(|| upper[..end].to_string())
}

/// Items sharing a leading issue code (pm's `findDuplicateIssueCodes`).
fn duplicate_issue_codes(items: &[CheckItem]) -> Vec<(String, Vec<&CheckItem>)> {
    let mut by_code: BTreeMap<String, Vec<&CheckItem>> = BTreeMap::new();
    for item in items {
        if item.text("duplicate_of").is_some() {
            continue;
        }
        if let Some(code) = item.doc.str_field("title").and_then(issue_code) {
            let group = by_code.entry(code).or_default();
            if !group.iter().any(|i| i.id == item.id) {
                group.push(item);
            }
        }
    }
    let mut out: Vec<(String, Vec<&CheckItem>)> = by_code
        .into_iter()
        .filter_map(|(code, group)| {
            let ids: Vec<String> = group.iter().map(|i| i.id.to_lowercase()).collect();
            let mut kept: Vec<&CheckItem> = group
                .into_iter()
                .filter(|i| {
                    i.text("parent")
                        .is_none_or(|p| !ids.contains(&p.to_lowercase()))
                })
                .collect();
            kept.sort_by(|a, b| locale_compare(&a.id, &b.id));
            (kept.len() >= 2).then_some((code, kept))
        })
        .collect();
    out.sort_by(|a, b| locale_compare(&a.0, &b.0));
    out
}

/// The `metadata` check.
pub(crate) fn metadata(scope: &Scope<'_>) -> Outcome {
    let policy = policy(scope);
    let strict = policy.profile == "strict";
    let mut missing: BTreeMap<&str, Vec<&CheckItem>> = BTreeMap::new();
    for field in &policy.required {
        let ids: Vec<&CheckItem> = scope
            .items
            .iter()
            .filter(|item| is_missing(item, field, scope, strict))
            .collect();
        missing.insert(field, ids);
    }
    let duplicates = duplicate_issue_codes(scope.items);
    let mut warnings = policy.warnings.clone();
    let mut counts = Map::new();
    let mut by_type: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    for field in &policy.required {
        let items = &missing[field];
        if !items.is_empty() {
            warnings.push(format!("{}:{}", warning_token(field), items.len()));
        }
        counts.insert(count_key(field), json!(items.len()));
        for item in items {
            let type_name = match item.type_name() {
                "" => "Unknown",
                t => t,
            };
            let slot = by_type.entry(type_name.to_string()).or_default();
            let n = slot.get(*field).and_then(Value::as_u64).unwrap_or(0);
            slot.insert((*field).to_string(), json!(n + 1));
        }
    }
    if !duplicates.is_empty() {
        warnings.push(format!(
            "validate_metadata_duplicate_issue_codes:{}",
            duplicates.len()
        ));
    }
    let mut types: Vec<(String, Map<String, Value>)> = by_type.into_iter().collect();
    types.sort_by(|a, b| locale_compare(&a.0, &b.0));
    let duplicate_rows: Vec<Value> = duplicates
        .iter()
        .map(|(code, group)| {
            let ids: Vec<&str> = group.iter().map(|i| i.id.as_str()).collect();
            json!({
                "code": code,
                "count": group.len(),
                "ids": ids,
                "titles": group.iter().map(|i| i.title()).collect::<Vec<_>>(),
                "remediation_hint": format!(
                    "Items {} share issue code \"{code}\"; rename or merge so each logical code maps to one item.",
                    ids.join(", ")
                ),
            })
        })
        .collect();
    let duplicate_list = capped(duplicate_rows, scope.limit);
    let mut details = json!({
        "checked_items": scope.items.len(),
        "metadata_profile": policy.profile,
        "metadata_profile_source": "settings",
        "metadata_profile_fallback_to_core": policy.fallback_to_core,
        "required_fields": policy.required,
        "supported_required_fields": SUPPORTED_FIELDS,
        "counts": counts,
        "missing_by_type": Map::from_iter(types.into_iter().map(|(k, v)| (k, Value::Object(v)))),
        "duplicate_issue_codes_count": duplicates.len(),
        "duplicate_issue_codes": duplicate_list.values,
        "duplicate_issue_codes_truncated": duplicate_list.truncated,
    });
    if let Some(map) = details.as_object_mut() {
        if !policy.custom.is_empty() {
            map.insert(
                "configured_custom_required_fields".into(),
                json!(policy.custom),
            );
        }
        for field in &policy.required {
            let items = &missing[field];
            if items.is_empty() {
                continue;
            }
            let ids: Vec<&str> = items.iter().map(|i| i.id.as_str()).collect();
            let list = capped(ids, scope.limit);
            let key = count_key(field);
            map.insert(format!("{key}_item_ids"), list.values);
            let truncated_key = match *field {
                "close_reason" => "closed_missing_close_reason_truncated".to_string(),
                other => format!("missing_{other}_truncated"),
            };
            map.insert(truncated_key, json!(list.truncated));
        }
    }
    Outcome::new(CheckName::Metadata, false, details, warnings)
}

/// The `resolution` check: done items (terminal-done roles and the close status) missing any
/// of `resolution`, `expected_result`, `actual_result`.
pub(crate) fn resolution(scope: &Scope<'_>) -> Outcome {
    let statuses = &scope.view.schema().statuses;
    let done = |item: &CheckItem| {
        item.canonical_status == statuses.close_status()
            || statuses.has_role(&item.canonical_status, StatusRole::TerminalDone)
    };
    let closed: Vec<&CheckItem> = scope.items.iter().filter(|i| done(i)).collect();
    let mut rows = Vec::new();
    let mut hints = Vec::new();
    for item in &closed {
        let missing: Vec<&(&str, &str, &str)> = RESOLUTION_FIELDS
            .iter()
            .filter(|(field, _, _)| item.text(field).is_none())
            .collect();
        if missing.is_empty() {
            continue;
        }
        let names: Vec<&str> = missing.iter().map(|(f, _, _)| *f).collect();
        rows.push(format!("{}:{}", item.id, names.join(",")));
        let args: Vec<String> = missing
            .iter()
            .map(|(_, flag, text)| format!("{flag} \"{text}\""))
            .collect();
        hints.push(format!(
            "pm update {} {} --message \"Backfill resolution metadata\"",
            item.id,
            args.join(" ")
        ));
    }
    let count = rows.len();
    let warnings = if count > 0 {
        vec![format!("validate_resolution_missing_fields:{count}")]
    } else {
        Vec::new()
    };
    let rows = capped(rows, scope.limit);
    let hints = capped(hints, scope.limit);
    let details = json!({
        "checked_closed_items": closed.len(),
        "missing_resolution_items": count,
        "missing_resolution_rows": rows.values,
        "missing_resolution_rows_truncated": rows.truncated,
        "missing_resolution_remediation_hints": hints.values,
        "missing_resolution_remediation_hints_truncated": hints.truncated,
    });
    Outcome::new(CheckName::Resolution, false, details, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_codes_follow_pm() {
        assert_eq!(issue_code("GH-209: x").as_deref(), Some("GH-209"));
        assert_eq!(
            issue_code("  issue-004-extra").as_deref(),
            Some("ISSUE-004")
        );
        assert_eq!(issue_code("ISSUE-004foo"), None);
        assert_eq!(issue_code("4X-1"), None);
        assert_eq!(issue_code("GH-"), None);
        assert_eq!(field_alias("Estimate"), Some("estimated_minutes"));
        assert_eq!(field_alias("close-reason"), Some("close_reason"));
        assert_eq!(field_alias("bogus"), None);
    }
}
