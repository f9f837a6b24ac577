//! The one error type of the pm libraries and its stable codes.
//! Every variant carries structured fields; `code()` maps each to a catalogued snake_case code.

use std::fmt;
use std::path::{Path, PathBuf};

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

    /// An I/O operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// The command line could not be parsed (unknown flag or command, bad or missing value).
    #[error("{detail}")]
    Usage {
        /// Which kind of usage mistake it is.
        kind: UsageKind,
        /// One-line description of the mistake.
        detail: String,
        /// The offending flag, operand or command as typed, when known.
        flag: Option<String>,
        /// The rejected value, when a value was refused.
        value: Option<String>,
        /// Close matches for the offending token ("did you mean").
        suggestions: Box<[String]>,
        /// The legal values, when the domain is finite.
        allowed: Box<[String]>,
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

    /// A universal read-output control (`--output-*`), a query cursor (`--after`) or a context
    /// intent (`--for`, `--token-budget`) was refused; the message is pm's wording.
    #[error("{message}")]
    ReadOutput {
        /// Which refusal it is; selects the error code.
        kind: ReadOutputRefusal,
        /// pm's exact sentence.
        message: String,
        /// The refused flag (`--output-limit`, `--after`, `--for`, …).
        flag: &'static str,
        /// The rejected value, when a value was refused.
        value: Option<String>,
        /// The legal values, when the domain is finite (never truncated).
        allowed: Box<[String]>,
        /// A corrected value to retry with (e.g. the nearest intent name).
        suggestion: Option<String>,
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

/// Sub-kinds of [`Error::Usage`]; each has its own [`ErrorCode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UsageKind {
    /// A flag that the command does not declare.
    UnknownOption,
    /// A subcommand that does not exist.
    UnknownCommand,
    /// A required argument, operand or subcommand is absent.
    MissingRequiredArgument,
    /// A flag value or operand outside its legal domain.
    InvalidValue,
    /// A positional argument the command does not take.
    UnexpectedArgument,
    /// Two arguments that cannot be used together.
    ConflictingArguments,
}

/// Sub-kinds of [`Error::ReadOutput`]; each selects one [`ErrorCode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadOutputRefusal {
    /// A control value outside its domain (`--output-limit abc`, `--token-budget 10`).
    InvalidValue,
    /// A universal control on a command or mode that is not a read surface.
    NotReadSurface,
    /// An `--output-cursor` that does not decode to a supported cursor.
    CursorInvalid,
    /// An `--output-cursor` minted by another read surface.
    CursorCommandMismatch,
    /// An `--output-cursor` whose row collection changed since it was minted.
    CursorStale,
    /// A malformed `--output-session` state, or one too exhausted for its receipts.
    InvalidSession,
    /// A malformed, unsupported or mismatched `--after` query cursor.
    InvalidQueryCursor,
    /// A `--for` intent the command does not declare.
    UnknownContextIntent,
    /// An option that needs another one (`--token-budget` without `--for`).
    MissingRequiredOption,
    /// `--output-include` selectors that match nothing in the result.
    UnmatchedSelector,
    /// Two row projections at once (`--brief --full`, `--output-include compact,full`).
    ProjectionConflict,
    /// A `--fields` name that is not an item field.
    UnknownField,
}

