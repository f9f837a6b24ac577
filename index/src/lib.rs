//! The derived, rebuildable SQLite projection of a pm tracker and the read facade over it.
//! It never decides what an answer means (that is `pm_engine`'s `Query::matches`) and never renders.
//!
//! Every read goes through [`Index`]: it checks freshness (a parallel stat sweep against the
//! `sources` table), repairs the projection incrementally or rebuilds it, and answers from SQL;
//! when the projection cannot be used it answers from `pm_engine::scan` and says so in `source`
//! and the notices. See `docs/index.md`.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

pub mod aggregate;
pub mod apply;
mod backlog;
mod connect;
pub mod digest;
pub mod dirsig;
pub mod duplicates;
pub mod events;
pub mod folder_handles;
pub mod folder_listings;
pub mod freshness;
pub mod gc;
pub mod graph;
pub mod indexer;
pub mod integrity;
mod load;
pub mod maintenance;
pub mod project;
pub mod rank;
pub mod read;
mod route;
pub mod rows;
pub mod schema;
pub mod search;
pub mod source;
pub mod store;
pub mod sweep;
pub mod totals;

use crate::rows::schema_fingerprint;
use crate::source::SweepScope;
use crate::store::{IndexPaths, ReadPool, WriterLock};
use pm_engine::Result;
use pm_engine::commit::Commit;
use pm_engine::item::ItemDoc;
use pm_engine::notice::Notice;
use pm_engine::query::{Completeness, Listing, Page, Query, Sort, Source, StatusCount};
use pm_engine::scan::{self, ScanOutcome};
use pm_engine::schema::RuntimeSchema;
use pm_engine::summary::ItemSummary;
use pm_engine::tracker::Tracker;
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

pub use events::{EventPage, EventPosition, EventQuery, EventRow, EventSince};
pub use graph::GraphSubset;
pub use indexer::{BuildProgress, BuildReport, ProgressFn};
pub use maintenance::{CheckReport, Difference, IndexHealth, IndexState, ReindexReport};
pub use rank::RankCorpus;
pub use search::SearchHits;
pub use source::{item_ref, source_for};
pub use totals::HistoryTotals;

/// How a read uses the projection.
#[derive(Clone, Copy)]
pub struct IndexOptions<'a> {
    /// `--no-index` / `PM_NO_INDEX=1`: always scan, never touch `runtime/index/`.
    pub scan_only: bool,
    /// How long a read waits for another writer before answering from a scan.
    pub lock_wait: Duration,
    /// Read connections in the pool.
    pub pool_size: u32,
    /// Told about progress of full builds.
    pub progress: Option<ProgressFn<'a>>,
    /// Check freshness once per facade: the first read's check (or repair) stands for the
    /// facade's later reads, as for one CLI command answering from one snapshot. Off by
    /// default: a long-lived facade checks before every read. A commit observed through the
    /// facade or a rebuild clears it.
    pub check_once: bool,
    /// How a read decides the projection is fresh (`PM_INDEX_FRESHNESS`); full by default.
    pub freshness: dirsig::Freshness,
}

impl Default for IndexOptions<'_> {
    fn default() -> Self {
        IndexOptions {
            scan_only: false,
            lock_wait: Duration::from_millis(500),
            pool_size: 4,
            progress: None,
            check_once: false,
            freshness: dirsig::Freshness::Full,
        }
    }
}

impl std::fmt::Debug for IndexOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexOptions")
            .field("scan_only", &self.scan_only)
            .field("lock_wait", &self.lock_wait)
            .field("pool_size", &self.pool_size)
            .field("check_once", &self.check_once)
            .field("freshness", &self.freshness)
            .finish_non_exhaustive()
    }
}

/// Every match of a query, in default order, with provenance (context, next, stats, search).
#[derive(Clone, Debug, PartialEq)]
pub struct Summaries {
    /// The matches.
    pub items: Vec<ItemSummary>,
    /// Which path answered.
    pub source: Source,
    /// Whether every item file was read.
    pub completeness: Completeness,
    /// Unreadable files and index fallbacks.
    pub notices: Vec<Notice>,
}

