//! The CLI's error type: a library error, or a refusal only the command line makes (a usage
//! mistake, a refused read-output control). The engine's own errors stay about the engine.

use std::fmt;

use pm_engine::{Error, ErrorCode};

/// Result alias of the command functions and the CLI's own layers.
pub type Result<T, E = CliError> = std::result::Result<T, E>;

/// Everything a pm invocation can fail with.
#[derive(Debug)]
#[non_exhaustive]
pub enum CliError {
    /// An error of the engine or the index.
    Engine(Error),

    /// The command line could not be parsed (unknown flag or command, bad or missing value).
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

    /// A universal read-output control (`--output-*`), a query cursor (`--after`) or a context
    /// intent (`--for`, `--token-budget`) was refused; the message is pm's wording.
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
}

/// Sub-kinds of [`CliError::Usage`]; each has its own [`ErrorCode`].
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
    /// A write-only option (`--expect-hash`) on a command that only reads.
    RequiresMutation,
}

/// Sub-kinds of [`CliError::ReadOutput`]; each selects one [`ErrorCode`].
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

impl CliError {
    /// Returns the read-output refusal `kind` of `flag`'s value `raw`, worded `message`.
    ///
    /// The one constructor of the value refusals of the output controls, cursors and sessions.
    pub fn refused(
        kind: ReadOutputRefusal,
        flag: &'static str,
        raw: &str,
        message: impl Into<String>,
    ) -> CliError {
        CliError::ReadOutput {
            kind,
            message: message.into(),
            flag,
            value: Some(raw.to_owned()),
            allowed: Box::default(),
            suggestion: None,
        }
    }

    /// Returns the stable code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            CliError::Engine(error) => error.code(),
            CliError::Usage { kind, .. } => match kind {
                UsageKind::UnknownOption => ErrorCode::UnknownOption,
                UsageKind::UnknownCommand => ErrorCode::UnknownCommand,
                UsageKind::MissingRequiredArgument => ErrorCode::MissingRequiredArgument,
                UsageKind::InvalidValue => ErrorCode::InvalidArgumentValue,
                UsageKind::UnexpectedArgument => ErrorCode::UnexpectedArgument,
                UsageKind::ConflictingArguments => ErrorCode::ConflictingArguments,
                UsageKind::RequiresMutation => ErrorCode::ExpectHashRequiresMutation,
            },
            CliError::ReadOutput { kind, .. } => match kind {
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
        }
    }

    /// Returns whether the failed command left tracker files changed (only a torn mutation
    /// does; a refusal of the command line never writes).
    pub fn changed(&self) -> bool {
        matches!(self, CliError::Engine(error) if error.changed())
    }

    /// Returns the one-line fix for the user, from the hint catalogue.
    pub fn hint(&self) -> Option<String> {
        match self {
            CliError::Engine(error) => error.hint(),
            CliError::Usage {
                kind,
                flag,
                suggestions,
                allowed,
                ..
            } => super::hints::usage(*kind, flag.as_deref(), suggestions, allowed),
            CliError::ReadOutput {
                kind,
                suggestion,
                allowed,
                ..
            } => super::hints::read_output(*kind, suggestion.as_deref(), allowed),
        }
    }

    /// Returns the engine error inside, if this is one.
    pub fn engine(&self) -> Option<&Error> {
        match self {
            CliError::Engine(error) => Some(error),
            _ => None,
        }
    }

    /// Returns an internal-invariant error.
    pub fn internal(detail: impl Into<String>) -> CliError {
        CliError::Engine(Error::internal(detail))
    }
}

impl From<Error> for CliError {
    fn from(error: Error) -> CliError {
        CliError::Engine(error)
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Engine(error) => error.fmt(f),
            CliError::Usage { detail, .. } => f.write_str(detail),
            CliError::ReadOutput { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for CliError {
    /// The cause chain of an engine error is its own (the wrapper adds no link).
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CliError::Engine(error) => error.source(),
            _ => None,
        }
    }
}
