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

/// The built-in status columns of a by-type tally, in pm's column order.
pub const STATUS_COLUMNS: [&str; 6] = [
    "open",
    "in_progress",
    "blocked",
    "draft",
    "closed",
    "canceled",
];

/// Items of one type, by status column (`pm stats` `by_type` rows).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeTally {
    /// The item type.
    pub item_type: String,
    /// Every item of the type.
    pub total: usize,
    /// Counts per [`STATUS_COLUMNS`] entry.
    pub columns: [usize; 6],
    /// Items whose status is none of the built-in columns.
    pub other: usize,
}

/// Tallies `rows` by type: one row per type in `registered` (zero rows included) and per
/// other type that occurs, sorted by total descending then type (`localeCompare`).
pub fn tally_by_type(rows: &[StatusCount], registered: &[&str]) -> Vec<TypeTally> {
    let mut out: Vec<TypeTally> = registered
        .iter()
        .map(|t| TypeTally {
            item_type: (*t).to_owned(),
            total: 0,
            columns: [0; 6],
            other: 0,
        })
        .collect();
    for row in rows {
        let slot = match out.iter().position(|t| t.item_type == row.item_type) {
            Some(i) => i,
            None => {
                out.push(TypeTally {
                    item_type: row.item_type.clone(),
                    total: 0,
                    columns: [0; 6],
                    other: 0,
                });
                out.len() - 1
            }
        };
        let tally = &mut out[slot];
        tally.total += row.count;
        match STATUS_COLUMNS.iter().position(|c| *c == row.status) {
            Some(c) => tally.columns[c] += row.count,
            None => tally.other += row.count,
        }
    }
    out.sort_by(|a, b| {
        b.total
            .cmp(&a.total)
            .then_with(|| crate::collate::locale_compare(&a.item_type, &b.item_type))
    });
    out
}

/// Tallies `rows` by status: every status of `registry_order` (zeros included) in that order,
/// then other statuses that occur, by `localeCompare`.
pub fn tally_by_status(rows: &[StatusCount], registry_order: &[&str]) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = registry_order
        .iter()
        .map(|s| ((*s).to_owned(), 0))
        .collect();
    let mut extra: Vec<(String, usize)> = Vec::new();
    for row in rows {
        match out.iter_mut().find(|(s, _)| *s == row.status) {
            Some((_, n)) => *n += row.count,
            None => match extra.iter_mut().find(|(s, _)| *s == row.status) {
                Some((_, n)) => *n += row.count,
                None => extra.push((row.status.clone(), row.count)),
            },
        }
    }
    extra.sort_by(|a, b| crate::collate::locale_compare(&a.0, &b.0));
    out.extend(extra);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: &str, s: &str, count: usize) -> StatusCount {
        StatusCount {
            item_type: t.into(),
            status: s.into(),
            count,
        }
    }

    #[test]
    fn tallies_keep_registered_zeros_and_sort_by_total() {
        let rows = [
            row("Epic", "open", 5),
            row("Task", "closed", 70),
            row("Task", "open", 10),
            row("Task", "weird", 1),
        ];
        let by_type = tally_by_type(&rows, &["Chore", "Epic", "Task"]);
        let shape: Vec<(&str, usize, usize)> = by_type
            .iter()
            .map(|t| (t.item_type.as_str(), t.total, t.other))
            .collect();
        assert_eq!(shape, [("Task", 81, 1), ("Epic", 5, 0), ("Chore", 0, 0)]);
        assert_eq!(by_type[0].columns, [10, 0, 0, 0, 70, 0]);
        let by_status = tally_by_status(&rows, &["draft", "open", "closed"]);
        assert_eq!(
            by_status,
            [
                ("draft".to_owned(), 0),
                ("open".to_owned(), 15),
                ("closed".to_owned(), 70),
                ("weird".to_owned(), 1)
            ]
        );
    }
}
