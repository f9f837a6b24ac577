//! Item mutations: one function per operation, all running through one protocol (lock → read →
//! expected-revision and ownership checks → apply → canonicalize → atomic write → history append
//! → observer → unlock). Never reads the environment or the wall clock: the caller passes both in.

mod annotate;
mod create;
mod current;
mod expect;
mod lifecycle;
mod linked_tests;
mod links;
mod log_entries;
mod protocol;
mod reconcile;
mod repair;
mod repair_all;
mod restore;
mod update;

pub use annotate::{append_body, deps_add, deps_remove};
pub use create::{NewItem, create};
pub use expect::{ExpectedRevision, changes_since};
pub use lifecycle::{CloseRequest, claim, close, close_item, release, reopen};
pub use linked_tests::{LinkedTest, tests_add, tests_remove};
pub use links::{LinkEdit, LinkGlob, LinkKind, LinkedPath, PathMigration, edit_links};
pub use log_entries::{AnnotationKind, LogAction, LogEdit, add_annotation, edit_log};
pub(crate) use protocol::{Locked, lock_item};
pub use protocol::{Mutation, read_item};
pub(crate) use reconcile::plan_verified;
pub use reconcile::{DriftKind, Reconcile};
pub use repair::{
    DiscardedEvent, Reconciliation, RepairHistory, RepairItem, RepairOptions, RepairReport,
    history_repair,
};
pub(crate) use repair::{reconciliation, repair_warnings};
pub(crate) use repair_all::scan_drift;
pub use repair_all::{RepairAllReport, RepairAllStream, RepairTotals, history_repair_all};
pub use restore::{RestoreTarget, delete, restore};
pub use update::{
    DEPENDENCY_KINDS, DependencySeed, FieldEdit, edits_from_json, is_placeholder, split_list,
    update,
};

use serde_json::{Value, json};

use crate::clock::Clock;
use crate::commit::CommitObserver;
use crate::schema::RuntimeSchema;
use crate::settings::Settings;
use crate::tracker::Tracker;

/// Where a mutation's author came from (`author_source` in history lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthorSource {
    /// `--author` or `PM_AUTHOR`.
    Asserted,
    /// `settings.author_default`.
    Configured,
    /// An agent harness (any author spelled `harness:<name>`).
    Detected,
    /// Nothing named an author.
    Unknown,
}

impl AuthorSource {
    /// Returns the token written to `author_source`.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthorSource::Asserted => "asserted",
            AuthorSource::Configured => "configured",
            AuthorSource::Detected => "detected",
            AuthorSource::Unknown => "unknown",
        }
    }
}

/// The resolved author of a mutation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Author {
    /// The name written to `author`, comments, claims and the lock file.
    pub name: String,
    /// How it was chosen.
    pub source: AuthorSource,
}

impl Author {
    /// Resolves the author: `--author`, then `PM_AUTHOR`, then `settings.author_default`, then
    /// `unknown`. Blank values are skipped; any name starting with `harness:` is `detected`.
    pub fn resolve(flag: Option<&str>, env: Option<&str>, settings_default: &str) -> Author {
        let pick = |v: Option<&str>| v.map(str::trim).filter(|v| !v.is_empty()).map(String::from);
        let (name, source) = if let Some(name) = pick(flag).or_else(|| pick(env)) {
            (name, AuthorSource::Asserted)
        } else if let Some(name) = pick(Some(settings_default)) {
            (name, AuthorSource::Configured)
        } else {
            ("unknown".to_string(), AuthorSource::Unknown)
        };
        let source = if name.starts_with("harness:") {
            AuthorSource::Detected
        } else {
            source
        };
        Author { name, source }
    }
}

/// A point of the protocol where a test build may stop the process (crash tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultPoint {
    /// The item lock is held; nothing is written yet.
    AfterLock,
    /// The new item file is in place; the history line is not appended yet.
    AfterItemWrite,
    /// The history line is appended; the lock is still held.
    AfterHistoryAppend,
}

impl FaultPoint {
    /// Every point, in protocol order.
    pub const ALL: [FaultPoint; 3] = [
        FaultPoint::AfterLock,
        FaultPoint::AfterItemWrite,
        FaultPoint::AfterHistoryAppend,
    ];

