//! Item files a read skipped, as reads report them: the path, the line when the parser named
//! one, the cause and the fix. A file is skipped when it cannot be read or parsed (the
//! `item_unreadable` notices the scan and the index both return, `UnreadableFile::notice`) or
//! when an earlier file holds its id (`item_duplicate`, `DuplicateFile::notice`: reads answer
//! each id once).

use serde::Serialize;

use crate::notice::Notice;
use crate::scan::{DuplicateFile, UnreadableFile};

/// One skipped item file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SkippedFile {
    /// Always `item_file_skipped`.
    pub code: &'static str,
    /// The tracker-relative path.
    pub path: String,
    /// The 1-based line the parser stopped at, when it named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// Why it was skipped (the reader's message, without the absolute path).
    pub cause: String,
    /// The reader's error code (`item_document_invalid`, `io_error`, `path_unsafe`, …).
    pub error_code: String,
    /// What to do.
    pub fix: String,
}

impl SkippedFile {
    /// The one-line warning a terminal shows for this file.
    pub fn warning_line(&self) -> String {
        let place = match self.line {
            Some(line) => format!("{}:{line}", self.path),
            None => self.path.clone(),
        };
        format!(
            "warning: skipped {place}: {} ({})",
            self.cause, self.error_code
        )
    }
}

/// Returns the skipped files named by `notices`, in their order (other notices are ignored).
pub fn skipped_files(notices: &[Notice]) -> Vec<SkippedFile> {
    notices
        .iter()
        .filter_map(|n| {
            UnreadableFile::from_notice(n)
                .map(unreadable)
                .or_else(|| DuplicateFile::from_notice(n).map(duplicate))
        })
        .collect()
}

/// The report of a file that could not be read or parsed.
fn unreadable(bad: UnreadableFile) -> SkippedFile {
    let cause = strip_path(&bad.message, &bad.path);
    SkippedFile {
        code: "item_file_skipped",
        line: line_of(&cause),
        fix: format!(
            "repair {} or restore it from git; until then its item is missing from every read \
             (`pm validate` lists every such file)",
            bad.path
        ),
        path: bad.path,
        cause,
        error_code: bad.code,
    }
}

/// The report of a file whose id an earlier file holds.
fn duplicate(dup: DuplicateFile) -> SkippedFile {
    SkippedFile {
        code: "item_file_skipped",
        line: None,
        cause: format!("holds id {}, which reads answer from {}", dup.id, dup.kept),
        error_code: "duplicate_item_id".into(),
        fix: format!(
            "keep one of {} and {} and remove the other (`pm health` lists every id stored \
             twice)",
            dup.kept, dup.path
        ),
        path: dup.path,
    }
}

/// Drops a leading `<absolute path ending in path>: ` from a reader's message.
fn strip_path(message: &str, path: &str) -> String {
    match message.split_once(": ") {
        Some((head, rest)) if head.ends_with(path) => rest.to_string(),
        _ => message.to_string(),
    }
}

/// The number after the first `line ` (any case) of `text`.
fn line_of(text: &str) -> Option<u64> {
    let lower = text.to_ascii_lowercase();
    let at = lower.find("line ")? + "line ".len();
    let digits: String = lower[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok().filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parse_failure_names_path_line_and_cause() {
        let bad = UnreadableFile {
            path: "tasks/pm-bad1.toon".into(),
            code: "item_document_invalid".into(),
            message: "/t/.agents/pm/tasks/pm-bad1.toon: Invalid item front matter: not valid \
                      TOON (Line 2: Unterminated string)"
                .into(),
        };
        let other = Notice::new("index_unavailable", "x");
        let skipped = skipped_files(&[other, bad.notice()]);
        assert_eq!(skipped.len(), 1);
        let s = &skipped[0];
        assert_eq!(s.path, "tasks/pm-bad1.toon");
        assert_eq!(s.line, Some(2));
        assert_eq!(s.error_code, "item_document_invalid");
        assert!(
            s.cause.starts_with("Invalid item front matter"),
            "{}",
            s.cause
        );
        assert_eq!(
            s.warning_line(),
            "warning: skipped tasks/pm-bad1.toon:2: Invalid item front matter: not valid TOON \
             (Line 2: Unterminated string) (item_document_invalid)"
        );
    }

    #[test]
    fn no_line_when_the_reader_names_none() {
        assert_eq!(line_of("JSON front matter is not valid JSON"), None);
        assert_eq!(line_of("line 0"), None);
        assert_eq!(line_of("at Line 12, column 3"), Some(12));
    }
}
