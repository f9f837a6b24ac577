//! The ranking rows of `context` and `next` (`pm_engine::rank::item::RankItem`) read from the
//! projection's typed columns only (the light metadata's rank facts are columns of their own);
//! the summaries of the rows a command prints are fetched afterwards by row key. The scan path
//! derives the same rows from `ItemSummary`.

use crate::fresh::source::SweepScope;
use crate::read::{self, SUMMARY_COLUMNS, summary_row};
use crate::{Answer, Index, Origin, ScanReason};
use pm_engine::Result;
use pm_engine::notice::Notice;
use pm_engine::query::{Query, Sort};
use pm_engine::rank::item::{BLOCKING_KINDS, Interner, RankExtra, RankItem};
use pm_engine::schema::RuntimeSchema;
use pm_engine::summary::{DependencyRef, ItemSummary, StatusClass};
use rusqlite::{Connection, params_from_iter};
use std::sync::Arc;

/// Every item of a tracker as ranking rows, in default order, with the matches of a query.
pub struct RankCorpus {
    /// Every readable item, in default list order.
    pub items: Vec<RankItem>,
    /// Positions in `items` of the query's matches, ascending.
    pub matches: Vec<usize>,
    /// Where the rows' summaries are (`Index::rank_details`).
    details: DetailSource,
}

/// The connection the rows were read from (their keys are row keys of that database), or the
/// scanned summaries (keys are positions).
enum DetailSource {
    Index(Box<crate::connect::PooledConn>),
    Scan(Vec<ItemSummary>, ScanReason),
}

impl std::fmt::Debug for RankCorpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RankCorpus")
            .field("items", &self.items.len())
            .field("matches", &self.matches.len())
            .finish_non_exhaustive()
    }
}

/// The columns of an active row, in [`open_row`]'s order.
const OPEN_COLUMNS: &str = "item_key, id, title, type, status, priority, parent, assignee,
    updated_ms, deadline, deadline_ms, risk, blocked_by, n_comments + n_notes + n_learnings,
    rank_order, has_schedule, light_len";

/// The columns of a terminal row, in [`terminal_row`]'s order.
const TERMINAL_COLUMNS: &str = "item_key, id, type, status, priority, parent, blocked_by";

/// Distinct types or statuses found by comparing bytes before the interner's hash lookup.
const FEW: usize = 32;

/// Shares the strings of the rows read: the few distinct types and statuses (each status with
/// its class) by a byte comparison, other values through the interner.
struct Shared<'s> {
    schema: &'s RuntimeSchema,
    interner: Interner,
    statuses: Vec<(Arc<str>, StatusClass)>,
    types: Vec<Arc<str>>,
}

impl Shared<'_> {
    fn status(&mut self, s: &str) -> (Arc<str>, StatusClass) {
        if let Some((shared, class)) = self.statuses.iter().find(|(k, _)| **k == *s) {
            return (Arc::clone(shared), *class);
        }
        let shared = self.interner.get(s);
        let class = StatusClass::of(s, self.schema);
        if self.statuses.len() < FEW {
            self.statuses.push((Arc::clone(&shared), class));
        }
        (shared, class)
    }

    fn item_type(&mut self, s: &str) -> Arc<str> {
        if let Some(shared) = self.types.iter().find(|k| ***k == *s) {
            return Arc::clone(shared);
        }
        let shared = self.interner.get(s);
        if self.types.len() < FEW {
            self.types.push(Arc::clone(&shared));
        }
        shared
    }

    fn optional(&mut self, r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<Arc<str>>> {
        Ok(r.get_ref(i)?
            .as_str_or_null()?
            .map(|v| self.interner.get(v)))
    }

    /// Returns the status of column `i` and its class, which must agree with the row's
    /// `terminal` flag (both derive from the same schema; a mismatch sends the read to a scan).
    fn status_of(
        &mut self,
        r: &rusqlite::Row<'_>,
        i: usize,
        terminal: bool,
    ) -> rusqlite::Result<(Arc<str>, StatusClass)> {
        let (status, class) = self.status(r.get_ref(i)?.as_str()?);
        if (class == StatusClass::Terminal) != terminal {
            return Err(rusqlite::Error::FromSqlConversionFailure(
                i,
                rusqlite::types::Type::Text,
                format!("status {status:?} disagrees with the terminal flag").into(),
            ));
        }
        Ok((status, class))
    }
}

/// Reads an active (non-terminal) row of [`OPEN_COLUMNS`].
fn open_row(r: &rusqlite::Row<'_>, shared: &mut Shared<'_>) -> rusqlite::Result<RankItem> {
    let (status, status_class) = shared.status_of(r, 4, false)?;
    Ok(RankItem {
        key: r.get(0)?,
        id: r.get_ref(1)?.as_str()?.into(),
        title: r.get_ref(2)?.as_str()?.into(),
        item_type: shared.item_type(r.get_ref(3)?.as_str()?),
        status,
        status_class,
        priority: r.get(5)?,
        parent: shared.optional(r, 6)?,
        assignee: shared.optional(r, 7)?,
        updated_ms: r.get(8)?,
        extra: RankExtra {
            deadline: boxed(r, 9)?,
            deadline_ms: r.get(10)?,
            order: r.get(14)?,
            risk: boxed(r, 11)?,
            blocked_by: boxed(r, 12)?,
            blocking: Vec::new(),
        }
        .boxed(),
        knowledge: r.get(13)?,
        light_len: usize::try_from(r.get::<_, i64>(16)?).unwrap_or(0),
        has_schedule: r.get(15)?,
    })
}

