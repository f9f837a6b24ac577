//! Stored item documents read back from the index: whole documents, only the heavy
//! collections as values, or the metadata as the compact text it is stored in.

use rusqlite::Connection;
use serde_json::{Map, Value};

use crate::fresh::source::{self, SweepScope};
use crate::read::{self, page_rows, parse_all};
use crate::{Answer, Index};
use pm_engine::Result;
use pm_engine::item::ItemDoc;
use pm_engine::query::{Completeness, Page, Query, Sort};
use pm_engine::scan;
use pm_engine::summary::ItemSummary;

/// Which parts of a stored document a reader needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DocumentParts {
    /// The whole metadata record (light keys and heavy collections in canonical key order) and
    /// the body.
    Whole,
    /// Only the heavy collections (in stored order) and the body: for readers that already hold
    /// the light record of the item's summary.
    Heavy,
}

/// Returns the stored documents of the given relative paths; `None` for paths without an item
/// row. `parts` says whether the light record is read and merged too.
///
/// # Errors
/// SQLite failures.
pub fn documents(
    conn: &Connection,
    paths: &[String],
    parts: DocumentParts,
) -> rusqlite::Result<Vec<Option<pm_engine::item::ItemDoc>>> {
    let mut stmt = conn.prepare_cached(match parts {
        DocumentParts::Whole => {
            "SELECT c.heavy_json, c.body, i.light_json FROM items i
             JOIN item_content c ON c.item_key = i.item_key WHERE i.path = ?1"
        }
        DocumentParts::Heavy => {
            "SELECT c.heavy_json, c.body FROM items i
             JOIN item_content c ON c.item_key = i.item_key WHERE i.path = ?1"
        }
    })?;
    let mut stored = Vec::with_capacity(paths.len());
    for p in paths {
        let row = stmt.query_row([p], |r| {
            let light = match parts {
                DocumentParts::Whole => Some(r.get::<_, String>(2)?),
                DocumentParts::Heavy => None,
            };
            Ok((
                r.get::<_, Option<String>>(0)?,
                r.get::<_, String>(1)?,
                light,
            ))
        });
        stored.push(match row {
            Ok(row) => Some(row),
            Err(rusqlite::Error::QueryReturnedNoRows) => None,
            Err(e) => return Err(e),
        });
    }
    parse_all(stored, |row| {
        Ok(row.map(|(heavy, body, light)| pm_engine::item::ItemDoc {
            metadata: stored_metadata(light.as_deref(), heavy.as_deref()),
            body,
        }))
    })
}

/// The metadata of one stored document: the heavy collections alone, or merged onto the light
/// record in canonical key order.
fn stored_metadata(light: Option<&str>, heavy: Option<&str>) -> Map<String, Value> {
    let parse = |text: &str| serde_json::from_str::<Map<String, Value>>(text).unwrap_or_default();
    let heavy = heavy.map(parse);
    let Some(light) = light else {
        return heavy.unwrap_or_default();
    };
    let mut meta = parse(light);
    if let Some(heavy) = heavy {
        meta.extend(heavy);
        meta = pm_engine::item::canon::order_metadata(&meta);
    }
    meta
}

/// One listed item as the index stores it: its metadata as compact JSON text of pm's writer
/// (`pm_engine::json::to_compact`), and its body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredItem {
    /// The item id.
    pub id: String,
    /// The item file's path relative to the tracker root.
    pub path: String,
    /// The compact JSON object of the light metadata (everything but the heavy collections),
    /// in the item's canonical key order.
    pub light: String,
    /// The compact JSON object of the heavy collections, `None` when the item has none.
    pub collections: Option<String>,
    /// The body; `None` when the item's content could not be read.
    pub body: Option<String>,
}

/// One page of listed items as stored, with pm's paging facts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredPage {
    /// The page's items, in order.
    pub items: Vec<StoredItem>,
    /// Every match, before pagination.
    pub total: usize,
    /// More rows follow this page.
    pub has_more: bool,
    /// The automatic limit, when it was applied.
    pub applied_limit: Option<usize>,
    /// Whether every item file was read.
    pub completeness: Completeness,
}

