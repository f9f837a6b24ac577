//! The one parser of time-filter values (`--updated-after`, `--deadline-before`, `activity
//! --from`, …): an ISO timestamp or a relative offset from the invocation clock. Every command
//! that takes a time bound parses it here, so a value means the same instant everywhere.
//!
//! Relative offsets are `[+-]N<unit>`. Units: `min` minutes, `h` hours, `d` days, `w` weeks,
//! `m` calendar months (pm's meaning: "bare `m` remains months"; JavaScript `setUTCMonth`
//! overflow). An unsigned or `-` offset is in the past; only an explicit `+` points ahead
//! (pm's `-2h`/`+1d` grammar, e.g. `--deadline-before +7d`).

use crate::clock::{EpochMs, civil_from_days, days_from_civil};
use crate::error::{Error, Result};
use crate::timestamp::parse_timestamp;

const MINUTE_MS: i64 = 60_000;
const HOUR_MS: i64 = 60 * MINUTE_MS;
const DAY_MS: i64 = 24 * HOUR_MS;
/// Largest absolute time value a JavaScript `Date` can hold (8.64e15 ms).
const MAX_TIME_MS: i64 = 8_640_000_000_000_000;

/// A unit of a relative offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// `min`: 60 seconds.
    Minute,
    /// `h`: 60 minutes.
    Hour,
    /// `d`: 24 hours.
    Day,
    /// `w`: 7 days.
    Week,
    /// `m`: a calendar month.
    Month,
}

impl Unit {
    /// Returns the unit a suffix names (case-insensitive), `None` for anything else.
    fn from_suffix(suffix: &str) -> Option<Unit> {
        Some(match suffix.to_ascii_lowercase().as_str() {
            "min" => Unit::Minute,
            "h" => Unit::Hour,
            "d" => Unit::Day,
            "w" => Unit::Week,
            "m" => Unit::Month,
            _ => return None,
        })
    }
}

/// Parses a time-filter value into epoch milliseconds: a relative offset from `now` (see the
/// module documentation) or an ISO timestamp (`Date.parse` semantics).
///
/// # Errors
/// `invalid_argument_value` naming `flag` for anything else, or an offset beyond the range of a
/// JavaScript date.
pub fn parse_when(flag: &str, raw: &str, now: EpochMs) -> Result<EpochMs> {
    let text = raw.trim();
    let parsed = match split_relative(text) {
        Some((n, unit)) => offset(now, n, unit),
        None => parse_timestamp(text),
    };
    parsed.ok_or_else(|| Error::InvalidArgument {
        field: flag.into(),
        value: raw.into(),
        reason: format!(
            "Invalid {flag} value \"{raw}\". Use an ISO timestamp or a relative offset like -7d, +2w, -12h, -30min or -3m (m = months)."
        ),
        allowed: Vec::new(),
    })
}

/// Splits `[+-]N<unit>` into the signed count (negative = the past) and its unit.
fn split_relative(text: &str) -> Option<(i64, Unit)> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => (-1, text),
    };
    let digits_end = rest.find(|c: char| !c.is_ascii_digit())?;
    let (digits, suffix) = rest.split_at(digits_end);
    if digits.is_empty() {
        return None;
    }
    let unit = Unit::from_suffix(suffix)?;
    let n: i64 = digits.parse().ok()?;
    Some((sign * n, unit))
}

/// Returns `now` moved by `n` units, `None` past the range of a JavaScript date.
fn offset(now: EpochMs, n: i64, unit: Unit) -> Option<EpochMs> {
    let scale = match unit {
        Unit::Minute => MINUTE_MS,
        Unit::Hour => HOUR_MS,
        Unit::Day => DAY_MS,
        Unit::Week => 7 * DAY_MS,
        Unit::Month => return add_months(now, n),
    };
    n.checked_mul(scale)
        .and_then(|span| now.checked_add(span))
        .filter(|ms| ms.abs() <= MAX_TIME_MS)
}

/// Adds calendar months the way JavaScript's `setUTCMonth` does (day overflow rolls forward).
fn add_months(ms: EpochMs, months: i64) -> Option<EpochMs> {
    // A JavaScript date spans about ±3.3 million months; anything larger is out of range.
    if months.abs() > 4_000_000 {
        return None;
    }
    let days = ms.div_euclid(DAY_MS);
    let time = ms.rem_euclid(DAY_MS);
    let (y, m, d) = civil_from_days(days);
    let total = y * 12 + i64::from(m) - 1 + months;
    let (ny, nm) = (total.div_euclid(12), total.rem_euclid(12) + 1);
    let first = days_from_civil(ny, u32::try_from(nm).ok()?, 1);
    let result = (first + i64::from(d) - 1) * DAY_MS + time;
    (result.abs() <= MAX_TIME_MS).then_some(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: EpochMs = 1_788_220_800_000; // 2026-09-01T00:00:00.000Z

    fn at(iso: &str) -> EpochMs {
        parse_timestamp(iso).expect("a valid test timestamp")
    }

    #[test]
    fn unsigned_and_minus_mean_the_past_plus_the_future() -> Result<()> {
        for (raw, want) in [
            ("7d", NOW - 7 * DAY_MS),
            ("-7d", NOW - 7 * DAY_MS),
            ("+7d", NOW + 7 * DAY_MS),
            ("12h", NOW - 12 * HOUR_MS),
            ("2w", NOW - 14 * DAY_MS),
            ("+2W", NOW + 14 * DAY_MS),
            (" 30min ", NOW - 30 * MINUTE_MS),
            ("-30MIN", NOW - 30 * MINUTE_MS),
        ] {
            assert_eq!(parse_when("--x", raw, NOW)?, want, "{raw}");
        }
        Ok(())
    }

    #[test]
    fn m_is_calendar_months_with_javascript_overflow() -> Result<()> {
        assert_eq!(
            parse_when("--x", "1m", NOW)?,
            at("2026-08-01T00:00:00.000Z")
        );
        assert_eq!(
            parse_when("--x", "30m", NOW)?,
            at("2024-03-01T00:00:00.000Z")
        );
        // 2026-01-31 + 1 month is "2026-02-31", which JavaScript rolls to 2026-03-03.
        let jan_31 = at("2026-01-31T12:00:00.000Z");
        assert_eq!(
            parse_when("--x", "+1m", jan_31)?,
            at("2026-03-03T12:00:00.000Z")
        );
        Ok(())
    }

    #[test]
    fn iso_timestamps_pass_through() -> Result<()> {
        assert_eq!(parse_when("--x", "2026-01-01", NOW)?, at("2026-01-01"));
        assert_eq!(parse_when("--x", "2026", NOW)?, at("2026"));
        Ok(())
    }

    #[test]
    fn malformed_and_out_of_range_values_are_refused() {
        for bad in [
            "",
            "d",
            "-d",
            "7x",
            "7 d",
            "7dd",
            "yesterday",
            "+-3h",
            "99999999999999999999d",
            "9223372036854775807w",
            "9223372036854775807m",
            "100000000000d",
        ] {
            let err = parse_when("--updated-after", bad, NOW).expect_err(bad);
            assert_eq!(err.code().as_str(), "invalid_argument_value", "{bad}");
            assert!(err.to_string().contains("--updated-after"), "{err}");
        }
    }
}
