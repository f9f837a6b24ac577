//! pm's keyword score over a [`SearchText`]: substring counts per
//! field times its weight, the exact-title-token bonus, the all-terms bonus, phrase bonuses and
//! exact-id scores, plus the hard filters of a search (title-exact, phrase, `and`, threshold).
//! Scoring allocates nothing per candidate unless the query is a multi-word phrase.

use memchr::memmem::Finder;

use super::text::{FIELD_COUNT, FIELD_NAMES, TITLE, TextView};
use super::{
    ALL_TERMS_BONUS, EXACT_ID_SCORE, KeywordQuery, MatchMode, PHRASE_MULTIPLIER, SHORT_ID_SCORE,
    SearchTuning, TITLE_PHRASE_BONUS, normalize_phrase,
};
use crate::collate::locale_compare;
use crate::item::canon::js;

/// The fields that matched a candidate: the document fields by position, and `id`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MatchedFields(u16);

impl MatchedFields {
    const ID: u16 = 1 << FIELD_COUNT;

    fn field(&mut self, position: usize) {
        self.0 |= 1 << position;
    }

    /// Returns the matched field names sorted with `localeCompare` (pm's `matched_fields`).
    pub fn names(self) -> Vec<String> {
        let mut names: Vec<String> = FIELD_NAMES
            .iter()
            .enumerate()
            .filter(|(i, _)| self.0 & (1 << i) != 0)
            .map(|(_, n)| (*n).to_owned())
            .collect();
        if self.0 & Self::ID != 0 {
            names.push("id".into());
        }
        names.sort_by(|a, b| locale_compare(a, b));
        names
    }
}

/// The score of one candidate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchScore {
    /// The score (> 0).
    pub score: f64,
    /// The fields that matched.
    pub matched: MatchedFields,
    /// Every distinct token matched some field.
    pub matched_all_terms: bool,
    /// The query is the item id (full or without prefix).
    pub exact_id: bool,
}

/// What a search asks besides its keywords.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchOptions {
    /// Field weights.
    pub tuning: SearchTuning,
    /// The id prefix (`settings.id_prefix`) an id may be searched without.
    pub id_prefix: String,
    /// How tokens combine.
    pub match_mode: MatchMode,
    /// Keep only items whose normalised title equals the query.
    pub title_exact: bool,
    /// Keep only items containing the normalised query in some field.
    pub phrase_exact: bool,
    /// Drop hits below this score (exact-id hits excepted).
    pub min_score: f64,
}

/// A prepared search: the query, its options and the substring finders of its tokens.
#[derive(Clone, Debug)]
pub struct SearchSpec {
    query: KeywordQuery,
    options: SearchOptions,
    weights: [f64; FIELD_COUNT],
    id_prefix: String,
    finders: Vec<Finder<'static>>,
    /// The distinct-token number of each query token.
    distinct_of: Vec<usize>,
    distinct: usize,
    phrase: Finder<'static>,
}

impl SearchSpec {
    /// Prepares `query` under `options`.
    pub fn new(query: KeywordQuery, options: SearchOptions) -> SearchSpec {
        let t = &options.tuning;
        let weights = [
            t.title,
            t.description,
            t.tags,
            t.status,
            t.body,
            t.comments,
            t.notes,
            t.learnings,
            t.reminders,
            t.events,
            t.dependencies,
            t.body,
        ];
        let mut seen: Vec<&str> = Vec::new();
        let distinct_of = query
            .tokens
            .iter()
            .map(|tok| match seen.iter().position(|s| *s == tok) {
                Some(i) => i,
                None => {
                    seen.push(tok);
                    seen.len() - 1
                }
            })
            .collect();
        let distinct = seen.len();
        SearchSpec {
            finders: query
                .tokens
                .iter()
                .map(|tok| Finder::new(tok.as_bytes()).into_owned())
                .collect(),
            phrase: Finder::new(query.normalized.as_bytes()).into_owned(),
            distinct_of,
            distinct,
            weights,
            id_prefix: normalize_phrase(&js::lowercase(options.id_prefix.trim())),
            query,
            options,
        }
    }

    /// Returns the query.
    pub fn query(&self) -> &KeywordQuery {
        &self.query
    }

    /// Returns the options.
    pub fn options(&self) -> &SearchOptions {
        &self.options
    }