/// Reads a terminal row of [`TERMINAL_COLUMNS`]: only what blockers and roll-ups read
/// (`RankItem`).
fn terminal_row(r: &rusqlite::Row<'_>, shared: &mut Shared<'_>) -> rusqlite::Result<RankItem> {
    let (status, status_class) = shared.status_of(r, 3, true)?;
    Ok(RankItem {
        key: r.get(0)?,
        id: r.get_ref(1)?.as_str()?.into(),
        title: Box::default(),
        item_type: shared.item_type(r.get_ref(2)?.as_str()?),
        status,
        status_class,
        priority: r.get(4)?,
        parent: shared.optional(r, 5)?,
        assignee: None,
        updated_ms: None,
        extra: RankExtra {
            blocked_by: boxed(r, 6)?,
            ..RankExtra::default()
        }
        .boxed(),
        knowledge: 0,
        light_len: 0,
        has_schedule: false,
    })
}

/// Returns the query of the rows of one `terminal` value in default order (a range of the
/// covering `items_default_order`).
fn rows_sql(columns: &str, terminal: u8) -> String {
    format!(
        "SELECT {columns} FROM items WHERE terminal = {terminal} {}",
        read::order_by(&Sort::default_order())
    )
}

/// Returns the query of the blocking dependency edges in (item_key, position) order; its
/// condition is the one of the partial index `item_deps_blocking` (migration 0007), named so
/// that the planner does not prefer the kind index of migration 0008 (a seek per kind and a
/// sort of every blocking edge).
fn blocking_sql() -> String {
    let kinds: Vec<String> = BLOCKING_KINDS.iter().map(|k| format!("'{k}'")).collect();
    format!(
        "SELECT item_key, target_id, kind FROM item_deps INDEXED BY item_deps_blocking
         WHERE kind IN ({})
         ORDER BY item_key, position",
        kinds.join(", ")
    )
}

/// Reads the ranking row of every item in default order, and the row keys matching `query`
/// (ascending).
///
/// # Errors
/// SQLite failures.
pub fn rank_items(
    conn: &Connection,
    schema: &RuntimeSchema,
    query: &Query,
) -> rusqlite::Result<(Vec<RankItem>, Vec<i64>)> {
    let count: i64 = conn.query_row("SELECT count(*) FROM items", [], |r| r.get(0))?;
    let mut items: Vec<RankItem> = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    let mut shared = Shared {
        schema,
        interner: Interner::default(),
        statuses: Vec::new(),
        types: Vec::new(),
    };
    // `terminal` is the first key of the default order, so the active rows followed by the
    // terminal ones are the default order; each part is one range of the covering
    // default-order index (migration 0007), and terminal rows read only their few columns.
    for (columns, terminal) in [(OPEN_COLUMNS, 0), (TERMINAL_COLUMNS, 1)] {
        let mut stmt = conn.prepare(&rows_sql(columns, terminal))?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            items.push(if terminal == 0 {
                open_row(r, &mut shared)?
            } else {
                terminal_row(r, &mut shared)?
            });
        }
    }
    // The blocking edges (few) in (item_key, position) order, then attached in one pass over
    // the rows by a search among them, instead of sorting every row by key.
    let mut deps = conn.prepare(&blocking_sql())?;
    let edges: Vec<(i64, DependencyRef)> = deps
        .query_map([], crate::graph::dependency_row)?
        .collect::<rusqlite::Result<_>>()?;
    if !edges.is_empty() {
        for item in &mut items {
            let start = edges.partition_point(|(k, _)| *k < item.key);
            let own = edges[start..].iter().take_while(|(k, _)| *k == item.key);
            let blocking: Vec<DependencyRef> = own.map(|(_, d)| d.clone()).collect();
            if !blocking.is_empty() {
                item.extra.get_or_insert_with(Box::default).blocking = blocking;
            }
        }
    }
    let c = read::where_clause(query);
    let mut stmt = conn.prepare(&format!("SELECT item_key FROM items {}", c.sql))?;
    let mut keys: Vec<i64> = stmt
        .query_map(params_from_iter(c.args), |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    keys.sort_unstable();
    Ok((items, keys))
}

fn boxed(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<Box<str>>> {
    Ok(r.get_ref(i)?.as_str_or_null()?.map(Box::from))
}

/// Returns the summaries of the items with the given row keys, in that order (`None` for a
/// key without a row).
///
/// # Errors
/// SQLite failures.
pub fn summaries_by_key(
    conn: &Connection,
    schema: &RuntimeSchema,
    keys: &[i64],
) -> rusqlite::Result<Vec<Option<ItemSummary>>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {SUMMARY_COLUMNS} FROM items WHERE item_key = ?1"
    ))?;
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        let mut rows = stmt.query([key])?;
        out.push(match rows.next()? {
            Some(r) => Some(summary_row(r, schema)?),
            None => None,
        });
    }
    Ok(out)
}

