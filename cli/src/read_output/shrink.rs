//! The measuring and shrinking steps a budget fit is made of: measuring an envelope as printed,
//! settling receipts that carry their own size, cutting long strings, keeping the largest
//! fitting prefix of a collection, and the brief projection of `get`.

use serde_json::{Map, Value, json};

use super::amount::set;
use super::receipts::omission_receipt;
use super::rows::{self, RowPath};
use crate::render::{Format, budget};

/// Strings longer than this many UTF-16 code units are shortened by budget compaction.
pub const MAX_STRING_UNITS: usize = 240;

/// Root keys budget string compaction leaves alone: receipts, cursors and disclosures.
const PROTECTED_KEYS: &[&str] = &[
    "context_intent",
    "continuation_contract",
    "continuation_kind",
    "next_cursor",
    "output_budget_truncation",
    "read_output",
    "read_session",
    "row_contract",
];

/// Measures `env` as printed in `format`.
pub fn measure_map(env: &mut Map<String, Value>, format: Format) -> u64 {
    let value = Value::Object(std::mem::take(env));
    let tokens = budget::measure(&value, format);
    if let Value::Object(m) = value {
        *env = m;
    }
    tokens
}

/// The root keys a [`settle`] writer may rewrite: the receipts that carry the estimate.
const SETTLED_KEYS: [&str; 3] = ["read_output", "read_session", "context_intent"];

/// Writes `estimate` into every receipt of `env` via `write` until the printed size equals the
/// estimate it carries (at most 16 rounds); returns the measured size of the final text.
///
/// `write` may change only the [`SETTLED_KEYS`]. Root entries print independently of each
/// other in both encodings, so the rest of the document is measured once and every round
/// measures only the receipts.
pub fn settle(
    env: &mut Map<String, Value>,
    format: Format,
    mut write: impl FnMut(&mut Map<String, Value>, u64),
) -> u64 {
    let fixed = budget::RootSize::of(
        env.iter_mut()
            .filter(|(k, _)| !SETTLED_KEYS.contains(&k.as_str())),
        format,
    );
    let measure = |env: &mut Map<String, Value>| {
        let settled = env
            .iter_mut()
            .filter(|(k, _)| SETTLED_KEYS.contains(&k.as_str()));
        let tokens = fixed.plus(settled, format).tokens();
        debug_assert_eq!(
            tokens,
            budget::tokens_for_bytes(
                crate::render::encode(&Value::Object(env.clone()), format).len()
            ),
            "root entries print independently"
        );
        tokens
    };
    let mut guess = 0;
    for _ in 0..16 {
        write(env, guess);
        let measured = measure(env);
        if measured == guess {
            return measured;
        }
        guess = measured;
    }
    write(env, guess);
    measure(env)
}

/// Updates an intent receipt to the final estimate (unless its result was omitted).
pub fn write_intent_estimate(env: &mut Map<String, Value>, estimate: u64) {
    if let Some(Value::Object(intent)) = env.get_mut("context_intent")
        && intent.get("result_omitted") != Some(&Value::Bool(true))
    {
        let within = intent
            .get("token_budget")
            .and_then(Value::as_u64)
            .is_none_or(|b| estimate <= b);
        intent.insert("estimated_tokens".into(), json!(estimate));
        intent.insert("within_budget".into(), json!(within));
    }
}

/// Shortens every string longer than 240 UTF-16 code units (outside receipts) to its first 240
/// units plus `…`, never splitting a surrogate pair; returns whether any string changed.
pub fn compact_strings(env: &mut Map<String, Value>) -> bool {
    fn walk(value: &mut Value) -> bool {
        match value {
            Value::String(s) => {
                let Some(cut) = utf16_cut(s, MAX_STRING_UNITS) else {
                    return false;
                };
                s.truncate(cut);
                s.push('\u{2026}');
                true
            }
            Value::Array(a) => a.iter_mut().fold(false, |any, v| walk(v) | any),
            Value::Object(m) => m.values_mut().fold(false, |any, v| walk(v) | any),
            _ => false,
        }
    }
    env.iter_mut()
        .filter(|(k, _)| !PROTECTED_KEYS.contains(&k.as_str()))
        .fold(false, |any, (_, v)| walk(v) | any)
}

/// Returns the byte index where the first `units` UTF-16 code units of `s` end (backing off a
/// character that would be split), or `None` when `s` is not longer than `units`.
fn utf16_cut(s: &str, units: usize) -> Option<usize> {
    if s.len() <= units {
        return None;
    }
    let mut used = 0;
    for (i, c) in s.char_indices() {
        let width = c.len_utf16();
        if used + width > units {
            return Some(i);
        }
        used += width;
    }
    None
}

/// Returns the recovery budget of rule v1: base = max(binding + 1, measured), plus 25%,
/// rounded up to 100 tokens; `None` (unbounded) when an input is not positive.
pub fn recovery_budget(binding: u64, measured: u64) -> Option<u64> {
    if binding == 0 || measured == 0 {
        return None;
    }
    let base = (binding + 1).max(measured);
    let margin = base.checked_mul(5)?.div_ceil(4);
    let rounded = margin.div_ceil(100).checked_mul(100)?;
    (rounded <= 9_007_199_254_740_991).then_some(rounded)
}