    /// Returns the hit of `text`, or `None` when the search drops it: the title-exact and
    /// phrase filters, a zero score, `and` mode without every token, or a score below the
    /// threshold (exact-id hits are kept).
    pub fn hit(&self, text: &TextView<'_>) -> Option<SearchScore> {
        if self.options.title_exact && !collapsed_eq(text.title(), &self.query.normalized) {
            return None;
        }
        let phrase_required =
            self.options.phrase_exact || self.options.match_mode == MatchMode::Exact;
        if phrase_required && !self.contains_phrase(text) {
            return None;
        }
        let hit = self.score(text)?;
        if self.options.match_mode == MatchMode::And && !hit.matched_all_terms {
            return None;
        }
        if !hit.exact_id && hit.score < self.options.min_score {
            return None;
        }
        Some(hit)
    }

    /// Returns true when some field contains the normalised query (whitespace runs collapsed).
    pub fn contains_phrase(&self, text: &TextView<'_>) -> bool {
        // Tokens hold no whitespace, so a field whose collapsed form contains the phrase
        // contains its first token as it is.
        let first = &self.finders[0];
        text.fields.iter().any(|f| {
            first.find(f.as_bytes()).is_some() && self.phrase.find(collapse(f).as_bytes()).is_some()
        })
    }

    fn exact_id(&self, id: &str) -> Option<f64> {
        let short = match id.strip_prefix(self.id_prefix.as_str()) {
            Some(rest) if !self.id_prefix.is_empty() => rest.trim(),
            _ => id,
        };
        if self.query.normalized == id {
            Some(EXACT_ID_SCORE)
        } else if self.query.normalized == short {
            Some(SHORT_ID_SCORE)
        } else {
            None
        }
    }

    /// Returns the score of `text`; `None` when it is 0. In `or` mode, covering every distinct
    /// token of a multi-token query earns the all-terms bonus.
    pub fn score(&self, text: &TextView<'_>) -> Option<SearchScore> {
        if let Some(score) = self.exact_id(text.id) {
            return Some(SearchScore {
                score,
                matched: MatchedFields(MatchedFields::ID),
                matched_all_terms: true,
                exact_id: true,
            });
        }
        let mut score = 0.0;
        let mut matched = MatchedFields::default();
        let mut tokens = TokenSet::new(self.distinct);
        for ((token, finder), &d) in self
            .query
            .tokens
            .iter()
            .zip(&self.finders)
            .zip(&self.distinct_of)
        {
            let exact = title_tokens(text.title()).filter(|t| t == token).count();
            if exact > 0 {
                score += exact as f64 * self.options.tuning.title_exact_bonus;
                matched.field(TITLE);
                tokens.insert(d);
            }
            for (i, field) in text.fields.iter().enumerate() {
                if field.len() < token.len() {
                    continue;
                }
                let n = finder.find_iter(field.as_bytes()).count();
                if n > 0 {
                    score += n as f64 * self.weights[i];
                    matched.field(i);
                    tokens.insert(d);
                }
            }
        }
        let all_terms = self.distinct > 0 && tokens.len() == self.distinct;
        if self.options.match_mode == MatchMode::Or && self.distinct > 1 && all_terms {
            score += ALL_TERMS_BONUS;
        }
        if self.query.is_phrase() {
            if collapsed_eq(text.title(), &self.query.normalized) {
                score += TITLE_PHRASE_BONUS;
                matched.field(TITLE);
            }
            for (i, field) in text.fields.iter().enumerate() {
                if self.finders[0].find(field.as_bytes()).is_none() {
                    continue;
                }
                let n = self.phrase.find_iter(collapse(field).as_bytes()).count();
                if n > 0 {
                    score += n as f64 * self.weights[i] * PHRASE_MULTIPLIER;
                    matched.field(i);
                }
            }
        }
        (score > 0.0).then_some(SearchScore {
            score,
            matched,
            matched_all_terms: all_terms,
            exact_id: false,
        })
    }
}

