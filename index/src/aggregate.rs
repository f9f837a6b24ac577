//! The rows of `pm aggregate` (`pm_engine::read::aggregate::AggregateRow`): read from the
//! projection's columns when the spec needs no summary, in default list order; derived from
//! summaries otherwise and on the scan path.

use crate::Index;
use crate::read::{order_by, where_clause};
use crate::source::SweepScope;
use pm_engine::Result;
use pm_engine::query::{Query, Sort, Source};
use pm_engine::read::aggregate::{AggregateRow, AggregateSpec};
use rusqlite::{Connection, params_from_iter};

/// Reads the matches of `query` as aggregate rows in default list order (no tags, no numeric
/// fields but `priority`): the order from the covering default-order index, the columns in
/// table order (sequential pages), then put in place.
///
/// # Errors
/// SQLite failures.
pub fn column_rows(
    conn: &Connection,
    query: &Query,
    spec: &AggregateSpec,
) -> rusqlite::Result<Vec<AggregateRow>> {
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
        "SELECT item_key, parent, type, priority, status, assignee, sprint, release, terminal
         FROM items {} ORDER BY item_key",
        c.sql
    ))?;
    let by_priority =
        |priority: i64, field: &Option<String>| field.as_deref().map(|_| priority as f64);
    let mut keyed: Vec<(i64, AggregateRow)> = stmt
        .query_map(params_from_iter(c.args.iter()), |r| {
            let priority: i64 = r.get(3)?;
            Ok((
                r.get(0)?,
                AggregateRow {
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
                },
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut rows = Vec::with_capacity(order.len());
    for key in order {
        if let Ok(i) = keyed.binary_search_by_key(&key, |(k, _)| *k) {
            rows.push(std::mem::take(&mut keyed[i].1));
        }
    }
    Ok(rows)
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
    ) -> Result<(Vec<AggregateRow>, Source)> {
        if !spec.needs_summaries() {
            let mut notices = Vec::new();
            if let Some(rows) = self.answer(SweepScope::Items, &mut notices, |conn| {
                column_rows(conn, query, spec)
            }) {
                return Ok((rows, Source::Index));
            }
        }
        let summaries = self.summaries(query, &Sort::default_order())?;
        let rows = summaries
            .items
            .iter()
            .map(|item| AggregateRow::of(item, spec))
            .collect();
        Ok((rows, summaries.source))
    }
}
