//! Point-in-time replay for `pm get --at` and `pm restore`: the document after a number of
//! entries, or as of an instant, with strict patch application and no hash checks.

use super::entry::HistoryEntry;
use super::replay::ChainIssue;
use super::replay_state::State;
use crate::clock::EpochMs;
use crate::error::Error;
use crate::item::ItemDoc;
use crate::timestamp::parse_timestamp;

/// A replayed point-in-time state.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayedState {
    /// The document after `version` entries.
    pub doc: ItemDoc,
    /// How many entries were applied.
    pub version: usize,
}

/// Why a point-in-time replay failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplayError {
    /// The requested version is past the end of the stream.
    VersionOutOfRange {
        /// The requested version.
        version: usize,
        /// The number of entries in the stream.
        entries: usize,
    },
    /// An entry's patch did not apply.
    Patch(ChainIssue),
}

/// A point in an item's history (`get --at`, `restore`): after a number of entries, or as of
/// an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistoryPoint {
    /// The state after this many history entries (1 = as created).
    Version(usize),
    /// The state as of this instant (every entry with `ts` at or before it).
    At(EpochMs),
}

impl HistoryPoint {
    /// Returns an `invalid_argument_value` refusal of this point given as `field`.
    pub fn refusal(self, field: &str, reason: String) -> Error {
        Error::InvalidArgument {
            field: field.into(),
            value: match self {
                HistoryPoint::Version(v) => v.to_string(),
                HistoryPoint::At(ms) => crate::clock::format_iso_ms(ms),
            },
            reason,
            allowed: Vec::new(),
        }
    }
}

/// Replays the stream of item `id` to `point`, refusing as `field` a version past the end and
/// a history that does not replay.
///
/// # Errors
/// `invalid_argument_value` for both.
pub fn replay_point(
    entries: &[HistoryEntry],
    point: HistoryPoint,
    id: &str,
    field: &str,
) -> Result<ReplayedState, Error> {
    match point {
        HistoryPoint::Version(v) => replay_to(entries, v),
        HistoryPoint::At(ms) => replay_until(entries, ms),
    }
    .map_err(|e| {
        point.refusal(
            field,
            match e {
                ReplayError::VersionOutOfRange { version, entries } => {
                    format!("version {version} is past the end of the history ({entries} entries)")
                }
                ReplayError::Patch(issue) => format!(
                    "history does not replay to that point ({}); run `pm history-repair {id}`",
                    issue.code()
                ),
            },
        )
    })
}

/// Returns the state after the first `version` entries (`restore <id> <version>`), applying
/// patches strictly without checking hashes. Version 0 is the empty document.
///
/// # Errors
/// [`ReplayError::VersionOutOfRange`] past the end; [`ReplayError::Patch`] when a patch fails.
pub fn replay_to(entries: &[HistoryEntry], version: usize) -> Result<ReplayedState, ReplayError> {
    let prefix = entries
        .get(..version)
        .ok_or(ReplayError::VersionOutOfRange {
            version,
            entries: entries.len(),
        })?;
    replay_prefix(prefix)
}

/// Returns the state as of instant `at_ms` (`get --at`): the entries up to the first whose
/// `ts` is later than `at_ms` (or does not parse) are applied strictly.
///
/// # Errors
/// [`ReplayError::Patch`] when a patch fails.
pub fn replay_until(
    entries: &[HistoryEntry],
    at_ms: EpochMs,
) -> Result<ReplayedState, ReplayError> {
    let count = entries
        .iter()
        .take_while(|e| parse_timestamp(&e.ts).is_some_and(|ts| ts <= at_ms))
        .count();
    replay_prefix(&entries[..count])
}

/// Applies `entries` strictly; a patch that fails inside a break a re-anchor marker of the
/// prefix acknowledges resumes at that marker (which sets the whole document).
fn replay_prefix(entries: &[HistoryEntry]) -> Result<ReplayedState, ReplayError> {
    let anchors = super::anchor::anchors(entries);
    let mut state = State::empty();
    let mut resume_at: Option<usize> = None;
    for (index, entry) in entries.iter().enumerate() {
        let number = index + 1;
        if resume_at.is_some_and(|marker| number < marker) {
            continue;
        }
        resume_at = None;
        if let Err(issue) = state.apply(number, entry) {
            match super::anchor::covering(&anchors, number) {
                Some(anchor) if number < anchor.marker => {
                    state = State::empty();
                    resume_at = Some(anchor.marker);
                }
                _ => return Err(ReplayError::Patch(issue)),
            }
        }
    }
    Ok(ReplayedState {
        doc: state.into_doc(),
        version: entries.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::stream::parse_stream;
    use std::path::Path;

    /// pm-written stream from the mutation transcript (4 lines): create, delete, restore, update.
    const D001: &str = include_str!("../../../testdata/history/pm-d001.jsonl");

    fn entries(text: &str) -> Vec<HistoryEntry> {
        parse_stream(text.as_bytes(), "pm-d001", Path::new("pm-d001.jsonl"))
            .expect("fixture parses")
            .entries
    }

    #[test]
    fn point_in_time_replay() -> Result<(), ReplayError> {
        let entries = entries(D001);
        assert_eq!(replay_to(&entries, 0)?.doc, ItemDoc::empty());
        assert_eq!(replay_to(&entries, 2)?.doc, ItemDoc::empty());
        assert_eq!(replay_to(&entries, 3)?.doc, replay_to(&entries, 1)?.doc);
        assert_eq!(
            replay_to(&entries, 5),
            Err(ReplayError::VersionOutOfRange {
                version: 5,
                entries: 4
            })
        );
        let at = parse_timestamp("2026-09-01T00:28:30Z").expect("valid instant");
        let state = replay_until(&entries, at)?;
        assert_eq!((state.version, state.doc), (2, ItemDoc::empty()));
        let at = parse_timestamp("2026-09-01T00:29:00.000Z").expect("valid instant");
        assert_eq!(replay_until(&entries, at)?.version, 3);
        Ok(())
    }

    #[test]
    fn a_failing_patch_is_reported() {
        let text = D001.replacen(
            r#"{"op":"remove","path":"/metadata/author"}"#,
            r#"{"op":"remove","path":"/metadata/assignee"}"#,
            1,
        );
        let Err(ReplayError::Patch(issue)) = replay_to(&entries(&text), 3) else {
            panic!("replay must fail");
        };
        assert_eq!(issue.code(), "patch_apply_failed:entry_2");
    }
}
