//! Which catalogue entry (`pm_engine::error::hints`) fixes a refusal only the command line
//! makes; the wording itself lives in the catalogue.

use pm_engine::error::hints;

use super::{ReadOutputRefusal, UsageKind};

/// Returns the one-line fix of a usage mistake.
pub(super) fn usage(
    kind: UsageKind,
    flag: Option<&str>,
    suggestions: &[String],
    allowed: &[String],
) -> Option<String> {
    Some(if kind == UsageKind::RequiresMutation {
        hints::drop_write_guard(flag.unwrap_or("--expect-hash"))
    } else if !suggestions.is_empty() {
        hints::did_you_mean(suggestions)
    } else if !allowed.is_empty() {
        hints::use_one_of(allowed)
    } else {
        hints::accepted_arguments()
    })
}

/// Returns the one-line fix of a read-output refusal.
pub(super) fn read_output(
    kind: ReadOutputRefusal,
    suggestion: Option<&str>,
    allowed: &[String],
) -> Option<String> {
    if let Some(suggestion) = suggestion {
        return Some(hints::did_you_mean(&[suggestion.to_owned()]));
    }
    let fixed = match kind {
        ReadOutputRefusal::CursorInvalid => hints::CURSOR_AS_PRINTED,
        ReadOutputRefusal::CursorCommandMismatch | ReadOutputRefusal::CursorStale => {
            hints::FRESH_OUTPUT_CURSOR
        }
        ReadOutputRefusal::InvalidQueryCursor => hints::FRESH_QUERY_CURSOR,
        ReadOutputRefusal::InvalidSession => hints::SESSION_NEXT_STATE,
        ReadOutputRefusal::MissingRequiredOption => hints::INTENT_FOR_BUDGET,
        ReadOutputRefusal::NotReadSurface => hints::DROP_OUTPUT_CONTROLS,
        ReadOutputRefusal::ProjectionConflict => hints::ONE_PROJECTION,
        _ if !allowed.is_empty() => return Some(hints::use_one_of(allowed)),
        _ => return None,
    };
    Some(fixed.to_owned())
}
