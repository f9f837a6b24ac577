//! The scan path: read and parse every item file of a tracker in parallel (rayon) into
//! [`ItemSummary`]s, with unreadable-file accounting, and answer list queries from them. This is
//! the reference answer the index must reproduce, and the fallback when it cannot.

use crate::error::{Error, Result};
use crate::item::ItemDoc;
use crate::item::canon::CanonSchema;
use crate::item::codec::parse_item;
use crate::notice::Notice;
use crate::query::{
    Completeness, Listing, Page, Query, Relations, Sort, Source, StatusCount, count_by_type_status,
    paginate,
};
use crate::schema::RuntimeSchema;
use crate::summary::{ItemSummary, relative_path};
use crate::tracker::{ItemFileRef, Tracker};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

/// An item file that could not be read or parsed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnreadableFile {
    /// The tracker-relative path.
    pub path: String,
    /// The error code (`item_document_invalid`, `io_error`, …).
    pub code: String,
    /// The error message.
    pub message: String,
}

impl UnreadableFile {
    /// Returns the notice reported for this file.
    pub fn notice(&self) -> Notice {
        Notice::new(
            "item_unreadable",
            format!("{}: {} ({})", self.path, self.message, self.code),
        )
    }

    /// Reads back a notice made by [`UnreadableFile::notice`] (`None` for any other notice).
    pub fn from_notice(notice: &Notice) -> Option<UnreadableFile> {
        if notice.code != "item_unreadable" {
            return None;
        }
        let (path, rest) = notice.message.split_once(": ")?;
        let (message, code) = rest.strip_suffix(')')?.rsplit_once(" (")?;
        Some(UnreadableFile {
            path: path.to_string(),
            code: code.to_string(),
            message: message.to_string(),
        })
    }
}

/// An item file whose id an earlier item file already holds: reads answer the id once, from
/// the first file in enumeration order (folders in registry order, files by name).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DuplicateFile {
    /// The tracker-relative path of the file left out.
    pub path: String,
    /// The id both files hold.
    pub id: String,
    /// The tracker-relative path of the file reads answer from.
    pub kept: String,
}

impl DuplicateFile {
    /// The notice code of a duplicate file.
    pub const NOTICE: &'static str = "item_duplicate";

    /// Returns the notice reported for this file.
    pub fn notice(&self) -> Notice {
        Notice::new(
            Self::NOTICE,
            format!(
                "{}: holds id {} (answered from {})",
                self.path, self.id, self.kept
            ),
        )
    }

    /// Reads back a notice made by [`DuplicateFile::notice`] (`None` for any other notice).
    pub fn from_notice(notice: &Notice) -> Option<DuplicateFile> {
        if notice.code != Self::NOTICE {
            return None;
        }
        let (path, rest) = notice.message.split_once(": holds id ")?;
        let (id, kept) = rest.strip_suffix(')')?.rsplit_once(" (answered from ")?;
        Some(DuplicateFile {
            path: path.to_string(),
            id: id.to_string(),
            kept: kept.to_string(),
        })
    }
}

/// Every readable item of a tracker, plus what could not be read.
#[derive(Clone, Debug, Default)]
pub struct ScanOutcome {
    /// One summary per readable item file, in enumeration order (folders in registry order,
    /// files by name).
    pub summaries: Vec<ItemSummary>,
    /// Item files that could not be read or parsed, in enumeration order.
    pub unreadable: Vec<UnreadableFile>,
    /// Type folders that exist but could not be listed.
    pub unreadable_directories: usize,
    /// Notices from enumeration (unreadable folders).
    pub notices: Vec<Notice>,
    /// Files left out by [`ScanOutcome::answer_each_id_once`], in enumeration order.
    pub duplicates: Vec<DuplicateFile>,
}

/// Reads and parses one item file.
///
/// # Errors
/// `Error::Io` when the file cannot be read, else whatever [`parse_item`] reports.
pub fn read_item(file: &ItemFileRef, canon: &CanonSchema) -> Result<ItemDoc> {
    let bytes = crate::confine::leaf::read_existing(&file.path)?;
    parse_item(&bytes, file.format, &file.path, canon)
}

/// Returns the summary of one item file, or why it is unreadable.
pub fn summarize_file(
    file: &ItemFileRef,
    schema: &RuntimeSchema,
    canon: &CanonSchema,
) -> std::result::Result<ItemSummary, UnreadableFile> {
    read_item(file, canon)
        .map(|doc| ItemSummary::from_item(&doc, file, schema))
        .map_err(|err| unreadable(file, &err))
}

/// Returns the unreadable-file record of `file` failing with `err`.
pub fn unreadable(file: &ItemFileRef, err: &Error) -> UnreadableFile {
    UnreadableFile {
        path: relative_path(file),
        code: err.code().as_str().to_string(),
        message: err.to_string(),
    }
}

