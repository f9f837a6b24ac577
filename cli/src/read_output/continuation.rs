//! Producer-cursor continuations: the metadata collapse of a continuation page (`--after`)
//! and the rebase of a producer `next_cursor` after rows were withheld from its page.

use serde_json::{Map, Value, json};

use super::codec;
use super::query_cursor::QueryCursor;

/// Keys a continuation page (`--after`) drops: the first page already carried them.
const PAGE_METADATA_KEYS: &[&str] = &[
    "applied_limit",
    "completeness",
    "context_intent",
    "count",
    "filters",
    "has_more",
    "now",
    "omission_receipt",
    "projection",
    "row_contract",
    "sorting",
    "total",
    "truncated",
];

/// Collapses the metadata of a page fetched with `--after <after>` and appends its
/// `continuation_contract` (fingerprint of the cursor, or `opaque_cursor`).
pub fn collapse(env: &mut Map<String, Value>, after: &str) {
    let fingerprint = codec::decode_json(after)
        .and_then(|v| {
            v.get("fingerprint")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "opaque_cursor".into());
    for key in PAGE_METADATA_KEYS {
        env.shift_remove(*key);
    }
    env.insert(
        "continuation_contract".into(),
        json!({"fingerprint": fingerprint, "metadata": "reference", "restore_with": "omit --after"}),
    );
}

/// Where the producer cursor of a page came from.
#[derive(Clone, Debug)]
pub struct ProducerCursor {
    /// The cursor text.
    pub text: String,
    /// `true` when it is the page's own `next_cursor` (continues the page); `false` when it
    /// is the request's `--after` (the page precedes it).
    pub continues_page: bool,
}

impl ProducerCursor {
    /// Returns the producer cursor of `env`: its `next_cursor` string, else the request's
    /// `--after`.
    pub fn of(env: &Map<String, Value>, after: Option<&str>) -> Option<ProducerCursor> {
        match env.get("next_cursor").and_then(Value::as_str) {
            Some(text) => Some(ProducerCursor {
                text: text.to_owned(),
                continues_page: true,
            }),
            None => after.filter(|a| !a.is_empty()).map(|a| ProducerCursor {
                text: a.to_owned(),
                continues_page: false,
            }),
        }
    }

    /// Returns the cursor that resumes right after the last of the `retained` rows kept from
    /// an `items` page of `original` rows, or `None` when it cannot be rebased (no rows
    /// withheld, not a query cursor, no recorded index, last row without an id).
    pub fn rebase(&self, items: &[Value], original: usize) -> Option<String> {
        let retained = items.len();
        if retained == 0 || retained >= original {
            return None;
        }
        let cursor = QueryCursor::parse(&self.text)?;
        let index = cursor.after_index?;
        let last_id = items
            .last()?
            .get("id")?
            .as_str()
            .filter(|s| !s.is_empty())?;
        let after_index = if self.continues_page {
            index.checked_sub((original - retained) as u64)?
        } else {
            index + retained as u64
        };
        Some(
            QueryCursor {
                after_id: last_id.to_owned(),
                after_index: Some(after_index),
                ..cursor
            }
            .encode(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn query(after_id: &str, index: u64) -> String {
        QueryCursor {
            fingerprint: "f".repeat(24),
            after_id: after_id.into(),
            after_index: Some(index),
            snapshot: None,
        }
        .encode()
    }

    #[test]
    fn continuation_page_keeps_rows_and_cursor_only() {
        let mut env = obj(json!({
            "items": [{"id": "c"}], "count": 1, "total": 4, "applied_limit": 2, "has_more": true,
            "truncated": true, "next_cursor": "abc", "completeness": {}, "filters": {},
            "projection": {}, "sorting": {}, "now": "t", "omission_receipt": {}
        }));
        collapse(&mut env, &query("b", 1));
        assert_eq!(
            Value::Object(env),
            json!({
                "items": [{"id": "c"}], "next_cursor": "abc",
                "continuation_contract": {"fingerprint": "f".repeat(24), "metadata": "reference", "restore_with": "omit --after"}
            })
        );
        let mut env = obj(json!({"items": []}));
        collapse(&mut env, "opaque");
        assert_eq!(env["continuation_contract"]["fingerprint"], "opaque_cursor");
    }

    #[test]
    fn rebase_follows_the_retained_rows() {
        let rows = [json!({"id": "a"}), json!({"id": "b"})];
        // A page of 4 rows (indices 10..13) whose next cursor points after index 13; 2 kept.
        let own = ProducerCursor {
            text: query("d", 13),
            continues_page: true,
        };
        assert_eq!(own.rebase(&rows, 4), Some(query("b", 11)));
        // A page fetched with --after (last row of the previous page at index 9); 2 kept.
        let after = ProducerCursor {
            text: query("z", 9),
            continues_page: false,
        };
        assert_eq!(after.rebase(&rows, 4), Some(query("b", 11)));
        assert_eq!(own.rebase(&rows, 2), None);
        assert_eq!(own.rebase(&[], 2), None);
        let opaque = ProducerCursor {
            text: "node-id".into(),
            continues_page: true,
        };
        assert_eq!(opaque.rebase(&rows, 4), None);
        let env = obj(json!({"next_cursor": null}));
        assert!(ProducerCursor::of(&env, None).is_none());
        assert!(ProducerCursor::of(&env, Some("x")).is_some_and(|c| !c.continues_page));
    }
}
