//! Duplicate detection at create (`governance.duplicate_detection_*`): pm's deterministic title
//! similarity (exact title, shared issue code, token Jaccard), the ranked candidate list and the
//! off/advisory/strict decision. Reads item summaries; never writes.

use icu_properties::CodePointMapData;
use icu_properties::props::{GeneralCategory, GeneralCategoryGroup};

use crate::collate::locale_compare;
use crate::error::{Error, Result};
use crate::item::canon::js;
use crate::schema::RuntimeSchema;
use crate::summary::{ItemSummary, StatusClass};
use crate::tracker::Tracker;

/// The largest `duplicate_detection_limit` pm accepts.
pub const MAX_LIMIT: u64 = 20;

/// A title reduced to the signals scoring compares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreparedTitle {
    /// Trimmed, lowercased, each whitespace run one space (exact comparison).
    pub normalized: String,
    /// Unique runs of letters and digits, in order of first appearance.
    pub tokens: Vec<String>,
    /// Unique issue codes (`pm-123`, `gh-42-fix`), in order of first appearance.
    pub issue_codes: Vec<String>,
}

/// The strongest signal behind a score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchReason {
    /// The normalized titles are equal (score 1).
    ExactTitle,
    /// Both titles name the same issue code (score 0.99).
    IssueCode,
    /// Jaccard overlap of the title tokens.
    TitleTokenJaccard,
}

impl MatchReason {
    /// Returns pm's reason token.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchReason::ExactTitle => "exact_title",
            MatchReason::IssueCode => "issue_code",
            MatchReason::TitleTokenJaccard => "title_token_jaccard",
        }
    }
}

/// The similarity of two titles on the zero-to-one scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TitleScore {
    /// The score.
    pub score: f64,
    /// Why.
    pub reason: MatchReason,
}

/// An existing item whose title is likely the same work.
#[derive(Clone, Debug, PartialEq)]
pub struct SimilarItem {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its status.
    pub status: String,
    /// Its type.
    pub item_type: String,
    /// Whether its status is terminal (the recovery is a reopen, not a reuse).
    pub terminal: bool,
    /// The score.
    pub score: f64,
    /// The strongest signal.
    pub reason: MatchReason,
}

impl SimilarItem {
    /// Returns `reuse` for an active item, `reopen` for a terminal one.
    pub fn recovery(&self) -> &'static str {
        if self.terminal { "reopen" } else { "reuse" }
    }
}

/// `governance.duplicate_detection_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DuplicateMode {
    /// No check.
    Off,
    /// Create proceeds; the receipt names the likely duplicates.
    Advisory,
    /// Create refuses (`likely_duplicate`, exit 4) unless `--allow-duplicate`.
    Strict,
}

impl DuplicateMode {
    /// Reads the settings token (`off`, `advisory`, `strict`; anything else is `off`).
    pub fn from_setting(token: &str) -> DuplicateMode {
        match token {
            "advisory" => DuplicateMode::Advisory,
            "strict" => DuplicateMode::Strict,
            _ => DuplicateMode::Off,
        }
    }
}

/// Returns the normalized title, its tokens and its issue codes (pm's `prepareSimilarityText`).
pub fn prepare(title: &str) -> PreparedTitle {
    let normalized = normalize(title);
    PreparedTitle {
        tokens: unique(letter_digit_runs(&normalized)),
        issue_codes: unique(issue_codes(&normalized)),
        normalized,
    }
}

/// Scores two prepared titles: equal normalized text is 1, a shared issue code 0.99, otherwise
/// the Jaccard overlap of the token sets (1 when neither has a token).
pub fn score(left: &PreparedTitle, right: &PreparedTitle) -> TitleScore {
    if left.normalized == right.normalized {
        return TitleScore {
            score: 1.0,
            reason: MatchReason::ExactTitle,
        };
    }
    if right
        .issue_codes
        .iter()
        .any(|c| left.issue_codes.contains(c))
    {
        return TitleScore {
            score: 0.99,
            reason: MatchReason::IssueCode,
        };
    }
    TitleScore {
        score: jaccard(&left.tokens, &right.tokens),
        reason: MatchReason::TitleTokenJaccard,
    }
}

