//! The graph rows of items (`pm graph`, `pm deps`): id, title, type, status, parent,
//! `blocked_by` and dependency edges straight from the projection's columns, without parsing
//! the light metadata, for every item or only for those a read from one item can reach. The
//! scan path derives the same rows from `ItemSummary`.

use pm_engine::read::graph::{GraphItem, ItemSource, Reach, reachable_items};
use pm_engine::summary::{DependencyRef, NO_ACTIVE_BLOCKER};
use rusqlite::Connection;

/// The graph columns `item_key, id, title, type, status, terminal, parent, blocked_by` of one
/// row, as its key and a `GraphItem` without dependencies.
fn keyed_graph_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, GraphItem)> {
    Ok((
        r.get(0)?,
        GraphItem {
            id: r.get(1)?,
            title: r.get(2)?,
            item_type: r.get(3)?,
            status: r.get(4)?,
            terminal: r.get::<_, i64>(5)? != 0,
            parent: r.get(6)?,
            blocked_by: r.get(7)?,
            dependencies: Vec::new(),
        },
    ))
}

/// Returns the graph row of every indexed item, in `item_key` order, with its dependencies in
/// file order.
///
/// # Errors
/// SQLite failures.
pub fn graph_items(conn: &Connection) -> rusqlite::Result<Vec<GraphItem>> {
    let mut stmt = conn.prepare(
        "SELECT item_key, id, title, type, status, terminal, parent, blocked_by
         FROM items ORDER BY item_key",
    )?;
    let mut keys: Vec<i64> = Vec::new();
    let mut items: Vec<GraphItem> = stmt
        .query_map([], keyed_graph_row)?
        .map(|row| {
            row.map(|(key, item)| {
                keys.push(key);
                item
            })
        })
        .collect::<rusqlite::Result<_>>()?;
    let mut deps = conn
        .prepare("SELECT item_key, target_id, kind FROM item_deps ORDER BY item_key, position")?;
    let rows = deps.query_map([], dependency_row)?;
    for row in rows {
        let (key, dep) = row?;
        if let Ok(i) = keys.binary_search(&key) {
            items[i].dependencies.push(dep);
        }
    }
    Ok(items)
}

/// The Unicode White_Space characters Rust's `str::trim` removes, as SQLite's `trim` set (the
/// same expression as the partial indexes of `0008_graph_lookup.sql`, so queries can use them).
const WHITESPACE: &str = "char(9, 10, 11, 12, 13, 32, 133, 160, 5760, 8192, 8193,
        8194, 8195, 8196, 8197, 8198, 8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288)";

/// The items a read from one item needs, read from the projection frontier by frontier
/// ([`pm_engine::read::graph::ItemSource`]).
pub struct SqlItems<'c> {
    conn: &'c Connection,
    /// Items with a reference that has surrounding whitespace (looked up once).
    untrimmed: Option<Vec<i64>>,
}

impl<'c> SqlItems<'c> {
    /// Returns the source over `conn`.
    pub fn new(conn: &'c Connection) -> SqlItems<'c> {
        SqlItems {
            conn,
            untrimmed: None,
        }
    }

    /// Returns the graph rows of the items whose key is in `keys`, in key order.
    fn by_keys(&self, keys: &[i64]) -> rusqlite::Result<Vec<(i64, GraphItem)>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let list = json_list(keys);
        self.rows(
            "SELECT item_key, id, title, type, status, terminal, parent, blocked_by FROM items
             WHERE item_key IN (SELECT value FROM json_each(?1)) ORDER BY item_key",
            &list,
        )
    }

    /// Runs a graph-row query (its columns as in [`graph_items`], one JSON array parameter)
    /// and attaches each row's dependencies in file order.
    fn rows(&self, sql: &str, param: &str) -> rusqlite::Result<Vec<(i64, GraphItem)>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let mut items: Vec<(i64, GraphItem)> = stmt
            .query_map([param], keyed_graph_row)?
            .collect::<rusqlite::Result<_>>()?;
        if items.is_empty() {
            return Ok(items);
        }
        items.sort_by_key(|(key, _)| *key);
        let keys: Vec<i64> = items.iter().map(|(key, _)| *key).collect();
        let mut deps = self.conn.prepare_cached(
            "SELECT item_key, target_id, kind FROM item_deps
             WHERE item_key IN (SELECT value FROM json_each(?1)) ORDER BY item_key, position",
        )?;
        let rows = deps.query_map([json_list(&keys)], dependency_row)?;
        for row in rows {
            let (key, dep) = row?;
            if let Ok(i) = keys.binary_search(&key) {
                items[i].1.dependencies.push(dep);
            }
        }
        Ok(items)
    }

    fn untrimmed(&mut self) -> rusqlite::Result<Vec<i64>> {
        if let Some(keys) = &self.untrimmed {
            return Ok(keys.clone());
        }
        let sql = format!(
            "SELECT item_key FROM item_deps INDEXED BY item_deps_untrimmed
                 WHERE target_id <> trim(target_id, {WHITESPACE})
             UNION SELECT item_key FROM items INDEXED BY items_parent_untrimmed
                 WHERE parent <> trim(parent, {WHITESPACE})
             UNION SELECT item_key FROM items INDEXED BY items_blocked_by_untrimmed
                 WHERE blocked_by <> trim(blocked_by, {WHITESPACE})"
        );
        let keys: Vec<i64> = self
            .conn
            .prepare(&sql)?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        self.untrimmed = Some(keys.clone());
        Ok(keys)
    }
}