/// The columns of a [`StoredItem`] over `items`.
const STORED_COLUMNS: &str = "id, path, light_json,
    (SELECT heavy_json FROM item_content c WHERE c.item_key = items.item_key),
    (SELECT body FROM item_content c WHERE c.item_key = items.item_key)";

fn stored_item(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredItem> {
    Ok(StoredItem {
        id: r.get(0)?,
        path: r.get(1)?,
        light: r.get(2)?,
        collections: r.get(3)?,
        body: r.get(4)?,
    })
}

/// The [`StoredItem`] of a summary whose file is read again: what the index stores for it
/// (the summary's light record alone when the file is gone).
fn stored_item_of(summary: ItemSummary, doc: Option<ItemDoc>) -> StoredItem {
    let compact = |map: Map<String, Value>| pm_engine::json::to_compact(&Value::Object(map));
    let (light, collections, body) = match doc {
        Some(doc) => {
            let (light, heavy) = pm_engine::summary::split_metadata(doc.metadata);
            (
                light,
                (!heavy.is_empty()).then(|| compact(heavy)),
                Some(doc.body),
            )
        }
        None => (summary.light, None, None),
    };
    StoredItem {
        id: summary.id,
        path: summary.path,
        light: compact(light),
        collections,
        body,
    }
}

impl Index<'_> {
    /// Returns the documents of items by their relative paths (`ItemSummary::path`); `None`
    /// for paths that hold no readable item. With [`DocumentParts::Heavy`] the metadata holds
    /// only the heavy collections, on either path.
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn documents(
        &self,
        paths: &[String],
        parts: DocumentParts,
    ) -> Result<Answer<Vec<Option<ItemDoc>>>> {
        self.index_or_scan(
            SweepScope::Items,
            |conn| Ok((documents(conn, paths, parts)?, Vec::new())),
            |_| {
                let canon = pm_engine::item::canon::CanonSchema::from_runtime(self.schema);
                let read = |rel: &String| {
                    let file = source::item_ref(&self.tracker, self.schema, rel)?;
                    let mut doc = scan::read_item(&file, &canon).ok()?;
                    if parts == DocumentParts::Heavy {
                        let heavy = pm_engine::summary::HEAVY_KEYS;
                        doc.metadata.retain(|k, _| heavy.contains(&k.as_str()));
                    }
                    Some(doc)
                };
                Ok((paths.iter().map(read).collect(), Vec::new()))
            },
        )
    }

    /// Returns one page of `query` in `sort` order as stored: each item's metadata as the
    /// compact text the index keeps and its body, never parsed (see [`Index::list`]).
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn list_stored(
        &self,
        query: &Query,
        sort: &Sort,
        page: &Page,
    ) -> Result<Answer<StoredPage>> {
        self.index_or_scan(
            SweepScope::Items,
            |conn| {
                let rows = page_rows(conn, query, sort, page, STORED_COLUMNS, stored_item)?;
                let (completeness, data) = read::completeness(conn)?;
                let page = StoredPage {
                    items: rows.items,
                    total: rows.total,
                    has_more: rows.has_more,
                    applied_limit: rows.applied_limit,
                    completeness,
                };
                Ok((page, data))
            },
            |_| {
                let outcome = self.scan()?;
                let slice = pm_engine::query::paginate(outcome.select(query, sort), sort, page);
                let canon = pm_engine::item::canon::CanonSchema::from_runtime(self.schema);
                let reread = |summary: ItemSummary| {
                    let doc = source::item_ref(&self.tracker, self.schema, &summary.path)
                        .and_then(|file| scan::read_item(&file, &canon).ok());
                    stored_item_of(summary, doc)
                };
                let page = StoredPage {
                    items: slice.items.into_iter().map(reread).collect(),
                    total: slice.total,
                    has_more: slice.has_more,
                    applied_limit: slice.applied_limit,
                    completeness: outcome.completeness(),
                };
                Ok((page, outcome.read_notices()))
            },
        )
    }
}
