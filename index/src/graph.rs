//! The graph rows of every item (`pm graph`, `pm deps`): id, title, type, status, parent,
//! `blocked_by` and dependency edges straight from the projection's columns, without parsing
//! the light metadata. The scan path derives the same rows from `ItemSummary`.

use pm_engine::read::graph::GraphItem;
use pm_engine::summary::DependencyRef;
use rusqlite::Connection;

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
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
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
        })?
        .map(|row| {
            row.map(|(key, item)| {
                keys.push(key);
                item
            })
        })
        .collect::<rusqlite::Result<_>>()?;
    let mut deps = conn
        .prepare("SELECT item_key, target_id, kind FROM item_deps ORDER BY item_key, position")?;
    let rows = deps.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            DependencyRef {
                id: r.get(1)?,
                kind: r.get(2)?,
            },
        ))
    })?;
    for row in rows {
        let (key, dep) = row?;
        if let Ok(i) = keys.binary_search(&key) {
            items[i].dependencies.push(dep);
        }
    }
    Ok(items)
}
