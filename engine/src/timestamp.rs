//! Timestamp parsing and comparison with JavaScript `Date.parse` semantics for the ISO 8601
//! subset that V8 parses natively (the ES5 "Date Time String Format" plus V8's extensions).
//! Writing timestamps is `clock::format_iso_ms`; this module only reads them.
//!
//! Accepted (checked against node 20 / V8):
//! * `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, and expanded years `±YYYYYY` in their place
//!   (`-000000` is rejected);
//! * optionally followed by `T` (or `t`) and `HH:mm`, `HH:mm:ss` or `HH:mm:ss.f…` (any number
//!   of fraction digits; only the first three count, the rest are truncated);
//! * optionally followed by `Z` (or `z`), `±HH:mm` or `±HHmm`.
//!
//! Months must be 01–12 and days 01–31 for every month: like V8, `2026-02-30` is accepted and
//! rolls over into March (`Date.parse` gives 2026-03-02). `24:00`, `24:00:00` and
//! `24:00:00.000` mean the end of the day; other hours must be 00–23. Offset hours are 00–23.
//! The result must lie within ±8.64e15 ms, like any JavaScript date.
//!
//! Differences from `Date.parse`, on purpose:
//! * A date-time without an offset is taken as UTC. JavaScript uses the local time zone there;
//!   pm's goldens run with `TZ=UTC`, where both agree. Date-only forms are UTC in both.
//! * V8 falls back to a lenient legacy parser for anything outside this grammar (e.g.
//!   `2026-01-15 10:00`, `2026-1-5`, ` 2026-01-15`, `2026-01-15Z`, `Jan 5 2026`). Those strings are
//!   rejected here. pm itself only writes the `toISOString()` form.

use crate::clock::{EpochMs, days_from_civil};
use crate::collate::locale_compare;
use std::cmp::Ordering;

/// Largest absolute time value a JavaScript `Date` can hold (8.64e15 ms).
const MAX_TIME_MS: i64 = 8_640_000_000_000_000;

/// Parses an ISO 8601 timestamp as `Date.parse` does, returning epoch milliseconds.
///
/// Returns `None` where `Date.parse` gives `NaN`, and also for the non-ISO strings that only
/// V8's legacy fallback parser accepts (see the module documentation).
pub fn parse_timestamp(s: &str) -> Option<EpochMs> {
    let mut p = Cursor {
        b: s.as_bytes(),
        i: 0,
    };
    let year = p.year()?;
    let (mut month, mut day) = (1, 1);
    if p.eat(b'-') {
        month = p.fixed(2).filter(|m| (1..=12).contains(m))?;
        if p.eat(b'-') {
            day = p.fixed(2).filter(|d| (1..=31).contains(d))?;
        }
    }
    let mut time_ms = 0;
    let mut offset_ms = 0;
    if p.eat(b'T') || p.eat(b't') {
        let hour = p.fixed(2).filter(|h| *h <= 24)?;
        let is_24 = hour == 24;
        if !p.eat(b':') {
            return None;
        }
        let minute = p.fixed(2).filter(|m| *m <= 59 && !(is_24 && *m > 0))?;
        let (mut second, mut millis) = (0, 0);
        if p.eat(b':') {
            second = p.fixed(2).filter(|s| *s <= 59 && !(is_24 && *s > 0))?;
            if p.eat(b'.') {
                let (value, nonzero) = p.fraction()?;
                if is_24 && nonzero {
                    return None;
                }
                millis = value;
            }
        }
        time_ms = ((hour * 60 + minute) * 60 + second) * 1000 + millis;
        let zulu = p.eat(b'Z') || p.eat(b'z');
        if let Some(&sign) =
            p.b.get(p.i)
                .filter(|c| !zulu && (**c == b'+' || **c == b'-'))
        {
            p.i += 1;
            let (h, m) = if let Some(hhmm) = p.fixed(4) {
                (hhmm / 100, hhmm % 100)
            } else {
                let h = p.fixed(2)?;
                if !p.eat(b':') {
                    return None;
                }
                (h, p.fixed(2)?)
            };
            if h > 23 || m > 59 {
                return None;
            }
            let magnitude = (h * 60 + m) * 60_000;
            offset_ms = if sign == b'+' { magnitude } else { -magnitude };
        }
    }
    if p.i != p.b.len() {
        return None;
    }
    let days = days_from_civil(year, month as u32, 1) + day - 1;
    let ms = days * 86_400_000 + time_ms - offset_ms;
    (ms.abs() <= MAX_TIME_MS).then_some(ms)
}

