//! JSON-front-matter Markdown (`.md`) items: splitting a file into its JSON object and
//! body on read, and writing `JSON.stringify(meta, null, 2)` plus the body.

use super::canon::js;

/// A Markdown item file split into its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMarkdown<'a> {
    /// The JSON object text, from `{` to its matching `}`.
    pub front_matter: &'a str,
    /// Everything after the object, with the leading `\r?\n+` run removed (not yet normalized).
    pub body: &'a str,
    /// Whether a leading YAML `---` document was skipped
    /// (`json_markdown_leading_yaml_frontmatter_ignored`).
    pub yaml_skipped: bool,
}

/// Why a Markdown item has no usable front matter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitError {
    /// The text starts with `{` (after trimming) but the object never closes.
    Unterminated,
    /// The text does not start with a JSON object.
    Missing,
}

impl SplitError {
    /// Returns pm's message for the error.
    pub fn message(self) -> &'static str {
        match self {
            SplitError::Unterminated => "JSON front matter is not valid JSON",
            SplitError::Missing => "missing JSON front matter",
        }
    }
}

/// Splits a Markdown item: strips a BOM, skips a leading YAML `---` … `---` document, then
/// takes the JSON object at the start and the body after it.
///
/// # Errors
/// Returns [`SplitError`] when the text does not start with a complete JSON object.
pub fn split(text: &str) -> Result<SplitMarkdown<'_>, SplitError> {
    let (content, yaml_skipped) = strip_leading_yaml(text);
    let end = if content.starts_with('{') {
        find_object_end(content)
    } else {
        None
    };
    let Some(end) = end else {
        return Err(if js::trim_start(text).starts_with('{') {
            SplitError::Unterminated
        } else {
            SplitError::Missing
        });
    };
    let rest = &content[end + 1..];
    let rest = rest
        .strip_prefix('\r')
        .filter(|r| r.starts_with('\n'))
        .unwrap_or(rest);
    Ok(SplitMarkdown {
        front_matter: &content[..=end],
        body: rest.trim_start_matches('\n'),
        yaml_skipped,
    })
}

/// Returns the file text pm's SDK writer produces: `<json>\n` for an empty body, otherwise
/// `<json>\n\n<body>\n`. `json` is the pretty-printed, key-ordered metadata.
pub fn compose(json: &str, body: &str) -> String {
    if body.is_empty() {
        format!("{json}\n")
    } else {
        format!("{json}\n\n{body}\n")
    }
}

/// Strips a BOM and a leading YAML document (`---` line … `---` line, then leading whitespace).
/// Without a closing `---` line nothing but the BOM is removed.
fn strip_leading_yaml(text: &str) -> (&str, bool) {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let Some(mut cursor) = yaml_opener_len(text) else {
        return (text, false);
    };
    while cursor < text.len() {
        let line_end = text[cursor..].find('\n').map_or(text.len(), |i| cursor + i);
        let line = text[cursor..line_end]
            .strip_suffix('\r')
            .unwrap_or(&text[cursor..line_end]);
        let after = if line_end < text.len() {
            line_end + 1
        } else {
            line_end
        };
        if js::trim(line) == "---" {
            return (js::trim_start(&text[after..]), true);
        }
        cursor = after;
    }
    (text, false)
}

/// Matches `^[ \t]*---[ \t]*(?:\r?\n|$)` and returns the length of the match.
fn yaml_opener_len(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    if !text[i..].starts_with("---") {
        return None;
    }
    i += 3;
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    match &b[i..] {
        [] => Some(i),
        [b'\n', ..] => Some(i + 1),
        [b'\r', b'\n', ..] => Some(i + 2),
        _ => None,
    }
}

/// Returns the byte index of the `}` closing the object that starts at index 0; braces inside
/// strings (with escapes) do not count.
fn find_object_end(content: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, b) in content.bytes().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_object_and_body() {
        let s = split("{\"a\":\"}{\\\"\",\"b\":{}}\n\n\nBody\n").expect("splits");
        assert_eq!(s.front_matter, "{\"a\":\"}{\\\"\",\"b\":{}}");
        assert_eq!(s.body, "Body\n");
        assert!(!s.yaml_skipped);
    }

    #[test]
    fn crlf_after_the_object_removes_only_one_carriage_return() {
        let s = split("{}\r\n\r\nBody\r\n").expect("splits");
        assert_eq!(s.body, "\r\nBody\r\n");
        assert_eq!(split("{}\rX").expect("splits").body, "\rX");
    }

    #[test]
    fn skips_bom_and_yaml_preamble() {
        let s = split("\u{FEFF}---\r\ntitle: x\r\n --- \r\n\r\n{\"id\":1}\nB").expect("splits");
        assert_eq!(s.front_matter, "{\"id\":1}");
        assert_eq!(s.body, "B");
        assert!(s.yaml_skipped);
    }

    #[test]
    fn unterminated_yaml_is_not_skipped() {
        assert_eq!(split("---\n{\"a\":1}\n"), Err(SplitError::Missing));
    }

    #[test]
    fn reports_missing_and_broken_front_matter() {
        assert_eq!(split("# Title\n"), Err(SplitError::Missing));
        assert_eq!(split("  {\"a\":1}"), Err(SplitError::Unterminated));
        assert_eq!(split("{\"a\":1"), Err(SplitError::Unterminated));
        assert_eq!(SplitError::Missing.message(), "missing JSON front matter");
    }

    #[test]
    fn compose_matches_the_sdk_writer() {
        assert_eq!(compose("{}", ""), "{}\n");
        assert_eq!(compose("{}", "b"), "{}\n\nb\n");
    }
}