/// Scores two raw titles (see [`score`]).
pub fn score_titles(left: &str, right: &str) -> TitleScore {
    score(&prepare(left), &prepare(right))
}

/// An existing item as the duplicate check sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate<'a> {
    /// Its id.
    pub id: &'a str,
    /// Its title.
    pub title: &'a str,
    /// Its status.
    pub status: &'a str,
    /// Its type.
    pub item_type: &'a str,
    /// Whether the status is terminal.
    pub terminal: bool,
}

impl<'a> Candidate<'a> {
    /// Returns the candidate view of a summary.
    pub fn of(summary: &'a ItemSummary) -> Candidate<'a> {
        Candidate {
            id: &summary.id,
            title: &summary.title,
            status: &summary.status,
            item_type: &summary.item_type,
            terminal: summary.status_class == StatusClass::Terminal,
        }
    }
}

/// Returns the items whose title scores at least `threshold` against `title`, best first (ties
/// by id with `localeCompare`), at most `limit` of them.
pub fn rank<'a>(
    title: &str,
    candidates: impl IntoIterator<Item = Candidate<'a>>,
    threshold: f64,
    limit: usize,
) -> Vec<SimilarItem> {
    let wanted = prepare(title);
    let mut found: Vec<SimilarItem> = candidates
        .into_iter()
        .filter_map(|item| {
            let scored = score(&wanted, &prepare(item.title));
            (scored.score >= threshold).then(|| SimilarItem {
                id: item.id.to_string(),
                title: item.title.to_string(),
                status: item.status.to_string(),
                item_type: item.item_type.to_string(),
                terminal: item.terminal,
                score: scored.score,
                reason: scored.reason,
            })
        })
        .collect();
    found.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| locale_compare(&a.id, &b.id))
    });
    found.truncate(limit);
    found
}

/// Runs the create-time duplicate check for `title` over every readable item of the tracker
/// (all statuses): `None` when the mode is off, otherwise the ranked likely duplicates.
///
/// # Errors
/// `invalid_argument_value` for a threshold outside 0..=1 or a limit over 20 (pm's bounds),
/// and the scan's I/O errors.
pub fn find_similar(
    tracker: &Tracker,
    schema: &RuntimeSchema,
    title: &str,
    threshold: f64,
    limit: u64,
) -> Result<Vec<SimilarItem>> {
    if !(0.0..=1.0).contains(&threshold) {
        return Err(bound_error(
            "governance.duplicate_detection_threshold",
            threshold.to_string(),
            "Similarity threshold must be a number from 0 to 1.",
        ));
    }
    if limit > MAX_LIMIT {
        return Err(bound_error(
            "governance.duplicate_detection_limit",
            limit.to_string(),
            "Similarity limit must be an integer from 0 to 20.",
        ));
    }
    let outcome = crate::scan::scan(tracker, schema)?;
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    Ok(rank(
        title,
        outcome.summaries.iter().map(Candidate::of),
        threshold,
        limit,
    ))
}

/// Applies the mode to the likely duplicates: the receipt warnings
/// (`likely_duplicates:<id>[,<id>…]`, `likely_duplicate_recovery:<reuse|reopen>:<best id>`),
/// or the strict refusal.
///
/// # Errors
/// `likely_duplicate` (exit 4) under strict mode without `allow_duplicate`.
pub fn decide(
    mode: DuplicateMode,
    allow_duplicate: bool,
    matches: Vec<SimilarItem>,
) -> Result<Vec<String>> {
    let Some(best) = matches.first() else {
        return Ok(Vec::new());
    };
    match mode {
        DuplicateMode::Off => Ok(Vec::new()),
        DuplicateMode::Strict if !allow_duplicate => Err(Error::LikelyDuplicate { matches }),
        DuplicateMode::Advisory | DuplicateMode::Strict => {
            let ids: Vec<&str> = matches.iter().map(|m| m.id.as_str()).collect();
            Ok(vec![
                format!("likely_duplicates:{}", ids.join(",")),
                format!("likely_duplicate_recovery:{}:{}", best.recovery(), best.id),
            ])
        }
    }
}

