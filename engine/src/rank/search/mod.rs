//! pm's keyword search (the default search mode): the searchable text of an item ([`text`]),
//! its score ([`score`]), the hit order ([`order`]), inline filters ([`inline`]) and
//! `--highlight` snippets ([`highlight`]). Pure functions; candidate selection and paging
//! belong to callers.

pub mod highlight;
pub mod inline;
pub mod order;
pub mod score;
pub mod text;

use serde_json::{Map, Value};

use crate::item::canon::js;

pub use highlight::{CONTEXT_CHARS, Highlight, highlights};
pub use inline::{INLINE_FIELDS, InlineFilters, parse_inline_filters};
pub use order::{Hit, HitKey, HitOrder, Ranking, compare_hits};
pub use score::{MatchedFields, SearchOptions, SearchScore, SearchSpec};
pub use text::{FIELD_NAMES, SearchText, TextView, field_texts};

/// Exact full-id match score.
pub const EXACT_ID_SCORE: f64 = 1000.0;
/// Exact id-without-prefix match score.
pub const SHORT_ID_SCORE: f64 = 900.0;
/// Bonus when every distinct token of a multi-token query matched (`or` mode).
pub const ALL_TERMS_BONUS: f64 = 40.0;
/// Bonus when the normalised title equals a multi-word query.
pub const TITLE_PHRASE_BONUS: f64 = 120.0;
/// Multiplier of a field weight per phrase occurrence of a multi-word query.
pub const PHRASE_MULTIPLIER: f64 = 6.0;

/// Field weights (`settings.search.tuning`); every weight can be overridden.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchTuning {
    /// Per exact title-token match.
    pub title_exact_bonus: f64,
    /// `title`.
    pub title: f64,
    /// `description`.
    pub description: f64,
    /// `tags` (joined with spaces).
    pub tags: f64,
    /// `status`.
    pub status: f64,
    /// `body` (also the plan text).
    pub body: f64,
    /// `comments[].text`.
    pub comments: f64,
    /// `notes[].text`.
    pub notes: f64,
    /// `learnings[].text`.
    pub learnings: f64,
    /// Reminder text.
    pub reminders: f64,
    /// Event text.
    pub events: f64,
    /// `"<id> <kind>"` per dependency edge.
    pub dependencies: f64,
    /// Linked file contents (`--include-linked`, which pm-rs does not offer: no linked text is
    /// ever scored).
    pub linked_content: f64,
}

impl Default for SearchTuning {
    fn default() -> Self {
        SearchTuning {
            title_exact_bonus: 10.0,
            title: 48.0,
            description: 5.0,
            tags: 6.0,
            status: 2.0,
            body: 1.0,
            comments: 1.0,
            notes: 1.0,
            learnings: 1.0,
            reminders: 2.0,
            events: 2.0,
            dependencies: 3.0,
            linked_content: 1.0,
        }
    }
}

impl SearchTuning {
    /// Returns the tuning of `settings.search.tuning` over the defaults; a weight that is not
    /// a finite number ≥ 0 keeps its default.
    pub fn from_settings(tuning: Option<&Map<String, Value>>) -> SearchTuning {
        let mut t = SearchTuning::default();
        let Some(map) = tuning else { return t };
        let slots: [(&str, &mut f64); 13] = [
            ("title_exact_bonus", &mut t.title_exact_bonus),
            ("title_weight", &mut t.title),
            ("description_weight", &mut t.description),
            ("tags_weight", &mut t.tags),
            ("status_weight", &mut t.status),
            ("body_weight", &mut t.body),
            ("comments_weight", &mut t.comments),
            ("notes_weight", &mut t.notes),
            ("learnings_weight", &mut t.learnings),
            ("reminders_weight", &mut t.reminders),
            ("events_weight", &mut t.events),
            ("dependencies_weight", &mut t.dependencies),
            ("linked_content_weight", &mut t.linked_content),
        ];
        for (key, slot) in slots {
            if let Some(w) = map
                .get(key)
                .and_then(Value::as_f64)
                .filter(|w| w.is_finite() && *w >= 0.0)
            {
                *slot = w;
            }
        }
        t
    }
}

/// How query tokens combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchMode {
    /// Any token may match; covering every token earns [`ALL_TERMS_BONUS`].
    Or,
    /// Every distinct token must match somewhere (hard filter).
    And,
    /// The normalised phrase must occur contiguously in some field (hard filter).
    Exact,
}

impl MatchMode {
    /// Parses `and|or|exact` (trimmed, case-insensitive).
    pub fn parse(raw: &str) -> Option<MatchMode> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "or" => Some(MatchMode::Or),
            "and" => Some(MatchMode::And),
            "exact" => Some(MatchMode::Exact),
            _ => None,
        }
    }

    /// Returns the mode's name.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchMode::Or => "or",
            MatchMode::And => "and",
            MatchMode::Exact => "exact",
        }
    }
}

/// Lowercases (JavaScript `toLowerCase`), collapses whitespace runs to one space and trims.
pub fn normalize_phrase(value: &str) -> String {
    js::lowercase(value)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A prepared keyword query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeywordQuery {
    /// Whitespace-separated lowercase tokens (not split on punctuation), in query order.
    pub tokens: Vec<String>,
    /// The normalised phrase.
    pub normalized: String,
}

impl KeywordQuery {
    /// Prepares `query`; `None` when it holds no token.
    pub fn new(query: &str) -> Option<KeywordQuery> {
        let normalized = normalize_phrase(query);
        if normalized.is_empty() {
            return None;
        }
        let tokens = normalized.split(' ').map(str::to_owned).collect();
        Some(KeywordQuery { tokens, normalized })
    }

    /// Returns true for a multi-word query (phrase bonuses apply).
    pub(crate) fn is_phrase(&self) -> bool {
        self.tokens.len() >= 2 && self.normalized.contains(' ')
    }
}
