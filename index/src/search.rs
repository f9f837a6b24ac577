//! `pm search` over the projection: the stored searchable text (`item_text`, one row per item,
//! exactly `SearchText::of` the parsed document), scored in one sequential table scan and then
//! joined with the candidates of a list query; the scan path scores freshly parsed documents
//! with the same function.

use crate::fresh::source::{self, SweepScope};
use crate::read::{self, where_clause};
use crate::{Answer, Index};
use pm_engine::Result;
use pm_engine::item::canon::CanonSchema;
use pm_engine::notice::Notice;
use pm_engine::query::{Completeness, Query, Sort};
use pm_engine::rank::search::text::FIELD_COUNT;
use pm_engine::rank::search::{Hit, HitKey, HitOrder, Ranking, SearchScore, SearchText, TextView};
use pm_engine::scan;
use pm_engine::summary::ItemSummary;
use rayon::prelude::*;
use rusqlite::{Connection, params_from_iter};

/// The ranked hits of a search with provenance.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchHits {
    /// The first hits in hit order (all of them unless a number to keep was given).
    pub hits: Vec<Hit>,
    /// The number of hits.
    pub total: usize,
    /// Whether every item file was read.
    pub completeness: Completeness,
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

/// Decodes a stored blob into a view of its texts (no copy).
///
/// # Errors
/// A blob that is not an encoded text (truncated, bad lengths, invalid UTF-8).
pub(crate) fn decode(blob: &[u8]) -> Result<TextView<'_>, String> {
    let bad = || "malformed search text".to_owned();
    let (header, body) = blob.split_at_checked(4 * PARTS).ok_or_else(bad)?;
    let body = std::str::from_utf8(body).map_err(|e| e.to_string())?;
    let mut parts = [""; PARTS];
    let mut at = 0usize;
    for (len, part) in header.chunks_exact(4).zip(parts.iter_mut()) {
        let len = u32::from_le_bytes(len.try_into().map_err(|_| bad())?) as usize;
        let end = at.checked_add(len).ok_or_else(bad)?;
        *part = body.get(at..end).ok_or_else(bad)?;
        at = end;
    }
    if at != body.len() {
        return Err(bad());
    }
    Ok(TextView {
        id: parts[0],
        fields: std::array::from_fn(|i| parts[i + 1]),
    })
}

/// Stores the searchable text of an item: bind the item key and [`encode`]d text.
pub(crate) const INSERT_TEXT: &str = "INSERT INTO item_text (item_key, text) VALUES (?1, ?2)";

/// Returns the view of the blob in column `at`.
fn read_text<'r>(row: &'r rusqlite::Row<'_>, at: usize) -> rusqlite::Result<TextView<'r>> {
    decode(row.get_ref(at)?.as_blob()?).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(at, rusqlite::types::Type::Blob, e.into())
    })
}

/// Rows handed to the scoring thread at a time.
const SCORE_BATCH: usize = 1024;

/// Stored texts copied out of SQLite for the scoring thread: `(item key, range of bytes)`.
#[derive(Default)]
struct TextBatch {
    rows: Vec<(i64, std::ops::Range<usize>)>,
    bytes: Vec<u8>,
}

