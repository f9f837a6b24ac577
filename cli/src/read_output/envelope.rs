//! Typed envelope pieces shared by read commands: the default-format and clock stamp that lead
//! `next` and `context`, and the paging keys (`applied_limit`, `has_more`, `truncated`,
//! `next_cursor`) of paged reads. A command's result struct embeds them with
//! `#[serde(flatten)]` where the keys belong, so their order and presence rules live here once.

use serde::Serialize;
use serde_json::{Map, Value};

/// The leading `output_default` and `now` keys.
#[derive(Debug, Serialize)]
pub struct Stamp {
    /// The format the read prints without a format flag.
    pub output_default: &'static str,
    /// The read's instant, ISO-8601 with milliseconds.
    pub now: String,
}

impl Stamp {
    /// A TOON-default stamp at `now`.
    pub fn toon(now: String) -> Self {
        Self {
            output_default: "toon",
            now,
        }
    }
}

/// `has_more` and `truncated`, both `true` when more rows follow and both absent otherwise.
#[derive(Debug, Default, Serialize)]
pub struct More {
    #[serde(skip_serializing_if = "Option::is_none")]
    has_more: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated: Option<bool>,
}

impl More {
    /// The flags for a page after which more rows do (`true`) or do not follow.
    pub fn new(more: bool) -> Self {
        let flag = more.then_some(true);
        Self {
            has_more: flag,
            truncated: flag,
        }
    }
}

/// The paging keys in order: `applied_limit` (when the read was bounded), the [`More`] flags and
/// `next_cursor` (when another page follows).
#[derive(Debug, Default, Serialize)]
pub struct Paging {
    /// The row limit the page was cut at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied_limit: Option<u64>,
    /// Whether more rows follow.
    #[serde(flatten)]
    pub more: More,
    /// The cursor of the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `total` when it differs from the answered row count, else absent.
#[derive(Debug, Serialize)]
pub struct Total {
    #[serde(skip_serializing_if = "Option::is_none")]
    total: Option<u64>,
}

impl Total {
    /// The total of `total` matches when only `count` of them were answered.
    pub fn beyond(count: usize, total: usize) -> Self {
        Self {
            total: (count < total).then_some(total as u64),
        }
    }
}

/// Converts a typed result into the object the read-output layer takes; a value that does not
/// serialize to an object (never the case for the result structs) gives an empty object.
pub fn to_object<T: Serialize>(result: &T) -> Map<String, Value> {
    match serde_json::to_value(result) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

/// Like [`to_object`] for a result whose `key` field was serialized empty: the rows are moved
/// into that key's place afterwards instead of being copied value by value.
pub fn to_object_with_rows<T: Serialize>(
    result: &T,
    key: &str,
    rows: Vec<Value>,
) -> Map<String, Value> {
    let mut map = to_object(result);
    if let Some(slot) = map.get_mut(key) {
        *slot = Value::Array(rows);
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moved_rows_keep_their_key_position() {
        #[derive(Serialize)]
        struct Page {
            items: Vec<Value>,
            count: usize,
        }
        let page = Page {
            items: Vec::new(),
            count: 1,
        };
        let map = to_object_with_rows(&page, "items", vec![Value::from("row")]);
        let keys: Vec<&str> = map.keys().map(String::as_str).collect();
        assert_eq!(keys, ["items", "count"]);
        assert_eq!(map["items"], serde_json::json!(["row"]));
    }

    #[test]
    fn paging_keeps_key_order_and_drops_absent_keys() {
        let full = Paging {
            applied_limit: Some(5),
            more: More::new(true),
            next_cursor: Some("c".into()),
        };
        let keys: Vec<String> = to_object(&full).keys().cloned().collect();
        assert_eq!(
            keys,
            ["applied_limit", "has_more", "truncated", "next_cursor"]
        );
        let last = Paging {
            applied_limit: None,
            more: More::new(false),
            next_cursor: None,
        };
        assert!(to_object(&last).is_empty());
    }

    #[test]
    fn stamp_and_total_print_as_before() {
        let s = serde_json::to_string(&Stamp::toon("t".into())).unwrap_or_default();
        assert_eq!(s, r#"{"output_default":"toon","now":"t"}"#);
        assert!(to_object(&Total::beyond(3, 3)).is_empty());
        assert_eq!(
            serde_json::to_string(&Total::beyond(2, 3)).unwrap_or_default(),
            r#"{"total":3}"#
        );
    }
}