/// Keeps the largest prefix of the collection at `path` (between `min` and `len - 1` rows)
/// whose envelope, as `finalize` completes and measures it, fits `budget`: an exponential
/// search from `min`, then bisection. When no prefix fits, keeps `min` rows. Returns the
/// measured size of the kept state.
pub fn retain_prefix(
    env: &mut Map<String, Value>,
    path: &RowPath,
    min: usize,
    len: usize,
    budget: u64,
    mut finalize: impl FnMut(&mut Map<String, Value>) -> u64,
) -> u64 {
    let Some(slot) = rows::get_mut(env, path) else {
        return finalize(env);
    };
    let full = std::mem::take(slot);
    let mut probe = |env: &mut Map<String, Value>, k: usize| -> u64 {
        if let Some(slot) = rows::get_mut(env, path) {
            *slot = prefix_of(&full, k);
        }
        finalize(env)
    };
    let first = probe(env, min);
    if first > budget {
        return first;
    }
    let (mut good, mut bad) = (min, len);
    loop {
        let next = good.saturating_mul(2).max(good + 1);
        if next >= bad {
            break;
        }
        if probe(env, next) <= budget {
            good = next;
        } else {
            bad = next;
            break;
        }
    }
    while bad - good > 1 {
        let mid = good + (bad - good) / 2;
        if probe(env, mid) <= budget {
            good = mid;
        } else {
            bad = mid;
        }
    }
    probe(env, good)
}

/// Returns the first `k` rows of a collection value.
fn prefix_of(full: &Value, k: usize) -> Value {
    match full {
        Value::Array(a) => Value::Array(a[..k.min(a.len())].to_vec()),
        Value::Object(_) => {
            let mut v = full.clone();
            rows::keep_prefix(&mut v, k);
            v
        }
        other => other.clone(),
    }
}

/// Projects a standard `get` to its brief depth (the over-budget fallback): drops `linked`,
/// `claim_state`, `schedule` and the item body, and names them in the omission receipt.
/// Returns whether anything was dropped.
pub fn project_brief(env: &mut Map<String, Value>) -> bool {
    let mut omitted: Vec<String> = ["linked", "claim_state", "schedule"]
        .into_iter()
        .filter(|k| env.shift_remove(*k).is_some())
        .map(str::to_owned)
        .collect();
    if let Some(Value::Object(item)) = env.get_mut("item")
        && item.shift_remove("body").is_some()
    {
        omitted.push("body".into());
    }
    if omitted.is_empty() {
        return false;
    }
    let mut groups: Vec<(String, String)> = env
        .get("omission_receipt")
        .and_then(|r| r.get("omitted_field_groups"))
        .and_then(Value::as_array)
        .map(|g| {
            g.iter()
                .filter_map(|g| {
                    Some((
                        g.get("name")?.as_str()?.to_owned(),
                        g.get("restore_with")?.as_str()?.to_owned(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    groups.extend(omitted.into_iter().map(|n| {
        let restore = format!("--fields {n}");
        (n, restore)
    }));
    set(env, "omission_receipt", omission_receipt(groups));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_cut_at_240_utf16_units_without_splitting_pairs() {
        let mut env = Map::new();
        env.insert("a".into(), json!("x".repeat(241)));
        env.insert("b".into(), json!(format!("{}{}", "y".repeat(239), "😀z")));
        env.insert("c".into(), json!("short"));
        env.insert("next_cursor".into(), json!("n".repeat(300)));
        assert!(compact_strings(&mut env));
        assert_eq!(env["a"], json!(format!("{}…", "x".repeat(240))));
        // The emoji is two code units; 239 + 2 > 240, so it is dropped whole.
        assert_eq!(env["b"], json!(format!("{}…", "y".repeat(239))));
        assert_eq!(env["c"], json!("short"));
        assert_eq!(env["next_cursor"].as_str().map(str::len), Some(300));
    }

    #[test]
    fn recovery_budget_rule_v1() {
        // base = max(601, 2000) = 2000 → 2500 → 2500.
        assert_eq!(recovery_budget(600, 2000), Some(2500));
        // base = max(1001, 1000) = 1001 → 1252 (ceil) → 1300.
        assert_eq!(recovery_budget(1000, 1000), Some(1300));
        assert_eq!(recovery_budget(0, 10), None);
        assert_eq!(recovery_budget(10, 0), None);
        assert_eq!(recovery_budget(u64::MAX / 2, 1), None);
    }

    #[test]
    fn brief_projection_names_what_it_dropped() {
        let mut env = match json!({"item": {"id": "pm-1", "body": "long"}, "linked": {}, "claim_state": {},
            "omission_receipt": {"has_omissions": true, "omitted_field_group_count": 1,
            "omitted_field_groups": [{"name": "children", "restore_with": "--fields children"}]}})
        {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        assert!(project_brief(&mut env));
        assert_eq!(env["item"], json!({"id": "pm-1"}));
        assert_eq!(env["omission_receipt"]["omitted_field_group_count"], 4);
        assert_eq!(
            env["omission_receipt"]["omitted_field_groups"][3],
            json!({"name": "body", "restore_with": "--fields body"})
        );
        assert!(!project_brief(&mut env));
    }
}