/// Returns true if [`parse_timestamp`] accepts `s` (pm's `Number.isFinite(Date.parse(s))`).
pub fn is_valid_timestamp(s: &str) -> bool {
    parse_timestamp(s).is_some()
}

/// Compares two timestamp strings as pm's `compareTimestampStrings` does: when both parse and
/// denote different instants, the earlier one sorts first; otherwise `localeCompare` decides.
pub fn compare_timestamp_strings(a: &str, b: &str) -> Ordering {
    if let (Some(x), Some(y)) = (parse_timestamp(a), parse_timestamp(b))
        && x != y
    {
        return x.cmp(&y);
    }
    locale_compare(a, b)
}

/// A byte cursor over the input.
struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    /// Consumes `c` if it is next.
    fn eat(&mut self, c: u8) -> bool {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// Consumes exactly `n` ASCII digits that are not followed by another digit.
    fn fixed(&mut self, n: usize) -> Option<i64> {
        let digits = self.b.get(self.i..self.i + n)?;
        if !digits.iter().all(u8::is_ascii_digit)
            || self.b.get(self.i + n).is_some_and(u8::is_ascii_digit)
        {
            return None;
        }
        self.i += n;
        Some(
            digits
                .iter()
                .fold(0, |acc, d| acc * 10 + i64::from(d - b'0')),
        )
    }

    /// Consumes `YYYY` or `±YYYYYY`.
    fn year(&mut self) -> Option<i64> {
        match self.b.get(self.i) {
            Some(&sign @ (b'+' | b'-')) => {
                self.i += 1;
                let y = self.fixed(6)?;
                if sign == b'-' {
                    // V8 rejects "-000000" as an expanded year.
                    (y != 0).then_some(-y)
                } else {
                    Some(y)
                }
            }
            _ => self.fixed(4),
        }
    }

    /// Consumes one or more fraction digits; returns the milliseconds they denote (first three
    /// digits, truncated) and whether any digit is non-zero.
    fn fraction(&mut self) -> Option<(i64, bool)> {
        let start = self.i;
        while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        let digits = &self.b[start..self.i];
        if digits.is_empty() {
            return None;
        }
        let mut ms = 0;
        for k in 0..3 {
            ms = ms * 10 + digits.get(k).map_or(0, |d| i64::from(d - b'0'));
        }
        Some((ms, digits.iter().any(|d| *d != b'0')))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pairs of input and `Date.parse` result under node 20 with `TZ=UTC` (`None` = NaN or a
    /// legacy-only form).
    const CASES: &[(&str, Option<i64>)] = &[
        ("2026", Some(1_767_225_600_000)),
        ("2026-01", Some(1_767_225_600_000)),
        ("2026-01-15", Some(1_768_435_200_000)),
        ("2026-02-30", Some(1_772_409_600_000)),
        ("2026-02-31", Some(1_772_496_000_000)),
        ("2026-04-31", Some(1_777_593_600_000)),
        ("2024-02-29", Some(1_709_164_800_000)),
        ("2026-02-32", None),
        ("2026-13-01", None),
        ("2026-00-10", None),
        ("2026-01-00", None),
        ("2026-01-15T10:00", Some(1_768_471_200_000)),
        ("2026-01-15T10:00Z", Some(1_768_471_200_000)),
        ("2026-01-15T10:00:05", Some(1_768_471_205_000)),
        ("2026-01-15T10:00:05.1Z", Some(1_768_471_205_100)),
        ("2026-01-15T10:00:05.123456Z", Some(1_768_471_205_123)),
        (
            "2026-01-15T00:00:00.999999999999999999999999999Z",
            Some(1_768_435_200_999),
        ),
        ("2026-01-15T10:00:05.Z", None),
        ("2026-01-15t10:00:05z", Some(1_768_471_205_000)),
        ("2026-01-15T10:00:05.123z", Some(1_768_471_205_123)),
        ("2026-01-15T10:00:05+02:00", Some(1_768_464_005_000)),
        ("2026-01-15T10:00:05-0230", Some(1_768_480_205_000)),
        ("2026-01-15T10:00:05.123+0530", Some(1_768_451_405_123)),
        ("2026-01-15T10:00:05+23:59", Some(1_768_384_865_000)),
        ("2026-01-15T10:00:05+02", None),
        ("2026-01-15T10:00:05+24:00", None),
        ("2026-01-15T10:00:05+23:60", None),
        ("2026-01-15T24:00:00Z", Some(1_768_521_600_000)),
        ("2026-01-15T24:00:00.000Z", Some(1_768_521_600_000)),
        ("2026-01-15T24:00:01Z", None),
        ("2026-01-15T24:01Z", None),
        ("2026-01-15T1:00", None),
        ("2026-01-15T10:60", None),
        ("2026-01-15T10:59:60Z", None),
        ("2026-01-15T", None),
        ("2026-01-15T10Z", None),
        ("2026-01-15T10:00:05.123Zx", None),
        ("2026-01-15T10:00:05,123Z", None),
        ("2026-01-15T10:00:05.-1Z", None),
        ("2026T10:00", Some(1_767_261_600_000)),
        ("2026-01T10:00Z", Some(1_767_261_600_000)),
        ("+002026-01-15T10:00:00Z", Some(1_768_471_200_000)),
        ("-000001-01-01", Some(-62_198_755_200_000)),
        ("0000-01-01", Some(-62_167_219_200_000)),
        ("9999-12-31T23:59:59.999Z", Some(253_402_300_799_999)),
        ("+275760-09-13T00:00:00.000Z", Some(8_640_000_000_000_000)),
        ("+275760-09-13T00:00:00.001Z", None),
        ("-271821-04-20T00:00:00.000Z", Some(-8_640_000_000_000_000)),
        ("-271821-04-19T23:59:59.999Z", None),
        ("x", None),
        ("", None),
        // Accepted by V8's legacy fallback only; rejected here on purpose.
        ("2026-01-15 10:00:05", None),
        ("2026-1-15", None),
        ("02026-01-15", None),
        (" 2026-01-15", None),
        ("2026-01-15Z", None),
        ("-000000-01-01", None),
    ];

    #[test]
    fn matches_date_parse() {
        for (input, expected) in CASES {
            assert_eq!(parse_timestamp(input), *expected, "{input:?}");
            assert_eq!(is_valid_timestamp(input), expected.is_some(), "{input:?}");
        }
    }

    #[test]
    fn round_trips_iso_output() {
        for ms in [
            0,
            -1,
            1_788_220_800_000,
            951_782_400_123,
            253_402_300_799_999,
            -62_198_755_200_000,
        ] {
            assert_eq!(parse_timestamp(&crate::clock::format_iso_ms(ms)), Some(ms));
        }
    }

    #[test]
    fn compares_by_instant_then_collation() {
        use Ordering::*;
        let t = compare_timestamp_strings;
        assert_eq!(
            t("2026-01-15T10:00:00.000Z", "2026-01-15T09:00:00.000Z"),
            Greater
        );
        // Same instant, different spelling: localeCompare decides ("." < "Z").
        assert_eq!(t("2026-01-15T10:00:00.000Z", "2026-01-15T10:00:00Z"), Less);
        assert_eq!(t("2026-01-15T12:00:00+02:00", "2026-01-15T11:00:00Z"), Less);
        // Unparseable on either side: localeCompare.
        assert_eq!(t("soon", "2026-01-15"), Greater);
        assert_eq!(t("later", "soon"), Less);
        assert_eq!(t("2026-01-15", "2026-01-15"), Equal);
    }
}
