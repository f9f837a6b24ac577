//! One page of `pm list` through the index facade: offset, keyset continuation of a query
//! cursor (`--after`), `--tree` order, and the projected rows with pm's paging facts.

use pm_engine::query::{Completeness, Listing, Page, PageStart, Query, Sort, SortAnchor, Source};
use pm_engine::summary::ItemSummary;
use pm_index::{DocumentParts, Index};
use serde_json::Value;

use super::list_rows::{Projection, RowSource, TreePosition, project_row, tree_order};
use crate::failure::Result;
use crate::read_output::QueryCursor;

/// What to read.
pub struct ListRead<'a> {
    /// The filters.
    pub query: &'a Query,
    /// The order.
    pub sort: &'a Sort,
    /// Limit, offset and the automatic bound.
    pub page: Page,
    /// `--after`: the raw text and the decoded cursor (already checked against the query).
    pub after: Option<(&'a str, QueryCursor)>,
    /// `--tree`, with its optional `--tree-depth`.
    pub tree: Option<Option<usize>>,
    /// The row projection.
    pub projection: &'a Projection,
    /// The query fingerprint for the next cursor.
    pub fingerprint: &'a str,
}

/// A projected page with pm's paging facts.
pub struct Listed {
    /// The projected rows.
    pub rows: Vec<Value>,
    /// Rows on this page.
    pub count: usize,
    /// Every match.
    pub total: usize,
    /// The limit in force (explicit, intent or automatic), when the page was bounded.
    pub applied_limit: Option<usize>,
    /// More rows follow.
    pub has_more: bool,
    /// The cursor of the next page.
    pub next_cursor: Option<String>,
    /// Whether every item file was read.
    pub completeness: Completeness,
    /// Which path answered (`index` or `scan`).
    pub source: Source,
    /// Unreadable files and index fallbacks.
    pub notices: Vec<pm_engine::notice::Notice>,
}

impl Listed {
    /// Returns true when some item file or folder could not be read.
    pub fn unreadable(&self) -> bool {
        self.completeness.unreadable_item_count > 0
            || self.completeness.unreadable_directory_count > 0
    }
}

/// One page of summaries in output order, before their rows are projected.
pub struct Paged {
    /// The page's summaries.
    pub items: Vec<ItemSummary>,
    /// Their `--tree` positions.
    pub trees: Option<Vec<TreePosition>>,
    /// The index of the first row among all matches.
    pub start: usize,
    /// The id of the page's last row, which the next cursor continues after.
    pub last_id: Option<String>,
    /// The facade's paging facts.
    pub listing: Listing,
}

impl Paged {
    /// The page's paging facts around `rows` (`count` rows on the page: `rows.len()`, or the
    /// number of summaries when the rows are printed later without being built here).
    pub fn listed(self, read: &ListRead<'_>, rows: Vec<Value>, count: usize) -> Listed {
        let has_more = self.listing.has_more && count > 0;
        let next_cursor = has_more.then_some(self.last_id).flatten().map(|after_id| {
            QueryCursor {
                fingerprint: read.fingerprint.to_owned(),
                after_id,
                after_index: Some((self.start + count - 1) as u64),
                snapshot: None,
            }
            .encode()
        });
        Listed {
            rows,
            count,
            total: self.listing.total,
            applied_limit: read.page.limit.or(self.listing.applied_limit),
            has_more,
            next_cursor,
            source: self.listing.source,
            completeness: self.listing.completeness,
            notices: self.listing.notices,
        }
    }
}

/// Reads, pages and projects one list page.
///
/// # Errors
/// `invalid_query_cursor` when the cursor's row is gone and it recorded no index; scan
/// failures of the facade.
pub fn read_page(index: &Index<'_>, read: &ListRead<'_>) -> Result<Listed> {
    let mut paged = read_summaries(index, read)?;
    let items = std::mem::take(&mut paged.items);
    let documents = if read.projection.needs_documents() {
        let paths: Vec<String> = items.iter().map(|i| i.path.clone()).collect();
        // Full rows take the light record from the summary: only the heavy part is read.
        let parts = match read.projection {
            Projection::Full { .. } => DocumentParts::Heavy,
            _ => DocumentParts::Whole,
        };
        index.documents(&paths, parts)?.rows
    } else {
        Vec::new()
    };
    let runtime = runtime_keys(index);
    let runtime: Vec<&str> = runtime.iter().map(String::as_str).collect();
    let mut documents = documents.into_iter();
    let trees = paged.trees.take();
    let rows: Vec<Value> = items
        .into_iter()
        .enumerate()
        .map(|(i, summary)| {
            let tree = trees.as_ref().and_then(|t: &Vec<TreePosition>| t.get(i));
            project_row(
                read.projection,
                RowSource {
                    summary,
                    document: documents.next().flatten(),
                    tree,
                },
                &runtime,
            )
        })
        .collect();
    drop(documents);
    let count = rows.len();
    Ok(paged.listed(read, rows, count))
}

