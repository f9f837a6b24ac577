//! `pm get <id> --at <version|ISO>`: the item as its history replays to a version (entry count)
//! or an instant, with the `get` facets computed on the replayed document.

use super::get::{AsOf, GetScope, ItemView, build_view};
use super::view::TrackerView;
use crate::error::{Error, Result};
use crate::history::replay_point;
use crate::timestamp::parse_timestamp;

pub use crate::history::HistoryPoint;

impl HistoryPoint {
    /// Parses `--at`: a non-negative entry count, or an ISO timestamp.
    ///
    /// # Errors
    /// `invalid_argument_value` for anything else.
    pub fn parse(raw: &str) -> Result<HistoryPoint> {
        let text = raw.trim();
        if !text.is_empty()
            && text.bytes().all(|b| b.is_ascii_digit())
            && let Ok(version) = text.parse::<usize>()
        {
            return Ok(HistoryPoint::Version(version));
        }
        parse_timestamp(text)
            .map(HistoryPoint::At)
            .ok_or_else(|| Error::InvalidArgument {
                field: "--at".into(),
                value: raw.into(),
                reason: "Get --at must be a history version (entry count) or an ISO timestamp"
                    .into(),
                allowed: Vec::new(),
            })
    }
}

/// Reads one item as it was at `point`, also when its file was deleted since.
///
/// # Errors
/// `item_not_found` when neither the file nor a history stream exists;
/// `invalid_argument_value` when the version is past the end, the item did not exist at that
/// point, or the history does not replay; the read errors of `get`.
pub fn get_item_at(
    view: &TrackerView,
    raw_id: &str,
    scope: GetScope,
    point: HistoryPoint,
) -> Result<ItemView> {
    let id = match view.locate(raw_id) {
        Ok(file) => file.stem,
        Err(Error::ItemNotFound { id }) => view
            .stream_id_without_file(raw_id)
            .ok_or(Error::ItemNotFound { id })?,
        Err(e) => return Err(e),
    };
    let stream = view.stream(&id)?;
    let replayed = replay_point(&stream.entries, point, &id, "--at")?;
    if replayed.doc.is_empty() {
        return Err(point.refusal("--at", format!("{id} did not exist at that point")));
    }
    let applied = &stream.entries[..replayed.version];
    let mut result = build_view(view, &id, &replayed.doc, applied, scope)?;
    result.as_of = Some(AsOf {
        reconstructed: true,
        as_of_version: replayed.version,
        as_of_timestamp: applied.last().map(|e| e.ts.clone()),
    });
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_parse_as_versions_or_instants() -> Result<()> {
        assert_eq!(HistoryPoint::parse(" 3 ")?, HistoryPoint::Version(3));
        assert_eq!(
            HistoryPoint::parse("2026-09-01T00:00:00.000Z")?,
            HistoryPoint::At(1_788_220_800_000)
        );
        assert!(HistoryPoint::parse("yesterday").is_err());
        assert!(HistoryPoint::parse("-1").is_err());
        Ok(())
    }
}