fn display_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Stable error codes. Never renamed, never reused; listed in `docs/errors.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// No tracker found (machine contract C7).
    NotInProject,
    /// Unknown item id.
    ItemNotFound,
    /// Malformed id.
    InvalidItemId,
    /// A value outside its legal domain.
    InvalidArgumentValue,
    /// An item file that cannot be read.
    ItemDocumentInvalid,
    /// An item whose TOON text fails the decode round-trip check.
    ItemDocumentRoundtripFailed,
    /// Merge-conflict markers in an item file.
    MergeConflictMarkersDetected,
    /// Merge-conflict markers in a history stream.
    HistoryMergeConflictMarkersDetected,
    /// A history stream that cannot be parsed.
    HistoryInvalid,
    /// The same id in several files.
    DuplicateItemId,
    /// A lock held past the wait budget.
    LockConflict,
    /// A stale lock whose removal needs `--force`.
    LockStale,
    /// A lock path that is a symlink or escapes the tracker.
    LockPathUnsafe,
    /// An I/O failure.
    Io,
    /// A bug.
    Internal,
    /// The derived index is unusable where it was required (`pm reindex`).
    IndexUnavailable,
    /// A flag the command does not declare.
    UnknownOption,
    /// A subcommand that does not exist.
    UnknownCommand,
    /// A required argument, operand or subcommand is absent.
    MissingRequiredArgument,
    /// A positional argument the command does not take.
    UnexpectedArgument,
    /// Two arguments that cannot be used together.
    ConflictingArguments,
    /// `create` of an id that already exists.
    ItemIdCollision,
    /// `--expect-hash` does not match the item's current revision.
    ItemRevisionConflict,
    /// `close` of an item that is already closed.
    ItemAlreadyClosed,
    /// `reopen` of an item that is not closed.
    ItemNotClosed,
    /// `claim` of an item someone else holds.
    AlreadyClaimedBy,
    /// `release` of an item nobody holds.
    ItemNotClaimed,
    /// A mutation of an item someone else holds (strict ownership).
    OwnershipConflict,
    /// A parent or dependency that names a missing item.
    DependencyTargetUnresolved,
    /// Item written, history not appended, rollback failed.
    MutationTorn,
    /// A malformed or unsupported `--output-cursor`.
    ReadOutputCursorInvalid,
    /// An `--output-cursor` minted by another read surface.
    ReadOutputCursorCommandMismatch,
    /// An `--output-cursor` whose row collection changed.
    ReadOutputCursorStale,
    /// A malformed or exhausted `--output-session`.
    InvalidReadOutputSession,
    /// A malformed, unsupported or mismatched `--after` cursor.
    InvalidQueryCursor,
    /// A `--for` intent the command does not declare.
    UnknownContextIntent,
    /// An option used without the option it requires.
    MissingRequiredOption,
    /// A refused command without a more specific code (pm's generic fallback).
    CommandFailed,
    /// Two row projections at once.
    ProjectionOptionsMutuallyExclusive,
    /// An unknown `--fields` name.
    UnknownFieldProjection,
    /// `--strict-read` on a tracker with unreadable items.
    ListSourceIncomplete,
    /// `search --mode semantic|hybrid` (only keyword search exists).
    UnsupportedSearchMode,
    /// A pm-cli subcommand this pm does not implement (`graph communities`).
    UnsupportedSubcommand,
}

impl ErrorCode {
    /// Every code, in declaration order (used by the snapshot test and `pm contracts`).
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::NotInProject,
        ErrorCode::ItemNotFound,
        ErrorCode::InvalidItemId,
        ErrorCode::InvalidArgumentValue,
        ErrorCode::ItemDocumentInvalid,
        ErrorCode::ItemDocumentRoundtripFailed,
        ErrorCode::MergeConflictMarkersDetected,
        ErrorCode::HistoryMergeConflictMarkersDetected,
        ErrorCode::HistoryInvalid,
        ErrorCode::DuplicateItemId,
        ErrorCode::LockConflict,
        ErrorCode::LockStale,
        ErrorCode::LockPathUnsafe,
        ErrorCode::Io,
        ErrorCode::Internal,
        ErrorCode::IndexUnavailable,
        ErrorCode::UnknownOption,
        ErrorCode::UnknownCommand,
        ErrorCode::MissingRequiredArgument,
        ErrorCode::UnexpectedArgument,
        ErrorCode::ConflictingArguments,
        ErrorCode::ItemIdCollision,
        ErrorCode::ItemRevisionConflict,
        ErrorCode::ItemAlreadyClosed,
        ErrorCode::ItemNotClosed,
        ErrorCode::AlreadyClaimedBy,
        ErrorCode::ItemNotClaimed,
        ErrorCode::OwnershipConflict,
        ErrorCode::DependencyTargetUnresolved,
        ErrorCode::MutationTorn,
        ErrorCode::ReadOutputCursorInvalid,
        ErrorCode::ReadOutputCursorCommandMismatch,
        ErrorCode::ReadOutputCursorStale,
        ErrorCode::InvalidReadOutputSession,
        ErrorCode::InvalidQueryCursor,
        ErrorCode::UnknownContextIntent,
        ErrorCode::MissingRequiredOption,
        ErrorCode::CommandFailed,
        ErrorCode::ProjectionOptionsMutuallyExclusive,
        ErrorCode::UnknownFieldProjection,
        ErrorCode::ListSourceIncomplete,
        ErrorCode::UnsupportedSearchMode,
        ErrorCode::UnsupportedSubcommand,
    ];

    /// Returns the snake_case code string.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotInProject => "not_in_project",
            ErrorCode::ItemNotFound => "item_not_found",
            ErrorCode::InvalidItemId => "invalid_item_id",
            ErrorCode::InvalidArgumentValue => "invalid_argument_value",
            ErrorCode::ItemDocumentInvalid => "item_document_invalid",
            ErrorCode::ItemDocumentRoundtripFailed => "item_document_roundtrip_failed",
            ErrorCode::MergeConflictMarkersDetected => "merge_conflict_markers_detected",
            ErrorCode::HistoryMergeConflictMarkersDetected => {
                "history_merge_conflict_markers_detected"
            }
            ErrorCode::HistoryInvalid => "history_invalid_json",
            ErrorCode::DuplicateItemId => "duplicate_item_id",
            ErrorCode::LockConflict => "lock_conflict",
            ErrorCode::LockStale => "lock_stale",
            ErrorCode::LockPathUnsafe => "lock_path_unsafe",
            ErrorCode::Io => "io_error",
            ErrorCode::Internal => "internal_error",
            ErrorCode::IndexUnavailable => "index_unavailable",
            ErrorCode::UnknownOption => "unknown_option",
            ErrorCode::UnknownCommand => "unknown_command",
            ErrorCode::MissingRequiredArgument => "missing_required_argument",
            ErrorCode::UnexpectedArgument => "unexpected_argument",
            ErrorCode::ConflictingArguments => "conflicting_arguments",
            ErrorCode::ItemIdCollision => "item_id_collision",
            ErrorCode::ItemRevisionConflict => "item_revision_conflict",
            ErrorCode::ItemAlreadyClosed => "item_already_closed",
            ErrorCode::ItemNotClosed => "item_not_closed",
            ErrorCode::AlreadyClaimedBy => "already_claimed_by",
            ErrorCode::ItemNotClaimed => "item_not_claimed",
            ErrorCode::OwnershipConflict => "ownership_conflict",
            ErrorCode::DependencyTargetUnresolved => "dependency_target_unresolved",
            ErrorCode::MutationTorn => "mutation_torn",
            ErrorCode::ReadOutputCursorInvalid => "read_output_cursor_invalid",
            ErrorCode::ReadOutputCursorCommandMismatch => "read_output_cursor_command_mismatch",
            ErrorCode::ReadOutputCursorStale => "read_output_cursor_stale",
            ErrorCode::InvalidReadOutputSession => "invalid_read_output_session",
            ErrorCode::InvalidQueryCursor => "invalid_query_cursor",
            ErrorCode::UnknownContextIntent => "unknown_context_intent",
            ErrorCode::MissingRequiredOption => "missing_required_option",
            ErrorCode::CommandFailed => "command_failed",
            ErrorCode::ProjectionOptionsMutuallyExclusive => {
                "projection_options_mutually_exclusive"
            }
            ErrorCode::UnknownFieldProjection => "unknown_field_projection",
            ErrorCode::ListSourceIncomplete => "list_source_incomplete",
            ErrorCode::UnsupportedSearchMode => "unsupported_search_mode",
            ErrorCode::UnsupportedSubcommand => "unsupported_subcommand",
        }
    }

    /// Returns the family the code belongs to; `pm-cli`'s exit table is keyed by family.
    pub fn family(self) -> ErrorFamily {
        match self {
            ErrorCode::NotInProject | ErrorCode::ItemNotFound => ErrorFamily::NotFound,
            ErrorCode::InvalidItemId
            | ErrorCode::InvalidArgumentValue
            | ErrorCode::UnknownOption
            | ErrorCode::UnknownCommand
            | ErrorCode::MissingRequiredArgument
            | ErrorCode::UnexpectedArgument
            | ErrorCode::ConflictingArguments
            | ErrorCode::ReadOutputCursorInvalid
            | ErrorCode::ReadOutputCursorCommandMismatch
            | ErrorCode::ReadOutputCursorStale
            | ErrorCode::InvalidReadOutputSession
            | ErrorCode::InvalidQueryCursor
            | ErrorCode::UnknownContextIntent
            | ErrorCode::MissingRequiredOption
            | ErrorCode::CommandFailed
            | ErrorCode::ProjectionOptionsMutuallyExclusive
            | ErrorCode::UnknownFieldProjection => ErrorFamily::InvalidArgument,
            ErrorCode::UnsupportedSearchMode | ErrorCode::UnsupportedSubcommand => {
                ErrorFamily::InvalidArgument
            }
            ErrorCode::ItemDocumentInvalid
            | ErrorCode::MergeConflictMarkersDetected
            | ErrorCode::HistoryMergeConflictMarkersDetected
            | ErrorCode::HistoryInvalid
            | ErrorCode::ListSourceIncomplete => ErrorFamily::ParseFailed,
            ErrorCode::DuplicateItemId
            | ErrorCode::ItemIdCollision
            | ErrorCode::ItemRevisionConflict
            | ErrorCode::ItemAlreadyClosed
            | ErrorCode::ItemNotClosed
            | ErrorCode::AlreadyClaimedBy
            | ErrorCode::ItemNotClaimed
            | ErrorCode::OwnershipConflict => ErrorFamily::Conflict,
            ErrorCode::DependencyTargetUnresolved => ErrorFamily::NotFound,
            ErrorCode::MutationTorn => ErrorFamily::Io,
            ErrorCode::LockConflict | ErrorCode::LockStale => ErrorFamily::LockHeld,
            ErrorCode::LockPathUnsafe => ErrorFamily::InvalidArgument,
            ErrorCode::Io => ErrorFamily::Io,
            ErrorCode::IndexUnavailable => ErrorFamily::IndexUnavailable,
            ErrorCode::ItemDocumentRoundtripFailed | ErrorCode::Internal => ErrorFamily::Internal,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error families (the short names of `STYLE.md` §4); the CLI maps each to one exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ErrorFamily {
    /// Tracker or item not found.
    NotFound,
    /// Invalid flags, values or combinations.
    InvalidArgument,
    /// A held lock.
    LockHeld,
    /// A state conflict.
    Conflict,
    /// A required dependency operation failed.
    DependencyFailed,
    /// Unparseable tracker data.
    ParseFailed,
    /// I/O failure.
    Io,
    /// The derived index could not be used where it was required.
    IndexUnavailable,
    /// A bug.
    Internal,
}

impl ErrorFamily {
    /// Returns the family name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorFamily::NotFound => "not_found",
            ErrorFamily::InvalidArgument => "invalid_argument",
            ErrorFamily::LockHeld => "lock_held",
            ErrorFamily::Conflict => "conflict",
            ErrorFamily::DependencyFailed => "dependency_failed",
            ErrorFamily::ParseFailed => "parse_failed",
            ErrorFamily::Io => "io",
            ErrorFamily::IndexUnavailable => "index_unavailable",
            ErrorFamily::Internal => "internal",
        }
    }
}

impl Error {
    /// Returns the stable code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::NotInProject { .. } => ErrorCode::NotInProject,
            Error::ItemNotFound { .. } => ErrorCode::ItemNotFound,
            Error::InvalidId { .. } => ErrorCode::InvalidItemId,
            Error::InvalidArgument { .. } => ErrorCode::InvalidArgumentValue,
            Error::UnsupportedSearchMode { .. } => ErrorCode::UnsupportedSearchMode,
            Error::UnsupportedSubcommand { .. } => ErrorCode::UnsupportedSubcommand,
            Error::ItemInvalid { .. } => ErrorCode::ItemDocumentInvalid,
            Error::ItemRoundTrip { .. } => ErrorCode::ItemDocumentRoundtripFailed,
            Error::ConflictMarkers { history: false, .. } => {
                ErrorCode::MergeConflictMarkersDetected
            }
            Error::ConflictMarkers { history: true, .. } => {
                ErrorCode::HistoryMergeConflictMarkersDetected
            }
            Error::HistoryInvalid { .. } => ErrorCode::HistoryInvalid,
            Error::DuplicateId { .. } => ErrorCode::DuplicateItemId,
            Error::LockHeld { .. } => ErrorCode::LockConflict,
            Error::LockStale { .. } => ErrorCode::LockStale,
            Error::LockPathUnsafe { .. } => ErrorCode::LockPathUnsafe,
            Error::Io { .. } => ErrorCode::Io,
            Error::Usage { kind, .. } => match kind {
                UsageKind::UnknownOption => ErrorCode::UnknownOption,
                UsageKind::UnknownCommand => ErrorCode::UnknownCommand,
                UsageKind::MissingRequiredArgument => ErrorCode::MissingRequiredArgument,
                UsageKind::InvalidValue => ErrorCode::InvalidArgumentValue,
                UsageKind::UnexpectedArgument => ErrorCode::UnexpectedArgument,
                UsageKind::ConflictingArguments => ErrorCode::ConflictingArguments,
            },
            Error::ItemIdCollision { .. } => ErrorCode::ItemIdCollision,
            Error::RevisionConflict { .. } => ErrorCode::ItemRevisionConflict,
            Error::Lifecycle { kind, .. } => match kind {
                LifecycleConflict::AlreadyClosed => ErrorCode::ItemAlreadyClosed,
                LifecycleConflict::NotClosed => ErrorCode::ItemNotClosed,
                LifecycleConflict::AlreadyClaimed => ErrorCode::AlreadyClaimedBy,
                LifecycleConflict::NotClaimed => ErrorCode::ItemNotClaimed,
                LifecycleConflict::OwnershipConflict => ErrorCode::OwnershipConflict,
            },
            Error::UnresolvedReference { .. } => ErrorCode::DependencyTargetUnresolved,
            Error::MutationTorn { .. } => ErrorCode::MutationTorn,
            Error::Index { .. } => ErrorCode::IndexUnavailable,
            Error::ReadOutput { kind, .. } => match kind {
                ReadOutputRefusal::InvalidValue => ErrorCode::InvalidArgumentValue,
                ReadOutputRefusal::NotReadSurface => ErrorCode::ConflictingArguments,
                ReadOutputRefusal::CursorInvalid => ErrorCode::ReadOutputCursorInvalid,
                ReadOutputRefusal::CursorCommandMismatch => {
                    ErrorCode::ReadOutputCursorCommandMismatch
                }
                ReadOutputRefusal::CursorStale => ErrorCode::ReadOutputCursorStale,
                ReadOutputRefusal::InvalidSession => ErrorCode::InvalidReadOutputSession,
                ReadOutputRefusal::InvalidQueryCursor => ErrorCode::InvalidQueryCursor,
                ReadOutputRefusal::UnknownContextIntent => ErrorCode::UnknownContextIntent,
                ReadOutputRefusal::MissingRequiredOption => ErrorCode::MissingRequiredOption,
                ReadOutputRefusal::UnmatchedSelector => ErrorCode::CommandFailed,
                ReadOutputRefusal::ProjectionConflict => {
                    ErrorCode::ProjectionOptionsMutuallyExclusive
                }
                ReadOutputRefusal::UnknownField => ErrorCode::UnknownFieldProjection,
            },
            Error::SourceIncomplete { .. } => ErrorCode::ListSourceIncomplete,
            Error::Internal { .. } => ErrorCode::Internal,
        }
    }

    /// Returns whether the failed command left tracker files changed.
    ///
    /// Only a torn mutation does: every other refusal or failure happens before the first
    /// write or is rolled back.
    pub fn changed(&self) -> bool {
        matches!(self, Error::MutationTorn { .. })
    }

    /// Returns a one-line fix for the user, computed from the variant.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::NotInProject { tried, .. } => Some(format!(
                "run `pm init` in the project root, or point --pm-path/PM_PATH at an existing tracker (looked for {})",
                tried.display()
            )),
            Error::ItemNotFound { .. } => Some(
                "check the id with `pm list --all` or `pm search <keyword>`; confirm --pm-path/PM_PATH".into(),
            ),
            Error::InvalidId { .. } => Some(
                "ids are lowercase letters, digits and '-', like pm-a1b2; '/', '..', none and null are refused".into(),
            ),
            Error::UnsupportedSubcommand {
                command, supported, ..
            } => Some(format!(
                "use one of: {}; e.g. `pm {command} {} <id>`",
                supported.join(", "),
                supported.first().map_or("", String::as_str)
            )),
            Error::UnsupportedSearchMode { .. } => Some(
                "drop --mode/--semantic/--hybrid: keyword search (the default) is the only mode".into(),
            ),
            Error::InvalidArgument { allowed, .. } if !allowed.is_empty() => {
                Some(format!("use one of: {}", allowed.join(", ")))
            }
            Error::InvalidArgument { field, .. } => Some(format!(
                "correct the value of {field} as the message says; `pm <command> --help` lists the accepted forms"
            )),
            Error::ItemInvalid { path, .. } => Some(format!(
                "fix or restore the file (e.g. `git checkout -- {}`); nothing was written",
                path.display()
            )),
            Error::ItemRoundTrip { .. } => Some(
                "the item holds text the TOON codec cannot represent (e.g. a lone surrogate); edit the value and retry".into(),
            ),
            Error::ConflictMarkers { path, .. } => Some(format!(
                "resolve the merge conflict in {} and commit the result",
                path.display()
            )),
            Error::HistoryInvalid { path, line, .. } => Some(format!(
                "repair line {line} of {} (a torn last line can be removed); history is append-only otherwise",
                path.display()
            )),
            Error::DuplicateId { paths, .. } => Some(format!(
                "keep one file and remove the others: {}",
                display_paths(paths)
            )),
            Error::LockHeld { lock_path, pid, .. } => Some(format!(
                "wait for process {pid} to finish, raise PM_LOCK_WAIT_MS, or remove {} if that process is gone",
                lock_path.display()
            )),
            Error::LockStale { lock_path, .. } => Some(format!(
                "re-run with --force to clear the stale lock, or delete {}",
                lock_path.display()
            )),
            Error::LockPathUnsafe { .. } => {
                Some("remove the symlink under locks/ and retry".into())
            }
            Error::Io { path, .. } => Some(format!(
                "check that {} exists and is readable/writable",
                path.display()
            )),
            Error::Usage { suggestions, .. } if !suggestions.is_empty() => Some(format!(
                "did you mean {}?",
                suggestions
                    .iter()
                    .map(|s| format!("'{s}'"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            )),
            Error::Usage { allowed, .. } if !allowed.is_empty() => {
                Some(format!("use one of: {}", allowed.join(", ")))
            }
            Error::Usage { .. } => Some("run `pm --help` for the accepted arguments".into()),
            Error::ItemIdCollision { id, .. } => Some(format!(
                "pick another --id, or read the existing item with `pm get {id}`"
            )),
            Error::RevisionConflict { id, .. } => Some(format!(
                "re-read the item (`pm get {id}`, `pm history {id}`), decide again, and retry with the new item_hash"
            )),
            Error::Lifecycle { kind, id, .. } => Some(match kind {
                LifecycleConflict::AlreadyClosed => {
                    format!("the item is already closed; reopen it first with `pm item reopen {id} <reason>`")
                }
                LifecycleConflict::NotClosed => {
                    format!("only closed or canceled items can be reopened; see `pm get {id}`")
                }
                LifecycleConflict::AlreadyClaimed => format!(
                    "pick another item (`pm next`), or take it over with `pm claim {id} --force`"
                ),
                LifecycleConflict::NotClaimed => {
                    format!("nothing to release; claim it first with `pm claim {id}`")
                }
                LifecycleConflict::OwnershipConflict => format!(
                    "ask the owner to release it, or re-run with --force to bypass ownership (`pm claim {id} --force` takes it over)"
                ),
            }),
            Error::UnresolvedReference { target, .. } => Some(format!(
                "create {target} first, or check the id with `pm list --all`"
            )),
            Error::MutationTorn { id, .. } => Some(format!(
                "run `pm history-repair {id}` to bring the item file and its history back in line"
            )),
            Error::Index { .. } => Some(
                "run `pm reindex` to rebuild it, or `pm gc --scope index` to delete it; reads scan the files meanwhile".into(),
            ),
            Error::ReadOutput { kind, suggestion, allowed, .. } => read_output_hint(*kind, suggestion.as_deref(), allowed),
            Error::SourceIncomplete { .. } => Some(
                "run `pm validate` to find the unreadable files, or drop --strict-read to accept a partial answer".into(),
            ),
            Error::Internal { .. } => Some("this is a bug in pm; please report it".into()),
        }
    }

    /// Returns an internal-invariant error.
    pub fn internal(detail: impl Into<String>) -> Error {
        Error::Internal {
            detail: detail.into(),
        }
    }
}

/// Returns the one-line fix of a read-output refusal.
fn read_output_hint(
    kind: ReadOutputRefusal,
    suggestion: Option<&str>,
    allowed: &[String],
) -> Option<String> {
    if let Some(suggestion) = suggestion {
        return Some(format!("did you mean '{suggestion}'?"));
    }
    Some(match kind {
        ReadOutputRefusal::CursorInvalid => {
            "pass the cursor exactly as the previous read printed it".into()
        }
        ReadOutputRefusal::CursorCommandMismatch | ReadOutputRefusal::CursorStale => {
            "rerun the original read without --output-cursor to get a fresh cursor".into()
        }
        ReadOutputRefusal::InvalidQueryCursor => {
            "repeat the original query without --after to obtain a fresh cursor".into()
        }
        ReadOutputRefusal::InvalidSession => {
            "pass read_session.next_state from the previous read, or start a new session".into()
        }
        ReadOutputRefusal::MissingRequiredOption => {
            "add --for <intent>, or omit --token-budget".into()
        }
        ReadOutputRefusal::NotReadSurface => {
            "drop the --output-* controls (only --output-format applies here)".into()
        }
        ReadOutputRefusal::ProjectionConflict => {
            "choose one of --brief, --compact, --full or --fields".into()
        }
        _ if !allowed.is_empty() => format!("use one of: {}", allowed.join(", ")),
        _ => return None,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_snake_case() {
        let mut seen = std::collections::BTreeSet::new();
        for code in ErrorCode::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "duplicate code {s}");
            assert!(
                s.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{s} is not snake_case"
            );
        }
    }
}
