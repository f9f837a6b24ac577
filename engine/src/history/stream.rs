//! Reading a history stream file: line splitting, conflict markers, invalid lines, and the
//! torn last line (an interrupted append) reported as a non-fatal condition.

use std::path::Path;

use serde_json::Value;

use super::entry::HistoryEntry;
use super::line::parse_entry_line;
use crate::error::{Error, Result};
use crate::item::canon::js;
use crate::item::codec::find_conflict_marker;

/// A stream as read from disk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamRead {
    /// The entries, in file order.
    pub entries: Vec<HistoryEntry>,
    /// The 1-based physical line number of each entry (parallel to `entries`).
    pub lines: Vec<usize>,
    /// The byte range of each entry's trimmed line text in the parsed bytes (parallel to
    /// `entries`), so a reader can keep the line as written without re-serializing it.
    pub spans: Vec<std::ops::Range<usize>>,
    /// An unterminated, unparseable last line, skipped from `entries`.
    pub torn_tail: Option<TornTail>,
}

impl StreamRead {
    /// Returns true when the stream holds no entry (absent, empty or whitespace-only file,
    /// possibly with a torn tail).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The last line of a stream when it has no trailing newline and does not parse: the trace of
/// an append that was interrupted. Readers skip it and report it; truncating the file at
/// `offset` removes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TornTail {
    /// 1-based line number.
    pub line: usize,
    /// Byte offset of the line's first byte.
    pub offset: u64,
    /// Length of the line in bytes.
    pub len: usize,
}

/// Reads `history/<id>.jsonl`; an absent file is an empty history.
///
/// # Errors
/// [`Error::Io`] when the file exists but cannot be read; otherwise as [`parse_stream`].
pub fn read_stream(path: &Path, id: &str) -> Result<StreamRead> {
    match crate::confine::leaf::read_file(path)? {
        Some(bytes) => parse_stream(&bytes, id, path),
        None => Ok(StreamRead::default()),
    }
}

/// Parses the bytes of a stream: every non-empty trimmed line is one entry.
///
/// # Errors
/// [`Error::ConflictMarkers`] (`history: true`) for the first git conflict-marker line;
/// [`Error::HistoryInvalid`] for a line that is not UTF-8, not JSON or not an entry, unless it
/// is the unterminated last line, which is returned as [`StreamRead::torn_tail`] instead.
pub fn parse_stream(bytes: &[u8], id: &str, path: &Path) -> Result<StreamRead> {
    if may_hold_conflict_marker(bytes)
        && let Some(marker) = find_conflict_marker(&String::from_utf8_lossy(bytes))
    {
        return Err(Error::ConflictMarkers {
            path: path.to_path_buf(),
            line: marker.line,
            history: true,
        });
    }
    let lines = split_lines(bytes);
    let mut read = StreamRead::default();
    let count = lines.len();
    for (index, line) in lines.into_iter().enumerate() {
        let number = index + 1;
        let torn = || TornTail {
            line: number,
            offset: line.offset as u64,
            len: line.bytes.len(),
        };
        let may_be_torn = index + 1 == count && !line.terminated;
        let invalid = |detail: String| Error::HistoryInvalid {
            id: id.to_string(),
            path: path.to_path_buf(),
            line: number,
            detail,
        };
        let text = match std::str::from_utf8(line.bytes) {
            Ok(text) => text,
            Err(_) if may_be_torn => {
                read.torn_tail = Some(torn());
                break;
            }
            Err(err) => return Err(invalid(format!("not UTF-8: {err}"))),
        };
        let text = js::trim(text);
        if text.is_empty() {
            continue;
        }
        // Clean lines are read straight into the entry; anything unusual takes the full path.
        let entry = match parse_entry_line(text) {
            Some(entry) => entry,
            None => {
                let value: Value = match serde_json::from_str(text) {
                    Ok(value) => value,
                    Err(_) if may_be_torn => {
                        read.torn_tail = Some(torn());
                        break;
                    }
                    Err(err) => return Err(invalid(err.to_string())),
                };
                HistoryEntry::from_value(value).map_err(invalid)?
            }
        };
        read.entries.push(entry);
        read.lines.push(number);
        let start = text.as_ptr() as usize - bytes.as_ptr() as usize;
        read.spans.push(start..start + text.len());
    }
    Ok(read)
}

/// Whether any of the three conflict markers occurs anywhere in `bytes`: a byte search that
/// lets almost every stream skip the text conversion [`find_conflict_marker`] needs.
fn may_hold_conflict_marker(bytes: &[u8]) -> bool {
    use memchr::memmem::Finder;
    use std::sync::LazyLock;
    static MARKERS: LazyLock<[Finder<'static>; 3]> = LazyLock::new(|| {
        [
            Finder::new(b"<<<<<<<"),
            Finder::new(b"======="),
            Finder::new(b">>>>>>>"),
        ]
    });
    MARKERS.iter().any(|m| m.find(bytes).is_some())
}

pub(super) struct RawLine<'a> {
    pub(super) offset: usize,
    pub(super) bytes: &'a [u8],
    pub(super) terminated: bool,
}

