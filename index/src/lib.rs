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

mod aggregate;
mod answer;
mod apply;
mod backlog;
mod connect;
mod duplicates;
mod events;
mod folder_handles;
mod fresh;
mod gc;
mod graph;
mod indexer;
mod integrity;
mod load;
mod maintenance;
mod project;
mod rank;
mod read;
mod read_docs;
mod results;
mod route;
mod rows;
mod schema;
mod search;
mod store;
mod totals;
mod wal;

/// What the crate's own integration tests and benches reach into below the facade. Not part
/// of the API: it may change with any commit, and nothing outside this repository's tests and
/// benches may use it.
#[doc(hidden)]
pub mod internals {
    pub use crate::fresh::{
        check as freshness, digest, dirsig, listings as folder_listings, source, sweep,
    };
    /// The projection's files, connections and writer lock.
    pub mod store {
        pub use crate::store::*;
    }
    /// The schema fingerprint.
    pub mod rows {
        pub use crate::rows::schema_fingerprint;
    }
    /// The stored search texts.
    pub mod search {
        pub use crate::search::stored_texts;
    }
}

use crate::fresh::source::SweepScope;
use crate::fresh::{listings, sweep};
use crate::rows::schema_fingerprint;
use crate::store::{IndexPaths, ReadPool, WriterLock};
use pm_engine::Result;
use pm_engine::commit::Commit;
use pm_engine::notice::Notice;
use pm_engine::query::{Page, Query, Sort};
use pm_engine::read::graph::GraphItem;
use pm_engine::read::health::{ListedSources, OnListed};
use pm_engine::scan::{self, ScanOutcome};
use pm_engine::schema::RuntimeSchema;
use pm_engine::tracker::Tracker;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

pub use answer::{Answer, Origin, ScanReason};
pub use events::{EventPage, EventPosition, EventQuery, EventRow, EventSince, MAX_EVENT_LIMIT};
pub use fresh::dirsig::Freshness;
pub use gc::{GcReport, GcScope, gc};
pub use graph::GraphSubset;
pub use indexer::{BuildProgress, BuildReport, ProgressFn};
pub use maintenance::{CheckReport, Difference, IndexHealth, IndexState, ReindexReport};
pub use rank::RankCorpus;
pub use read_docs::{DocumentParts, StoredItem, StoredPage};
pub use results::{Children, Counts, GraphRows, ListPage, Stats, Summaries};
pub use search::SearchHits;
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
    pub freshness: Freshness,
}

