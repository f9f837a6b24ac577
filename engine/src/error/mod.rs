//! The one error type of the pm libraries and its stable codes.
//! Every variant carries structured fields; `code()` maps each to a catalogued snake_case code.

use std::path::{Path, PathBuf};

mod classify;
mod code;
pub mod hints;

pub use code::{ErrorCode, ErrorFamily};

/// Result alias used across `pm-engine` and `pm-index`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the pm libraries.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No initialized tracker was found from the starting directory.
    #[error("no pm tracker found (looked for {tried})")]
    NotInProject {
        /// The directory the search started from.
        cwd: PathBuf,
        /// The tracker root that was expected but is not initialized.
        tried: PathBuf,
    },

    /// The tracker root (or its settings.json) exists but cannot be read (permissions).
    #[error("tracker root {} is not readable: {source}", path.display())]
    TrackerUnreadable {
        /// The directory or file that could not be read.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// No item file exists for the id.
    #[error("Item {id} not found")]
    ItemNotFound {
        /// The normalized id that was looked up.
        id: String,
    },

    /// An id is malformed (bad characters, path separators, reserved words).
    #[error("invalid item id {input:?}: {reason}")]
    InvalidId {
        /// The raw input.
        input: String,
        /// Why it was refused.
        reason: String,
    },

    /// `pm search --mode semantic|hybrid`: only keyword search exists.
    #[error("Search mode {mode} is not supported; only keyword search is available")]
    UnsupportedSearchMode {
        /// The requested mode.
        mode: String,
    },

    /// A subcommand of pm-cli that this pm does not implement (`pm graph communities`).
    #[error("{command} {subcommand} is not supported; supported: {}", supported.join(", "))]
    UnsupportedSubcommand {
        /// The command (`graph`).
        command: String,
        /// The refused subcommand.
        subcommand: String,
        /// The subcommands that are implemented.
        supported: Vec<String>,
    },

    /// A flag or argument value is outside its legal domain.
    #[error("invalid value {value:?} for {field}: {reason}")]
    InvalidArgument {
        /// The flag or field name, e.g. `--status`.
        field: String,
        /// The rejected value.
        value: String,
        /// Why it was rejected.
        reason: String,
        /// The legal values, when the domain is finite.
        allowed: Vec<String>,
    },

    /// An item file could not be parsed or failed the read checks.
    #[error("{path}: {detail}")]
    ItemInvalid {
        /// The item file.
        path: PathBuf,
        /// What kind of problem it is.
        kind: ItemInvalidKind,
        /// Human detail, including the line when known.
        detail: String,
    },

    /// Serialized TOON did not decode back to the document (pm's round-trip guard); nothing
    /// was written.
    #[error("item {id}: TOON serialization failed its round-trip check: {detail}")]
    ItemRoundTrip {
        /// The item id (may be empty).
        id: String,
        /// What differed.
        detail: String,
    },

    /// A tracker file contains git merge-conflict markers.
    #[error("{path}:{line}: unresolved merge conflict markers")]
    ConflictMarkers {
        /// The file.
        path: PathBuf,
        /// 1-based line of the first marker.
        line: usize,
        /// Whether the file is a history stream (as opposed to an item file).
        history: bool,
    },

    /// A history stream line is not valid JSON or not a valid entry.
    #[error("History for {id} contains invalid JSON at line {line}: {detail}")]
    HistoryInvalid {
        /// The item id of the stream.
        id: String,
        /// The stream file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// Parser detail.
        detail: String,
    },

    /// The same id exists in more than one item file.
    #[error("item {id} exists in more than one file: {}", display_paths(paths))]
    DuplicateId {
        /// The duplicated id.
        id: String,
        /// Every file that claims it.
        paths: Vec<PathBuf>,
    },

    /// A lock is held by another live process and the wait budget ran out.
    #[error("lock {} is held by {owner} (pid {pid})", lock_path.display())]
    LockHeld {
        /// The lock file.
        lock_path: PathBuf,
        /// Owner recorded in the lock file.
        owner: String,
        /// Process id recorded in the lock file.
        pid: u32,
        /// How long we waited, in milliseconds.
        waited_ms: u64,
    },

    /// A lock is stale and removing it requires `--force`.
    #[error("lock {} is stale (older than its {ttl_seconds}s ttl)", lock_path.display())]
    LockStale {
        /// The lock file.
        lock_path: PathBuf,
        /// The ttl that was exceeded.
        ttl_seconds: u64,
    },

    /// A lock path would escape the tracker or is a symlink.
    #[error("unsafe lock path {}: {reason}", path.display())]
    LockPathUnsafe {
        /// The refused path.
        path: PathBuf,
        /// Why it was refused.
        reason: String,
    },

    /// A tracker path is a symlink, passes through one, or is not the kind of file pm expects
    /// there; pm never follows links inside the tracker, for reads or writes.
    #[error("unsafe tracker path {}: {reason}", path.display())]
    PathUnsafe {
        /// The refused path.
        path: PathBuf,
        /// Why it was refused.
        reason: String,
    },

    /// The item lock was taken over (or removed) while this mutation held it; nothing of the
    /// mutation was written.
    #[error(
        "lost the lock {} of {id} before writing ({detail}); nothing was written",
        lock_path.display()
    )]
    LockLost {
        /// The item id.
        id: String,
        /// The lock file.
        lock_path: PathBuf,
        /// What the lock file held instead.
        detail: String,
    },

    /// A settings value (settings.json key or its environment override) is outside its legal
    /// domain.
    #[error("settings {key} = {value} is invalid: expected {domain}")]
    SettingsInvalid {
        /// The key (`locks.ttl_seconds`) or variable (`PM_LOCK_WAIT_MS`).
        key: String,
        /// The value found, as written.
        value: String,
        /// The legal domain (`an integer from 1 to 2592000`).
        domain: String,
        /// The file or variable that holds it.
        origin: String,
    },

    /// An item file is larger than the tracker allows (`limits.item_max_bytes`).
    #[error("item {id} would be {size} bytes, over the {limit}-byte limit")]
    ItemTooLarge {
        /// The item id.
        id: String,
        /// The file that is (or would be) too large.
        path: PathBuf,
        /// Its size in bytes.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },

    /// `pm merge install` (or the fence `pm init` installs) outside a git worktree.
    #[error("no git repository contains {}", path.display())]
    MergeRootNotFound {
        /// The directory the search started from.
        path: PathBuf,
    },

    /// `git config` refused to record a merge driver in the clone's configuration.
    #[error("could not write merge driver settings to {}: {detail}", path.display())]
    MergeGitConfigUnwritable {
        /// The git configuration file.
        path: PathBuf,
        /// What git reported.
        detail: String,
    },

    /// An I/O operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// Two options of one invocation contradict each other (a collection both given and
    /// cleared on `create`).
    #[error("Cannot combine {flag} with {other}")]
    ConflictingOptions {
        /// The refused option, as typed (`--clear-tags`).
        flag: String,
        /// The option it contradicts (`--tags`).
        other: String,
    },

    /// An item file already holds the id a create wanted (explicit `--id` or a minted id that
    /// another writer took first).
    #[error("Item \"{id}\" already exists")]
    ItemIdCollision {
        /// The id.
        id: String,
        /// The file that holds it.
        path: PathBuf,
    },

    /// The item changed since the revision the caller declared with `--expect-hash`; checked
    /// under the item lock, nothing was written.
    #[error("item {id} is at revision {current}, not the expected {expected}")]
    RevisionConflict {
        /// The item id.
        id: String,
        /// The declared `item_hash`.
        expected: String,
        /// The item's current `item_hash`.
        current: String,
        /// Whether any history entry ever had the expected hash.
        expected_recorded: bool,
        /// The newest entries after the declared revision (`{op, author, ts, fields}`).
        changes_since: Vec<serde_json::Value>,
        /// Entries after the declared revision that `changes_since` leaves out.
        changes_since_omitted: usize,
    },

    /// A lifecycle precondition failed (closing a closed item, claiming a claimed one, …).
    #[error("{detail}")]
    Lifecycle {
        /// Which precondition.
        kind: LifecycleConflict,
        /// The item id.
        id: String,
        /// The current owner or status the refusal is about, when there is one.
        holder: Option<String>,
        /// Human detail.
        detail: String,
    },

    /// The mutation secret guard (`mutation_guard.secret_guard: block`) found credential-shaped
    /// text in what the mutation would write; nothing was written. Only rule names and paths
    /// (flags, operands, document keys) are kept, never the matched text.
    #[error(
        "Mutation blocked by secret guard ({}) in {}. No detected value was logged.",
        rules.join(","),
        paths.join(", ")
    )]
    SecretGuardBlocked {
        /// The rules that fired, sorted by name.
        rules: Vec<String>,
        /// Where they fired (`--description`, `TITLE`, `--add[1]`), in command-line order.
        paths: Vec<String>,
    },

    /// `merge reconcile` would accept merge receipts that discarded a scalar value; it needs
    /// `--force` after the discards are reviewed.
    #[error(
        "Merge reconciliation would accept {count} receipt(s) containing discarded scalar values. Review pm merge report and rerun with --force only after deciding which values to retain or re-apply."
    )]
    MergeDiscardsUnaccepted {
        /// How many receipts discard a value.
        count: usize,
        /// One review step per receipt (`Review receipt <id> for <item>: <fields>.`).
        reviews: Vec<String>,
    },

    /// A parent or dependency names an item that does not exist.
    #[error("{field} target {target} of {id} does not exist")]
    UnresolvedReference {
        /// The item being written.
        id: String,
        /// The flag or field (`--dep`, `--parent`).
        field: String,
        /// The missing id.
        target: String,
    },

    /// The item file was written but its history entry could not be appended, and restoring the
    /// previous file failed too: the tracker is torn for this item.
    #[error(
        "item {id}: history append failed and the item file could not be rolled back: {detail}"
    )]
    MutationTorn {
        /// The item id.
        id: String,
        /// The item file left in the new state.
        path: PathBuf,
        /// What failed.
        detail: String,
    },

    /// The derived index could not be built, opened or queried. Reads never report it (they
    /// fall back to a scan); `pm reindex` does.
    #[error("index {}: {detail}", path.display())]
    Index {
        /// The index file or directory involved.
        path: PathBuf,
        /// What failed.
        detail: String,
    },

    /// A query cursor (`--after`, `--cursor`) names an item that is no longer in the result
    /// set it pages through.
    #[error("Query cursor item {after} is no longer present in this result set.")]
    CursorNotInResult {
        /// The cursor flag (`--after`, `--cursor`).
        flag: &'static str,
        /// The item id the cursor names.
        after: String,
    },

    /// `create` lacks options its item type requires (strict create mode, or the type's own
    /// option policies).
    #[error(
        "{}",
        crate::governance::create_policy::missing_message(type_name, flags)
    )]
    MissingCreateOptions {
        /// The resolved item type.
        type_name: String,
        /// The missing flags, sorted (`--estimate/--estimated-minutes`).
        flags: Vec<String>,
        /// Whether strict create mode required them (progressive mode is the way out).
        strict: bool,
    },

    /// `close` under strict close validation lacks closure fields; nothing was written.
    #[error("{}", crate::governance::close_policy::refusal_message(id, missing))]
    CloseValidation {
        /// The item id.
        id: String,
        /// The missing fields (`resolution`, `expected_result`, `actual_result`).
        missing: Vec<String>,
    },

    /// `notes --edit`/`--delete` of a JSON context event: those are append-only.
    #[error("Structured context events are append-only and cannot be edited.")]
    StructuredEventImmutable {
        /// The item id.
        id: String,
        /// The flag that addressed the event (`--edit`, `--delete`).
        flag: String,
        /// The event's 1-based position.
        index: usize,
    },

    /// `create` under strict duplicate detection found likely duplicates; nothing was written.
    #[error("{}", crate::governance::similarity::refusal_message(matches))]
    LikelyDuplicate {
        /// The likely duplicates, best first.
        matches: Vec<crate::governance::SimilarItem>,
    },

    /// `--strict-read` found item files or type folders it could not read.
    #[error(
        "The read is incomplete: {unreadable_items} unreadable item file(s) and {unreadable_directories} unreadable folder(s)."
    )]
    SourceIncomplete {
        /// Item files that could not be parsed.
        unreadable_items: usize,
        /// Type folders that could not be listed.
        unreadable_directories: usize,
    },

    /// An invariant inside pm was violated; this is a bug.
    #[error("internal error: {detail}")]
    Internal {
        /// What went wrong.
        detail: String,
    },
}