/// The graph rows of [`Index::graph_reachable`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GraphRows {
    /// The items reachable from the start item, with the kind facts of every item (index).
    Reachable(GraphSubset),
    /// Every item (scan).
    All(Vec<pm_engine::read::graph::GraphItem>),
}

/// `(type, status)` counts with provenance.
#[derive(Clone, Debug, PartialEq)]
pub struct Counts {
    /// The counts, by type then status.
    pub rows: Vec<StatusCount>,
    /// Which path answered.
    pub source: Source,
    /// Whether every item file was read.
    pub completeness: Completeness,
    /// Unreadable files and index fallbacks.
    pub notices: Vec<Notice>,
}

/// The read facade of one tracker.
pub struct Index<'a> {
    tracker: Tracker,
    schema: &'a RuntimeSchema,
    fingerprint: String,
    paths: IndexPaths,
    options: IndexOptions<'a>,
    pool: Mutex<Option<(PathBuf, ReadPool)>>,
    /// The database file (and generation) whose `meta` passed [`store::probe`] (see
    /// `Index::current_checked`).
    checked: Mutex<Option<(PathBuf, u64)>>,
    /// The widest scope a check confirmed (with `check_once`).
    confirmed: Mutex<Option<SweepScope>>,
    /// Reads answered while their sweep ran (see [`Index::speculative_answers`]).
    speculated: std::sync::atomic::AtomicUsize,
    /// Reads answered on unchanged folder signatures (see [`Index::trusted_answers`]).
    trusted: std::sync::atomic::AtomicUsize,
}

/// A connection the current read may use, or the reason it must scan.
enum Path2 {
    Index(Box<r2d2::PooledConnection<r2d2_sqlite::SqliteConnectionManager>>),
    Scan,
}

