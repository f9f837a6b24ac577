//! What each error means to a caller: its stable code, whether it changed files, and the
//! shared constructors. Its one-line fix is in the hint catalogue (`hints.rs`).

use super::{Error, ErrorCode, LifecycleConflict};

impl Error {
    /// Returns the stable code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::NotInProject { .. } => ErrorCode::NotInProject,
            Error::TrackerUnreadable { .. } => ErrorCode::TrackerRootUnreadable,
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
            Error::PathUnsafe { .. } => ErrorCode::PathUnsafe,
            Error::LockLost { .. } => ErrorCode::LockLost,
            Error::SettingsInvalid { .. } => ErrorCode::SettingsInvalid,
            Error::ItemTooLarge { .. } => ErrorCode::ItemTooLarge,
            Error::Io { .. } => ErrorCode::Io,
            Error::MergeRootNotFound { .. } => ErrorCode::MergeRootNotFound,
            Error::MergeGitConfigUnwritable { .. } => ErrorCode::MergeGitConfigUnwritable,
            Error::ConflictingOptions { .. } => ErrorCode::ConflictingArguments,
            Error::ItemIdCollision { .. } => ErrorCode::ItemIdCollision,
            Error::RevisionConflict { .. } => ErrorCode::ItemRevisionConflict,
            Error::Lifecycle { kind, .. } => match kind {
                LifecycleConflict::AlreadyClosed => ErrorCode::ItemAlreadyClosed,
                LifecycleConflict::NotClosed => ErrorCode::ItemNotClosed,
                LifecycleConflict::AlreadyClaimed => ErrorCode::AlreadyClaimedBy,
                LifecycleConflict::NotClaimed => ErrorCode::ItemNotClaimed,
                LifecycleConflict::OwnershipConflict => ErrorCode::OwnershipConflict,
            },
            Error::SecretGuardBlocked { .. } => ErrorCode::MutationSecretGuardBlocked,
            Error::MergeDiscardsUnaccepted { .. } => {
                ErrorCode::MergeReconcileDiscardsRequireAcceptance
            }
            Error::UnresolvedReference { .. } => ErrorCode::DependencyTargetUnresolved,
            Error::MutationTorn { .. } => ErrorCode::MutationTorn,
            Error::Index { .. } => ErrorCode::IndexUnavailable,
            Error::CursorNotInResult { .. } => ErrorCode::InvalidQueryCursor,
            Error::MissingCreateOptions { .. } => ErrorCode::MissingRequiredOption,
            Error::CloseValidation { .. } => ErrorCode::CloseValidationMissingFields,
            Error::StructuredEventImmutable { .. } => ErrorCode::StructuredEventImmutable,
            Error::LikelyDuplicate { .. } => ErrorCode::LikelyDuplicate,
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

    /// Returns the refusal of `value` for `field` (an [`Error::InvalidArgument`]), naming the
    /// legal values when the domain is finite.
    ///
    /// The one constructor of value refusals; callers pass their flag as typed.
    pub fn invalid_argument(
        field: &str,
        value: &str,
        reason: impl Into<String>,
        allowed: Vec<String>,
    ) -> Error {
        Error::InvalidArgument {
            field: field.into(),
            value: value.into(),
            reason: reason.into(),
            allowed,
        }
    }

    /// Returns an internal-invariant error.
    pub fn internal(detail: impl Into<String>) -> Error {
        Error::Internal {
            detail: detail.into(),
        }
    }
}