impl Index<'_> {
    /// Returns every item as a ranking row (default order) and the positions of the matches of
    /// `query` (`pm context`, `pm next`): columns only on the index path, derived from the
    /// scanned summaries otherwise.
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn rank_corpus(&self, query: &Query) -> Result<Answer<RankCorpus>> {
        self.index_or_scan_with(
            SweepScope::Items,
            |conn| {
                rank_items(conn, self.schema, query)
                    .and_then(|found| read::completeness(conn).map(|c| (found, c)))
            },
            |((items, keys), (_, data)), conn| {
                let matches = items
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| keys.binary_search(&s.key).is_ok())
                    .map(|(i, _)| i)
                    .collect();
                let corpus = RankCorpus {
                    items,
                    matches,
                    details: DetailSource::Index(conn),
                };
                Ok((corpus, data))
            },
            |reason| self.scanned_rank_corpus(query, reason),
        )
    }

    fn scanned_rank_corpus(
        &self,
        query: &Query,
        reason: ScanReason,
    ) -> Result<(RankCorpus, Vec<Notice>)> {
        let outcome = self.scan()?;
        let data = outcome.read_notices();
        let summaries = outcome.select(&Query::all(), &Sort::default_order());
        let filtered = query.filter(&summaries);
        let mut matches = Vec::with_capacity(filtered.len());
        let mut next = filtered.iter().peekable();
        for (i, s) in summaries.iter().enumerate() {
            if next.next_if(|m| std::ptr::eq(**m, s)).is_some() {
                matches.push(i);
            }
        }
        let mut interner = Interner::default();
        let items = summaries
            .iter()
            .enumerate()
            .map(|(i, s)| RankItem::of(s, i as i64, &mut interner))
            .collect();
        let corpus = RankCorpus {
            items,
            matches,
            details: DetailSource::Scan(summaries, reason),
        };
        Ok((corpus, data))
    }

    /// Returns the summaries of `rows` of `corpus` (the rows a command prints), in that order;
    /// `None` for a row whose item vanished during the read.
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn rank_details(
        &self,
        corpus: &RankCorpus,
        rows: &[&RankItem],
    ) -> Result<Answer<Vec<Option<ItemSummary>>>> {
        let conn = match &corpus.details {
            DetailSource::Scan(scanned, reason) => {
                let found = rows
                    .iter()
                    .map(|r| {
                        usize::try_from(r.key)
                            .ok()
                            .and_then(|i| scanned.get(i))
                            .cloned()
                    })
                    .collect();
                return Ok(Answer {
                    rows: found,
                    origin: Origin::Scan(*reason),
                    notices: Vec::new(),
                });
            }
            DetailSource::Index(conn) => conn,
        };
        let keys: Vec<i64> = rows.iter().map(|r| r.key).collect();
        // The same connection: row keys stay valid unless another process rewrote the rows.
        if let Ok(found) = summaries_by_key(conn, self.schema, &keys)
            && found
                .iter()
                .zip(rows)
                .all(|(s, r)| s.as_ref().is_some_and(|s| *s.id == *r.id))
        {
            return Ok(Answer {
                rows: found,
                origin: Origin::Index,
                notices: Vec::new(),
            });
        }
        // The projection changed under the read: find the rows again in a scan, by id.
        let outcome = self.scan()?;
        let notices = outcome.read_notices();
        let mut pool: Vec<Option<ItemSummary>> = outcome.summaries.into_iter().map(Some).collect();
        let found = rows
            .iter()
            .map(|r| {
                pool.iter_mut()
                    .find(|s| s.as_ref().is_some_and(|s| *s.id == *r.id))
                    .and_then(Option::take)
            })
            .collect();
        Ok(Answer {
            rows: found,
            origin: Origin::Scan(ScanReason::QueryFailed),
            notices,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(conn: &Connection, sql: &str) -> rusqlite::Result<String> {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
        let details: Vec<String> = stmt
            .query_map([], |r| r.get(3))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(details.join("; "))
    }

    /// The ranking reads are answered by the indexes of migration 0007 alone: no table rows,
    /// no sort, no scan of every dependency edge.
    #[test]
    fn rank_reads_use_their_indexes() -> Result<(), Box<dyn std::error::Error>> {
        let mut conn = Connection::open_in_memory()?;
        crate::store::register_functions(&conn)?;
        crate::schema::apply(&mut conn)?;
        for (columns, terminal) in [(OPEN_COLUMNS, 0), (TERMINAL_COLUMNS, 1)] {
            let found = plan(&conn, &rows_sql(columns, terminal))?;
            assert_eq!(
                found,
                "SEARCH items USING COVERING INDEX items_default_order (terminal=?)"
            );
        }
        let found = plan(&conn, &blocking_sql())?;
        assert_eq!(
            found,
            "SCAN item_deps USING COVERING INDEX item_deps_blocking"
        );
        Ok(())
    }
}