/// Sub-kinds of [`Error::ItemInvalid`], mirroring pm's `item_document_invalid` reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ItemInvalidKind {
    /// TOON or JSON syntax error, or a document without the shape of an item.
    Syntax,
    /// A required field is absent.
    MissingRequiredField,
    /// A field has the wrong type or an out-of-range value.
    Schema,
    /// The status does not resolve through the status registry.
    UnknownStatus,
    /// The filename stem differs from `metadata.id`.
    IdMismatch,
}

impl ItemInvalidKind {
    /// Returns pm's reason token for this kind.
    pub fn as_str(self) -> &'static str {
        match self {
            ItemInvalidKind::Syntax => "syntax_error",
            ItemInvalidKind::MissingRequiredField => "missing_required_field",
            ItemInvalidKind::Schema => "schema_validation_error",
            ItemInvalidKind::UnknownStatus => "unknown_status",
            ItemInvalidKind::IdMismatch => "id_mismatch",
        }
    }
}

/// Sub-kinds of [`Error::Lifecycle`]; each has its own [`ErrorCode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LifecycleConflict {
    /// `close` of an item already in a terminal status.
    AlreadyClosed,
    /// `reopen` of an item that is not in a terminal status.
    NotClosed,
    /// `claim` of an item another principal holds (without `--force`).
    AlreadyClaimed,
    /// `release` of an item nobody holds.
    NotClaimed,
    /// A mutation of an item another principal holds, under strict ownership enforcement.
    OwnershipConflict,
}

pub(crate) fn display_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Attaches a path to `std::io::Result`s, turning them into [`Error::Io`].
pub trait IoResultExt<T> {
    /// Converts an I/O error into [`Error::Io`] naming `path`.
    fn at(self, path: impl AsRef<Path>) -> Result<T>;
}

impl<T> IoResultExt<T> for std::io::Result<T> {
    fn at(self, path: impl AsRef<Path>) -> Result<T> {
        self.map_err(|source| Error::Io {
            path: path.as_ref().to_path_buf(),
            source,
        })
    }
}
