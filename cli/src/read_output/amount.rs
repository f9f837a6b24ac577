//! The amount dimension: `--output-limit N` keeps the first N rows of every
//! primary row collection; single rows (`next.recommended`) are never cut.

use serde_json::{Map, Value};

use super::receipts::applied_bound;
use super::rows::{self, RowContract};
use super::surface::RowShape;

/// Sets `key` to `value` in place, or appends it.
pub fn set(env: &mut Map<String, Value>, key: &str, value: Value) {
    match env.get_mut(key) {
        Some(slot) => *slot = value,
        None => {
            env.insert(key.to_owned(), value);
        }
    }
}

/// Keeps the first `n` rows of each primary collection. When rows were cut, sets `has_more`
/// and `truncated`, recomputes a numeric `count` and appends `applied_bound`; returns whether
/// anything was cut.
pub fn bound(env: &mut Map<String, Value>, contract: &RowContract, n: u64) -> bool {
    let keep = usize::try_from(n).unwrap_or(usize::MAX);
    let mut cut = false;
    for r in contract
        .rows
        .iter()
        .filter(|r| r.shape == RowShape::Collection)
    {
        if let Some(value) = rows::get_mut(env, &r.path)
            && rows::collection_len(value).is_some_and(|len| len > keep)
        {
            rows::keep_prefix(value, keep);
            cut = true;
        }
    }
    if cut {
        set(env, "has_more", Value::Bool(true));
        set(env, "truncated", Value::Bool(true));
        if env.get("count").is_some_and(Value::is_number) {
            let count = rows::count_rows(env, contract);
            set(env, "count", Value::from(count));
        }
        set(env, "applied_bound", applied_bound(n));
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::super::surface::Surface;
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn bounds_every_collection_but_not_single_rows() {
        let mut env = obj(json!({
            "recommended": {"id": "r", "title": "R", "rank": 1},
            "ready": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
            "blocked": [{"id": "d"}]
        }));
        let contract = RowContract::derive(Surface::Next, &env);
        assert!(bound(&mut env, &contract, 1));
        assert_eq!(
            Value::Object(env),
            json!({
                "recommended": {"id": "r", "title": "R", "rank": 1},
                "ready": [{"id": "a"}],
                "blocked": [{"id": "d"}],
                "has_more": true, "truncated": true,
                "applied_bound": {"kind": "output_limit", "source": "explicit", "value": 1}
            })
        );
    }

    #[test]
    fn counts_and_flags_update_in_place() {
        let mut env = obj(
            json!({"items": [1, 2, 3], "count": 3, "total": 3, "has_more": false, "truncated": false}),
        );
        let contract = RowContract::derive(Surface::List, &env);
        assert!(!bound(&mut env, &contract, 3));
        assert!(bound(&mut env, &contract, 2));
        assert_eq!(
            pm_engine::json::to_compact(&Value::Object(env)),
            r#"{"items":[1,2],"count":2,"total":3,"has_more":true,"truncated":true,"applied_bound":{"kind":"output_limit","source":"explicit","value":2}}"#
        );
    }
}
