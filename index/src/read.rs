//! `Query`/`Sort`/`Page` → SQL over the projection. Every clause mirrors one branch of
//! `pm_engine::query::Query::matches` and every order key one `KeyPart`; rows come back as
//! `ItemSummary`s rebuilt with `ItemSummary::from_parts`, so both paths return equal values.

use crate::events::placeholders;
use pm_engine::item::ItemFormat;
use pm_engine::query::{
    Assignment, CHILD_KINDS, Completeness, Content, KeyPart, Missing, PARENT_KINDS, Page,
    PageSlice, PageStart, Query, Sort, SortAnchor, StatusCount, StatusFilter,
};
use pm_engine::schema::RuntimeSchema;
use pm_engine::summary::{CollectionCounts, ItemFacts, ItemSummary, NO_ACTIVE_BLOCKER};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};
use serde_json::{Map, Value};

/// A WHERE clause and its arguments.
#[derive(Clone, Debug, Default)]
pub struct Clause {
    pub(crate) sql: String,
    pub(crate) args: Vec<SqlValue>,
}

impl Clause {
    fn and(&mut self, sql: &str, args: impl IntoIterator<Item = SqlValue>) {
        self.sql.push_str(" AND (");
        self.sql.push_str(sql);
        self.sql.push(')');
        self.args.extend(args);
    }

    fn in_set(&mut self, column: &str, set: &[String]) {
        if !set.is_empty() {
            let sql = format!("{column} IN ({})", placeholders(set.len()));
            self.and(&sql, set.iter().cloned().map(SqlValue::Text));
        }
    }
}

const UNRESOLVED: &str = "NOT EXISTS (SELECT 1 FROM items t WHERE t.id = {} AND t.terminal = 1)";

fn unresolved(id_expr: &str) -> String {
    UNRESOLVED.replace("{}", id_expr)
}

fn quoted(kinds: &[&str]) -> String {
    kinds
        .iter()
        .map(|k| format!("'{k}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Returns the WHERE clause of `query` (starting with `WHERE 1`).
pub fn where_clause(query: &Query) -> Clause {
    let mut c = Clause {
        sql: "WHERE 1".into(),
        args: Vec::new(),
    };
    match &query.status {
        StatusFilter::NonTerminal => c.and("terminal = 0", []),
        StatusFilter::All => {}
        StatusFilter::Set(set) => {
            if set.is_empty() {
                c.and("0", []);
            } else {
                c.in_set("status", set);
            }
        }
        StatusFilter::EdgeAwareBlocked => {
            let sql = format!(
                "status_class = 'blocked' OR (terminal = 0 AND (
                   (blocked_by IS NOT NULL AND blocked_by <> '{NO_ACTIVE_BLOCKER}' AND {})
                   OR EXISTS (SELECT 1 FROM item_deps d WHERE d.item_key = items.item_key
                              AND d.kind = 'blocked_by' AND {})
                   OR EXISTS (SELECT 1 FROM item_deps d JOIN items y ON y.item_key = d.item_key
                              WHERE d.target_id = items.id AND d.kind = 'blocks' AND {})))",
                unresolved("items.blocked_by"),
                unresolved("d.target_id"),
                unresolved("y.id"),
            );
            c.and(&sql, []);
        }
    }
    c.in_set("type", &query.types);
    if !query.tags.is_empty() {
        let tags: Vec<String> = query.tags_lowercase();
        let sql = format!(
            "EXISTS (SELECT 1 FROM item_tags g WHERE g.item_key = items.item_key AND g.tag IN ({}))",
            placeholders(tags.len())
        );
        c.and(&sql, tags.into_iter().map(SqlValue::Text));
    }
    if !query.priorities.is_empty() {
        let sql = format!("priority IN ({})", placeholders(query.priorities.len()));
        c.and(&sql, query.priorities.iter().map(|p| SqlValue::Integer(*p)));
    }
    c.in_set("id", &query.ids);
    c.in_set("assignee", &query.assignees);
    match query.assignment {
        Some(Assignment::Assigned) => c.and("assignee IS NOT NULL", []),
        Some(Assignment::Unassigned) => c.and("assignee IS NULL", []),
        None => {}
    }
    if let Some(parent) = &query.parent {
        let sql = format!(
            "parent = ?1x
             OR EXISTS (SELECT 1 FROM item_deps d WHERE d.item_key = items.item_key
                        AND d.target_id = ?1x AND d.kind IN ({}))
             OR EXISTS (SELECT 1 FROM item_deps d JOIN items p ON p.item_key = d.item_key
                        WHERE p.id = ?1x AND d.target_id = items.id AND d.kind IN ({}))",
            quoted(&PARENT_KINDS),
            quoted(&CHILD_KINDS)
        )
        .replace("?1x", "?");
        c.and(&sql, std::iter::repeat_n(SqlValue::Text(parent.clone()), 3));
    }
    c.in_set("sprint", &query.sprints);
    c.in_set("release", &query.releases);
    for (column, window) in [
        ("deadline_ms", &query.deadline),
        ("updated_ms", &query.updated),
        ("created_ms", &query.created),
    ] {
        if let Some(after) = window.after {
            c.and(&format!("{column} >= ?"), [SqlValue::Integer(after)]);
        }
        if let Some(before) = window.before {
            c.and(&format!("{column} < ?"), [SqlValue::Integer(before)]);
        }
    }
    for f in &query.content {
        let present = match f.content {
            Content::Comments => "n_comments > 0",
            Content::Notes => "n_notes > 0",
            Content::Learnings => "n_learnings > 0",
            Content::Files => "n_files > 0",
            Content::Docs => "n_docs > 0",
            Content::Tests => "n_tests > 0",
            Content::Deps => "n_deps > 0",
            Content::Body => "has_body = 1",
            Content::LinkedCommand => "has_linked_command = 1",
        };
        if f.present {
            c.and(present, []);
        } else {
            c.and(&format!("NOT ({present})"), []);
        }
    }
    for m in &query.missing {
        c.and(missing_sql(*m), []);
    }
    for f in &query.fields {
        c.and(
            "EXISTS (SELECT 1 FROM item_fields f WHERE f.item_key = items.item_key
                     AND f.key = ? AND f.value = ?)",
            [
                SqlValue::Text(f.key.clone()),
                SqlValue::Text(pm_engine::json::to_compact(&f.value)),
            ],
        );
    }
    c
}

