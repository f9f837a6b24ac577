//! The values of pm's numeric flags: one [`Kind`] per rule pm applies to a number, read by
//! clap's value parser ([`NumberParser`]) and reported by the command.
//!
//! pm-cli checks a number at a fixed point of each command, often after other checks (the
//! subcommand, filters, ids, the tracker), and reports it with that kind's own message. So the
//! value parser never fails: a [`Number`] keeps the text as typed and the kind's reading of
//! it, and [`Number::get`] turns a refused reading into the kind's error where the command
//! asks for the value. The text as typed stays available for the echoes of a read
//! (`filters.limit`, the legacy-flag receipts).
//!
//! The kinds differ where pm-cli's rules differ: some accept digits only, others a leading
//! `+`; some read zero or a negative number as "the default". Add a flag of an existing kind
//! by giving its field the type `Option<Number<Kind>>`; clap picks the parser from the type.

use std::ffi::OsStr;
use std::fmt::Debug;
use std::marker::PhantomData;

use clap::builder::{StringValueParser, TypedValueParser, ValueParserFactory};
use pm_engine::Error;
use pm_index::MAX_EVENT_LIMIT;

use crate::failure::{CliError, ReadOutputRefusal, Result};

/// pm-cli's largest exact integer (JavaScript's `Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// A rule for one kind of number: how its text reads, and the error for text it refuses.
pub trait Kind: Clone + Debug + Send + Sync + 'static {
    /// What an accepted text reads as.
    type Value: Copy + Debug + Send + Sync + 'static;

    /// Reads `raw` (the text as typed); `None` when the kind refuses it.
    fn read(raw: &str) -> Option<Self::Value>;

    /// The error for a refused `raw` given to `flag`.
    fn refusal(flag: &'static str, raw: &str) -> CliError;
}

/// A numeric flag's value: the text as typed and its kind's reading of it.
#[derive(Clone, Debug)]
pub struct Number<K: Kind> {
    raw: String,
    value: Option<K::Value>,
    kind: PhantomData<K>,
}

impl<K: Kind> Number<K> {
    /// Returns the text as typed.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// Returns the value, or the kind's error naming `flag`.
    ///
    /// # Errors
    /// The kind's refusal (`invalid_argument_value`) when it did not accept the text.
    pub fn get(&self, flag: &'static str) -> Result<K::Value> {
        self.value.ok_or_else(|| K::refusal(flag, &self.raw))
    }
}

/// A numeric flag as a command holds it: absent, or a [`Number`].
pub trait NumberFlag<K: Kind> {
    /// Returns the value when the flag was given.
    ///
    /// # Errors
    /// The kind's refusal naming `flag` when it did not accept the text.
    fn value(&self, flag: &'static str) -> Result<Option<K::Value>>;

    /// Returns the text as typed when the flag was given.
    fn raw(&self) -> Option<&str>;
}

impl<K: Kind> NumberFlag<K> for Option<Number<K>> {
    fn value(&self, flag: &'static str) -> Result<Option<K::Value>> {
        self.as_ref().map(|n| n.get(flag)).transpose()
    }

    fn raw(&self) -> Option<&str> {
        self.as_ref().map(Number::raw)
    }
}

impl<K: Kind> From<&str> for Number<K> {
    fn from(raw: &str) -> Self {
        Number {
            raw: raw.to_owned(),
            value: K::read(raw),
            kind: PhantomData,
        }
    }
}

/// The clap value parser of a [`Number`]: accepts every UTF-8 text (as a `String` flag does)
/// and reads it with the kind.
#[derive(Clone, Debug)]
pub struct NumberParser<K>(PhantomData<K>);

impl<K: Kind> TypedValueParser for NumberParser<K> {
    type Value = Number<K>;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> std::result::Result<Number<K>, clap::Error> {
        let raw = StringValueParser::new().parse_ref(cmd, arg, value)?;
        Ok(Number::from(raw.as_str()))
    }
}

impl<K: Kind> ValueParserFactory for Number<K> {
    type Parser = NumberParser<K>;

