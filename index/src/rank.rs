//! The ranking rows of `context` and `next` (`pm_engine::rank::item::RankItem`) read from the
//! projection's columns, the light metadata parsed only for rows that name `order` or a schedule
//! key; the summaries of the rows a command prints are fetched afterwards by row key. The scan
//! path derives the same rows from `ItemSummary`.

use crate::Index;
use crate::read::{self, SUMMARY_COLUMNS, summary_row};
use crate::source::SweepScope;
use pm_engine::Result;
use pm_engine::notice::Notice;
use pm_engine::query::{Query, Sort, Source};
use pm_engine::rank::item::{BLOCKING_KINDS, Interner, LightProbe, RankExtra, RankItem};
use pm_engine::schema::RuntimeSchema;
use pm_engine::summary::{DependencyRef, ItemSummary, StatusClass};
use rusqlite::{Connection, params_from_iter};

/// Every item of a tracker as ranking rows, in default order, with the matches of a query.
pub struct RankCorpus {
    /// Every readable item, in default list order.
    pub items: Vec<RankItem>,
    /// Positions in `items` of the query's matches, ascending.
    pub matches: Vec<usize>,
    /// Which path answered.
    pub source: Source,
    /// Unreadable files and index fallbacks.
    pub notices: Vec<Notice>,
    /// Where the rows' summaries are (`Index::rank_details`).
    details: DetailSource,
}

/// The connection the rows were read from (their keys are row keys of that database), or the
/// scanned summaries (keys are positions).
enum DetailSource {
    Index(Box<r2d2::PooledConnection<r2d2_sqlite::SqliteConnectionManager>>),
    Scan(Vec<ItemSummary>),
}

