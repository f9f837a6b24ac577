//! The typed results of the [`Index`](crate::Index) read methods.

use pm_engine::query::{Completeness, Listing, PageSlice, SortAnchor, StatusCount};
use pm_engine::read::graph::GraphItem;
use pm_engine::summary::ItemSummary;
use serde_json::{Map, Value};

use crate::answer::Answer;
use crate::graph::GraphSubset;
use crate::totals::HistoryTotals;

/// One page of a list query ([`Index::list`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ListPage {
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
    /// Whether every item file was read.
    pub completeness: Completeness,
}

impl ListPage {
    pub(crate) fn of(slice: PageSlice, completeness: Completeness) -> ListPage {
        ListPage {
            items: slice.items,
            total: slice.total,
            has_more: slice.has_more,
            next: slice.next,
            applied_limit: slice.applied_limit,
            completeness,
        }
    }
}

impl Answer<ListPage> {
    /// Returns the page as the engine's [`Listing`] (what a scan's list returns).
    pub fn into_listing(self) -> Listing {
        let source = self.source();
        let page = self.rows;
        Listing {
            items: page.items,
            total: page.total,
            has_more: page.has_more,
            next: page.next,
            applied_limit: page.applied_limit,
            source,
            completeness: page.completeness,
            notices: self.notices,
        }
    }
}

/// Every match of a query, in default order (context, next, stats, search).
#[derive(Clone, Debug, PartialEq)]
pub struct Summaries {
    /// The matches.
    pub items: Vec<ItemSummary>,
    /// Whether every item file was read.
    pub completeness: Completeness,
}

/// The graph rows of [`Index::graph_reachable`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GraphRows {
    /// The items reachable from the start item, with the kind facts of every item (index).
    Reachable(GraphSubset),
    /// Every item (scan).
    All(Vec<GraphItem>),
}

/// `(type, status)` counts of the matches of a query.
#[derive(Clone, Debug, PartialEq)]
pub struct Counts {
    /// The counts, by type then status.
    pub counts: Vec<StatusCount>,
    /// Whether every item file was read.
    pub completeness: Completeness,
}

/// The counts and history totals of `pm stats`.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    /// The `(type, status)` counts, by type then status.
    pub counts: Vec<StatusCount>,
    /// Totals over every history stream.
    pub history: HistoryTotals,
    /// Whether every item file was read.
    pub completeness: Completeness,
}

/// The children of one parent (`pm get`'s rollup).
#[derive(Clone, Debug, PartialEq)]
pub struct Children {
    /// The light metadata of each child.
    pub items: Vec<Map<String, Value>>,
    /// How many readable items were inspected.
    pub inspected: usize,
}
