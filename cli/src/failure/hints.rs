//! The one-line fixes (`hint`) of the refusals only the command line makes: usage mistakes and
//! refused read-output controls.

use super::{ReadOutputRefusal, UsageKind};

/// Returns the one-line fix of a usage mistake.
pub(super) fn usage(
    kind: UsageKind,
    flag: Option<&str>,
    suggestions: &[String],
    allowed: &[String],
) -> Option<String> {
    if kind == UsageKind::RequiresMutation {
        return Some(format!(
            "drop {}: it guards a write against a changed item, and this command only reads",
            flag.unwrap_or("--expect-hash")
        ));
    }
    Some(if !suggestions.is_empty() {
        format!(
            "did you mean {}?",
            suggestions
                .iter()
                .map(|s| format!("'{s}'"))
                .collect::<Vec<_>>()
                .join(" or ")
        )
    } else if !allowed.is_empty() {
        format!("use one of: {}", allowed.join(", "))
    } else {
        "run `pm --help` for the accepted arguments".into()
    })
}

/// Returns the one-line fix of a read-output refusal.
pub(super) fn read_output(
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