impl std::fmt::Debug for RankCorpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RankCorpus")
            .field("items", &self.items.len())
            .field("matches", &self.matches.len())
            .field("source", &self.source)
            .field("notices", &self.notices)
            .finish_non_exhaustive()
    }
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
    // The default order comes from its covering index; the rows are then read in table order
    // (sequential pages) and put in place, instead of one table lookup per index entry.
    let mut stmt = conn.prepare(&format!(
        "SELECT item_key FROM items {}",
        read::order_by(&Sort::default_order())
    ))?;
    let order: Vec<i64> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut stmt = conn.prepare(
        "SELECT item_key, id, title, type, status, priority, parent, assignee, updated_ms,
                deadline, deadline_ms, risk, blocked_by, n_comments + n_notes + n_learnings,
                light_json
         FROM items ORDER BY item_key",
    )?;
    let mut interner = Interner::default();
    let probe = LightProbe::default();
    let mut classes: Vec<(std::sync::Arc<str>, StatusClass)> = Vec::new();
    let mut rows = stmt.query([])?;
    let mut items: Vec<RankItem> = Vec::with_capacity(order.len());
    while let Some(r) = rows.next()? {
        let status = interner.get(r.get_ref(4)?.as_str()?);
        let status_class = match classes.iter().find(|(s, _)| *s == status) {
            Some((_, class)) => *class,
            None => {
                let class = StatusClass::of(&status, schema);
                classes.push((std::sync::Arc::clone(&status), class));
                class
            }
        };
        let item_type = interner.get(r.get_ref(3)?.as_str()?);
        if status_class == StatusClass::Terminal {
            // A terminal row keeps only what blockers and roll-ups read (`RankItem`).
            items.push(RankItem {
                key: r.get(0)?,
                id: r.get_ref(1)?.as_str()?.into(),
                title: Box::default(),
                item_type,
                status,
                status_class,
                priority: r.get(5)?,
                parent: r.get_ref(6)?.as_str_or_null()?.map(|p| interner.get(p)),
                assignee: None,
                updated_ms: None,
                extra: RankExtra {
                    blocked_by: boxed(r, 12)?,
                    ..RankExtra::default()
                }
                .boxed(),
                knowledge: 0,
                light_len: 0,
                has_schedule: false,
            });
            continue;
        }
        let light = r.get_ref(14)?.as_str()?;
        let (order, has_schedule) = probe.facts(light);
        items.push(RankItem {
            key: r.get(0)?,
            id: r.get_ref(1)?.as_str()?.into(),
            title: r.get_ref(2)?.as_str()?.into(),
            item_type,
            status_class,
            status,
            priority: r.get(5)?,
            parent: r.get_ref(6)?.as_str_or_null()?.map(|p| interner.get(p)),
            assignee: r.get_ref(7)?.as_str_or_null()?.map(|a| interner.get(a)),
            updated_ms: r.get(8)?,
            extra: RankExtra {
                deadline: boxed(r, 9)?,
                deadline_ms: r.get(10)?,
                order,
                risk: boxed(r, 11)?,
                blocked_by: boxed(r, 12)?,
                blocking: Vec::new(),
            }
            .boxed(),
            knowledge: r.get(13)?,
            light_len: light.len(),
            has_schedule,
        });
    }
    // `items` is in key order: move each row to its position in the default order, in place
    // (rows missing from the order, if another process wrote in between, go last).
    let mut position = vec![usize::MAX; items.len()];
    for (pos, key) in order.iter().enumerate() {
        if let Ok(i) = items.binary_search_by_key(key, |s| s.key)
            && position[i] == usize::MAX
        {
            position[i] = pos;
        }
    }
    let mut ranked: Vec<(usize, usize)> = position
        .into_iter()
        .enumerate()
        .map(|(i, p)| (p, i))
        .collect();
    ranked.sort_unstable();
    let mut target = vec![0usize; items.len()];
    for (dest, (_, i)) in ranked.into_iter().enumerate() {
        target[i] = dest;
    }
    for i in 0..items.len() {
        while target[i] != i {
            let j = target[i];
            items.swap(i, j);
            target.swap(i, j);
        }
    }
    let mut by_key: Vec<(i64, usize)> = items.iter().enumerate().map(|(i, s)| (s.key, i)).collect();
    by_key.sort_unstable();
    let kinds: Vec<String> = BLOCKING_KINDS.iter().map(|k| format!("'{k}'")).collect();
    let mut deps = conn.prepare(&format!(
        "SELECT item_key, target_id, kind FROM item_deps WHERE kind IN ({})
         ORDER BY item_key, position",
        kinds.join(", ")
    ))?;
    let mut rows = deps.query([])?;
    while let Some(r) = rows.next()? {
        let key: i64 = r.get(0)?;
        if let Ok(i) = by_key.binary_search_by_key(&key, |(k, _)| *k) {
            let extra = items[by_key[i].1].extra.get_or_insert_with(Box::default);
            extra.blocking.push(DependencyRef {
                id: r.get(1)?,
                kind: r.get(2)?,
            });
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
    pub fn rank_corpus(&self, query: &Query) -> Result<RankCorpus> {
        let mut notices = Vec::new();
        let answer = self.answer_on(SweepScope::Items, &mut notices, |conn| {
            rank_items(conn, self.schema, query)
                .and_then(|found| read::completeness(conn).map(|c| (found, c)))
        });
        if let Some((((items, keys), (_, mut data)), conn)) = answer {
            data.extend(notices);
            let matches = items
                .iter()
                .enumerate()
                .filter(|(_, s)| keys.binary_search(&s.key).is_ok())
                .map(|(i, _)| i)
                .collect();
            return Ok(RankCorpus {
                items,
                matches,
                source: Source::Index,
                notices: data,
                details: DetailSource::Index(conn),
            });
        }
        let outcome = self.scan()?;
        let mut data = outcome.read_notices();
        data.extend(notices);
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
        Ok(RankCorpus {
            items,
            matches,
            source: Source::Scan,
            notices: data,
            details: DetailSource::Scan(summaries),
        })
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
    ) -> Result<Vec<Option<ItemSummary>>> {
        let conn = match &corpus.details {
            DetailSource::Scan(scanned) => {
                return Ok(rows
                    .iter()
                    .map(|r| {
                        usize::try_from(r.key)
                            .ok()
                            .and_then(|i| scanned.get(i))
                            .cloned()
                    })
                    .collect());
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
            return Ok(found);
        }
        // The projection changed under the read: find the rows again in a scan, by id.
        let outcome = self.scan()?;
        let mut pool: Vec<Option<ItemSummary>> = outcome.summaries.into_iter().map(Some).collect();
        Ok(rows
            .iter()
            .map(|r| {
                pool.iter_mut()
                    .find(|s| s.as_ref().is_some_and(|s| *s.id == *r.id))
                    .and_then(Option::take)
            })
            .collect())
    }
}
