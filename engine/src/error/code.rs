//! The stable error codes (`ErrorCode`, never renamed or reused) and the families the CLI
//! maps to exit codes.

use std::fmt;

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
    /// The mutation secret guard found credential-shaped text (`secret_guard: block`).
    MutationSecretGuardBlocked,
    /// `merge reconcile` of receipts that discarded a value, without `--force`.
    MergeReconcileDiscardsRequireAcceptance,
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
    /// A tracker path is a symlink or passes through one (pm never follows links inside the
    /// tracker).
    PathUnsafe,
    /// The item lock was taken over before the mutation wrote anything.
    LockLost,
    /// A settings value is outside its legal domain.
    SettingsInvalid,
    /// An item file is over `limits.item_max_bytes`.
    ItemTooLarge,
    /// `--expect-hash` on a command that only reads.
    ExpectHashRequiresMutation,
    /// The tracker root (or its settings.json) exists but cannot be read.
    TrackerRootUnreadable,
    /// A close under strict close validation lacks closure fields.
    CloseValidationMissingFields,
    /// An edit or deletion of a JSON context event (notes added with `--add-json`).
    StructuredEventImmutable,
    /// A create under strict duplicate detection found likely duplicates.
    LikelyDuplicate,
    /// `pm merge install` outside a git worktree.
    MergeRootNotFound,
    /// `git config` refused the merge driver settings.
    MergeGitConfigUnwritable,
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
        ErrorCode::MutationSecretGuardBlocked,
        ErrorCode::MergeReconcileDiscardsRequireAcceptance,
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
        ErrorCode::PathUnsafe,
        ErrorCode::LockLost,
        ErrorCode::SettingsInvalid,
        ErrorCode::ItemTooLarge,
        ErrorCode::ExpectHashRequiresMutation,
        ErrorCode::TrackerRootUnreadable,
        ErrorCode::CloseValidationMissingFields,
        ErrorCode::StructuredEventImmutable,
        ErrorCode::LikelyDuplicate,
        ErrorCode::MergeRootNotFound,
        ErrorCode::MergeGitConfigUnwritable,
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
            ErrorCode::MutationSecretGuardBlocked => "mutation_secret_guard_blocked",
            ErrorCode::MergeReconcileDiscardsRequireAcceptance => {
                "merge_reconcile_discards_require_acceptance"
            }
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
            ErrorCode::PathUnsafe => "path_unsafe",
            ErrorCode::LockLost => "lock_lost",
            ErrorCode::SettingsInvalid => "settings_invalid",
            ErrorCode::ItemTooLarge => "item_too_large",
            ErrorCode::ExpectHashRequiresMutation => "expect_hash_requires_mutation",
            ErrorCode::TrackerRootUnreadable => "tracker_root_unreadable",
            ErrorCode::CloseValidationMissingFields => "close_validation_missing_fields",
            ErrorCode::StructuredEventImmutable => "structured_event_immutable",
            ErrorCode::LikelyDuplicate => "likely_duplicate",
            ErrorCode::MergeRootNotFound => "merge_root_not_found",
            ErrorCode::MergeGitConfigUnwritable => "merge_git_config_unwritable",
        }
    }

    /// Returns the family the code belongs to; `pm-cli`'s exit table is keyed by family.
    pub fn family(self) -> ErrorFamily {
        match self {
            ErrorCode::NotInProject | ErrorCode::ItemNotFound | ErrorCode::MergeRootNotFound => {
                ErrorFamily::NotFound
            }
            ErrorCode::MergeGitConfigUnwritable => ErrorFamily::DependencyFailed,
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
            | ErrorCode::UnknownFieldProjection
            | ErrorCode::CloseValidationMissingFields
            | ErrorCode::StructuredEventImmutable => ErrorFamily::InvalidArgument,
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
            | ErrorCode::OwnershipConflict
            | ErrorCode::MutationSecretGuardBlocked
            | ErrorCode::MergeReconcileDiscardsRequireAcceptance
            | ErrorCode::LikelyDuplicate => ErrorFamily::Conflict,
            ErrorCode::DependencyTargetUnresolved => ErrorFamily::NotFound,
            ErrorCode::MutationTorn => ErrorFamily::Io,
            ErrorCode::LockConflict | ErrorCode::LockStale | ErrorCode::LockLost => {
                ErrorFamily::LockHeld
            }
            ErrorCode::PathUnsafe => ErrorFamily::Conflict,
            ErrorCode::SettingsInvalid
            | ErrorCode::ItemTooLarge
            | ErrorCode::ExpectHashRequiresMutation => ErrorFamily::InvalidArgument,
            ErrorCode::LockPathUnsafe => ErrorFamily::InvalidArgument,
            ErrorCode::Io | ErrorCode::TrackerRootUnreadable => ErrorFamily::Io,
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

/// Error families (short names such as `not_found`); the CLI maps each to one exit code.
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