fn missing_sql(m: Missing) -> &'static str {
    match m {
        Missing::AcceptanceCriteria => "has_acceptance_criteria = 0",
        Missing::Estimates => "has_estimate = 0",
        Missing::Resolution => "terminal = 1 AND has_resolution = 0",
        Missing::Metadata => {
            "has_acceptance_criteria = 0 OR has_estimate = 0 OR (terminal = 1 AND has_resolution = 0)"
        }
        Missing::Reviewer => "has_reviewer = 0",
        Missing::Risk => "risk IS NULL",
        Missing::Confidence => "has_confidence = 0",
        Missing::Sprint => "sprint IS NULL",
        Missing::Release => "release IS NULL",
    }
}

/// Returns the SQL expression of an order key.
fn key_sql(part: KeyPart) -> &'static str {
    match part {
        KeyPart::Terminal => "terminal",
        KeyPart::Priority => "priority",
        KeyPart::UpdatedMs => "updated_ms",
        KeyPart::UpdatedText => "updated_at COLLATE pm_locale",
        KeyPart::CreatedMs => "created_ms",
        KeyPart::CreatedText => "created_at COLLATE pm_locale",
        KeyPart::DeadlineMissing => "(deadline IS NULL)",
        KeyPart::DeadlineMs => "deadline_ms",
        KeyPart::DeadlineText => "deadline COLLATE pm_locale",
        KeyPart::Title => "title COLLATE pm_locale",
        KeyPart::ParentMissing => "(parent IS NULL)",
        KeyPart::ParentText => "parent COLLATE pm_locale",
        KeyPart::Id => "id COLLATE pm_locale",
        KeyPart::Path => "path",
    }
}

/// Returns the value of an order key in an anchor (`Null` for absent values).
fn key_value(part: KeyPart, a: &SortAnchor) -> SqlValue {
    let int = |v: Option<i64>| v.map_or(SqlValue::Null, SqlValue::Integer);
    let text = |v: &Option<String>| v.clone().map_or(SqlValue::Null, SqlValue::Text);
    match part {
        KeyPart::Terminal => SqlValue::Integer(i64::from(a.terminal)),
        KeyPart::Priority => SqlValue::Integer(a.priority),
        KeyPart::UpdatedMs => int(a.updated_ms),
        KeyPart::UpdatedText => SqlValue::Text(a.updated_at.clone()),
        KeyPart::CreatedMs => int(a.created_ms),
        KeyPart::CreatedText => text(&a.created_at),
        KeyPart::DeadlineMissing => SqlValue::Integer(i64::from(a.deadline.is_none())),
        KeyPart::DeadlineMs => int(a.deadline_ms),
        KeyPart::DeadlineText => text(&a.deadline),
        KeyPart::Title => text(&a.title),
        KeyPart::ParentMissing => SqlValue::Integer(i64::from(a.parent.is_none())),
        KeyPart::ParentText => text(&a.parent),
        KeyPart::Id => SqlValue::Text(a.id.clone()),
        KeyPart::Path => SqlValue::Text(a.path.clone()),
    }
}

