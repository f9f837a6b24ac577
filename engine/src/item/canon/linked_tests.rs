//! Canonical forms of `tests` (linked test commands) and `test_runs` (recorded run summaries),
//! plus the legacy `tests` order that hash epoch 1 applies.

use super::collections::normalize_path;
use super::{js, non_empty, object_entries, object_from_entries, pick, str_or_empty};
use crate::collate::locale_compare;
use crate::item::keys::{self, PM_CONTEXT_MODES, TEST_KEY_ORDER, TEST_RUN_STATUSES};
use crate::json::to_compact;
use crate::timestamp::compare_timestamp_strings;
use serde_json::{Map, Value, json};
use std::cmp::Ordering;

/// Most measurements and executions a test-run summary keeps.
const MAX_RUN_DETAILS: usize = 32;

/// `tests`: each entry rebuilt in `TEST_KEY_ORDER` with the per-field rules. Not sorted.
pub(super) fn tests(value: Value) -> Option<Value> {
    non_empty(
        object_entries(value)?
            .map(|t| Value::Object(linked_test(t)))
            .collect(),
    )
}

fn linked_test(t: Map<String, Value>) -> Map<String, Value> {
    let [
        command,
        path,
        scope,
        timeout,
        context,
        env_set,
        env_clear,
        host_safe,
        stdout_contains,
        stdout_regex,
        stderr_contains,
        stderr_regex,
        min_lines,
        field_equals,
        field_gte,
        note,
    ] = pick(t, TEST_KEY_ORDER);
    let normalized = [
        command.and_then(js::trimmed_owned),
        match path {
            Some(Value::String(p)) if !p.is_empty() => Some(Value::String(normalize_path(p))),
            _ => None,
        },
        scope,
        timeout.filter(|v| js::finite_number(v).is_some_and(|f| f > 0.0)),
        context_mode(context.as_ref()),
        string_record(env_set.as_ref()),
        string_list(env_clear.as_ref()),
        (host_safe == Some(Value::Bool(true))).then_some(Value::Bool(true)),
        string_list(stdout_contains.as_ref()),
        string_list(stdout_regex.as_ref()),
        string_list(stderr_contains.as_ref()),
        string_list(stderr_regex.as_ref()),
        min_lines.and_then(|v| js::floored_at_least(&v, 0.0)),
        string_record(field_equals.as_ref()),
        number_record(field_gte.as_ref()),
        note.and_then(js::trimmed_owned),
    ];
    let mut out = Map::new();
    for (key, value) in TEST_KEY_ORDER.iter().zip(normalized) {
        if let Some(v) = value {
            out.insert((*key).to_string(), v);
        }
    }
    out
}

fn context_mode(v: Option<&Value>) -> Option<Value> {
    let mode = js::lowercase(js::trim(v?.as_str()?));
    PM_CONTEXT_MODES
        .contains(&mode.as_str())
        .then_some(Value::String(mode))
}

/// A list of strings trimmed, emptied entries dropped, de-duplicated and `localeCompare` sorted.
fn string_list(v: Option<&Value>) -> Option<Value> {
    let mut out: Vec<&str> = Vec::new();
    for s in v?.as_array()?.iter().filter_map(Value::as_str) {
        let t = js::trim(s);
        if !t.is_empty() && !out.contains(&t) {
            out.push(t);
        }
    }
    js::sort_by(&mut out, |a, b| locale_compare(a, b));
    non_empty(out.into_iter().map(|s| Value::String(s.into())).collect())
}

/// A string map: keys and `String(value)` trimmed, empty pairs and prototype keys dropped,
/// keys `localeCompare` sorted.
fn string_record(v: Option<&Value>) -> Option<Value> {
    let map = v?.as_object()?;
    let mut pairs: Vec<(&str, String)> = map
        .iter()
        .map(|(k, v)| (js::trim(k), js::trim(&js::to_js_string(v)).to_string()))
        .filter(|(k, v)| !k.is_empty() && !v.is_empty() && !keys::is_forbidden_key(k))
        .collect();
    js::sort_by(&mut pairs, |a, b| locale_compare(a.0, b.0));
    let out = object_from_entries(pairs.into_iter().map(|(k, v)| (k, Value::String(v))));
    (!out.is_empty()).then_some(Value::Object(out))
}

