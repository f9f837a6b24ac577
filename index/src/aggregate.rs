//! The rows of `pm aggregate` (`pm_engine::read::aggregate::AggregateRow`): grouped in SQL
//! from the projection's columns when the spec needs no summary (one weighted row per distinct
//! combination of the values it reads); one row per item from summaries otherwise and on the
//! scan path.

use crate::fresh::source::SweepScope;
use crate::read::{order_by, where_clause};
use crate::{Answer, Index};
use pm_engine::Result;
use pm_engine::query::{Query, Sort};
use pm_engine::read::aggregate::{AggregateRow, AggregateSpec, GroupField};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, params_from_iter};
use std::collections::HashMap;

/// Reads the matches of `query` as weighted aggregate rows (no tags, no numeric fields but
/// `priority`): one row per distinct combination of the values `spec` reads, standing for
/// every match with those values, in the default-list-order position of the first of them.
/// Grouping these gives exactly what grouping one row per item in default order gives: each
/// group is created at its first item, and counts and integer sums do not depend on order.
///
/// The order comes from the covering default-order index; the values are read in table order
/// and each item is mapped to its combination without allocating (a combination's strings are
/// copied once, when first seen).
///
/// # Errors
/// SQLite failures.
pub fn column_rows(
    conn: &Connection,
    query: &Query,
    spec: &AggregateSpec,
) -> rusqlite::Result<Vec<AggregateRow>> {
    let grouped = |field: GroupField| spec.group_by.contains(&field);
    let column = |field: GroupField, name: &'static str, absent: &'static str| {
        if grouped(field) { name } else { absent }
    };
    let numeric = spec.sum.is_some() || spec.avg.is_some();
    let priority = if grouped(GroupField::Priority) || numeric {
        "priority"
    } else {
        "0"
    };
    let c = where_clause(query);
    let mut stmt = conn.prepare(&format!(
        "SELECT item_key FROM items {} {}",
        c.sql,
        order_by(&Sort::default_order())
    ))?;
    let order: Vec<i64> = stmt
        .query_map(params_from_iter(c.args.iter()), |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut stmt = conn.prepare(&format!(
        "SELECT item_key, {}, {}, {priority}, {}, {}, {}, {}, terminal FROM items {} ORDER BY item_key",
        column(GroupField::Parent, "parent", "NULL"),
        column(GroupField::Type, "type", "''"),
        column(GroupField::Status, "status", "''"),
        column(GroupField::Assignee, "assignee", "NULL"),
        column(GroupField::Sprint, "sprint", "NULL"),
        column(GroupField::Release, "release", "NULL"),
        c.sql,
    ))?;
    let by_priority =
        |priority: i64, field: &Option<String>| field.as_ref().map(|_| priority as f64);
    let mut combos: Vec<AggregateRow> = Vec::new();
    let mut combo_of: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut keyed: Vec<(i64, usize)> = Vec::with_capacity(order.len());
    let mut signature: Vec<u8> = Vec::new();
    let mut rows = stmt.query(params_from_iter(c.args.iter()))?;
    while let Some(r) = rows.next()? {
        // The combination's signature: each value tagged (null, integer or text) and
        // length-prefixed, so that distinct combinations never collide.
        signature.clear();
        for i in 1..=8 {
            match r.get_ref(i)? {
                ValueRef::Null => signature.push(0),
                ValueRef::Integer(n) => {
                    signature.push(1);
                    signature.extend_from_slice(&n.to_le_bytes());
                }
                other => {
                    let text = other.as_str()?;
                    signature.push(2);
                    signature.extend_from_slice(&text.len().to_le_bytes());
                    signature.extend_from_slice(text.as_bytes());
                }
            }
        }
        let combo = match combo_of.get(signature.as_slice()) {
            Some(&combo) => combo,
            None => {
                let priority: i64 = r.get(3)?;
                combos.push(AggregateRow {
                    parent: r.get(1)?,
                    item_type: r.get(2)?,
                    priority,
                    status: r.get(4)?,
                    assignee: r.get(5)?,
                    sprint: r.get(6)?,
                    release: r.get(7)?,
                    tags: Vec::new(),
                    terminal: r.get(8)?,
                    sum: by_priority(priority, &spec.sum),
                    avg: by_priority(priority, &spec.avg),
                    weight: 0,
                });
                combo_of.insert(signature.clone(), combos.len() - 1);
                combos.len() - 1
            }
        };
        keyed.push((r.get(0)?, combo));
    }
    // Walk the default order: weigh each combination and place it at its first item (items
    // missing from either read, if another process wrote in between, are left out).
    let mut first: Vec<usize> = vec![usize::MAX; combos.len()];
    for (position, key) in order.iter().enumerate() {
        if let Ok(i) = keyed.binary_search_by_key(key, |(k, _)| *k) {
            let combo = keyed[i].1;
            combos[combo].weight += 1;
            first[combo] = first[combo].min(position);
        }
    }
    let mut placed: Vec<(usize, AggregateRow)> = first
        .into_iter()
        .zip(combos)
        .filter(|(_, row)| row.weight > 0)
        .collect();
    placed.sort_unstable_by_key(|(position, _)| *position);
    Ok(placed.into_iter().map(|(_, row)| row).collect())
}

impl Index<'_> {
    /// Returns the aggregate rows of the matches of `query` in default list order.
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn aggregate_rows(
        &self,
        query: &Query,
        spec: &AggregateSpec,
    ) -> Result<Answer<Vec<AggregateRow>>> {
        if spec.needs_summaries() {
            let summaries = self.summaries(query, &Sort::default_order())?;
            return Ok(summaries.map(|found| {
                found
                    .items
                    .iter()
                    .map(|item| AggregateRow::of(item, spec))
                    .collect()
            }));
        }
        self.index_or_scan(
            SweepScope::Items,
            |conn| Ok((column_rows(conn, query, spec)?, Vec::new())),
            |_| {
                let outcome = self.scan()?;
                let rows = outcome
                    .select(query, &Sort::default_order())
                    .iter()
                    .map(|item| AggregateRow::of(item, spec))
                    .collect();
                Ok((rows, outcome.read_notices()))
            },
        )
    }
}
