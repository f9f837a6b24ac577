//! Inline `field:value` filters inside a search query (`tag:`, `status:`, `type:`,
//! `priority:`): split out of the keyword text before scoring.

use crate::item::canon::js;

/// The inline `field:value` tokens pm recognises in a search query.
pub const INLINE_FIELDS: [&str; 4] = ["tag", "status", "type", "priority"];

/// A query split into its keyword text and inline filters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InlineFilters {
    /// The query without the recognised tokens (tokens joined by one space).
    pub residual: String,
    /// `(field, value)` in [`INLINE_FIELDS`] order; the first occurrence of each field wins.
    pub filters: Vec<(&'static str, String)>,
}

/// Splits inline `tag:`/`status:`/`type:`/`priority:` tokens out of `query` (only the first
/// colon separates; later duplicates of a field stay in the residual text).
pub fn parse_inline_filters(query: &str) -> InlineFilters {
    let mut found: Vec<(&'static str, String)> = Vec::new();
    let mut residual: Vec<&str> = Vec::new();
    for token in query.split_whitespace() {
        let hit = token.split_once(':').and_then(|(field, value)| {
            let field = js::lowercase(field);
            let name = INLINE_FIELDS.iter().find(|f| **f == field)?;
            (!field.is_empty() && !value.is_empty() && !found.iter().any(|(f, _)| f == name))
                .then(|| (*name, value.to_owned()))
        });
        match hit {
            Some(pair) => found.push(pair),
            None => residual.push(token),
        }
    }
    found.sort_by_key(|(f, _)| INLINE_FIELDS.iter().position(|x| x == f));
    InlineFilters {
        residual: residual.join(" "),
        filters: found,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_filters_take_the_first_occurrence() {
        let parsed = parse_inline_filters("auth tag:area:search Status:open tag:x foo:bar");
        assert_eq!(parsed.residual, "auth tag:x foo:bar");
        assert_eq!(
            parsed.filters,
            vec![("tag", "area:search".into()), ("status", "open".into())]
        );
    }
}
