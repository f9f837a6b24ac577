//! pm's keyword search score (index-ranking-bench §3.1): substring weights per field, the
//! exact-title-token bonus, the all-terms bonus, phrase bonuses, exact-id scores, and the hit
//! order. Pure functions over documents; candidate selection and paging belong to callers.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::collate::locale_compare;
use crate::item::ItemDoc;
use crate::item::canon::js;
use crate::timestamp::compare_timestamp_strings;

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
    /// Linked file contents (`--include-linked`).
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

    fn is_phrase(&self) -> bool {
        self.tokens.len() >= 2 && self.normalized.contains(' ')
    }
}

/// One scored item.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchHit {
    /// The item id.
    pub id: String,
    /// The score (> 0).
    pub score: f64,
    /// Fields that matched, sorted with `localeCompare`.
    pub matched_fields: Vec<String>,
    /// Every distinct token matched some field.
    pub matched_all_terms: bool,
    /// The query is the item id (full or without prefix).
    pub exact_id: bool,
}

/// A searchable field: its name, text and weight.
struct Field {
    name: &'static str,
    text: String,
    weight: f64,
}

fn str_of<'a>(meta: &'a Map<String, Value>, key: &str) -> &'a str {
    meta.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn texts(meta: &Map<String, Value>, key: &str) -> String {
    let Some(Value::Array(rows)) = meta.get(key) else {
        return String::new();
    };
    rows.iter()
        .filter_map(|r| r.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `String(value).trim()` of scalar parts, empties dropped, joined with spaces.
fn compact_parts(parts: &[Option<&Value>]) -> String {
    parts
        .iter()
        .filter_map(|p| match p {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.trim().to_owned()),
            Some(Value::Number(n)) => Some(crate::json::format_number(n)),
            Some(Value::Bool(b)) => Some(b.to_string()),
            Some(other) => Some(crate::json::to_compact(other)),
        })
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn joined_list(value: Option<&Value>) -> Option<Value> {
    let rows = value?.as_array()?;
    let parts: Vec<String> = rows
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => crate::json::format_number(n),
            other => crate::json::to_compact(other),
        })
        .collect();
    Some(Value::String(parts.join(" ")))
}

fn reminder_text(meta: &Map<String, Value>) -> String {
    let Some(Value::Array(rows)) = meta.get("reminders") else {
        return String::new();
    };
    rows.iter()
        .map(|r| compact_parts(&[r.get("at"), r.get("text")]))
        .collect::<Vec<_>>()
        .join(" ")
}