/// The message of a strict refusal: each candidate as `<id> (<status>): <title>`.
pub(crate) fn refusal_message(matches: &[SimilarItem]) -> String {
    let listed: Vec<String> = matches
        .iter()
        .map(|m| format!("{} ({}): {}", m.id, m.status, m.title))
        .collect();
    format!(
        "Likely duplicate item(s) found: {}. Reuse the canonical item or pass --allow-duplicate with explicit intent.",
        listed.join("; ")
    )
}

fn bound_error(field: &str, value: String, reason: &str) -> Error {
    Error::InvalidArgument {
        field: field.into(),
        value,
        reason: reason.into(),
        allowed: Vec::new(),
    }
}

/// `value.trim().toLowerCase().replace(/\s+/g, " ")`.
fn normalize(value: &str) -> String {
    let lowered = js::lowercase(js::trim(value));
    let mut out = String::with_capacity(lowered.len());
    let mut in_space = false;
    for c in lowered.chars() {
        if js::is_js_whitespace(c) {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(c);
            in_space = false;
        }
    }
    out
}

/// The runs of `/[\p{L}\p{N}]+/gu`.
fn letter_digit_runs(text: &str) -> Vec<String> {
    let categories = CodePointMapData::<GeneralCategory>::new();
    let is_token_char = |c: char| {
        let gc = categories.get(c);
        GeneralCategoryGroup::Letter.contains(gc) || GeneralCategoryGroup::Number.contains(gc)
    };
    text.split(|c: char| !is_token_char(c))
        .filter(|run| !run.is_empty())
        .map(String::from)
        .collect()
}

/// The matches of `/\b[a-z][a-z0-9]*-\d+(?:-[a-z0-9]+)*\b/giu` in already lowercased text
/// (`\b` is ASCII-word based, as in JavaScript).
fn issue_codes(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let word = |i: usize| {
        bytes
            .get(i)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
    };
    let alnum_end = |mut i: usize| {
        while bytes.get(i).is_some_and(u8::is_ascii_alphanumeric) {
            i += 1;
        }
        i
    };
    let mut codes = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let at_boundary = start == 0 || !word(start - 1);
        let matched = (at_boundary && bytes[start].is_ascii_alphabetic())
            .then(|| code_end(bytes, start, &alnum_end, &word))
            .flatten();
        match matched {
            Some(end) => {
                codes.push(text[start..end].to_string());
                start = end;
            }
            None => start += 1,
        }
    }
    codes
}

/// Returns where an issue code starting at `start` ends, if one does.
fn code_end(
    bytes: &[u8],
    start: usize,
    alnum_end: &impl Fn(usize) -> usize,
    word: &impl Fn(usize) -> bool,
) -> Option<usize> {
    let dash = alnum_end(start);
    if bytes.get(dash) != Some(&b'-') {
        return None;
    }
    let mut end = dash + 1;
    while bytes.get(end).is_some_and(u8::is_ascii_digit) {
        end += 1;
    }
    if end == dash + 1 {
        return None;
    }
    // Greedy `(?:-[a-z0-9]+)*` then `\b`, backing off whole groups (a shorter run would leave
    // a word character next, so only group counts can change the outcome).
    let mut ends = vec![end];
    while bytes.get(end) == Some(&b'-') && bytes.get(end + 1).is_some_and(u8::is_ascii_alphanumeric)
    {
        end = alnum_end(end + 1);
        ends.push(end);
    }
    ends.into_iter().rev().find(|&e| !word(e))
}

