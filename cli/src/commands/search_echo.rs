//! The `filters` echo of `pm search` (pm's compact and verbose shapes) and the options its
//! cursor fingerprint is bound to.

use pm_engine::rank::search::MatchMode;
use serde_json::{Map, Value, json};

use super::rank_filters::{ItemFilterArgs, WindowArgs, csv_values, raw};
use super::search::SearchArgs;

/// The filters that change which hits a query returns, for its cursor fingerprint.
pub(super) fn semantic_options(
    status: &[String],
    filters: &ItemFilterArgs,
    args: &SearchArgs,
    match_mode: MatchMode,
) -> Value {
    let mut m = Map::new();
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            m.insert(k.into(), json!(v));
        }
    };
    put("status", raw(status));
    put("type", raw(&filters.item_type));
    put("tag", raw(&filters.tag));
    put("priority", raw(&filters.priority));
    put("assignee", raw(&filters.assignee));
    put("assigneeFilter", filters.assignee_filter.clone());
    put("sprint", raw(&filters.sprint));
    put("release", raw(&filters.release));
    put("parent", filters.parent.clone());
    put("deadlineBefore", args.windows.deadline_before.clone());
    put("deadlineAfter", args.windows.deadline_after.clone());
    put("updatedAfter", args.windows.updated_after.clone());
    put("updatedBefore", args.windows.updated_before.clone());
    put("createdAfter", args.windows.created_after.clone());
    put("createdBefore", args.windows.created_before.clone());
    put("minScore", args.min_score.clone());
    if match_mode != MatchMode::Or {
        m.insert("matchMode".into(), json!(match_mode.as_str()));
    }
    for (k, on) in [
        ("titleExact", args.title_exact),
        ("phraseExact", args.phrase_exact),
    ] {
        if on {
            m.insert(k.into(), json!(true));
        }
    }
    Value::Object(m)
}

fn status_echo(status: &[String]) -> Option<Value> {
    let raw = raw(status)?;
    let all = csv_values(status).len() == 1 && raw.trim().eq_ignore_ascii_case("all");
    Some(json!(if all { "all".to_owned() } else { raw }))
}

fn content_echo(m: &mut Map<String, Value>, w: &WindowArgs) {
    for (key, given, _, _) in w.content.pairs() {
        if given {
            m.insert(key.into(), json!(true));
        }
    }
}

/// pm's compact echo: only the options that were given.
pub(super) fn compact_filter_echo(
    m: &mut Map<String, Value>,
    status: &[String],
    f: &ItemFilterArgs,
    args: &SearchArgs,
    match_mode: MatchMode,
    threshold: f64,
) {
    if let Some(s) = status_echo(status) {
        m.insert("status".into(), s);
    }
    for (k, v) in [
        ("type", raw(&f.item_type)),
        ("tag", raw(&f.tag)),
        ("priority", raw(&f.priority)),
    ] {
        if let Some(v) = v {
            m.insert(k.into(), json!(v));
        }
    }
    let w = &args.windows;
    for (k, v) in [
        ("deadline_before", &w.deadline_before),
        ("deadline_after", &w.deadline_after),
        ("updated_after", &w.updated_after),
        ("updated_before", &w.updated_before),
        ("created_after", &w.created_after),
        ("created_before", &w.created_before),
    ] {
        if let Some(v) = v {
            m.insert(k.into(), json!(v));
        }
    }
    for (k, v) in [
        ("assignee", raw(&f.assignee)),
        ("sprint", raw(&f.sprint)),
        ("release", raw(&f.release)),
        ("parent", f.parent.clone()),
    ] {
        if let Some(v) = v {
            m.insert(k.into(), json!(v));
        }
    }
    content_echo(m, w);
    if match_mode != MatchMode::Or {
        m.insert("match_mode".into(), json!(match_mode.as_str()));
    }
    if args.title_exact {
        m.insert("title_exact".into(), json!(true));
    }
    if args.phrase_exact {
        m.insert("phrase_exact".into(), json!(true));
    }
    if threshold > 0.0 {
        m.insert("score_threshold".into(), number(threshold));
    }
    if let Some(limit) = &args.limit {
        m.insert("limit".into(), json!(limit));
    }
}

fn number(v: f64) -> Value {
    pm_engine::json::number_from_f64(v).map_or(Value::Null, Value::Number)
}

/// pm's verbose echo (full and fields projections): every key, `null` when unset.
pub(super) fn verbose_filter_echo(
    m: &mut Map<String, Value>,
    status: &[String],
    f: &ItemFilterArgs,
    args: &SearchArgs,
    match_mode: MatchMode,
    threshold: f64,
) {
    let v = |o: Option<String>| o.map_or(Value::Null, Value::String);
    let w = &args.windows;
    m.insert("mode".into(), json!("keyword"));
    m.insert("match_mode".into(), json!(match_mode.as_str()));
    m.insert("status".into(), status_echo(status).unwrap_or(json!("all")));
    m.insert("type".into(), v(raw(&f.item_type)));
    m.insert("tag".into(), v(raw(&f.tag)));
    m.insert("priority".into(), v(raw(&f.priority)));
    m.insert("deadline_before".into(), v(w.deadline_before.clone()));
    m.insert("deadline_after".into(), v(w.deadline_after.clone()));
    m.insert("updated_after".into(), v(w.updated_after.clone()));
    m.insert("updated_before".into(), v(w.updated_before.clone()));
    m.insert("created_after".into(), v(w.created_after.clone()));
    m.insert("created_before".into(), v(w.created_before.clone()));
    m.insert("assignee".into(), v(raw(&f.assignee)));
    m.insert("sprint".into(), v(raw(&f.sprint)));
    m.insert("release".into(), v(raw(&f.release)));
    m.insert("parent".into(), v(f.parent.clone()));
    content_echo(m, w);
    m.insert("include_linked".into(), json!(false));
    m.insert("title_exact".into(), json!(args.title_exact));
    m.insert("phrase_exact".into(), json!(args.phrase_exact));
    m.insert("score_threshold".into(), number(threshold));
    m.insert("hybrid_semantic_weight".into(), Value::Null);
    m.insert("limit".into(), v(args.limit.clone()));
    m.insert("runtime_filters".into(), json!({}));
}
