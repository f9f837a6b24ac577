//! `pm search` over the projection: the stored searchable text (`item_text`, one row per item,
//! exactly `SearchText::of` the parsed document), scored in one sequential table scan and then
//! joined with the candidates of a list query; the scan path scores freshly parsed documents
//! with the same function.

use crate::read::{self, where_clause};
use crate::source::{self, SweepScope};
use crate::{Index, Path2};
use pm_engine::Result;
use pm_engine::item::canon::CanonSchema;
use pm_engine::notice::Notice;
use pm_engine::query::{Completeness, Query, Sort, Source};
use pm_engine::rank::search::text::FIELD_COUNT;
use pm_engine::rank::search::{HitOrder, SearchText};
use pm_engine::scan;
use rayon::prelude::*;
use rusqlite::{Connection, params, params_from_iter};

/// The scored candidates of a search, in no particular order, with provenance.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchHits<T> {
    /// Each candidate the scorer kept: its order values and what the scorer returned.
    pub hits: Vec<(HitOrder, T)>,
    /// Which path answered.
    pub source: Source,
    /// Whether every item file was read.
    pub completeness: Completeness,
    /// Unreadable files and index fallbacks.
    pub notices: Vec<Notice>,
}

/// The number of texts in a stored blob: the id, then the fields.
const PARTS: usize = 1 + FIELD_COUNT;

/// Encodes `text` as stored: [`PARTS`] little-endian u32 byte lengths, then the texts.
pub(crate) fn encode(text: &SearchText) -> Vec<u8> {
    let parts = std::iter::once(&text.id).chain(&text.fields);
    let len: usize = parts.clone().map(String::len).sum();
    let mut out = Vec::with_capacity(4 * PARTS + len);
    for p in parts.clone() {
        out.extend_from_slice(&u32::try_from(p.len()).unwrap_or(u32::MAX).to_le_bytes());
    }
    for p in parts {
        out.extend_from_slice(p.as_bytes());
    }
    out
}

/// Decodes a stored blob into `text`, reusing its allocations.
///
/// # Errors
/// A blob that is not an encoded text (truncated, bad lengths, invalid UTF-8).
pub(crate) fn decode_into(blob: &[u8], text: &mut SearchText) -> Result<(), String> {
    let bad = || "malformed search text".to_owned();
    let (header, body) = blob.split_at_checked(4 * PARTS).ok_or_else(bad)?;
    let body = std::str::from_utf8(body).map_err(|e| e.to_string())?;
    text.clear();
    let mut at = 0usize;
    let targets = std::iter::once(&mut text.id).chain(text.fields.iter_mut());
    for (len, target) in header.chunks_exact(4).zip(targets) {
        let len = u32::from_le_bytes(len.try_into().map_err(|_| bad())?) as usize;
        let end = at.checked_add(len).ok_or_else(bad)?;
        target.push_str(body.get(at..end).ok_or_else(bad)?);
        at = end;
    }
    if at == body.len() { Ok(()) } else { Err(bad()) }
}

/// Stores the searchable text of item `key`.
///
/// # Errors
/// SQLite failures.
pub(crate) fn insert_text(conn: &Connection, key: i64, text: &SearchText) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT INTO item_text (item_key, text) VALUES (?1, ?2)")?
        .execute(params![key, encode(text)])?;
    Ok(())
}

/// Reads the blob in column `at` into `text`.
fn read_text(row: &rusqlite::Row<'_>, at: usize, text: &mut SearchText) -> rusqlite::Result<()> {
    decode_into(row.get_ref(at)?.as_blob()?, text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(at, rusqlite::types::Type::Blob, e.into())
    })
}