impl<'a> Index<'a> {
    /// Returns the facade of `tracker` under `schema`. Opening touches nothing; the first read
    /// checks freshness and builds or repairs the projection as needed.
    pub fn open(
        tracker: &Tracker,
        schema: &'a RuntimeSchema,
        options: IndexOptions<'a>,
    ) -> Index<'a> {
        Index {
            tracker: tracker.clone(),
            schema,
            fingerprint: schema_fingerprint(schema),
            paths: IndexPaths::of(tracker),
            options,
            pool: Mutex::new(None),
            checked: Mutex::new(None),
            confirmed: Mutex::new(None),
            speculated: std::sync::atomic::AtomicUsize::new(0),
            trusted: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Returns how many reads of this facade were answered by a query that ran while its
    /// freshness sweep did, the sweep then confirming the snapshot (diagnostics and tests).
    pub fn speculative_answers(&self) -> usize {
        self.speculated.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Returns how many reads of this facade were answered without a sweep because the folders'
    /// signatures equal the ones a full sweep confirmed (`Freshness::Directories` only).
    pub fn trusted_answers(&self) -> usize {
        self.trusted.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Returns the tracker.
    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// Returns the projection paths.
    pub fn paths(&self) -> &IndexPaths {
        &self.paths
    }

    /// The recorded folder listings the freshness sweeps of this tracker use.
    pub fn folder_listings(&self) -> folder_listings::FolderListings {
        folder_listings::FolderListings::at(self.paths.listings.clone())
    }

    /// Answers a list query (filters, order, page).
    ///
    /// # Errors
    /// Only scan failures (a type folder entry that cannot be inspected); index problems fall
    /// back to a scan and are reported as notices.
    pub fn list(&self, query: &Query, sort: &Sort, page: &Page) -> Result<Listing> {
        let mut notices = Vec::new();
        let answer = self.answer(SweepScope::Items, &mut notices, |conn| {
            read::list(conn, self.schema, query, sort, page)
                .and_then(|slice| read::completeness(conn).map(|c| (slice, c)))
        });
        if let Some((slice, (completeness, mut data))) = answer {
            data.extend(notices);
            return Ok(slice.into_listing(Source::Index, completeness, data));
        }
        let mut listing = self.scan()?.list(query, sort, page);
        listing.notices.extend(notices);
        Ok(listing)
    }

    /// Returns every match of `query` in `sort` order (the candidate sets of context, next,
    /// stats and search).
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn summaries(&self, query: &Query, sort: &Sort) -> Result<Summaries> {
        let mut notices = Vec::new();
        let answer = self.answer(SweepScope::Items, &mut notices, |conn| {
            read::select(conn, self.schema, query, sort)
                .and_then(|items| read::completeness(conn).map(|c| (items, c)))
        });
        if let Some((items, (completeness, mut data))) = answer {
            data.extend(notices);
            return Ok(Summaries {
                items,
                source: Source::Index,
                completeness,
                notices: data,
            });
        }
        let outcome = self.scan()?;
        let mut data = outcome.read_notices();
        data.extend(notices);
        Ok(Summaries {
            items: outcome.select(query, sort),
            source: Source::Scan,
            completeness: outcome.completeness(),
            notices: data,
        })
    }

    /// Returns the graph row of every item (`pm graph`, `pm deps`): columns only on the index
    /// path, derived from the scanned summaries otherwise.
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn graph_items(&self) -> Result<(Vec<pm_engine::read::graph::GraphItem>, Source)> {
        let mut notices = Vec::new();
        if let Some(items) = self.answer(SweepScope::Items, &mut notices, graph::graph_items) {
            return Ok((items, Source::Index));
        }
        let outcome = self.scan()?;
        let items = outcome
            .select(&Query::all(), &Sort::default_order())
            .iter()
            .map(pm_engine::read::graph::GraphItem::from)
            .collect();
        Ok((items, Source::Scan))
    }

    /// Returns the graph rows a read from the item `start` needs (`pm deps <id>`, `pm graph
    /// <traversal> <id>`): on the index path only the items the walk `reach` can touch, with
    /// the tracker-wide kind facts ([`GraphRows::Reachable`]); on the scan path every item
    /// ([`GraphRows::All`]), as [`Index::graph_items`].
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn graph_reachable(
        &self,
        start: &str,
        reach: &pm_engine::read::graph::Reach,
    ) -> Result<(GraphRows, Source)> {
        let mut notices = Vec::new();
        if let Some(subset) = self.answer(SweepScope::Items, &mut notices, |conn| {
            graph::graph_subset(conn, start, reach)
        }) {
            return Ok((GraphRows::Reachable(subset), Source::Index));
        }
        let (items, source) = self.graph_items()?;
        Ok((GraphRows::All(items), source))
    }

    /// Returns the `(type, status)` counts of the matches of `query`.
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn counts(&self, query: &Query) -> Result<Counts> {
        let mut notices = Vec::new();
        let answer = self.answer(SweepScope::Items, &mut notices, |conn| {
            read::counts(conn, query).and_then(|rows| read::completeness(conn).map(|c| (rows, c)))
        });
        if let Some((rows, (completeness, mut data))) = answer {
            data.extend(notices);
            return Ok(Counts {
                rows,
                source: Source::Index,
                completeness,
                notices: data,
            });
        }
        let outcome = self.scan()?;
        let mut data = outcome.read_notices();
        data.extend(notices);
        Ok(Counts {
            rows: outcome.counts(query),
            source: Source::Scan,
            completeness: outcome.completeness(),
            notices: data,
        })
    }

    /// Returns the `(type, status)` counts of the matches of `query` and the history totals
    /// (`pm stats`), from one freshness check.
    ///
    /// # Errors
    /// As [`Index::list`]; `io_error` when `history/` cannot be listed on the scan path.
    pub fn stats(&self, query: &Query) -> Result<(Counts, HistoryTotals)> {
        let mut notices = Vec::new();
        let answer = self.answer(SweepScope::All, &mut notices, |conn| {
            read::counts(conn, query).and_then(|rows| {
                let history = totals::from_index(conn)?;
                read::completeness(conn).map(|c| (rows, history, c))
            })
        });
        if let Some((rows, history, (completeness, mut data))) = answer {
            data.extend(notices);
            let counts = Counts {
                rows,
                source: Source::Index,
                completeness,
                notices: data,
            };
            return Ok((counts, history));
        }
        let outcome = self.scan()?;
        let mut data = outcome.read_notices();
        data.extend(notices);
        let counts = Counts {
            rows: outcome.counts(query),
            source: Source::Scan,
            completeness: outcome.completeness(),
            notices: data,
        };
        Ok((counts, totals::from_scan(&self.tracker)?))
    }

    /// Returns the full documents (metadata with heavy collections, body) of items by their
    /// relative paths (`ItemSummary::path`); `None` for paths that hold no readable item.
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn documents(&self, paths: &[String]) -> Result<(Vec<Option<ItemDoc>>, Source)> {
        let mut notices = Vec::new();
        if let Some(docs) = self.answer(SweepScope::Items, &mut notices, |conn| {
            read::documents(conn, paths)
        }) {
            return Ok((docs, Source::Index));
        }
        let canon = pm_engine::item::canon::CanonSchema::from_runtime(self.schema);
        let docs = paths
            .iter()
            .map(|rel| {
                source::item_ref(&self.tracker, self.schema, rel)
                    .and_then(|file| scan::read_item(&file, &canon).ok())
            })
            .collect();
        Ok((docs, Source::Scan))
    }

    /// Returns the light metadata of the items whose trimmed, lowercased `parent` equals
    /// `parent_key`, and how many readable items were inspected (`pm get`'s children rollup).
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn children(&self, parent_key: &str) -> Result<(Vec<Map<String, Value>>, usize)> {
        let mut notices = Vec::new();
        if let Some(found) = self.answer(SweepScope::Items, &mut notices, |conn| {
            read::children(conn, parent_key)
        }) {
            return Ok(found);
        }
        let outcome = self.scan()?;
        let children = outcome
            .summaries
            .iter()
            .filter(|s| {
                s.parent
                    .as_deref()
                    .is_some_and(|p| pm_engine::read::children::has_parent_key(p, parent_key))
            })
            .map(|s| s.light.clone())
            .collect();
        Ok((children, outcome.summaries.len()))
    }

    /// Answers an events query (history entries in `(ts, stream, position)` order). Only the
    /// history streams are checked for freshness: no event row depends on an item file.
    ///
    /// # Errors
    /// Scan failures listing `history/`.
    pub fn events(&self, query: &EventQuery) -> Result<EventPage> {
        let mut notices = Vec::new();
        let history = self.tracker.history_dir();
        let answer = self.answer(SweepScope::History, &mut notices, |conn| {
            events::query_events(conn, query)
        });
        if let Some(mut page) = answer {
            match events::fill_entry_lines(&mut page.events, &history) {
                Ok(()) => {
                    page.notices.extend(notices);
                    return Ok(page);
                }
                Err(e) => notices.push(Notice::new(
                    "index_query_failed",
                    format!("{e}; answered from a scan"),
                )),
            }
        }
        let mut page = maintenance::scan_events(&self.tracker, self.schema, query)?;
        page.notices.extend(notices);
        Ok(page)
    }

    /// Answers an events query with every match (its `limit` ignored): the history entries
    /// of a window, for `pm activity`. Same sources and fallback as [`Index::events`];
    /// `entry_json` is read from the streams only `with_entries`, otherwise it stays empty.
    ///
    /// # Errors
    /// Scan failures listing `history/`.
    pub fn events_all(&self, query: &EventQuery, with_entries: bool) -> Result<EventPage> {
        let mut notices = Vec::new();
        let history = self.tracker.history_dir();
        let fill = |page: &mut EventPage| {
            if with_entries {
                events::fill_entry_lines(&mut page.events, &history)
            } else {
                Ok(())
            }
        };
        let answer = self.answer(SweepScope::History, &mut notices, |conn| {
            events::query_all_events(conn, query)
        });
        if let Some(mut page) = answer {
            match fill(&mut page) {
                Ok(()) => {
                    page.notices.extend(notices);
                    return Ok(page);
                }
                Err(e) => notices.push(Notice::new(
                    "index_query_failed",
                    format!("{e}; answered from a scan"),
                )),
            }
        }
        let mut page = maintenance::scan_all_events(&self.tracker, self.schema, query)?;
        if let Err(e) = fill(&mut page) {
            page.notices
                .push(Notice::new("history_changed_during_read", e));
        }
        page.notices.extend(notices);
        Ok(page)
    }

    /// Applies a mutation's commit to the projection (the `CommitObserver` of mutations): the
    /// named files are re-stat'ed and re-parsed and applied in one transaction. Never fails:
    /// on any problem the projection is marked stale and the next read repairs it.
    pub fn observe(&self, commit: &Commit) {
        if self.options.scan_only {
            return;
        }
        *self.confirmed.lock().unwrap_or_else(|p| p.into_inner()) = None;
        let Ok((mut db, _)) = self.current_checked() else {
            return;
        };
        let changes = apply::commit_changes(&self.tracker, self.schema, commit);
        if changes.is_empty() {
            return;
        }
        let applied = (|| -> std::result::Result<(), String> {
            let lock = WriterLock::acquire(&self.paths, Duration::from_secs(5))
                .map_err(|e| e.to_string())?
                .ok_or("writer lock busy")?;
            // Chosen again under the lock: while this waited, a rebuild may have switched
            // `CURRENT` and removed `db`, and the new generation may lack this commit.
            if let Ok((current, _)) = self.current_checked() {
                db = current;
            }
            let mut conn = store::open_write(&db).map_err(|e| e.to_string())?;
            apply::apply_changes(&mut conn, &lock, self.schema, changes)
                .map(|_| ())
                .map_err(|e| e.to_string())
        })();
        if let (Err(_), Ok(conn)) = (&applied, store::open_write(&db)) {
            apply::mark_stale(&conn);
        }
    }

    /// Rebuilds the projection from scratch (`pm reindex`), waiting up to `wait` for another
    /// writer.
    ///
    /// # Errors
    /// `Error::Index` when the lock cannot be taken or the build fails.
    pub fn rebuild(&self, wait: Duration) -> Result<BuildReport> {
        let lock = WriterLock::acquire(&self.paths, wait)
            .map_err(|e| indexer::io_error(&self.paths.dir, e))?
            .ok_or_else(|| pm_engine::Error::Index {
                path: self.paths.lock.clone(),
                detail: "another pm process is writing the index".into(),
            })?;
        let report = indexer::build(&self.tracker, self.schema, &lock, self.options.progress)?;
        self.reset_pool();
        Ok(report)
    }

    /// The scan every read falls back to: each id answered once (see
    /// [`ScanOutcome::answer_each_id_once`]).
    fn scan(&self) -> Result<ScanOutcome> {
        Ok(scan::scan(&self.tracker, self.schema)?.answer_each_id_once())
    }

    /// Returns the state of the projection for `pm health` without repairing anything.
    pub fn health(&self) -> IndexHealth {
        maintenance::health(self, &self.fingerprint, || None)
    }

    /// [`Index::health`] whose freshness check starts from a sweep of every source made
    /// elsewhere (e.g. [`sweep::DigestSweep::of_health_listing`]) instead of statting every
    /// file again: `swept` is called when the check needs it (the database checks come
    /// first), and `None` from it means sweeping here.
    pub fn health_swept(&self, swept: impl FnOnce() -> Option<sweep::DigestSweep>) -> IndexHealth {
        maintenance::health(self, &self.fingerprint, swept)
    }

    /// Compares the projection with a scan (`pm reindex --check`) without changing either.
    ///
    /// # Errors
    /// Scan failures.
    pub fn check(&self) -> Result<CheckReport> {
        maintenance::check(self, &self.fingerprint)
    }

    /// Returns the runtime schema.
    pub fn schema(&self) -> &RuntimeSchema {
        self.schema
    }
}