fn unique(values: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(values.len());
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

fn jaccard(left: &[String], right: &[String]) -> f64 {
    let union = left.len() + right.iter().filter(|t| !left.contains(t)).count();
    if union == 0 {
        return 1.0;
    }
    let shared = left.iter().filter(|t| right.contains(t)).count();
    shared as f64 / union as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary<'a>(id: &'a str, title: &'a str, status: &'a str, terminal: bool) -> Candidate<'a> {
        Candidate {
            id,
            title,
            status,
            item_type: "Task",
            terminal,
        }
    }

    #[test]
    fn normalizes_and_tokenizes_like_pm() {
        let p = prepare("  Fix\tLOGIN  timeout, café №5 — fix ");
        assert_eq!(p.normalized, "fix login timeout, café №5 — fix");
        assert_eq!(p.tokens, ["fix", "login", "timeout", "café", "5"]);
        assert_eq!(prepare("日本語のタイトル").tokens, ["日本語のタイトル"]);
        assert_eq!(prepare("Ⅻ roman ½").tokens, ["ⅻ", "roman", "½"]);
    }

    #[test]
    fn finds_issue_codes_with_ascii_word_boundaries() {
        assert_eq!(
            issue_codes("fix pm-12 and gh-7-follow-up now"),
            ["pm-12", "gh-7-follow-up"]
        );
        assert_eq!(issue_codes("a-1-bc_ x"), ["a-1"]);
        assert!(issue_codes("pm-12x 9-1 x_a-1 pm- -3").is_empty());
        assert_eq!(issue_codes("é-1 (abc-9)"), ["abc-9"]);
    }

    #[test]
    fn scores_exact_issue_code_then_jaccard() {
        let exact = score_titles("Fix login timeout", "  fix   LOGIN timeout ");
        assert_eq!((exact.score, exact.reason), (1.0, MatchReason::ExactTitle));
        let code = score_titles("Crash in PM-42 parser", "pm-42 regression");
        assert_eq!((code.score, code.reason), (0.99, MatchReason::IssueCode));
        let j = score_titles(
            "Fix login timeout on slow networks",
            "Fix login timeout on networks",
        );
        assert_eq!(
            (j.score, j.reason),
            (5.0 / 6.0, MatchReason::TitleTokenJaccard)
        );
        assert_eq!(score_titles("!!!", "???").score, 1.0);
        assert_eq!(score_titles("alpha", "beta").score, 0.0);
    }

    #[test]
    fn ranks_by_score_then_id_with_threshold_and_limit() {
        let items = [
            summary("pm-b", "Fix login timeout", "open", false),
            summary("pm-a", "Fix login timeout", "closed", true),
            summary("pm-c", "Fix login timeout now", "open", false),
            summary("pm-d", "Unrelated", "open", false),
        ];
        let found = rank("fix login timeout", items, 0.75, 3);
        let ids: Vec<&str> = found.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["pm-a", "pm-b", "pm-c"]);
        assert_eq!(found[0].recovery(), "reopen");
        assert_eq!(rank("fix login timeout", items, 0.8, 3).len(), 2);
        assert_eq!(rank("fix login timeout", items, 0.0, 1).len(), 1);
    }

    #[test]
    fn decides_per_mode() -> Result<()> {
        let items = [summary("pm-a", "Same", "open", false)];
        let found = rank("same", items, 0.8, 3);
        assert!(decide(DuplicateMode::Off, false, found.clone())?.is_empty());
        assert_eq!(
            decide(DuplicateMode::Advisory, false, found.clone())?,
            [
                "likely_duplicates:pm-a",
                "likely_duplicate_recovery:reuse:pm-a"
            ]
        );
        assert_eq!(decide(DuplicateMode::Strict, true, found.clone())?.len(), 2);
        match decide(DuplicateMode::Strict, false, found) {
            Err(err @ Error::LikelyDuplicate { .. }) => assert_eq!(
                err.to_string(),
                "Likely duplicate item(s) found: pm-a (open): Same. Reuse the canonical item or pass --allow-duplicate with explicit intent."
            ),
            other => panic!("expected a refusal, got {other:?}"),
        }
        assert!(decide(DuplicateMode::Strict, false, Vec::new())?.is_empty());
        Ok(())
    }
}