    fn value_parser() -> NumberParser<K> {
        NumberParser(PhantomData)
    }
}

/// Digits only, spaces around them allowed (no sign): pm-cli's strict integer syntax.
fn digits(raw: &str) -> Option<u64> {
    let text = raw.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// An unsigned integer, spaces around it allowed; a leading `+` is accepted.
fn unsigned(raw: &str) -> Option<usize> {
    raw.trim().parse().ok()
}

/// A positive safe integer in digits only: the number of `--output-limit`/`--output-budget`
/// and of the legacy row and token flags a read reports.
pub fn safe_positive(raw: &str) -> Option<u64> {
    digits(raw).filter(|n| (1..=MAX_SAFE_INTEGER).contains(n))
}

fn invalid(flag: &str, raw: &str, reason: String) -> CliError {
    Error::invalid_argument(flag, raw, reason, Vec::new()).into()
}

/// A row count or offset in digits only, zero included (`list --limit/--offset/--tree-depth`).
#[derive(Clone, Copy, Debug)]
pub struct StrictCount;

impl Kind for StrictCount {
    type Value = usize;

    fn read(raw: &str) -> Option<usize> {
        digits(raw).and_then(|n| usize::try_from(n).ok())
    }

    fn refusal(flag: &'static str, raw: &str) -> CliError {
        invalid(flag, raw, format!("{flag} must be a non-negative integer."))
    }
}

/// A row count, zero included; a leading `+` is accepted (`search --limit`).
#[derive(Clone, Copy, Debug)]
pub struct Count;

impl Kind for Count {
    type Value = usize;

    fn read(raw: &str) -> Option<usize> {
        unsigned(raw)
    }

    fn refusal(flag: &'static str, raw: &str) -> CliError {
        invalid(flag, raw, "must be a non-negative integer".into())
    }
}

/// A bound of at least 1 (`deps --max-depth/--node-limit/--edge-limit`, `graph --limit/
/// --max-depth/--max-paths`).
#[derive(Clone, Copy, Debug)]
pub struct AtLeastOne;

impl Kind for AtLeastOne {
    type Value = usize;

    fn read(raw: &str) -> Option<usize> {
        unsigned(raw).filter(|n| *n >= 1)
    }

    fn refusal(flag: &'static str, raw: &str) -> CliError {
        invalid(flag, raw, "expected a whole number of at least 1".into())
    }
}

/// A page of at least 1 row that `--unbounded` lifts (`activity --limit`).
#[derive(Clone, Copy, Debug)]
pub struct PageOrUnbounded;

impl Kind for PageOrUnbounded {
    type Value = usize;

    fn read(raw: &str) -> Option<usize> {
        AtLeastOne::read(raw)
    }

    fn refusal(flag: &'static str, raw: &str) -> CliError {
        let reason = "expected a whole number of at least 1 (or --unbounded)";
        invalid(flag, raw, reason.into())
    }
}

/// A page of 1 to 1,000 events (`events --limit`).
#[derive(Clone, Copy, Debug)]
pub struct EventPage;

impl Kind for EventPage {
    type Value = usize;

    fn read(raw: &str) -> Option<usize> {
        unsigned(raw).filter(|n| (1..=MAX_EVENT_LIMIT).contains(n))
    }

    fn refusal(flag: &'static str, raw: &str) -> CliError {
        let reason = format!("expected a whole number from 1 to {MAX_EVENT_LIMIT}");
        invalid(flag, raw, reason)
    }
}

/// A row limit where zero or a negative number means the default (`next --limit/
/// --blocked-limit`, `context --limit/--activity-limit/--stale-threshold`): the value is
/// `None` for those, as for an absent flag.
#[derive(Clone, Copy, Debug)]
pub struct LimitOrDefault;

impl Kind for LimitOrDefault {
    type Value = Option<u64>;

    fn read(raw: &str) -> Option<Option<u64>> {
        let n: i64 = raw.trim().parse().ok()?;
        Some(u64::try_from(n).ok().filter(|n| *n > 0))
    }

    fn refusal(flag: &'static str, raw: &str) -> CliError {
        invalid(flag, raw, format!("{flag} must be an integer"))
    }
}

/// A token budget: a positive integer (`--token-budget`). A `--for` intent reads it with
/// [`Number::intent_override`] instead.
#[derive(Clone, Copy, Debug)]
pub struct TokenBudget;

impl Kind for TokenBudget {
    type Value = u64;

    fn read(raw: &str) -> Option<u64> {
        raw.trim().parse().ok().filter(|n| *n > 0)
    }

    fn refusal(flag: &'static str, raw: &str) -> CliError {
        invalid(flag, raw, format!("{flag} must be a positive integer"))
    }
}

impl Number<TokenBudget> {
    /// Returns the budget a `--for` intent takes from the flag: a positive integer in digits
    /// only. Other text leaves the intent's own budget in force, as in pm-cli.
    pub fn intent_override(&self) -> Option<u64> {
        digits(&self.raw).filter(|n| *n > 0)
    }
}

/// A score threshold: a finite number of at least 0 (`search --min-score`). An empty text
/// reads as no threshold (`None`).
#[derive(Clone, Copy, Debug)]
pub struct Score;

impl Kind for Score {
    type Value = Option<f64>;

    fn read(raw: &str) -> Option<Option<f64>> {
        if raw.is_empty() {
            return Some(None);
        }
        let score: f64 = raw.trim().parse().ok()?;
        (score.is_finite() && score >= 0.0).then_some(Some(score))
    }

    fn refusal(flag: &'static str, raw: &str) -> CliError {
        invalid(
            flag,
            raw,
            format!("Search {flag} must be a finite number >= 0"),
        )
    }
}

/// A row or token bound: a positive number, or `unbounded`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// At most this many (rows or tokens); always ≥ 1.
    At(u64),
    /// No bound.
    Unbounded,
}

/// A read-output bound: `unbounded`, or a positive safe integer in digits only
/// (`--output-limit`, `--output-budget`).
#[derive(Clone, Copy, Debug)]
pub struct OutputBound;

impl Kind for OutputBound {
    type Value = Bound;