impl ItemSource for SqlItems<'_> {
    type Error = rusqlite::Error;

    fn items_with_ids(&mut self, ids: &[String]) -> rusqlite::Result<Vec<(i64, GraphItem)>> {
        self.rows(
            "SELECT item_key, id, title, type, status, terminal, parent, blocked_by FROM items
             WHERE id IN (SELECT value FROM json_each(?1))",
            &json_list(ids),
        )
    }

    fn items_referring_to(&mut self, ids: &[String]) -> rusqlite::Result<Vec<(i64, GraphItem)>> {
        let list = json_list(ids);
        let mut stmt = self.conn.prepare_cached(
            "SELECT item_key FROM item_deps WHERE target_id IN (SELECT value FROM json_each(?1))
             UNION SELECT item_key FROM items WHERE parent IN (SELECT value FROM json_each(?1))
             UNION SELECT item_key FROM items INDEXED BY items_blocked_by
                 WHERE blocked_by IS NOT NULL AND blocked_by IN (SELECT value FROM json_each(?1))",
        )?;
        let mut keys: Vec<i64> = stmt
            .query_map([&list], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        keys.extend(self.untrimmed()?);
        keys.sort_unstable();
        keys.dedup();
        self.by_keys(&keys)
    }
}

/// Returns a JSON array of `values` (the parameter of `json_each`).
fn json_list<T: serde::Serialize>(values: &[T]) -> String {
    serde_json::to_string(values).unwrap_or_else(|_| "[]".to_owned())
}

/// Returns every dependency kind some row with a non-blank target uses, sorted by name: the
/// kind table of the whole tracker's graph (`pm_engine::read::graph::dependency_kinds`).
///
/// # Errors
/// SQLite failures.
pub fn dependency_kinds(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut next = conn.prepare_cached(
        "SELECT kind FROM item_deps INDEXED BY item_deps_kind WHERE kind > ?1
         ORDER BY kind LIMIT 1",
    )?;
    let mut uses = conn.prepare_cached(
        "SELECT item_key, position, target_id FROM item_deps INDEXED BY item_deps_kind
         WHERE kind = ?1 ORDER BY item_key, position",
    )?;
    let mut used: Vec<String> = Vec::new();
    // Candidates come in name order (BINARY, the byte order of Rust strings). Every kind sorts
    // after the empty string except the empty string itself.
    let mut candidates: Vec<String> = Vec::new();
    if conn
        .prepare_cached(
            "SELECT 1 FROM item_deps INDEXED BY item_deps_kind WHERE kind = '' LIMIT 1",
        )?
        .exists([])?
    {
        candidates.push(String::new());
    }
    let mut after = String::new();
    while let Some(kind) = next
        .query_row([&after], |r| r.get::<_, String>(0))
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })?
    {
        candidates.push(kind.clone());
        after = kind;
    }
    for kind in candidates {
        let mut rows = uses.query([&kind])?;
        while let Some(row) = rows.next()? {
            let target: String = row.get(2)?;
            if !target.trim().is_empty() {
                used.push(kind);
                break;
            }
        }
    }
    Ok(used)
}

/// Returns true when some item has a scalar `blocked_by` other than the no-blocker marker.
///
/// # Errors
/// SQLite failures.
pub fn has_scalar_blocker(conn: &Connection) -> rusqlite::Result<bool> {
    conn.prepare_cached(
        "SELECT 1 FROM items INDEXED BY items_blocked_by
         WHERE blocked_by IS NOT NULL AND (blocked_by < ?1 OR blocked_by > ?1) LIMIT 1",
    )?
    .exists([NO_ACTIVE_BLOCKER])
}

/// The graph rows of the items a read from one item can reach, and the tracker-wide facts the
/// graph code otherwise derives from every item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphSubset {
    /// The reachable items (see [`pm_engine::read::graph::reachable_items`]), in item order.
    pub items: Vec<GraphItem>,
    /// [`dependency_kinds`]: every dependency kind, sorted by name.
    pub dependency_kinds: Vec<String>,
    /// [`has_scalar_blocker`].
    pub scalar_blocker: bool,
}

/// Walks from `start` under `reach` over the projection.
///
/// # Errors
/// SQLite failures.
pub fn graph_subset(
    conn: &Connection,
    start: &str,
    reach: &Reach,
) -> rusqlite::Result<GraphSubset> {
    let items = reachable_items(&mut SqlItems::new(conn), start, reach)?;
    Ok(GraphSubset {
        items,
        dependency_kinds: dependency_kinds(conn)?,
        scalar_blocker: has_scalar_blocker(conn)?,
    })
}

/// Reads a `(item_key, target_id, kind)` row of `item_deps` as the item's key and its edge.
pub(crate) fn dependency_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, DependencyRef)> {
    Ok((
        r.get(0)?,
        DependencyRef {
            id: r.get(1)?,
            kind: r.get(2)?,
        },
    ))
}