/// Collapses whitespace runs of lowercased text to one space and trims it: `normalize_phrase`
/// of the original text.
fn collapse(lowered: &str) -> String {
    lowered.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Returns `collapse(lowered) == normalized` without allocating: `normalized` is single-spaced
/// and trimmed, and no whitespace-split part holds a space.
fn collapsed_eq(lowered: &str, normalized: &str) -> bool {
    lowered.split_whitespace().eq(normalized.split(' '))
}

/// The alphanumeric runs of a lowercased title (`[^a-z0-9]+` splits).
fn title_tokens(lowered: &str) -> impl Iterator<Item = &str> {
    lowered
        .split(|c: char| !c.is_ascii_lowercase() && !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
}

/// The distinct tokens that matched, without allocating for up to 64 of them.
struct TokenSet {
    bits: u64,
    more: Vec<bool>,
    count: usize,
}

impl TokenSet {
    fn new(distinct: usize) -> TokenSet {
        TokenSet {
            bits: 0,
            more: if distinct > 64 {
                vec![false; distinct]
            } else {
                Vec::new()
            },
            count: 0,
        }
    }

    fn insert(&mut self, d: usize) {
        let fresh = if self.more.is_empty() {
            let was = self.bits & (1 << d) != 0;
            self.bits |= 1 << d;
            !was
        } else {
            !std::mem::replace(&mut self.more[d], true)
        };
        self.count += usize::from(fresh);
    }

    fn len(&self) -> usize {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::ItemDoc;
    use crate::rank::search::SearchText;
    use serde_json::{Value, json};

    fn doc(meta: Value, body: &str) -> ItemDoc {
        ItemDoc {
            metadata: meta.as_object().cloned().unwrap_or_default(),
            body: body.into(),
        }
    }

    fn options() -> SearchOptions {
        SearchOptions {
            tuning: SearchTuning::default(),
            id_prefix: "pm-".into(),
            match_mode: MatchMode::Or,
            title_exact: false,
            phrase_exact: false,
            min_score: 0.0,
        }
    }

    fn score(d: &ItemDoc, q: &str) -> Option<(f64, Vec<String>)> {
        let spec = SearchSpec::new(KeywordQuery::new(q)?, options());
        spec.score(&SearchText::of(d).view())
            .map(|h| (h.score, h.matched.names()))
    }

    #[test]
    fn substring_weights_and_title_token_bonus() {
        let d = doc(
            json!({"id": "pm-a1", "title": "Synthetic task 7", "description": "",
                   "tags": ["synthetic"], "status": "open",
                   "comments": [{"text": "synthetic comment"}]}),
            "Synthetic body",
        );
        // title 48 + exact title token 10 + tags 6 + body 1 + comments 1.
        let fields = ["body", "comments", "tags", "title"].map(str::to_owned);
        assert_eq!(score(&d, "synthetic"), Some((66.0, fields.to_vec())));
        // Substring: "auth" counts inside "authority", never for the exact token bonus.
        let d = doc(json!({"id": "pm-b", "title": "authority"}), "");
        assert_eq!(score(&d, "auth").map(|s| s.0), Some(48.0));
        assert_eq!(score(&d, "zzz"), None);
        // Non-overlapping counts: "aa" occurs twice in "aaaa", once in "aaa".
        let d = doc(json!({"id": "pm-c", "description": "aaaa aaa"}), "");
        assert_eq!(score(&d, "aa").map(|s| s.0), Some(15.0));
    }

    #[test]
    fn exact_ids_phrases_and_all_terms() {
        let d = doc(
            json!({"id": "pm-a1", "title": "Alpha beta"}),
            "alpha\n beta",
        );
        assert_eq!(score(&d, "PM-A1").map(|s| s.0), Some(1000.0));
        assert_eq!(score(&d, "a1").map(|s| s.0), Some(900.0));
        assert_eq!(score(&d, "a1").map(|s| s.1), Some(vec!["id".to_owned()]));
        // tokens: alpha (48+10+1) + beta (48+10+1) = 118, all terms +40,
        // title phrase +120, phrase in title 48*6 and body 1*6.
        assert_eq!(
            score(&d, "alpha  beta").map(|s| s.0),
            Some(118.0 + 40.0 + 120.0 + 288.0 + 6.0)
        );
    }

    #[test]
    fn filters_of_a_hit() {
        let text = SearchText::of(&doc(
            json!({"id": "pm-a1", "title": "Alpha beta", "description": "beta gamma"}),
            "",
        ));
        let d = text.view();
        let spec = |q: &str, f: &dyn Fn(&mut SearchOptions)| {
            let mut o = options();
            f(&mut o);
            SearchSpec::new(KeywordQuery::new(q).unwrap_or_else(|| panic!("query")), o)
        };
        assert!(
            spec("alpha gamma", &|o| o.match_mode = MatchMode::And)
                .hit(&d)
                .is_some()
        );
        assert!(
            spec("alpha delta", &|o| o.match_mode = MatchMode::And)
                .hit(&d)
                .is_none()
        );
        assert!(
            spec("beta gamma", &|o| o.match_mode = MatchMode::Exact)
                .hit(&d)
                .is_some()
        );
        assert!(
            spec("alpha gamma", &|o| o.phrase_exact = true)
                .hit(&d)
                .is_none()
        );
        assert!(
            spec("ALPHA beta", &|o| o.title_exact = true)
                .hit(&d)
                .is_some()
        );
        assert!(spec("alpha", &|o| o.title_exact = true).hit(&d).is_none());
        assert!(spec("alpha", &|o| o.min_score = 59.0).hit(&d).is_none());
        assert!(spec("a1", &|o| o.min_score = 5000.0).hit(&d).is_some());
    }
}