fn event_text(meta: &Map<String, Value>) -> String {
    let Some(Value::Array(rows)) = meta.get("events") else {
        return String::new();
    };
    rows.iter()
        .map(|e| {
            let all_day = (e.get("all_day") == Some(&Value::Bool(true)))
                .then(|| Value::String("all day".into()));
            let rec = e.get("recurrence");
            let r = |k: &str| rec.and_then(|r| r.get(k));
            let weekday = joined_list(r("by_weekday"));
            let month_day = joined_list(r("by_month_day"));
            let exdates = joined_list(r("exdates"));
            compact_parts(&[
                e.get("start_at"),
                e.get("end_at"),
                e.get("title"),
                e.get("description"),
                e.get("location"),
                all_day.as_ref(),
                e.get("timezone"),
                r("freq"),
                r("interval"),
                r("count"),
                r("until"),
                weekday.as_ref(),
                month_day.as_ref(),
                exdates.as_ref(),
            ])
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn plan_text(meta: &Map<String, Value>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut push = |v: Option<&Value>| {
        if let Some(s) = v.and_then(Value::as_str).filter(|s| !s.is_empty()) {
            parts.push(s.to_owned());
        }
    };
    for key in [
        "plan_mode",
        "plan_scope",
        "plan_harness",
        "plan_resume_context",
    ] {
        push(meta.get(key));
    }
    let rows = |key: &str| -> Vec<Value> {
        meta.get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    for step in rows("plan_steps") {
        for key in [
            "title",
            "body",
            "status",
            "owner",
            "evidence",
            "blocked_reason",
            "superseded_by",
        ] {
            push(step.get(key));
        }
        let list = |k: &str| step.get(k).and_then(Value::as_array).cloned();
        for link in list("linked_items").unwrap_or_default() {
            let kind = link
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("undefined");
            let id = link
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("undefined");
            push(Some(&Value::String(format!("{kind} {id}"))));
            push(link.get("note"));
        }
        for file in list("files").unwrap_or_default() {
            push(file.get("path"));
            push(file.get("note"));
        }
        for test in list("tests").unwrap_or_default() {
            push(test.get("command"));
            push(test.get("path"));
            push(test.get("note"));
        }
        for doc in list("docs").unwrap_or_default() {
            push(doc.get("path"));
            push(doc.get("note"));
        }
    }
    for d in rows("plan_decisions") {
        push(d.get("decision"));
        push(d.get("rationale"));
        push(d.get("evidence"));
    }
    for d in rows("plan_discoveries") {
        push(d.get("text"));
    }
    for c in rows("plan_validation") {
        push(c.get("text"));
        push(c.get("command"));
        push(c.get("expected"));
    }
    parts.join(" ")
}

fn dependency_text(meta: &Map<String, Value>) -> String {
    let Some(Value::Array(rows)) = meta.get("dependencies") else {
        return String::new();
    };
    rows.iter()
        .filter_map(|d| {
            let id = d.get("id")?.as_str()?;
            let kind = d.get("kind")?.as_str()?;
            Some(format!("{id} {kind}"))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn tag_text(meta: &Map<String, Value>) -> String {
    meta.get("tags")
        .and_then(Value::as_array)
        .map(|tags| {
            tags.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// Returns the searchable fields of `doc` in pm's order, with their weights.
fn fields(doc: &ItemDoc, linked: &str, t: &SearchTuning) -> Vec<Field> {
    let m = &doc.metadata;
    let f = |name, text: String, weight| Field { name, text, weight };
    vec![
        f("title", str_of(m, "title").to_owned(), t.title),
        f(
            "description",
            str_of(m, "description").to_owned(),
            t.description,
        ),
        f("tags", tag_text(m), t.tags),
        f("status", str_of(m, "status").to_owned(), t.status),
        f("body", doc.body.clone(), t.body),
        f("comments", texts(m, "comments"), t.comments),
        f("notes", texts(m, "notes"), t.notes),
        f("learnings", texts(m, "learnings"), t.learnings),
        f("reminders", reminder_text(m), t.reminders),
        f("events", event_text(m), t.events),
        f("dependencies", dependency_text(m), t.dependencies),
        f("plan", plan_text(m), t.body),
        f("linked_content", linked.to_owned(), t.linked_content),
    ]
}

/// Returns true when some searchable field contains the normalised phrase (`exact` mode and
/// `--phrase-exact`).
pub fn contains_phrase(doc: &ItemDoc, normalized: &str) -> bool {
    fields(doc, "", &SearchTuning::default())
        .iter()
        .filter(|f| f.name != "linked_content")
        .any(|f| normalize_phrase(&f.text).contains(normalized))
}

/// Returns the lowercase alphanumeric runs of `text` (`[^a-z0-9]+` splits).
fn alphanumeric_tokens(text: &str) -> Vec<String> {
    js::lowercase(text)
        .split(|c: char| !c.is_ascii_lowercase() && !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

fn exact_id_hit(id: &str, query: &KeywordQuery, id_prefix: &str) -> Option<SearchHit> {
    let full = normalize_phrase(id);
    let prefix = normalize_phrase(&js::lowercase(id_prefix.trim()));
    let short = match full.strip_prefix(prefix.as_str()) {
        Some(rest) if !prefix.is_empty() => rest.trim().to_owned(),
        _ => full.clone(),
    };
    let score = if query.normalized == full {
        EXACT_ID_SCORE
    } else if query.normalized == short {
        SHORT_ID_SCORE
    } else {
        return None;
    };
    Some(SearchHit {
        id: id.to_owned(),
        score,
        matched_fields: vec!["id".into()],
        matched_all_terms: true,
        exact_id: true,
    })
}

/// Scores one document; `None` when the score is 0. `linked` is the linked-content text
/// (empty unless `--include-linked`); `coverage_bonus` is true in `or` mode.
pub fn score_document(
    doc: &ItemDoc,
    query: &KeywordQuery,
    tuning: &SearchTuning,
    id_prefix: &str,
    linked: &str,
    coverage_bonus: bool,
) -> Option<SearchHit> {
    let id = str_of(&doc.metadata, "id");
    if let Some(hit) = exact_id_hit(id, query, id_prefix) {
        return Some(hit);
    }
    let title_tokens = alphanumeric_tokens(str_of(&doc.metadata, "title"));
    let fields = fields(doc, linked, tuning);
    let lowered: Vec<String> = fields.iter().map(|f| js::lowercase(&f.text)).collect();
    let mut score = 0.0;
    let mut matched: BTreeSet<&'static str> = BTreeSet::new();
    let mut matched_tokens: BTreeSet<&str> = BTreeSet::new();
    for token in &query.tokens {
        let exact = title_tokens.iter().filter(|t| *t == token).count();
        if exact > 0 {
            score += exact as f64 * tuning.title_exact_bonus;
            matched.insert("title");
            matched_tokens.insert(token);
        }
        for (field, text) in fields.iter().zip(&lowered) {
            let n = text.matches(token.as_str()).count();
            if n > 0 {
                score += n as f64 * field.weight;
                matched.insert(field.name);
                matched_tokens.insert(token);
            }
        }
    }
    let distinct: BTreeSet<&str> = query.tokens.iter().map(String::as_str).collect();
    let all_terms = !distinct.is_empty() && matched_tokens.len() == distinct.len();
    if coverage_bonus && distinct.len() > 1 && all_terms {
        score += ALL_TERMS_BONUS;
    }
    if query.is_phrase() {
        if normalize_phrase(str_of(&doc.metadata, "title")) == query.normalized {
            score += TITLE_PHRASE_BONUS;
            matched.insert("title");
        }
        for field in &fields {
            let n = normalize_phrase(&field.text)
                .matches(query.normalized.as_str())
                .count();
            if n > 0 {
                score += n as f64 * field.weight * PHRASE_MULTIPLIER;
                matched.insert(field.name);
            }
        }
    }
    if score <= 0.0 {
        return None;
    }
    let mut matched_fields: Vec<String> = matched.into_iter().map(str::to_owned).collect();
    matched_fields.sort_by(|a, b| locale_compare(a, b));
    Some(SearchHit {
        id: id.to_owned(),
        score,
        matched_fields,
        matched_all_terms: all_terms,
        exact_id: false,
    })
}

/// What the hit order needs of an item besides its score.
#[derive(Clone, Copy, Debug)]
pub struct HitKey<'a> {
    /// The score.
    pub score: f64,
    /// The status is terminal.
    pub terminal: bool,
    /// `priority`.
    pub priority: i64,
    /// `updated_at` as stored.
    pub updated_at: &'a str,
    /// The id.
    pub id: &'a str,
}

/// Orders hits: score desc, non-terminal first, priority asc, `updated_at` desc, id asc.
pub fn compare_hits(a: &HitKey<'_>, b: &HitKey<'_>) -> Ordering {
    b.score
        .partial_cmp(&a.score)
        .unwrap_or(Ordering::Equal)
        .then(a.terminal.cmp(&b.terminal))
        .then(a.priority.cmp(&b.priority))
        .then_with(|| compare_timestamp_strings(b.updated_at, a.updated_at))
        .then_with(|| locale_compare(a.id, b.id))
}

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
    use serde_json::json;

    fn doc(meta: Value, body: &str) -> ItemDoc {
        ItemDoc {
            metadata: meta.as_object().cloned().unwrap_or_default(),
            body: body.into(),
        }
    }

    fn score(d: &ItemDoc, q: &str) -> Option<(f64, Vec<String>)> {
        let q = KeywordQuery::new(q)?;
        score_document(d, &q, &SearchTuning::default(), "pm-", "", true)
            .map(|h| (h.score, h.matched_fields))
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
        assert_eq!(
            score(&d, "synthetic"),
            Some((
                66.0,
                vec![
                    "body".into(),
                    "comments".into(),
                    "tags".into(),
                    "title".into()
                ]
            ))
        );
        // Substring: "auth" counts inside "authority", never for the exact token bonus.
        let d = doc(json!({"id": "pm-b", "title": "authority"}), "");
        assert_eq!(score(&d, "auth").map(|s| s.0), Some(48.0));
        assert_eq!(score(&d, "zzz"), None);
    }

    #[test]
    fn exact_ids_phrases_and_all_terms() {
        let d = doc(json!({"id": "pm-a1", "title": "Alpha beta"}), "alpha beta");
        assert_eq!(score(&d, "PM-A1").map(|s| s.0), Some(1000.0));
        assert_eq!(score(&d, "a1").map(|s| s.0), Some(900.0));
        // tokens: alpha (48+10+1) + beta (48+10+1) = 118, all terms +40,
        // title phrase +120, phrase in title 48*6 and body 1*6.
        assert_eq!(
            score(&d, "alpha  beta").map(|s| s.0),
            Some(118.0 + 40.0 + 120.0 + 288.0 + 6.0)
        );
    }

    #[test]
    fn inline_filters_take_the_first_occurrence() {
        let parsed = parse_inline_filters("auth tag:area:search Status:open tag:x foo:bar");
        assert_eq!(parsed.residual, "auth tag:x foo:bar");
        assert_eq!(
            parsed.filters,
            vec![("tag", "area:search".into()), ("status", "open".into())]
        );
    }

    #[test]
    fn hit_order_breaks_ties() {
        let key = |score, terminal, priority, id| HitKey {
            score,
            terminal,
            priority,
            updated_at: "2026-01-01T00:00:00.000Z",
            id,
        };
        let mut keys = [
            key(65.0, false, 2, "b"),
            key(65.0, true, 0, "a"),
            key(66.0, true, 4, "z"),
            key(65.0, false, 0, "c"),
        ];
        keys.sort_by(compare_hits);
        let ids: Vec<&str> = keys.iter().map(|k| k.id).collect();
        assert_eq!(ids, ["z", "c", "b", "a"]);
    }
}