    /// Returns the point's name (`after_lock`, `after_item_write`, `after_history_append`).
    pub fn as_str(self) -> &'static str {
        match self {
            FaultPoint::AfterLock => "after_lock",
            FaultPoint::AfterItemWrite => "after_item_write",
            FaultPoint::AfterHistoryAppend => "after_history_append",
        }
    }

    /// Returns the point named `name`.
    pub fn parse(name: &str) -> Option<FaultPoint> {
        FaultPoint::ALL.into_iter().find(|p| p.as_str() == name)
    }
}

/// A hook called at each [`FaultPoint`]; the CLI installs one only for crash tests.
pub type FaultHook<'a> = &'a (dyn Fn(FaultPoint) + Sync);

/// Everything a mutation needs besides its own arguments.
pub struct MutationContext<'a> {
    /// The tracker.
    pub tracker: &'a Tracker,
    /// Its settings.
    pub settings: &'a Settings,
    /// Its runtime schema.
    pub schema: &'a RuntimeSchema,
    /// The source of every timestamp the mutation writes.
    pub clock: &'a Clock,
    /// The author.
    pub author: Author,
    /// The `agent_provenance` object the caller derived (written when present).
    pub provenance: Option<Value>,
    /// `--expect-hash` guards, checked under the item lock.
    pub expect: Vec<ExpectedRevision>,
    /// `--force`: bypass ownership checks and allow clearing a stale lock.
    pub force: bool,
    /// Told about each commit inside the item lock (the derived index).
    pub observer: Option<CommitObserver<'a>>,
    /// Test-only fault injection.
    pub fault: Option<FaultHook<'a>>,
}

impl std::fmt::Debug for MutationContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MutationContext")
            .field("tracker", self.tracker)
            .field("author", &self.author)
            .field("expect", &self.expect)
            .field("force", &self.force)
            .finish_non_exhaustive()
    }
}

impl<'a> MutationContext<'a> {
    /// Returns a context with no provenance, guards, force, observer or fault hook.
    pub fn new(
        tracker: &'a Tracker,
        settings: &'a Settings,
        schema: &'a RuntimeSchema,
        clock: &'a Clock,
        author: Author,
    ) -> MutationContext<'a> {
        MutationContext {
            tracker,
            settings,
            schema,
            clock,
            author,
            provenance: None,
            expect: Vec::new(),
            force: false,
            observer: None,
            fault: None,
        }
    }

    pub(crate) fn fault(&self, point: FaultPoint) {
        if let Some(hook) = self.fault {
            hook(point);
        }
    }
}

/// Returns the `agent_provenance` pm derives from the command word: `implementer` for
/// claim/create/update/close/release, `reviewer` for review, none otherwise.
pub fn provenance_for_command(command: &str) -> Option<Value> {
    let role = match command {
        "claim" | "create" | "update" | "close" | "release" => "implementer",
        "review" => "reviewer",
        _ => return None,
    };
    Some(json!({"role": {"value": role, "source": "argv"}}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn author_precedence_and_sources() {
        let a = Author::resolve(Some(" flag "), Some("env"), "cfg");
        assert_eq!(
            (a.name.as_str(), a.source),
            ("flag", AuthorSource::Asserted)
        );
        let a = Author::resolve(None, Some("env"), "cfg");
        assert_eq!((a.name.as_str(), a.source), ("env", AuthorSource::Asserted));
        let a = Author::resolve(Some(""), None, "cfg");
        assert_eq!(
            (a.name.as_str(), a.source),
            ("cfg", AuthorSource::Configured)
        );
        let a = Author::resolve(None, None, " ");
        assert_eq!(
            (a.name.as_str(), a.source),
            ("unknown", AuthorSource::Unknown)
        );
        let a = Author::resolve(None, Some("harness:codex"), "");
        assert_eq!(a.source, AuthorSource::Detected);
    }

    #[test]
    fn provenance_roles() {
        assert_eq!(
            provenance_for_command("close"),
            Some(json!({"role": {"value": "implementer", "source": "argv"}}))
        );
        assert_eq!(provenance_for_command("comments"), None);
        for point in FaultPoint::ALL {
            assert_eq!(FaultPoint::parse(point.as_str()), Some(point));
        }
    }
}