/// Returns `ORDER BY …` for `sort`.
pub fn order_by(sort: &Sort) -> String {
    let keys: Vec<String> = sort
        .keys()
        .into_iter()
        .map(|k| {
            format!(
                "{} {}",
                key_sql(k.part),
                if k.descending { "DESC" } else { "ASC" }
            )
        })
        .collect();
    format!("ORDER BY {}", keys.join(", "))
}

/// Returns the keyset predicate "strictly after `anchor` in `sort` order", with SQL NULLs
/// ordered first like `None` in the engine.
fn after_clause(sort: &Sort, anchor: &SortAnchor) -> Clause {
    let mut ors: Vec<String> = Vec::new();
    let mut args: Vec<SqlValue> = Vec::new();
    let mut equal_prefix: Vec<(String, Vec<SqlValue>)> = Vec::new();
    for key in sort.keys() {
        let expr = key_sql(key.part);
        let value = key_value(key.part, anchor);
        let null = matches!(value, SqlValue::Null);
        let (beyond, beyond_args): (String, Vec<SqlValue>) = match (key.descending, null) {
            (false, true) => (format!("{expr} IS NOT NULL"), vec![]),
            (false, false) => (format!("{expr} > ?"), vec![value.clone()]),
            (true, true) => ("0".into(), vec![]),
            (true, false) => (
                format!("({expr} < ? OR {expr} IS NULL)"),
                vec![value.clone()],
            ),
        };
        let mut term: Vec<String> = equal_prefix.iter().map(|(s, _)| s.clone()).collect();
        term.push(beyond);
        for (_, a) in &equal_prefix {
            args.extend(a.iter().cloned());
        }
        args.extend(beyond_args);
        ors.push(format!("({})", term.join(" AND ")));
        let eq = if null {
            (format!("{expr} IS NULL"), vec![])
        } else {
            (format!("{expr} = ?"), vec![value])
        };
        equal_prefix.push(eq);
    }
    Clause {
        sql: ors.join(" OR "),
        args,
    }
}

pub(crate) const SUMMARY_COLUMNS: &str = "light_json, path, format, has_body, has_linked_command,
    n_comments, n_notes, n_learnings, n_files, n_docs, n_tests, n_test_runs";

pub(crate) fn summary_row(
    r: &rusqlite::Row<'_>,
    schema: &RuntimeSchema,
) -> rusqlite::Result<ItemSummary> {
    StoredSummary::of(r)?.parse(schema)
}

/// One summary row as stored: its light record still JSON text. Reading rows is sequential;
/// parsing them is not, so large pages are read first and parsed in parallel.
pub(crate) struct StoredSummary {
    light: String,
    path: String,
    format: ItemFormat,
    facts: ItemFacts,
}

impl StoredSummary {
    /// Reads the [`SUMMARY_COLUMNS`] of `r`.
    pub(crate) fn of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        let format: String = r.get(2)?;
        let format = if format == ItemFormat::Markdown.extension() {
            ItemFormat::Markdown
        } else {
            ItemFormat::Toon
        };
        Ok(Self {
            light: r.get(0)?,
            path: r.get(1)?,
            format,
            facts: ItemFacts {
                has_body: r.get(3)?,
                has_linked_command: r.get(4)?,
                counts: CollectionCounts {
                    comments: r.get(5)?,
                    notes: r.get(6)?,
                    learnings: r.get(7)?,
                    files: r.get(8)?,
                    docs: r.get(9)?,
                    tests: r.get(10)?,
                    test_runs: r.get(11)?,
                },
            },
        })
    }

    /// Parses the light record into a summary.
    pub(crate) fn parse(self, schema: &RuntimeSchema) -> rusqlite::Result<ItemSummary> {
        let light: Map<String, Value> = serde_json::from_str(&self.light).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
        })?;
        Ok(ItemSummary::from_parts(
            light,
            self.facts,
            self.path,
            self.format,
            schema,
        ))
    }
}

/// Below this many rows a page is parsed on the calling thread.
const PARALLEL_PARSE_ROWS: usize = 256;