impl Default for IndexOptions<'_> {
    fn default() -> Self {
        IndexOptions {
            scan_only: false,
            lock_wait: Duration::from_millis(500),
            pool_size: 4,
            progress: None,
            check_once: false,
            freshness: Freshness::Full,
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
    /// The connection that probe opened, until a read takes it (see `connect::PooledConn`).
    spare: Mutex<Option<(PathBuf, rusqlite::Connection)>>,
    /// The widest scope a check confirmed (with `check_once`).
    confirmed: Mutex<Option<SweepScope>>,
    /// Reads answered while their sweep ran (see [`Index::speculative_answers`]).
    speculated: std::sync::atomic::AtomicUsize,
    /// Reads answered on unchanged folder signatures (see [`Index::trusted_answers`]).
    trusted: std::sync::atomic::AtomicUsize,
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
            spare: Mutex::new(None),
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
    #[doc(hidden)]
    pub fn paths(&self) -> &IndexPaths {
        &self.paths
    }

    /// The recorded folder listings the freshness sweeps of this tracker use.
    pub(crate) fn folder_listings(&self) -> listings::FolderListings {
        listings::FolderListings::at(self.paths.listings.clone())
    }

    /// Answers a list query (filters, order, page).
    ///
    /// # Errors
    /// Only scan failures (a type folder entry that cannot be inspected); index problems fall
    /// back to a scan and are reported as notices.
    pub fn list(&self, query: &Query, sort: &Sort, page: &Page) -> Result<Answer<ListPage>> {
        self.index_or_scan(
            SweepScope::Items,
            |conn| {
                let slice = read::list(conn, self.schema, query, sort, page)?;
                let (completeness, data) = read::completeness(conn)?;
                Ok((ListPage::of(slice, completeness), data))
            },
            |_| {
                let outcome = self.scan()?;
                let slice = pm_engine::query::paginate(outcome.select(query, sort), sort, page);
                Ok((
                    ListPage::of(slice, outcome.completeness()),
                    outcome.read_notices(),
                ))
            },
        )
    }

    /// Returns every match of `query` in `sort` order (the candidate sets of context, next,
    /// stats and search).
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn summaries(&self, query: &Query, sort: &Sort) -> Result<Answer<Summaries>> {
        self.index_or_scan(
            SweepScope::Items,
            |conn| {
                let items = read::select(conn, self.schema, query, sort)?;
                let (completeness, data) = read::completeness(conn)?;
                Ok((
                    Summaries {
                        items,
                        completeness,
                    },
                    data,
                ))
            },
            |_| {
                let outcome = self.scan()?;
                let summaries = Summaries {
                    items: outcome.select(query, sort),
                    completeness: outcome.completeness(),
                };
                Ok((summaries, outcome.read_notices()))
            },
        )
    }

    /// Returns the graph row of every item (`pm graph`, `pm deps`): columns only on the index
    /// path, derived from the scanned summaries otherwise.
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn graph_items(&self) -> Result<Answer<Vec<GraphItem>>> {
        self.index_or_scan(
            SweepScope::Items,
            |conn| Ok((graph::graph_items(conn)?, Vec::new())),
            |_| self.scanned_graph_items(),
        )
    }

    fn scanned_graph_items(&self) -> Result<(Vec<GraphItem>, Vec<Notice>)> {
        let outcome = self.scan()?;
        let items = outcome
            .select(&Query::all(), &Sort::default_order())
            .iter()
            .map(GraphItem::from)
            .collect();
        Ok((items, outcome.read_notices()))
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
    ) -> Result<Answer<GraphRows>> {
        self.index_or_scan(
            SweepScope::Items,
            |conn| {
                let subset = graph::graph_subset(conn, start, reach)?;
                Ok((GraphRows::Reachable(subset), Vec::new()))
            },
            |_| {
                let (items, data) = self.scanned_graph_items()?;
                Ok((GraphRows::All(items), data))
            },
        )
    }

    /// Returns the `(type, status)` counts of the matches of `query`.
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn counts(&self, query: &Query) -> Result<Answer<Counts>> {
        self.index_or_scan(
            SweepScope::Items,
            |conn| {
                let counts = read::counts(conn, query)?;
                let (completeness, data) = read::completeness(conn)?;
                Ok((
                    Counts {
                        counts,
                        completeness,
                    },
                    data,
                ))
            },
            |_| {
                let outcome = self.scan()?;
                let counts = Counts {
                    counts: outcome.counts(query),
                    completeness: outcome.completeness(),
                };
                Ok((counts, outcome.read_notices()))
            },
        )
    }

    /// Returns the `(type, status)` counts of the matches of `query` and the history totals
    /// (`pm stats`), from one freshness check.
    ///
    /// # Errors
    /// As [`Index::list`]; `io_error` when `history/` cannot be listed on the scan path.
    pub fn stats(&self, query: &Query) -> Result<Answer<Stats>> {
        self.index_or_scan(
            SweepScope::All,
            |conn| {
                let counts = read::counts(conn, query)?;
                let history = totals::from_index(conn)?;
                let (completeness, data) = read::completeness(conn)?;
                Ok((
                    Stats {
                        counts,
                        history,
                        completeness,
                    },
                    data,
                ))
            },
            |_| {
                let outcome = self.scan()?;
                let data = outcome.read_notices();
                let stats = Stats {
                    counts: outcome.counts(query),
                    history: totals::from_scan(&self.tracker)?,
                    completeness: outcome.completeness(),
                };
                Ok((stats, data))
            },
        )
    }

    /// Returns the light metadata of the items whose trimmed, lowercased `parent` equals
    /// `parent_key`, and how many readable items were inspected (`pm get`'s children rollup).
    ///
    /// # Errors
    /// As [`Index::list`].
    pub fn children(&self, parent_key: &str) -> Result<Answer<Children>> {
        self.index_or_scan(
            SweepScope::Items,
            |conn| {
                let (items, inspected) = read::children(conn, parent_key)?;
                Ok((Children { items, inspected }, Vec::new()))
            },
            |_| {
                let outcome = self.scan()?;
                let items = outcome
                    .summaries
                    .iter()
                    .filter(|s| {
                        s.parent.as_deref().is_some_and(|p| {
                            pm_engine::read::children::has_parent_key(p, parent_key)
                        })
                    })
                    .map(|s| s.light.clone())
                    .collect();
                let children = Children {
                    items,
                    inspected: outcome.summaries.len(),
                };
                Ok((children, outcome.read_notices()))
            },
        )
    }

    /// Answers an events query (history entries in `(ts, stream, position)` order). Only the
    /// history streams are checked for freshness: no event row depends on an item file.
    ///
    /// # Errors
    /// Scan failures listing `history/`.
    pub fn events(&self, query: &EventQuery) -> Result<Answer<EventPage>> {
        let history = self.tracker.history_dir();
        self.index_or_scan_with(
            SweepScope::History,
            |conn| events::query_events(conn, query),
            |(mut page, data), _| match events::fill_entry_lines(&mut page.events, &history) {
                Ok(()) => Ok((page, data)),
                Err(e) => Err(query_failed(e)),
            },
            |_| maintenance::scan_events(&self.tracker, self.schema, query),
        )
    }

    /// Answers an events query with every match (its `limit` ignored): the history entries
    /// of a window, for `pm activity`. Same sources and fallback as [`Index::events`];
    /// `entry_json` is read from the streams only `with_entries`, otherwise it stays empty.
    ///
    /// # Errors
    /// Scan failures listing `history/`.
    pub fn events_all(&self, query: &EventQuery, with_entries: bool) -> Result<Answer<EventPage>> {
        let history = self.tracker.history_dir();
        let fill = |page: &mut EventPage| {
            if with_entries {
                events::fill_entry_lines(&mut page.events, &history)
            } else {
                Ok(())
            }
        };
        self.index_or_scan_with(
            SweepScope::History,
            |conn| events::query_all_events(conn, query),
            |(mut page, data), _| match fill(&mut page) {
                Ok(()) => Ok((page, data)),
                Err(e) => Err(query_failed(e)),
            },
            |_| {
                let (mut page, mut data) =
                    maintenance::scan_all_events(&self.tracker, self.schema, query)?;
                if let Err(e) = fill(&mut page) {
                    data.push(Notice::new("history_changed_during_read", e));
                }
                Ok((page, data))
            },
        )
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

    /// Returns [`Index::health`] computed beside `checks` (`pm health`'s tracker checks, run on
    /// this thread meanwhile) and what `checks` returned.
    ///
    /// `checks` is given a callback for the listing of every item file and stream it makes;
    /// the index check confirms freshness from that listing (the same selection and
    /// signatures as the freshness sweep), so each file is statted once per run, not twice.
    /// When no complete listing comes (a folder could not be read, or `checks` returned
    /// without listing), the index check sweeps for itself.
    ///
    /// # Errors
    /// `internal` when the index check panicked.
    pub fn health_beside<R>(
        &self,
        checks: impl FnOnce(&OnListed<'_>) -> R,
    ) -> (Result<IndexHealth>, R) {
        let (listed, swept) = std::sync::mpsc::sync_channel::<Option<sweep::DigestSweep>>(1);
        let on_listed = move |sources: &ListedSources<'_>| {
            let _ = listed.send(sweep::DigestSweep::of_health_listing(sources));
        };
        std::thread::scope(|scope| {
            let index = scope.spawn(move || self.health_swept(move || swept.recv().ok().flatten()));
            let checked = checks(&on_listed);
            // The sender goes with the callback: checks that failed before listing unblock
            // the index check, which then sweeps for itself.
            drop(on_listed);
            let health = index
                .join()
                .map_err(|_| pm_engine::Error::internal("the index check panicked"));
            (health, checked)
        })
    }

    /// [`Index::health`] whose freshness check starts from a sweep of every source made
    /// elsewhere instead of statting every file again: `swept` is called when the check needs
    /// it (the database checks come first), and `None` from it means sweeping here (see
    /// [`Index::health_beside`]).
    #[doc(hidden)]
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

/// The notice of an index answer whose follow-up read of the files failed.
fn query_failed(e: impl std::fmt::Display) -> Notice {
    Notice::new("index_query_failed", format!("{e}; answered from a scan"))
}
