//! Stored item documents read back from the index: whole documents, only the heavy
//! collections as values, or the metadata as the compact text it is stored in.

use rusqlite::Connection;
use serde_json::{Map, Value};

use crate::fresh::source::{self, SweepScope};
use crate::read::parse_all;
use crate::{Answer, Index};
use pm_engine::Result;
use pm_engine::item::ItemDoc;
use pm_engine::scan;

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

/// An item's metadata as the index stores it — compact JSON text of pm's writer — and its
/// body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredText {
    /// The compact JSON object of the light metadata (everything but the heavy collections),
    /// in the item's canonical key order.
    pub light: String,
    /// The compact JSON object of the heavy collections, `None` when the item has none.
    pub collections: Option<String>,
    /// The body.
    pub body: String,
}

/// Returns the stored metadata text and bodies of the given relative paths; `None` for paths
/// without an item row.
///
/// # Errors
/// SQLite failures.
pub fn stored_texts(
    conn: &Connection,
    paths: &[String],
) -> rusqlite::Result<Vec<Option<StoredText>>> {
    let mut stmt = conn.prepare_cached(
        "SELECT i.light_json, c.heavy_json, c.body FROM items i
         JOIN item_content c ON c.item_key = i.item_key WHERE i.path = ?1",
    )?;
    paths
        .iter()
        .map(|p| {
            let row = stmt.query_row([p], |r| {
                Ok(StoredText {
                    light: r.get(0)?,
                    collections: r.get(1)?,
                    body: r.get(2)?,
                })
            });
            match row {
                Ok(text) => Ok(Some(text)),
                Err(rusqlite::Error::QueryReturnedNoRows) => Ok(None),
                Err(e) => Err(e),
            }
        })
        .collect()
}

/// The [`StoredText`] of a document read from its file: what the index stores for it.
pub fn stored_text_of(doc: ItemDoc) -> StoredText {
    let (light, heavy) = pm_engine::summary::split_metadata(doc.metadata);
    let compact = |map: Map<String, Value>| pm_engine::json::to_compact(&Value::Object(map));
    StoredText {
        light: compact(light),
        collections: (!heavy.is_empty()).then(|| compact(heavy)),
        body: doc.body,
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

    /// Returns the metadata (as the compact text the index stores) and bodies of items by
    /// their relative paths; `None` for paths that hold no readable item.
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn stored_texts(&self, paths: &[String]) -> Result<Answer<Vec<Option<StoredText>>>> {
        self.index_or_scan(
            SweepScope::Items,
            |conn| Ok((stored_texts(conn, paths)?, Vec::new())),
            |_| {
                let canon = pm_engine::item::canon::CanonSchema::from_runtime(self.schema);
                let read = |rel: &String| {
                    let file = source::item_ref(&self.tracker, self.schema, rel)?;
                    scan::read_item(&file, &canon).ok().map(stored_text_of)
                };
                Ok((paths.iter().map(read).collect(), Vec::new()))
            },
        )
    }
}