/// Scores every stored text with `score`, then offers the kept ones that match `query` (the
/// list-parity filters) to `ranking` with their order values.
///
/// The table is read on this thread (one sequential pass, the connection cannot be shared)
/// while another thread scores the previous batch of texts: reading rows and scoring texts
/// cost about the same, so a read over 100,000 texts takes half as long when a core is free.
///
/// # Errors
/// SQLite failures; a stored text that does not decode.
pub fn scored(
    conn: &Connection,
    query: &Query,
    score: impl Fn(&TextView<'_>) -> Option<SearchScore> + Sync,
    ranking: &mut Ranking,
) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare("SELECT item_key, text FROM item_text ORDER BY item_key")?;
    let mut rows = stmt.query([])?;
    let kept = std::thread::scope(|s| -> rusqlite::Result<Vec<(i64, SearchScore)>> {
        let (send, receive) = std::sync::mpsc::sync_channel::<TextBatch>(2);
        let scorer = s.spawn(|| -> Result<Vec<(i64, SearchScore)>, String> {
            let mut kept = Vec::new();
            for batch in receive {
                for (key, range) in batch.rows {
                    let text = batch.bytes.get(range).unwrap_or_default();
                    if let Some(s) = score(&decode(text)?) {
                        kept.push((key, s));
                    }
                }
            }
            Ok(kept)
        });
        let mut batch = TextBatch::default();
        while let Some(row) = rows.next()? {
            let key: i64 = row.get(0)?;
            let start = batch.bytes.len();
            batch.bytes.extend_from_slice(row.get_ref(1)?.as_blob()?);
            batch.rows.push((key, start..batch.bytes.len()));
            if batch.rows.len() == SCORE_BATCH && send.send(std::mem::take(&mut batch)).is_err() {
                break; // the scorer stopped on a malformed text: its error is reported below
            }
        }
        if !batch.rows.is_empty() {
            let _ = send.send(batch);
        }
        drop(send);
        let scored = scorer
            .join()
            .unwrap_or_else(|_| Err("the search scoring thread panicked".to_owned()));
        scored.map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(1, rusqlite::types::Type::Blob, e.into())
        })
    })?;
    // The filter and order columns, from the `items` rows (or a covering index) of the query.
    let c = where_clause(query);
    let mut stmt = conn.prepare(&format!(
        "SELECT item_key, terminal, priority, updated_ms, updated_at, id, path FROM items {}",
        c.sql
    ))?;
    let mut rows = stmt.query(params_from_iter(c.args))?;
    while let Some(row) = rows.next()? {
        let key: i64 = row.get(0)?;
        let Ok(at) = kept.binary_search_by_key(&key, |(k, _)| *k) else {
            continue;
        };
        let order = HitKey {
            terminal: row.get(1)?,
            priority: row.get(2)?,
            updated_ms: row.get(3)?,
            updated_at: row.get_ref(4)?.as_str()?,
            id: row.get_ref(5)?.as_str()?,
            path: row.get_ref(6)?.as_str()?,
        };
        ranking.offer(kept[at].1, &order);
    }
    Ok(())
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
        let text = read_text(row, 1)?.to_text();
        out.push((row.get(0)?, text));
    }
    Ok(out)
}

impl Index<'_> {
    /// Scores the searchable text of every match of `query` (list-parity filters) with `score`
    /// and returns the hits in hit order, only the first `keep` when given (`pm search`).
    ///
    /// The index path scores the stored texts without parsing any document; the scan path
    /// scores `SearchText::of` each parsed document, in parallel.
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn search(
        &self,
        query: &Query,
        keep: Option<usize>,
        score: impl Fn(&TextView<'_>) -> Option<SearchScore> + Sync,
    ) -> Result<Answer<SearchHits>> {
        self.index_or_scan(
            SweepScope::Items,
            |conn| {
                let mut ranking = Ranking::new(keep);
                scored(conn, query, &score, &mut ranking)?;
                let (completeness, data) = read::completeness(conn)?;
                let (hits, total) = ranking.finish();
                let found = SearchHits {
                    hits,
                    total,
                    completeness,
                };
                Ok((found, data))
            },
            |_| self.scanned_search(query, keep, &score),
        )
    }

    /// The scan path of [`Index::search`]: every candidate parsed and scored, in parallel.
    fn scanned_search(
        &self,
        query: &Query,
        keep: Option<usize>,
        score: &(impl Fn(&TextView<'_>) -> Option<SearchScore> + Sync),
    ) -> Result<(SearchHits, Vec<Notice>)> {
        let outcome = self.scan()?;
        let candidates = outcome.select(query, &Sort::default_order());
        let (tracker, schema) = (&self.tracker, self.schema);
        let canon = CanonSchema::from_runtime(schema);
        let scored: Vec<(&ItemSummary, SearchScore)> = candidates
            .par_iter()
            .filter_map(|summary| {
                let file = source::item_ref(tracker, schema, &summary.path)?;
                let doc = scan::read_item(&file, &canon).ok()?;
                score(&SearchText::of(&doc).view()).map(|s| (summary, s))
            })
            .collect();
        let mut ranking = Ranking::new(keep);
        for (summary, s) in scored {
            ranking.offer(s, &HitOrder::of(summary).key());
        }
        let (hits, total) = ranking.finish();
        let found = SearchHits {
            hits,
            total,
            completeness: outcome.completeness(),
        };
        Ok((found, outcome.read_notices()))
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
        assert_eq!(decode(&blob), Ok(text.view()));
        assert!(decode(&blob[..blob.len() - 1]).is_err());
        assert!(decode(&blob[..10]).is_err());
        let mut split = blob.clone();
        split[4] = 1; // the title now ends inside "ü"
        assert!(decode(&split).is_err());
    }
}
