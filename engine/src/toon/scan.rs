//! Splits TOON text into lines and measures their indentation (strict mode: multiples of two
//! spaces, no tabs). Comment lines vanish here; blank lines are remembered by number because
//! strict decoding forbids them inside arrays. A bad line is kept as an error and only
//! reported when the decoder reaches it, so errors surface in the same order as in 4.1.1.

use super::ToonError;

/// Spaces per indentation level (the library default).
pub(crate) const INDENT: usize = 2;

/// One non-blank, non-comment line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Line<'a> {
    /// The text after the indentation, trailing spaces removed.
    pub content: &'a str,
    /// Indentation level (`indent / 2`).
    pub depth: usize,
    /// 1-based line number in the input.
    pub number: usize,
}

impl<'a> Line<'a> {
    /// Returns the same line with other content (used for the text after a list hyphen).
    pub fn with_content(self, content: &'a str) -> Line<'a> {
        Line { content, ..self }
    }

    /// Returns an error located at this line.
    pub fn error(&self, message: impl Into<String>) -> ToonError {
        ToonError::new(self.number, message)
    }
}

enum Slot<'a> {
    Line(Line<'a>),
    Error(ToonError),
}

/// A cursor over the scanned lines.
pub(crate) struct Reader<'a> {
    slots: Vec<Slot<'a>>,
    pos: usize,
    blank_lines: Vec<usize>,
    /// Number of the last line consumed.
    pub last_number: Option<usize>,
}

impl<'a> Reader<'a> {
    /// Scans `text` (split on `\n`, a BOM on line 1 and a trailing `\r` per line removed).
    pub fn new(text: &'a str) -> Reader<'a> {
        // Item lines average well over 40 bytes; this avoids most regrowth.
        let mut slots = Vec::with_capacity(text.len() / 40 + 1);
        let mut blank_lines = Vec::new();
        for (index, raw) in text.split('\n').enumerate() {
            let number = index + 1;
            let raw = if number == 1 {
                raw.strip_prefix('\u{FEFF}').unwrap_or(raw)
            } else {
                raw
            };
            let raw = raw.strip_suffix('\r').unwrap_or(raw);
            let b = raw.as_bytes();
            let ws_len = b.iter().take_while(|c| **c == b' ' || **c == b'\t').count();
            let first_tab = b[..ws_len].iter().position(|c| *c == b'\t');
            let indent = first_tab.unwrap_or(ws_len);
            let content = raw[indent..].trim_end_matches(' ');
            if first_tab.is_none() && content.starts_with('#') {
                continue;
            }
            if content.is_empty() {
                blank_lines.push(number);
                continue;
            }
            let slot = if first_tab.is_some() {
                Slot::Error(ToonError::new(
                    number,
                    "Tabs are not allowed in indentation in strict mode",
                ))
            } else if indent % INDENT != 0 {
                Slot::Error(ToonError::new(
                    number,
                    format!(
                        "Indentation must be exact multiple of {INDENT}, but found {indent} spaces"
                    ),
                ))
            } else {
                Slot::Line(Line {
                    content,
                    depth: indent / INDENT,
                    number,
                })
            };
            slots.push(slot);
        }
        Reader {
            slots,
            pos: 0,
            blank_lines,
            last_number: None,
        }
    }

    /// Returns the next line without consuming it.
    pub fn peek(&self) -> Result<Option<Line<'a>>, ToonError> {
        match self.slots.get(self.pos) {
            None => Ok(None),
            Some(Slot::Line(line)) => Ok(Some(*line)),
            Some(Slot::Error(e)) => Err(e.clone()),
        }
    }

    /// Returns how many lines are left (an upper bound for any count still to be read).
    pub fn remaining(&self) -> usize {
        self.slots.len() - self.pos.min(self.slots.len())
    }

    /// Counts the upcoming lines at exactly `depth` before the first shallower one: the number
    /// of fields of an object whose fields start here (used to size maps up front).
    pub fn count_siblings(&self, depth: usize) -> usize {
        let mut n = 0;
        for slot in self.slots.iter().skip(self.pos) {
            match slot {
                Slot::Line(line) if line.depth == depth => n += 1,
                Slot::Line(line) if line.depth > depth => {}
                _ => break,
            }
        }
        n
    }

    /// Consumes the next line (call after a successful [`Reader::peek`]).
    pub fn advance(&mut self) {
        if let Some(Slot::Line(line)) = self.slots.get(self.pos) {
            self.last_number = Some(line.number);
        }
        self.pos += 1;
    }

    /// Fails if a blank line lies strictly between lines `first` and `last`.
    pub fn check_no_blank_lines(
        &self,
        first: usize,
        last: usize,
        context: &str,
    ) -> Result<(), ToonError> {
        let at = self.blank_lines.partition_point(|n| *n <= first);
        match self.blank_lines.get(at) {
            Some(&n) if n < last => Err(ToonError::new(
                n,
                format!("Blank lines inside {context} are not allowed in strict mode"),
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_lines_comments_and_blanks() {
        let mut r = Reader::new("\u{feff}a: 1\r\n\n  # note\n  b:  \n\tc\n   d");
        let first = r
            .peek()
            .ok()
            .flatten()
            .map(|l| (l.content, l.depth, l.number));
        assert_eq!(first, Some(("a: 1", 0, 1)));
        r.advance();
        let second = r
            .peek()
            .ok()
            .flatten()
            .map(|l| (l.content, l.depth, l.number));
        assert_eq!(second, Some(("b:", 1, 4)));
        assert_eq!(r.count_siblings(1), 1);
        assert!(r.check_no_blank_lines(1, 4, "x").is_err());
        assert!(r.check_no_blank_lines(2, 4, "x").is_ok());
        r.advance();
        assert_eq!(r.peek().map_err(|e| e.line), Err(5));
        r.advance();
        assert_eq!(
            r.peek().map_err(|e| e.message),
            Err("Indentation must be exact multiple of 2, but found 3 spaces".into())
        );
        r.advance();
        assert_eq!(r.remaining(), 0);
    }
}
