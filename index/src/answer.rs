//! What every read of the facade returns ([`Answer`]: rows, the path that answered and why,
//! notices) and the one index-or-scan fallback that builds it (`Index::index_or_scan`). Which
//! path may answer is decided in `crate::route`; what an answer means, in `pm_engine`.

use crate::Index;
use crate::connect::PooledConn;
use crate::fresh::source::SweepScope;
use pm_engine::Result;
use pm_engine::notice::Notice;
use pm_engine::query::Source;
use rusqlite::Connection;

/// Why a read was answered from a scan of the files instead of the projection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScanReason {
    /// The facade never uses the index (`--no-index`, `PM_NO_INDEX=1`).
    NoIndex,
    /// The projection could not be opened, built, checked or repaired (missing or unusable
    /// and not rebuildable, an unsafe `runtime/`, a failed build or apply); the notices say
    /// which.
    Unavailable,
    /// Another writer held the writer lock longer than the read waits, while the projection
    /// needed a repair or a rebuild.
    Busy,
    /// A type folder or `history/` could not be listed, so freshness cannot be confirmed.
    UnreadableFolder,
    /// Two item files hold one id: the scan answers each id once (the first file).
    DuplicateIds,
    /// A query (or its follow-up read of the files) failed on a checked projection.
    QueryFailed,
}

/// Which path answered a read, and why a scan did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The SQLite projection, after its freshness check.
    Index,
    /// A scan of the tracker files.
    Scan(ScanReason),
}

impl Origin {
    /// Returns the engine's two-valued source (what outputs report).
    pub fn source(self) -> Source {
        match self {
            Origin::Index => Source::Index,
            Origin::Scan(_) => Source::Scan,
        }
    }
}

/// What every read of [`Index`] returns: its rows, the path that answered, and the notices
/// (the answering path's own, e.g. unreadable files, then the index fallbacks).
#[derive(Clone, Debug, PartialEq)]
pub struct Answer<T> {
    /// The read's data.
    pub rows: T,
    /// Which path answered, and why a scan did.
    pub origin: Origin,
    /// Unreadable files and sources, then the index fallbacks, in that order.
    pub notices: Vec<Notice>,
}

impl<T> Answer<T> {
    /// Returns which of the two paths answered.
    pub fn source(&self) -> Source {
        self.origin.source()
    }

    /// Returns the answer with its rows converted by `f`, provenance and notices kept.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Answer<U> {
        Answer {
            rows: f(self.rows),
            origin: self.origin,
            notices: self.notices,
        }
    }
}

/// Reads the rows' own fields through the answer (`answer.items`, `page.events`).
impl<T> std::ops::Deref for Answer<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.rows
    }
}

/// Rows and the notices of the path that produced them (before the fallback's own).
pub(crate) type Found<T> = (T, Vec<Notice>);

impl Index<'_> {
    /// The index-or-scan fallback of every read: `query` on the projection when the route
    /// lets the index answer `scope`, otherwise `scan` with the reason.
    ///
    /// # Errors
    /// Only `scan`'s; index problems become notices and a scan.
    pub(crate) fn index_or_scan<T>(
        &self,
        scope: SweepScope,
        query: impl Fn(&Connection) -> rusqlite::Result<Found<T>>,
        scan: impl FnOnce(ScanReason) -> Result<Found<T>>,
    ) -> Result<Answer<T>> {
        self.index_or_scan_with(scope, query, |found, _| Ok(found), scan)
    }

    /// [`Index::index_or_scan`] whose index answer is completed by `finish` with the
    /// connection that answered (follow-up reads of the same database, or of the files). A
    /// `finish` that fails sends the read to the scan, its notice first among the fallbacks.
    ///
    /// # Errors
    /// Only `scan`'s.
    pub(crate) fn index_or_scan_with<I, T>(
        &self,
        scope: SweepScope,
        query: impl Fn(&Connection) -> rusqlite::Result<I>,
        finish: impl FnOnce(I, Box<PooledConn>) -> std::result::Result<Found<T>, Notice>,
        scan: impl FnOnce(ScanReason) -> Result<Found<T>>,
    ) -> Result<Answer<T>> {
        let mut fallbacks = Vec::new();
        let indexed = match self.answer_on(scope, &mut fallbacks, query) {
            Ok((answer, conn)) => finish(answer, conn).map_err(|notice| {
                fallbacks.push(notice);
                ScanReason::QueryFailed
            }),
            Err(reason) => Err(reason),
        };
        let (rows, mut notices, origin) = match indexed {
            Ok((rows, notices)) => (rows, notices, Origin::Index),
            Err(reason) => {
                let (rows, notices) = scan(reason)?;
                (rows, notices, Origin::Scan(reason))
            }
        };
        notices.extend(fallbacks);
        Ok(Answer {
            rows,
            origin,
            notices,
        })
    }
}
