//! The typed result of `pm search`: the envelope keys in printed order, the count-only and
//! paged hit blocks, and the answering of one page of hits.

use pm_engine::rank::search::{Hit, SearchSpec, highlights};
use pm_index::Index;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::search_rows::{Projection, project_rows};
use crate::failure::Result;
use crate::read_output::envelope::{More, Paging, Total};
use crate::read_output::paginate;

/// The `pm search` envelope.
#[derive(Debug, Serialize)]
pub struct SearchResult<'a> {
    pub query: &'a str,
    pub mode: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode_source: Option<&'static str>,
    #[serde(flatten)]
    pub hits: Hits,
    pub filters: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projection: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub now: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
}

/// The hit keys: a count only, or a page of rows.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Hits {
    /// `--count`: no rows, the number of matches.
    Count(CountHits),
    /// A page of projected rows.
    Page(PageHits),
}

/// The keys of a count-only search.
#[derive(Debug, Serialize)]
pub struct CountHits {
    items: [(); 0],
    count: usize,
    total: usize,
    count_only: bool,
}

impl CountHits {
    /// The count of `total` matches.
    pub fn new(total: usize) -> Self {
        Self {
            items: [],
            count: total,
            total,
            count_only: true,
        }
    }
}

/// The keys of an answered page.
#[derive(Debug, Serialize)]
pub struct PageHits {
    items: Vec<Value>,
    count: usize,
    #[serde(flatten)]
    total: Total,
    #[serde(flatten)]
    paging: Paging,
}

/// What answering a page needs besides the hits.
pub struct PageRequest<'a> {
    pub index: &'a Index<'a>,
    pub spec: &'a SearchSpec,
    pub projection: &'a Projection,
    pub after: Option<&'a str>,
    pub fingerprint: &'a str,
    pub limit: usize,
    pub highlight: bool,
}

impl PageRequest<'_> {
    /// Answers the page after the cursor among `scored` (`total` hits in all): its projected
    /// rows (with highlights when asked) among the page keys of the envelope.
    ///
    /// # Errors
    /// `invalid_query_cursor`; index read failures.
    pub fn answer(&self, scored: &[Hit], total: usize) -> Result<PageHits> {
        let ids: Vec<&str> = scored.iter().map(|(o, _)| o.id.as_str()).collect();
        let page = paginate(&ids, self.after, self.fingerprint, self.limit)?;
        let answered = &scored[page.start..page.end];
        let paths: Vec<String> = answered.iter().map(|(o, _)| o.path.clone()).collect();
        let docs = self
            .index
            .documents(&paths, pm_index::DocumentParts::Whole)?
            .rows;
        let page_hits: Vec<_> = answered
            .iter()
            .zip(docs)
            .filter_map(|((_, hit), doc)| Some((*hit, doc?)))
            .collect();
        let marks: Option<Vec<Value>> = self.highlight.then(|| {
            (page_hits.iter())
                .map(|(hit, doc)| json!(highlights(doc, hit.matched, self.spec.query())))
                .collect()
        });
        let mut rows = project_rows(page_hits.into_iter(), self.projection);
        for (row, mark) in rows.iter_mut().zip(marks.into_iter().flatten()) {
            if let Value::Object(row) = row {
                row.insert("highlights".into(), mark);
            }
        }
        let count = rows.len();
        Ok(PageHits {
            items: rows,
            count,
            total: Total::beyond(count, total),
            paging: Paging {
                applied_limit: Some(self.limit as u64),
                more: More::new(page.has_more),
                next_cursor: page.next_cursor,
            },
        })
    }
}

impl PageHits {
    /// The page's rows alone.
    pub fn into_rows(self) -> Vec<Value> {
        self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(hits: Hits) -> String {
        let result = SearchResult {
            query: "q",
            mode: "keyword",
            mode_source: Some("auto"),
            hits,
            filters: Map::new(),
            projection: Some(json!("p")),
            now: Some("t".into()),
            warnings: Some(vec!["w".into()]),
        };
        serde_json::to_string(&result).unwrap_or_default()
    }

    #[test]
    fn envelope_keys_keep_the_printed_order() {
        assert_eq!(
            result(Hits::Count(CountHits::new(2))),
            concat!(
                r#"{"query":"q","mode":"keyword","mode_source":"auto","items":[],"count":2,"#,
                r#""total":2,"count_only":true,"filters":{},"projection":"p","now":"t","#,
                r#""warnings":["w"]}"#
            )
        );
        let page = PageHits {
            items: vec![json!(1)],
            count: 1,
            total: Total::beyond(1, 3),
            paging: Paging {
                applied_limit: Some(1),
                more: More::new(true),
                next_cursor: Some("c".into()),
            },
        };
        assert_eq!(
            result(Hits::Page(page)),
            concat!(
                r#"{"query":"q","mode":"keyword","mode_source":"auto","items":[1],"count":1,"#,
                r#""total":3,"applied_limit":1,"has_more":true,"truncated":true,"#,
                r#""next_cursor":"c","filters":{},"projection":"p","now":"t","warnings":["w"]}"#
            )
        );
    }
}