/// A numeric map: keys trimmed, values that are not finite numbers dropped, prototype keys
/// dropped, keys `localeCompare` sorted.
fn number_record(v: Option<&Value>) -> Option<Value> {
    let map = v?.as_object()?;
    let mut pairs: Vec<(&str, Value)> = map
        .iter()
        .filter(|(_, v)| js::finite_number(v).is_some())
        .map(|(k, v)| (js::trim(k), v.clone()))
        .filter(|(k, _)| !k.is_empty() && !keys::is_forbidden_key(k))
        .collect();
    js::sort_by(&mut pairs, |a, b| locale_compare(a.0, b.0));
    let out = object_from_entries(pairs);
    (!out.is_empty()).then_some(Value::Object(out))
}

/// Sorts canonical `tests` entries with the comparator of hash epoch 1: scope, path, command,
/// timeout, context mode, shared_host_safe, the JSON text of the list and map fields, the
/// minimum line count, then note.
pub fn sort_tests_legacy(tests: &mut Vec<Value>) {
    js::sort_by(tests, |a, b| match (a.as_object(), b.as_object()) {
        (Some(a), Some(b)) => compare_legacy(a, b),
        _ => Ordering::Equal,
    });
}

fn compare_legacy(a: &Map<String, Value>, b: &Map<String, Value>) -> Ordering {
    let s = |m: &Map<String, Value>, k: &str| str_or_empty(m, k).to_string();
    let n = |m: &Map<String, Value>, k: &str| m.get(k).and_then(js::number).unwrap_or(0.0);
    let flag = |m: &Map<String, Value>| m.get("shared_host_safe") == Some(&Value::Bool(true));
    let json_text = |m: &Map<String, Value>, k: &str, fallback: &Value| {
        to_compact(m.get(k).unwrap_or(fallback))
    };
    let (empty_list, empty_map) = (json!([]), json!({}));
    let mut order = locale_compare(&s(a, "scope"), &s(b, "scope"))
        .then_with(|| locale_compare(&s(a, "path"), &s(b, "path")))
        .then_with(|| locale_compare(&s(a, "command"), &s(b, "command")))
        .then_with(|| num_cmp(n(a, "timeout_seconds"), n(b, "timeout_seconds")))
        .then_with(|| locale_compare(&s(a, "pm_context_mode"), &s(b, "pm_context_mode")))
        .then_with(|| flag(a).cmp(&flag(b)));
    for (key, fallback) in [
        ("env_clear", &empty_list),
        ("env_set", &empty_map),
        ("assert_stdout_contains", &empty_list),
        ("assert_stdout_regex", &empty_list),
        ("assert_stderr_contains", &empty_list),
        ("assert_stderr_regex", &empty_list),
    ] {
        order = order.then_with(|| {
            locale_compare(&json_text(a, key, fallback), &json_text(b, key, fallback))
        });
    }
    order
        .then_with(|| {
            num_cmp(
                n(a, "assert_stdout_min_lines"),
                n(b, "assert_stdout_min_lines"),
            )
        })
        .then_with(|| {
            locale_compare(
                &json_text(a, "assert_json_field_equals", &empty_map),
                &json_text(b, "assert_json_field_equals", &empty_map),
            )
        })
        .then_with(|| {
            locale_compare(
                &json_text(a, "assert_json_field_gte", &empty_map),
                &json_text(b, "assert_json_field_gte", &empty_map),
            )
        })
        .then_with(|| locale_compare(&s(a, "note"), &s(b, "note")))
}