/// The metadata keys of the tracker's runtime fields, in schema order.
pub fn runtime_keys(index: &Index<'_>) -> Vec<String> {
    (index.schema().fields.definitions().iter())
        .map(|d| d.metadata_key.clone())
        .collect()
}

/// Reads one page of summaries in output order (offset, cursor continuation or `--tree`).
///
/// # Errors
/// As [`read_page`].
pub fn read_summaries(index: &Index<'_>, read: &ListRead<'_>) -> Result<Paged> {
    let (items, trees, start, listing) = match read.tree {
        Some(depth) => tree_page(index, read, depth)?,
        None => {
            let (page, start) = resolve_start(index, read)?;
            let mut listing = index.list(read.query, read.sort, &page)?.into_listing();
            let items = std::mem::take(&mut listing.items);
            (items, None, start, listing)
        }
    };
    Ok(Paged {
        last_id: items.last().map(|last| last.id.clone()),
        items,
        trees,
        start,
        listing,
    })
}

/// Returns the page to ask the facade for and the index of its first row.
///
/// A cursor whose row still matches continues right after that row (keyset); when the row
/// is gone it continues at its recorded index, as pm does.
pub fn resolve_start(index: &Index<'_>, read: &ListRead<'_>) -> Result<(Page, usize)> {
    let Some((raw, cursor)) = &read.after else {
        let start = match read.page.start {
            PageStart::Offset(n) => n,
            _ => 0,
        };
        return Ok((read.page.clone(), start));
    };
    let anchor = anchor_row(index, read.query, read.sort, &cursor.after_id)?;
    let recorded = cursor
        .after_index
        .map(|i| usize::try_from(i).unwrap_or(usize::MAX));
    let (start, position) = match (anchor, recorded) {
        (Some(anchor), recorded) => (
            PageStart::After(Box::new(SortAnchor::of(&anchor, read.sort))),
            recorded.map_or(0, |i| i.saturating_add(1)),
        ),
        (None, Some(index)) => (PageStart::Offset(index), index),
        (None, None) => {
            // The row is gone and no index was recorded: pm refuses the cursor.
            let ids: [&str; 0] = [];
            cursor.resume_index(ids, 0, raw)?;
            (PageStart::First, 0)
        }
    };
    Ok((
        Page {
            start,
            ..read.page.clone()
        },
        position,
    ))
}

/// Returns the row with `id` when it is still part of the query's result.
fn anchor_row(
    index: &Index<'_>,
    query: &Query,
    sort: &Sort,
    id: &str,
) -> Result<Option<ItemSummary>> {
    if !query.ids.is_empty() && !query.ids.iter().any(|i| i == id) {
        return Ok(None);
    }
    let probe = Query {
        ids: vec![id.to_owned()],
        ..query.clone()
    };
    let listing = index.list(&probe, sort, &Page::first(1))?;
    Ok(listing.rows.items.into_iter().next())
}

/// A page's summaries, their tree positions (`--tree`), the index of its first row, and the
/// facade's paging facts.
type PageParts = (Vec<ItemSummary>, Option<Vec<TreePosition>>, usize, Listing);

/// `--tree`: every match in tree order, then paged in memory.
fn tree_page(index: &Index<'_>, read: &ListRead<'_>, depth: Option<usize>) -> Result<PageParts> {
    let all = index.summaries(read.query, read.sort)?;
    let source = all.source();
    let ordered = tree_order(all.rows.items, depth);
    let ids: Vec<&str> = ordered.iter().map(|(s, _)| s.id.as_str()).collect();
    let total = ordered.len();
    let start = match (&read.after, &read.page.start) {
        (Some((raw, cursor)), _) => cursor.resume_index(ids.iter().copied(), total, raw)?,
        (None, PageStart::Offset(n)) => (*n).min(total),
        (None, _) => 0,
    };
    let limit = read.page.effective_limit(total);
    let end = limit.map_or(total, |l| start.saturating_add(l).min(total));
    let has_more = end < total && limit.is_some();
    let (items, trees): (Vec<ItemSummary>, Vec<TreePosition>) =
        ordered.into_iter().skip(start).take(end - start).unzip();
    let listing = Listing {
        items: Vec::new(),
        total,
        has_more,
        next: None,
        applied_limit: if read.page.limit.is_none() {
            limit
        } else {
            None
        },
        source,
        completeness: all.rows.completeness,
        notices: all.notices,
    };
    Ok((items, Some(trees), start, listing))
}
