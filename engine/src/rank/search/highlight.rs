//! `search --highlight`: for each matched field, the first place a query token occurs in the
//! field's text as written, marked `«…»` with up to [`CONTEXT_CHARS`] characters on each side.

use crate::item::ItemDoc;
use crate::item::canon::js;

use super::text::{FIELD_NAMES, field_texts};
use super::{KeywordQuery, MatchedFields};

/// Characters of context kept on each side of the marked occurrence.
pub const CONTEXT_CHARS: usize = 60;

/// One field's snippet.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Highlight {
    /// The matched field's name (as in `matched_fields`).
    pub field: &'static str,
    /// The context, the occurrence between `«` and `»`, the context; whitespace runs
    /// (line breaks included) collapsed to one space.
    pub snippet: String,
}

/// Returns the snippets of `doc` for the document fields `matched` names, in `matched_fields`
/// order. A field where no token is found as a substring of its lowercased text (an exact-id
/// hit matches no field) has no snippet.
pub fn highlights(doc: &ItemDoc, matched: MatchedFields, query: &KeywordQuery) -> Vec<Highlight> {
    let texts = field_texts(doc);
    let mut out: Vec<Highlight> = Vec::new();
    for name in matched.names() {
        let Some(position) = FIELD_NAMES.iter().position(|f| *f == name) else {
            continue;
        };
        if let Some(snippet) = snippet(&texts[position], &query.tokens) {
            out.push(Highlight {
                field: FIELD_NAMES[position],
                snippet,
            });
        }
    }
    out
}

/// Returns the snippet of the earliest token occurrence in `text` (the longest token when
/// several start at the same place), or `None` when no token occurs.
pub fn snippet(text: &str, tokens: &[String]) -> Option<String> {
    // Lowercase per character and remember which original character each lowered byte came
    // from, so a match in the lowered text maps back to the text as written.
    let mut lowered = String::with_capacity(text.len());
    let mut origin: Vec<usize> = Vec::with_capacity(text.len());
    let mut buf = [0u8; 4];
    for (at, c) in text.char_indices() {
        let low = js::lowercase(c.encode_utf8(&mut buf));
        origin.extend(std::iter::repeat_n(at, low.len()));
        lowered.push_str(&low);
    }
    let (start, end) = tokens
        .iter()
        .filter(|t| !t.is_empty())
        .filter_map(|t| lowered.find(t.as_str()).map(|s| (s, s + t.len())))
        .min_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))?;
    let from = origin[start];
    let last = origin[end - 1];
    let to = last + text[last..].chars().next().map_or(0, char::len_utf8);
    let before: String = {
        let head: Vec<char> = text[..from].chars().rev().take(CONTEXT_CHARS).collect();
        head.into_iter().rev().collect()
    };
    let after: String = text[to..].chars().take(CONTEXT_CHARS).collect();
    let raw = format!("{before}«{}»{after}", &text[from..to]);
    Some(raw.split_whitespace().collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn marks_the_first_occurrence_as_written() {
        let got = snippet("Fix the Login flow; login again", &tokens(&["login"]));
        assert_eq!(got.as_deref(), Some("Fix the «Login» flow; login again"));
    }

    #[test]
    fn earliest_token_wins_and_longest_on_ties() {
        let got = snippet("authority and auth", &tokens(&["and", "auth", "authority"]));
        assert_eq!(got.as_deref(), Some("«authority» and auth"));
    }

    #[test]
    fn context_is_sixty_characters_each_side_and_whitespace_collapses() {
        let text = format!("{}\n\nneedle\t{}", "a".repeat(100), "b".repeat(100));
        let got = snippet(&text, &tokens(&["needle"])).unwrap_or_default();
        assert_eq!(
            got,
            format!("{} «needle» {}", "a".repeat(58), "b".repeat(59))
        );
    }

    #[test]
    fn maps_lowercase_matches_back_to_multibyte_text() {
        let got = snippet("Ünïcode ÉTÉ test", &tokens(&["été"]));
        assert_eq!(got.as_deref(), Some("Ünïcode «ÉTÉ» test"));
        assert_eq!(snippet("nothing here", &tokens(&["zzz"])), None);
    }
}