/// Scans every item file of `tracker` in parallel.
///
/// # Errors
/// `Error::Io` when a readable type folder holds an entry that cannot be inspected.
pub fn scan(tracker: &Tracker, schema: &RuntimeSchema) -> Result<ScanOutcome> {
    let files = tracker.item_files(&schema.types)?;
    let canon = CanonSchema::from_runtime(schema);
    let results: Vec<std::result::Result<ItemSummary, UnreadableFile>> = files
        .files
        .par_iter()
        .map(|file| summarize_file(file, schema, &canon))
        .collect();
    let mut out = ScanOutcome {
        unreadable_directories: files.notices.len(),
        notices: files.notices,
        ..ScanOutcome::default()
    };
    for result in results {
        match result {
            Ok(summary) => out.summaries.push(summary),
            Err(bad) => out.unreadable.push(bad),
        }
    }
    Ok(out)
}

/// Answers a list query by scanning the tracker (see [`ScanOutcome::list`]).
///
/// # Errors
/// As [`scan`].
pub fn list(
    tracker: &Tracker,
    schema: &RuntimeSchema,
    query: &Query,
    sort: &Sort,
    page: &Page,
) -> Result<Listing> {
    Ok(scan(tracker, schema)?
        .answer_each_id_once()
        .list(query, sort, page))
}

impl ScanOutcome {
    /// Keeps the first summary of every id (enumeration order) and records the others in
    /// `duplicates`: what every read answers from. [`scan`] itself keeps every file, for the
    /// checks that compare files one by one.
    pub fn answer_each_id_once(mut self) -> Self {
        let mut first: HashMap<String, String> = HashMap::with_capacity(self.summaries.len());
        let mut duplicates = Vec::new();
        self.summaries.retain(|s| match first.entry(s.id.clone()) {
            Entry::Vacant(slot) => {
                slot.insert(s.path.clone());
                true
            }
            Entry::Occupied(kept) => {
                duplicates.push(DuplicateFile {
                    path: s.path.clone(),
                    id: s.id.clone(),
                    kept: kept.get().clone(),
                });
                false
            }
        });
        self.duplicates.extend(duplicates);
        self
    }

    /// Returns the corpus relations (blockers, hierarchy edges).
    pub fn relations(&self) -> Relations {
        Relations::from_summaries(&self.summaries)
    }

    /// Returns `complete` or `partial` with the unreadable counts.
    pub fn completeness(&self) -> Completeness {
        Completeness::from_counts(self.unreadable.len(), self.unreadable_directories)
    }

    /// Returns the notices every read from this scan reports: enumeration notices, then one per
    /// unreadable file in path order, then one per duplicate file in enumeration order.
    pub fn read_notices(&self) -> Vec<Notice> {
        let mut bad: Vec<&UnreadableFile> = self.unreadable.iter().collect();
        bad.sort_by(|a, b| a.path.cmp(&b.path));
        let mut notices = self.notices.clone();
        notices.extend(bad.into_iter().map(UnreadableFile::notice));
        notices.extend(self.duplicates.iter().map(DuplicateFile::notice));
        notices
    }

    /// Returns the matches of `query` in `sort` order.
    pub fn select(&self, query: &Query, sort: &Sort) -> Vec<ItemSummary> {
        let relations = if query.needs_relations() {
            self.relations()
        } else {
            Relations::default()
        };
        let mut matched: Vec<&ItemSummary> = self
            .summaries
            .iter()
            .filter(|s| query.matches(s, &relations))
            .collect();
        sort.sort(&mut matched);
        matched.into_iter().cloned().collect()
    }

    /// Answers a list query: filter with [`Query::matches`], order with [`Sort`], then page.
    pub fn list(&self, query: &Query, sort: &Sort, page: &Page) -> Listing {
        paginate(self.select(query, sort), sort, page).into_listing(
            Source::Scan,
            self.completeness(),
            self.read_notices(),
        )
    }

    /// Returns the `(type, status)` counts of the matches of `query`.
    pub fn counts(&self, query: &Query) -> Vec<StatusCount> {
        let relations = if query.needs_relations() {
            self.relations()
        } else {
            Relations::default()
        };
        count_by_type_status(
            self.summaries
                .iter()
                .filter(|s| query.matches(s, &relations)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duplicate_notice_reads_back() {
        let dup = DuplicateFile {
            path: "tasks/pm-a (1).toon".into(),
            id: "pm-a".into(),
            kept: "issues/pm-a.toon".into(),
        };
        assert_eq!(DuplicateFile::from_notice(&dup.notice()), Some(dup));
        assert_eq!(
            DuplicateFile::from_notice(&Notice::new("item_unreadable", "x: y (z)")),
            None
        );
    }
}