/// Parses stored rows in order, in parallel for large pages.
pub(crate) fn parse_all<S: Send, T: Send>(
    stored: Vec<S>,
    parse: impl Fn(S) -> rusqlite::Result<T> + Sync + Send,
) -> rusqlite::Result<Vec<T>> {
    use rayon::prelude::*;
    if stored.len() < PARALLEL_PARSE_ROWS {
        return stored.into_iter().map(parse).collect();
    }
    stored.into_par_iter().map(parse).collect()
}

/// Runs `stmt` and parses its summary rows.
fn summaries(
    stmt: &mut rusqlite::Statement<'_>,
    args: Vec<SqlValue>,
    schema: &RuntimeSchema,
) -> rusqlite::Result<Vec<ItemSummary>> {
    let stored: Vec<StoredSummary> = stmt
        .query_map(params_from_iter(args), StoredSummary::of)?
        .collect::<rusqlite::Result<_>>()?;
    parse_all(stored, |row| row.parse(schema))
}

/// Returns the number of matches of `query`.
///
/// # Errors
/// SQLite failures.
pub fn count(conn: &Connection, query: &Query) -> rusqlite::Result<usize> {
    let c = where_clause(query);
    let sql = format!("SELECT COUNT(*) FROM items {}", c.sql);
    let n: i64 = conn.query_row(&sql, params_from_iter(c.args), |r| r.get(0))?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// Returns one page of `query` in `sort` order.
///
/// # Errors
/// SQLite failures.
pub fn list(
    conn: &Connection,
    schema: &RuntimeSchema,
    query: &Query,
    sort: &Sort,
    page: &Page,
) -> rusqlite::Result<PageSlice> {
    let rows = page_rows(conn, query, sort, page, SUMMARY_COLUMNS, StoredSummary::of)?;
    let items = parse_all(rows.items, |row| row.parse(schema))?;
    let next = if rows.has_more {
        items.last().map(|last| SortAnchor::of(last, sort))
    } else {
        None
    };
    Ok(PageSlice {
        items,
        total: rows.total,
        has_more: rows.has_more,
        next,
        applied_limit: rows.applied_limit,
    })
}

/// One page of rows of `items`, as [`page_rows`] reads them.
pub(crate) struct PageRows<T> {
    /// The page's rows, in order.
    pub items: Vec<T>,
    /// Every match, before pagination.
    pub total: usize,
    /// More rows follow.
    pub has_more: bool,
    /// The automatic limit, when it was applied.
    pub applied_limit: Option<usize>,
}

/// Reads one page of `query` in `sort` order: `columns` of `items` (offset or keyset start,
/// one row beyond the limit to learn whether more follow), each row mapped by `row`.
///
/// # Errors
/// SQLite failures.
pub(crate) fn page_rows<T>(
    conn: &Connection,
    query: &Query,
    sort: &Sort,
    page: &Page,
    columns: &str,
    row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> rusqlite::Result<PageRows<T>> {
    let total = count(conn, query)?;
    let limit = page.effective_limit(total);
    let applied_limit = if page.limit.is_none() { limit } else { None };
    let mut c = where_clause(query);
    let mut offset = 0usize;
    match &page.start {
        PageStart::First => {}
        PageStart::Offset(n) => offset = *n,
        PageStart::After(anchor) => {
            let after = after_clause(sort, anchor);
            c.and(&after.sql, after.args);
        }
    }
    let fetch = limit.map(|l| l.saturating_add(1));
    let sql = page_sql(
        columns,
        &c.sql,
        &order_by(sort),
        fetch.is_some(),
        sort.field.is_none(),
    );
    c.args.push(SqlValue::Integer(
        fetch.map_or(-1, |f| i64::try_from(f).unwrap_or(i64::MAX)),
    ));
    c.args
        .push(SqlValue::Integer(i64::try_from(offset).unwrap_or(i64::MAX)));
    let mut stmt = conn.prepare(&sql)?;
    let mut items: Vec<T> = stmt
        .query_map(params_from_iter(c.args), row)?
        .collect::<rusqlite::Result<_>>()?;
    let has_more = limit.is_some_and(|l| items.len() > l);
    if let Some(l) = limit {
        items.truncate(l);
    }
    Ok(PageRows {
        items,
        total,
        has_more,
        applied_limit,
    })
}

/// The page query: `columns` of the rows matching `filter` in `order`, then `LIMIT ? OFFSET ?`.
///
/// A bounded page picks its rows by rowid first and reads their columns after: a sort holds
/// every column of every matching row, so a page of 20 out of 300 matches would otherwise read
/// (and copy) all 300 light records. In the default order the rows are picked from
/// `items_default_order`, which holds that order and the common filter columns: the scan stops
/// after the page, where the planner's own choice for a status or type filter (their narrow
/// indexes) visits the table row of every match to sort them. An unbounded page reads every
/// row anyway.
fn page_sql(
    columns: &str,
    filter: &str,
    order: &str,
    bounded: bool,
    default_order: bool,
) -> String {
    if bounded {
        let source = if default_order {
            "items INDEXED BY items_default_order"
        } else {
            "items"
        };
        format!(
            "SELECT {columns} FROM (SELECT rowid AS page_rowid FROM {source} {filter} {order} \
             LIMIT ? OFFSET ?) AS page JOIN items ON items.rowid = page.page_rowid {order}"
        )
    } else {
        format!("SELECT {columns} FROM items {filter} {order} LIMIT ? OFFSET ?")
    }
}

/// Returns every match of `query` in `sort` order.
///
/// # Errors
/// SQLite failures.
pub fn select(
    conn: &Connection,
    schema: &RuntimeSchema,
    query: &Query,
    sort: &Sort,
) -> rusqlite::Result<Vec<ItemSummary>> {
    let c = where_clause(query);
    let sql = format!(
        "SELECT {SUMMARY_COLUMNS} FROM items {} {}",
        c.sql,
        order_by(sort)
    );
    let mut stmt = conn.prepare(&sql)?;
    summaries(&mut stmt, c.args, schema)
}

/// Returns the `(type, status)` counts of the matches of `query`, sorted by type then status.
///
/// # Errors
/// SQLite failures.
pub fn counts(conn: &Connection, query: &Query) -> rusqlite::Result<Vec<StatusCount>> {
    let c = where_clause(query);
    let sql = format!(
        "SELECT type, status, COUNT(*) FROM items {} GROUP BY type, status ORDER BY type, status",
        c.sql
    );
    let mut stmt = conn.prepare(&sql)?;
    stmt.query_map(params_from_iter(c.args), |r| {
        Ok(StatusCount {
            item_type: r.get(0)?,
            status: r.get(1)?,
            count: usize::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
        })
    })?
    .collect()
}

/// Returns the completeness recorded in the projection and its unreadable-file notices (path
/// order, as the scan reports them).
///
/// # Errors
/// SQLite failures.
pub fn completeness(
    conn: &Connection,
) -> rusqlite::Result<(Completeness, Vec<pm_engine::notice::Notice>)> {
    let mut stmt = conn.prepare_cached(
        "SELECT path, error_code, error_message FROM sources
         WHERE kind = 'item' AND error_code IS NOT NULL ORDER BY path",
    )?;
    let notices: Vec<pm_engine::notice::Notice> = stmt
        .query_map([], |r| {
            Ok(pm_engine::scan::UnreadableFile {
                path: r.get(0)?,
                code: r.get(1)?,
                message: r.get(2)?,
            }
            .notice())
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok((Completeness::from_counts(notices.len(), 0), notices))
}

/// Returns the light metadata of every item whose trimmed, lowercased `parent` equals
/// `parent_key` (the children rollup of `pm get`), and how many items the projection holds.
/// The parent index is walked in full and compared with pm's rule, so case and spacing
/// variants match as they do on the scan path.
///
/// # Errors
/// SQLite failures.
pub fn children(
    conn: &Connection,
    parent_key: &str,
) -> rusqlite::Result<(Vec<Map<String, Value>>, usize)> {
    let total: i64 = conn.query_row("SELECT count(*) FROM items", [], |r| r.get(0))?;
    let mut keys = conn.prepare_cached(
        "SELECT parent, item_key FROM items INDEXED BY items_parent WHERE parent IS NOT NULL",
    )?;
    let mut matching: Vec<i64> = Vec::new();
    let mut rows = keys.query([])?;
    while let Some(row) = rows.next()? {
        if pm_engine::read::children::has_parent_key(row.get_ref(0)?.as_str()?, parent_key) {
            matching.push(row.get(1)?);
        }
    }
    let mut light = conn.prepare_cached("SELECT light_json FROM items WHERE item_key = ?1")?;
    let mut out = Vec::with_capacity(matching.len());
    for key in matching {
        let text: String = light.query_row([key], |r| r.get(0))?;
        let map: Map<String, Value> = serde_json::from_str(&text)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        out.push(map);
    }
    Ok((out, usize::try_from(total).unwrap_or(0)))
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