    fn read(raw: &str) -> Option<Bound> {
        if raw == "unbounded" {
            return Some(Bound::Unbounded);
        }
        safe_positive(raw).map(Bound::At)
    }

    fn refusal(flag: &'static str, raw: &str) -> CliError {
        let message = format!("{flag} must be a positive integer or unbounded.");
        CliError::refused(ReadOutputRefusal::InvalidValue, flag, raw, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read<K: Kind>(raw: &str) -> Option<K::Value> {
        Number::<K>::from(raw).get("--n").ok()
    }

    #[test]
    fn counts_differ_in_syntax_only() {
        for (raw, strict, loose) in [
            ("3", Some(3), Some(3)),
            (" 3 ", Some(3), Some(3)),
            ("0", Some(0), Some(0)),
            ("+3", None, Some(3)),
            ("-1", None, None),
            ("", None, None),
            ("1.5", None, None),
            ("99999999999999999999", None, None),
        ] {
            assert_eq!(read::<StrictCount>(raw), strict, "{raw:?}");
            assert_eq!(read::<Count>(raw), loose, "{raw:?}");
        }
    }

    #[test]
    fn bounds_and_pages_have_their_ranges() {
        assert_eq!(read::<AtLeastOne>("1"), Some(1));
        assert_eq!(read::<AtLeastOne>("0"), None);
        assert_eq!(read::<PageOrUnbounded>("+2"), Some(2));
        assert_eq!(read::<EventPage>("1000"), Some(1000));
        assert_eq!(read::<EventPage>("1001"), None);
    }

    #[test]
    fn a_non_positive_limit_means_the_default() {
        assert_eq!(read::<LimitOrDefault>("-5"), Some(None));
        assert_eq!(read::<LimitOrDefault>("0"), Some(None));
        assert_eq!(read::<LimitOrDefault>(" +4"), Some(Some(4)));
        assert_eq!(read::<LimitOrDefault>("x"), None);
    }

    #[test]
    fn an_intent_reads_the_budget_in_digits_only() {
        let budget = Number::<TokenBudget>::from("+300");
        assert_eq!(budget.get("--token-budget").ok(), Some(300));
        assert_eq!(budget.intent_override(), None);
        assert_eq!(Number::<TokenBudget>::from("0").intent_override(), None);
        assert_eq!(
            Number::<TokenBudget>::from(" 300").intent_override(),
            Some(300)
        );
    }

    #[test]
    fn scores_and_output_bounds() {
        assert_eq!(read::<Score>(""), Some(None));
        assert_eq!(read::<Score>("0.5"), Some(Some(0.5)));
        assert_eq!(read::<Score>(" "), None);
        assert_eq!(read::<Score>("inf"), None);
        assert_eq!(read::<OutputBound>("unbounded"), Some(Bound::Unbounded));
        assert_eq!(read::<OutputBound>(" unbounded"), None);
        assert_eq!(
            read::<OutputBound>("9007199254740991"),
            Some(Bound::At(MAX_SAFE_INTEGER))
        );
        assert_eq!(read::<OutputBound>("9007199254740992"), None);
    }

    #[test]
    fn refusals_name_the_flag_and_keep_the_text() {
        let refusal = |e: CliError| e.to_string();
        let list = Number::<StrictCount>::from("x").get("--limit").err();
        assert_eq!(
            list.map(refusal).as_deref(),
            Some("invalid value \"x\" for --limit: --limit must be a non-negative integer.")
        );
        let next = Number::<LimitOrDefault>::from("x")
            .get("--blocked-limit")
            .err();
        assert_eq!(
            next.map(refusal).as_deref(),
            Some("invalid value \"x\" for --blocked-limit: --blocked-limit must be an integer")
        );
    }

    #[test]
    fn the_value_parser_keeps_any_text() -> std::result::Result<(), clap::Error> {
        let cmd = clap::Command::new("pm");
        let parsed = Number::<Count>::value_parser().parse_ref(&cmd, None, OsStr::new("abc"))?;
        assert_eq!(parsed.raw(), "abc");
        assert!(parsed.get("--limit").is_err());
        Ok(())
    }
}
