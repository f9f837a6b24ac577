//! What a mutation changed on disk, as reported to observers (the derived index) while the
//! item lock is still held. Observers are best-effort: they can never fail or undo a mutation.

use std::path::PathBuf;

/// The authoritative files one mutation wrote, removed or appended to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Commit {
    /// The item ids the mutation touched.
    pub ids: Vec<String>,
    /// Item files written (created or replaced).
    pub written: Vec<PathBuf>,
    /// Item files removed (a deleted item, or the old path after a type or format move).
    pub removed: Vec<PathBuf>,
    /// History streams that received appended lines.
    pub appended: Vec<PathBuf>,
}

/// A callback told about each commit inside the mutation's critical section.
///
/// It returns nothing: an observer that cannot keep up must record that it is stale (the next
/// read repairs it) rather than fail the mutation.
pub type CommitObserver<'a> = &'a (dyn Fn(&Commit) + Sync);