/// Scores every stored text with `score`, then keeps the kept ones that match `query` (the
/// list-parity filters), with their order values.
///
/// # Errors
/// SQLite failures.
pub fn scored<T>(
    conn: &Connection,
    query: &Query,
    score: impl Fn(&SearchText) -> Option<T>,
) -> rusqlite::Result<Vec<(HitOrder, T)>> {
    // One sequential pass over the text table; only kept candidates are remembered.
    let mut stmt = conn.prepare("SELECT item_key, text FROM item_text ORDER BY item_key")?;
    let mut rows = stmt.query([])?;
    let mut text = SearchText::default();
    let mut kept: Vec<(i64, Option<T>)> = Vec::new();
    while let Some(row) = rows.next()? {
        read_text(row, 1, &mut text)?;
        if let Some(t) = score(&text) {
            kept.push((row.get(0)?, Some(t)));
        }
    }
    // The filter and order columns, from the `items` rows (or a covering index) of the query.
    let c = where_clause(query);
    let mut stmt = conn.prepare(&format!(
        "SELECT item_key, terminal, priority, updated_ms, updated_at, id, path FROM items {}",
        c.sql
    ))?;
    let mut rows = stmt.query(params_from_iter(c.args))?;
    let mut out = Vec::with_capacity(kept.len());
    while let Some(row) = rows.next()? {
        let key: i64 = row.get(0)?;
        let Ok(at) = kept.binary_search_by_key(&key, |(k, _)| *k) else {
            continue;
        };
        let Some(t) = kept[at].1.take() else { continue };
        let order = HitOrder {
            terminal: row.get(1)?,
            priority: row.get(2)?,
            updated_ms: row.get(3)?,
            updated_at: row.get(4)?,
            id: row.get(5)?,
            path: row.get(6)?,
        };
        out.push((order, t));
    }
    Ok(out)
}

/// Returns the stored searchable text of every item with its path, in path order.
///
/// # Errors
/// SQLite failures.
pub fn stored_texts(conn: &Connection) -> rusqlite::Result<Vec<(String, SearchText)>> {
    let mut stmt = conn.prepare(
        "SELECT i.path, t.text FROM item_text t JOIN items i ON i.item_key = t.item_key
         ORDER BY i.path",
    )?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let mut text = SearchText::default();
        read_text(row, 1, &mut text)?;
        out.push((row.get(0)?, text));
    }
    Ok(out)
}

impl Index<'_> {
    /// Scores the searchable text of every match of `query` (list-parity filters) with `score`
    /// and returns the candidates it keeps with their order values (`pm search`).
    ///
    /// The index path scores the stored texts without parsing any document; the scan path
    /// scores `SearchText::of` each parsed document, in parallel.
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn search<T: Send>(
        &self,
        query: &Query,
        score: impl Fn(&SearchText) -> Option<T> + Sync,
    ) -> Result<SearchHits<T>> {
        let mut notices = Vec::new();
        if let Path2::Index(conn) = self.prepare(SweepScope::Items, &mut notices) {
            let answer = scored(&conn, query, &score)
                .and_then(|hits| read::completeness(&conn).map(|c| (hits, c)));
            match answer {
                Ok((hits, (completeness, mut data))) => {
                    data.extend(notices);
                    return Ok(SearchHits {
                        hits,
                        source: Source::Index,
                        completeness,
                        notices: data,
                    });
                }
                Err(e) => self.failed_query(&e, &mut notices),
            }
        }
        let outcome = scan::scan(&self.tracker, self.schema)?;
        let candidates = outcome.select(query, &Sort::default_order());
        let (tracker, schema) = (&self.tracker, self.schema);
        let canon = CanonSchema::from_runtime(schema);
        let hits = candidates
            .par_iter()
            .filter_map(|summary| {
                let file = source::item_ref(tracker, schema, &summary.path)?;
                let doc = scan::read_item(&file, &canon).ok()?;
                score(&SearchText::of(&doc)).map(|t| (HitOrder::of(summary), t))
            })
            .collect();
        let mut data = outcome.read_notices();
        data.extend(notices);
        Ok(SearchHits {
            hits,
            source: Source::Scan,
            completeness: outcome.completeness(),
            notices: data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_round_trip_and_malformed_blobs_are_refused() {
        let mut fields: [String; FIELD_COUNT] = Default::default();
        fields[0] = "ünicode title".into();
        fields[11] = "plan".into();
        let text = SearchText {
            id: "pm-a1".into(),
            fields,
        };
        let blob = encode(&text);
        let mut back = SearchText::default();
        back.fields[3] = "stale".into();
        assert_eq!(decode_into(&blob, &mut back), Ok(()));
        assert_eq!(back, text);
        assert!(decode_into(&blob[..blob.len() - 1], &mut back).is_err());
        assert!(decode_into(&blob[..10], &mut back).is_err());
        let mut split = blob.clone();
        split[4] = 1; // the title now ends inside "ü"
        assert!(decode_into(&split, &mut back).is_err());
    }
}
