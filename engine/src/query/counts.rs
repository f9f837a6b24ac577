//! Aggregate counts over matched items (`pm stats`, `pm aggregate`): one row per
//! `(type, status)` pair, the shape both read paths produce.

use crate::summary::ItemSummary;
use serde::Serialize;
use std::collections::BTreeMap;

/// How many matched items have one type and one status.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct StatusCount {
    /// The item `type`.
    #[serde(rename = "type")]
    pub item_type: String,
    /// The `status`.
    pub status: String,
    /// Matching items.
    pub count: usize,
}

/// Returns the `(type, status)` counts of `items`, sorted by type then status (byte order).
pub fn count_by_type_status<'a>(
    items: impl IntoIterator<Item = &'a ItemSummary>,
) -> Vec<StatusCount> {
    let mut map: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for item in items {
        *map.entry((item.item_type.as_str(), item.status.as_str()))
            .or_default() += 1;
    }
    map.into_iter()
        .map(|((t, s), count)| StatusCount {
            item_type: t.to_string(),
            status: s.to_string(),
            count,
        })
        .collect()
}