/// Compares like a JavaScript comparator returning `a - b` (`-0` equals `0`).
fn num_cmp(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// `test_runs`: each summary rebuilt in `TEST_RUN_KEY_ORDER` (bad kind → `test`, bad status →
/// `failed`), summaries without a run id or any of the three timestamps dropped, then sorted
/// by recorded_at (timestamp), run_id and kind.
pub(super) fn test_runs(value: Value) -> Option<Value> {
    let mut runs: Vec<Map<String, Value>> = object_entries(value)?
        .map(test_run)
        .filter(|r| {
            ["run_id", "started_at", "finished_at", "recorded_at"]
                .iter()
                .all(|k| !str_or_empty(r, k).is_empty())
        })
        .collect();
    js::sort_by(&mut runs, |a, b| {
        compare_timestamp_strings(
            str_or_empty(a, "recorded_at"),
            str_or_empty(b, "recorded_at"),
        )
        .then_with(|| locale_compare(str_or_empty(a, "run_id"), str_or_empty(b, "run_id")))
        .then_with(|| locale_compare(str_or_empty(a, "kind"), str_or_empty(b, "kind")))
    });
    non_empty(runs.into_iter().map(Value::Object).collect())
}

fn test_run(mut r: Map<String, Value>) -> Map<String, Value> {
    let count =
        |r: &Map<String, Value>, k: &str| r.get(k).and_then(|v| js::floored_at_least(v, 0.0));
    let kind = match str_or_empty(&r, "kind") {
        k @ ("test" | "test-all") => k,
        _ => "test",
    };
    let status = str_or_empty(&r, "status");
    let status = if TEST_RUN_STATUSES.contains(&status) {
        status
    } else {
        "failed"
    };
    let mut out = Map::new();
    out.insert(
        "run_id".into(),
        Value::String(js::trim(str_or_empty(&r, "run_id")).into()),
    );
    out.insert("kind".into(), Value::String(kind.into()));
    out.insert("status".into(), Value::String(status.into()));
    for k in ["started_at", "finished_at", "recorded_at"] {
        let v = match r.remove(k) {
            Some(Value::String(s)) => s,
            _ => String::new(),
        };
        out.insert(k.into(), Value::String(v));
    }
    let optional = [
        (
            "attempt",
            r.get("attempt").and_then(|v| js::floored_at_least(v, 1.0)),
        ),
        ("resumed_from", js::take_trimmed(&mut r, "resumed_from")),
    ];
    for (k, v) in optional {
        if let Some(v) = v {
            out.insert(k.into(), v);
        }
    }
    for k in ["passed", "failed", "skipped"] {
        out.insert(k.into(), count(&r, k).unwrap_or_else(|| Value::from(0)));
    }
    let tail = [
        ("items", count(&r, "items")),
        ("linked_tests", count(&r, "linked_tests")),
        (
            "fail_on_skipped_triggered",
            (r.get("fail_on_skipped_triggered") == Some(&Value::Bool(true)))
                .then_some(Value::Bool(true)),
        ),
        (
            "measurements",
            r.remove("measurements").and_then(measurements),
        ),
        ("executions", r.remove("executions").and_then(executions)),
    ];
    for (k, v) in tail {
        if let Some(v) = v {
            out.insert(k.into(), v);
        }
    }
    out
}

/// Measurements `{name, value, unit?, threshold?, recorded_at}`: entries need a name and a
/// finite value; a repeated name keeps its first position and takes the last entry; sorted by
/// name; at most 32.
fn measurements(v: Value) -> Option<Value> {
    let mut by_name: Map<String, Value> = Map::new();
    for mut m in object_entries(v)? {
        let Some(Value::String(name)) = js::take_trimmed(&mut m, "name") else {
            continue;
        };
        let Some(value) = m.remove("value").filter(|v| js::finite_number(v).is_some()) else {
            continue;
        };
        let mut out = Map::new();
        out.insert("name".into(), Value::String(name.clone()));
        out.insert("value".into(), value);
        if let Some(unit) = js::take_trimmed(&mut m, "unit") {
            out.insert("unit".into(), unit);
        }
        if let Some(t) = m
            .remove("threshold")
            .filter(|v| js::finite_number(v).is_some())
        {
            out.insert("threshold".into(), t);
        }
        if let Some(at) = m.remove("recorded_at").filter(Value::is_string) {
            out.insert("recorded_at".into(), at);
        }
        by_name.insert(name, Value::Object(out));
    }
    let mut rows: Vec<(String, Value)> = by_name.into_iter().collect();
    js::sort_by(&mut rows, |a, b| locale_compare(&a.0, &b.0));
    non_empty(
        rows.into_iter()
            .take(MAX_RUN_DETAILS)
            .map(|(_, v)| v)
            .collect(),
    )
}

/// Executions `{command, requested_pm_context_mode?, pm_context_mode?}`: entries need a
/// command; order kept; at most 32.
fn executions(v: Value) -> Option<Value> {
    let rows = object_entries(v)?
        .filter_map(|mut e| {
            let command = js::take_trimmed(&mut e, "command")?;
            let mut out = Map::new();
            out.insert("command".into(), command);
            for k in ["requested_pm_context_mode", "pm_context_mode"] {
                if let Some(mode) = context_mode(e.get(k)) {
                    out.insert(k.into(), mode);
                }
            }
            Some(Value::Object(out))
        })
        .take(MAX_RUN_DETAILS)
        .collect();
    non_empty(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linked_tests_are_rebuilt_not_sorted() {
        let v = json!([
            {"scope": "project", "command": " b ", "timeout_seconds": 0, "note": " ",
             "env_set": {" Z ": " 1 ", "a": 2, "__proto__": "x", "e": " "},
             "env_clear": [" B", "a", "B", ""], "shared_host_safe": false,
             "assert_stdout_min_lines": 2.9, "assert_json_field_gte": {"n": 1, "s": "2"},
             "pm_context_mode": " Tracker ", "unknown": 1},
            {"path": "t\\x.sh", "scope": "project", "command": "a", "timeout_seconds": 30}
        ]);
        assert_eq!(
            tests(v.clone()),
            Some(json!([
                {"command": "b", "scope": "project", "pm_context_mode": "tracker",
                 "env_set": {"a": "2", "Z": "1"}, "env_clear": ["a", "B"],
                 "assert_stdout_min_lines": 2, "assert_json_field_gte": {"n": 1}},
                {"command": "a", "path": "t/x.sh", "scope": "project", "timeout_seconds": 30}
            ]))
        );
    }

    #[test]
    fn legacy_order_sorts_by_scope_path_command() {
        let mut v = vec![
            json!({"command": "b", "scope": "project"}),
            json!({"command": "a", "scope": "project"}),
            json!({"command": "c", "scope": "global"}),
        ];
        sort_tests_legacy(&mut v);
        let commands: Vec<_> = v.iter().map(|t| t["command"].clone()).collect();
        assert_eq!(commands, [json!("c"), json!("a"), json!("b")]);
    }

    #[test]
    fn test_runs_are_rebuilt_filtered_and_sorted() {
        let v = json!([
            {"run_id": "r2", "kind": "other", "status": "weird", "started_at": "s",
             "finished_at": "f", "recorded_at": "2026-01-02T00:00:00.000Z", "passed": 1.5,
             "failed": -1, "items": 3, "fail_on_skipped_triggered": false, "extra": 1},
            {"run_id": " r1 ", "kind": "test-all", "status": "passed", "started_at": "s",
             "finished_at": "f", "recorded_at": "2026-01-01T00:00:00.000Z", "passed": 2,
             "failed": 0, "skipped": 0, "attempt": 0,
             "measurements": [{"name": "b", "value": 1, "recorded_at": "t"},
                              {"name": "a", "value": 0.5, "unit": " s ", "threshold": 1, "recorded_at": "t"},
                              {"name": "b", "value": 2, "recorded_at": "t"}, {"name": "c"}],
             "executions": [{"command": " x ", "requested_pm_context_mode": "schema", "pm_context_mode": "bad"}]},
            {"run_id": "", "started_at": "s", "finished_at": "f", "recorded_at": "r"}
        ]);
        assert_eq!(
            test_runs(v.clone()),
            Some(json!([
                {"run_id": "r1", "kind": "test-all", "status": "passed", "started_at": "s",
                 "finished_at": "f", "recorded_at": "2026-01-01T00:00:00.000Z",
                 "passed": 2, "failed": 0, "skipped": 0,
                 "measurements": [{"name": "a", "value": 0.5, "unit": "s", "threshold": 1, "recorded_at": "t"},
                                  {"name": "b", "value": 2, "recorded_at": "t"}],
                 "executions": [{"command": "x", "requested_pm_context_mode": "schema"}]},
                {"run_id": "r2", "kind": "test", "status": "failed", "started_at": "s",
                 "finished_at": "f", "recorded_at": "2026-01-02T00:00:00.000Z",
                 "passed": 1, "failed": 0, "skipped": 0, "items": 3}
            ]))
        );
    }
}
