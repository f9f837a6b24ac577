//! Pagination (limit, offset or keyset `after`, pm's automatic limit) and the [`Listing`]
//! envelope both read paths return, with its provenance (`source`) and `completeness`.

use super::sort::{Sort, SortAnchor};
use crate::notice::Notice;
use crate::summary::ItemSummary;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// Which path answered a read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The SQLite projection, after a freshness check.
    Index,
    /// A scan of the tracker files.
    Scan,
}

/// Whether every item file could be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompletenessStatus {
    /// Every item file was read.
    Complete,
    /// Some item files or folders could not be read; their items are missing.
    Partial,
}

/// pm's `completeness` block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completeness {
    /// `complete` or `partial`.
    pub status: CompletenessStatus,
    /// Item files that could not be parsed.
    pub unreadable_item_count: usize,
    /// Type folders that could not be listed.
    pub unreadable_directory_count: usize,
}

impl Completeness {
    /// Returns the completeness for these unreadable counts.
    pub fn from_counts(items: usize, directories: usize) -> Completeness {
        Completeness {
            status: if items == 0 && directories == 0 {
                CompletenessStatus::Complete
            } else {
                CompletenessStatus::Partial
            },
            unreadable_item_count: items,
            unreadable_directory_count: directories,
        }
    }
}

/// Where a page starts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PageStart {
    /// Skip this many matches (`--offset`; 0 is the first page).
    Offset(usize),
    /// Continue strictly after this position of the order (`--after <cursor>`); the anchored
    /// row need not exist any more.
    After(Box<SortAnchor>),
    /// The first page.
    #[default]
    First,
}

/// pm's automatic bound: when no limit is given and at least `threshold` rows match, only
/// `limit` rows are returned (`applied_limit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutoLimit {
    /// Matches at or above which the bound applies (pm: 10,000).
    pub threshold: usize,
    /// The bound (pm: 20).
    pub limit: usize,
}

/// Which slice of the ordered matches to return.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    /// At most this many rows; `None` is unbounded (subject to `auto_limit`).
    pub limit: Option<usize>,
    /// Where the page starts.
    pub start: PageStart,
    /// pm's automatic limit, applied only when `limit` is `None`.
    pub auto_limit: Option<AutoLimit>,
}

impl Page {
    /// Returns the unbounded first page.
    pub fn all() -> Page {
        Page::default()
    }

    /// Returns the first page of at most `limit` rows.
    pub fn first(limit: usize) -> Page {
        Page {
            limit: Some(limit),
            ..Page::default()
        }
    }

    /// Returns the limit in force for `total` matches: the explicit limit, else the automatic
    /// one when `total` reaches its threshold.
    pub fn effective_limit(&self, total: usize) -> Option<usize> {
        self.limit.or_else(|| {
            self.auto_limit
                .filter(|a| total >= a.threshold)
                .map(|a| a.limit)
        })
    }
}

/// One page of a list read.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Listing {
    /// The rows of this page, in order.
    pub items: Vec<ItemSummary>,
    /// Every match, before pagination.
    pub total: usize,
    /// More rows follow this page.
    pub has_more: bool,
    /// The position to continue after (the last row), when `has_more`.
    pub next: Option<SortAnchor>,
    /// The automatic limit, when it was applied.
    pub applied_limit: Option<usize>,
    /// Which path answered.
    pub source: Source,
    /// Whether every item file was read.
    pub completeness: Completeness,
    /// Findings worth showing (index fallbacks, unreadable files, …).
    pub notices: Vec<Notice>,
}

/// One page cut from the ordered matches, before provenance is attached.
#[derive(Clone, Debug, PartialEq)]
pub struct PageSlice {
    /// The rows of the page.
    pub items: Vec<ItemSummary>,
    /// Every match, before pagination.
    pub total: usize,
    /// More rows follow.
    pub has_more: bool,
    /// The anchor of the last row, when `has_more`.
    pub next: Option<SortAnchor>,
    /// The automatic limit, when it was applied.
    pub applied_limit: Option<usize>,
}

impl PageSlice {
    /// Returns the listing of this slice.
    pub fn into_listing(
        self,
        source: Source,
        completeness: Completeness,
        notices: Vec<Notice>,
    ) -> Listing {
        Listing {
            items: self.items,
            total: self.total,
            has_more: self.has_more,
            next: self.next,
            applied_limit: self.applied_limit,
            source,
            completeness,
            notices,
        }
    }
}

/// Pages already-sorted matches (the scan path; the index does the same in SQL).
pub fn paginate(sorted: Vec<ItemSummary>, sort: &Sort, page: &Page) -> PageSlice {
    let total = sorted.len();
    let limit = page.effective_limit(total);
    let applied_limit = if page.limit.is_none() { limit } else { None };
    let mut rest: Vec<ItemSummary> = match &page.start {
        PageStart::First => sorted,
        PageStart::Offset(n) => sorted.into_iter().skip(*n).collect(),
        PageStart::After(anchor) => sorted
            .into_iter()
            .filter(|item| {
                sort.compare_anchors(&SortAnchor::of(item, sort), anchor) == Ordering::Greater
            })
            .collect(),
    };
    let has_more = limit.is_some_and(|l| rest.len() > l);
    if let Some(l) = limit {
        rest.truncate(l);
    }
    let next = if has_more {
        rest.last().map(|last| SortAnchor::of(last, sort))
    } else {
        None
    };
    PageSlice {
        items: rest,
        total,
        has_more,
        next,
        applied_limit,
    }
}