/// Splits on `\n`; the piece after a final `\n` is not a line.
pub(super) fn split_lines(bytes: &[u8]) -> Vec<RawLine<'_>> {
    let mut lines = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        match memchr::memchr(b'\n', &bytes[start..]) {
            Some(len) => {
                lines.push(RawLine {
                    offset: start,
                    bytes: &bytes[start..start + len],
                    terminated: true,
                });
                start += len + 1;
            }
            None => {
                lines.push(RawLine {
                    offset: start,
                    bytes: &bytes[start..],
                    terminated: false,
                });
                start = bytes.len();
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    const LINE_1: &str = r#"{"ts":"t1","author":"a","op":"create","patch":[{"op":"add","path":"/metadata/id","value":"pm-a"}],"before_hash":"h0","after_hash":"h1","message":""}"#;
    const LINE_2: &str =
        r#"{"ts":"t2","author":"a","op":"update","patch":[],"before_hash":"h1","after_hash":"h2"}"#;

    fn parse(text: &str) -> Result<StreamRead> {
        parse_stream(text.as_bytes(), "pm-a", Path::new("history/pm-a.jsonl"))
    }

    #[test]
    fn empty_and_whitespace_streams_are_empty_histories() -> Result<()> {
        for text in ["", "\n", "  \n\t\n", "\u{feff}\n"] {
            let read = parse(text)?;
            assert!(read.is_empty() && read.torn_tail.is_none(), "{text:?}");
        }
        let missing = read_stream(Path::new("/nonexistent/history/pm-a.jsonl"), "pm-a")?;
        assert_eq!(missing, StreamRead::default());
        Ok(())
    }

    #[test]
    fn lines_are_trimmed_and_blank_lines_skipped() -> Result<()> {
        let text = format!("{LINE_1}\r\n\n  {LINE_2}  \n");
        let read = parse(&text)?;
        assert_eq!(read.entries.len(), 2);
        assert_eq!(read.lines, vec![1, 3]);
        let spans: Vec<&str> = read.spans.iter().map(|s| &text[s.clone()]).collect();
        assert_eq!(spans, vec![LINE_1, LINE_2]);
        assert_eq!(read.entries[1].after_hash, "h2");
        Ok(())
    }

    #[test]
    fn torn_last_line_is_reported_not_fatal() -> Result<()> {
        let torn = &LINE_2[..40];
        let text = format!("{LINE_1}\n{torn}");
        let read = parse(&text)?;
        assert_eq!(read.entries.len(), 1);
        assert_eq!(
            read.torn_tail,
            Some(TornTail {
                line: 2,
                offset: LINE_1.len() as u64 + 1,
                len: 40
            })
        );
        // A torn write can also cut a multi-byte character.
        let mut bytes = format!("{LINE_1}\n{{\"ts\":\"é").into_bytes();
        bytes.pop();
        let read = parse_stream(&bytes, "pm-a", Path::new("x"))?;
        assert_eq!(read.torn_tail.map(|t| t.line), Some(2));
        // An unterminated but complete last line is a normal entry.
        let read = parse(&format!("{LINE_1}\n{LINE_2}"))?;
        assert_eq!((read.entries.len(), read.torn_tail), (2, None));
        Ok(())
    }

    #[test]
    fn invalid_line_reports_its_number() {
        let err = parse(&format!("{LINE_1}\n\n{{not json\n{LINE_2}\n")).expect_err("invalid");
        assert_eq!(err.code(), ErrorCode::HistoryInvalid);
        let Error::HistoryInvalid { line, id, .. } = err else {
            panic!("wrong variant: {err:?}");
        };
        assert_eq!((line, id.as_str()), (3, "pm-a"));
        // A terminated bad last line is invalid, not torn.
        let err = parse(&format!("{LINE_1}\n{{\"ts\"\n")).expect_err("invalid");
        assert!(
            matches!(err, Error::HistoryInvalid { line: 2, .. }),
            "{err:?}"
        );
        // Valid JSON that is not an entry is invalid as well.
        let err = parse(&format!("{LINE_1}\n[1,2]\n")).expect_err("invalid");
        assert!(
            matches!(err, Error::HistoryInvalid { line: 2, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn conflict_markers_are_a_hard_error() {
        let text = format!("{LINE_1}\n<<<<<<< HEAD\n{LINE_2}\n=======\n>>>>>>> theirs\n");
        let err = parse(&text).expect_err("markers");
        assert_eq!(err.code(), ErrorCode::HistoryMergeConflictMarkersDetected);
        assert!(matches!(
            err,
            Error::ConflictMarkers {
                line: 2,
                history: true,
                ..
            }
        ));
        let err = parse(&format!("{LINE_1}\r\n  >>>>>>> branch-name\r\n")).expect_err("marker");
        assert!(
            matches!(err, Error::ConflictMarkers { line: 2, .. }),
            "{err:?}"
        );
        // `========` is not a marker: the line is merely invalid.
        let err = parse(&format!("{LINE_1}\n========\n")).expect_err("invalid");
        assert!(
            matches!(err, Error::HistoryInvalid { line: 2, .. }),
            "{err:?}"
        );
    }
}
