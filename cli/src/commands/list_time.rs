//! Time values of the list date windows: ISO timestamps (`Date.parse` semantics) or relative
//! offsets `[+-]N(h|d|w|m)` measured from the invocation clock.

use pm_engine::Result;
use pm_engine::clock::{EpochMs, civil_from_days, days_from_civil};
use pm_engine::timestamp::parse_timestamp;

use super::list_filters::invalid;

/// Parses an ISO time or a relative offset `[+-]N(h|d|w|m)` (unsigned means the past; `m` is
/// calendar months with JavaScript `setUTCMonth` overflow).
pub fn parse_when(flag: &str, raw: &str, now: EpochMs) -> Result<EpochMs> {
    let text = raw.trim();
    if let Some(ms) = parse_relative(text, now) {
        return Ok(ms);
    }
    parse_timestamp(text).ok_or_else(|| {
        let reason = format!(
            "Invalid {flag} value \"{raw}\". Use an ISO timestamp or a relative offset like -7d, +2w, -12h or -3m."
        );
        invalid(flag, raw, reason, Vec::new())
    })
}

fn parse_relative(text: &str, now: EpochMs) -> Option<EpochMs> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => (-1, text),
    };
    let unit = rest.chars().last()?.to_ascii_lowercase();
    let digits = &rest[..rest.len() - 1];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i64 = digits.parse().ok()?;
    let base = now;
    let hour = 3_600_000_i64;
    Some(match unit {
        'h' => base + sign * n * hour,
        'd' => base + sign * n * 24 * hour,
        'w' => base + sign * n * 7 * 24 * hour,
        'm' => add_months(base, sign * n),
        _ => return None,
    })
}

/// Adds calendar months the way JavaScript's `setUTCMonth` does (day overflow rolls forward).
fn add_months(ms: EpochMs, months: i64) -> EpochMs {
    let days = ms.div_euclid(86_400_000);
    let time = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let total = y * 12 + i64::from(m) - 1 + months;
    let (ny, nm) = (total.div_euclid(12), total.rem_euclid(12) + 1);
    let first = days_from_civil(ny, u32::try_from(nm).unwrap_or(1), 1);
    (first + i64::from(d) - 1) * 86_400_000 + time
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_times_and_months_overflow_like_javascript() {
        let start = 1_788_220_800_000; // 2026-09-01T00:00:00.000Z
        assert_eq!(
            parse_when("--x", "-7d", start).ok(),
            Some(start - 7 * 86_400_000)
        );
        assert_eq!(
            parse_when("--x", "+2h", start).ok(),
            Some(start + 2 * 3_600_000)
        );
        assert_eq!(
            parse_when("--x", "1w", start).ok(),
            Some(start - 7 * 86_400_000)
        );
        // 2026-03-31 minus one month is "2026-02-31", which JavaScript rolls to 2026-03-03.
        let march_31 = parse_timestamp("2026-03-31T10:00:00.000Z").unwrap_or_default();
        assert_eq!(
            add_months(march_31, -1),
            parse_timestamp("2026-03-03T10:00:00.000Z").unwrap_or_default()
        );
        assert!(parse_when("--x", "yesterday", start).is_err());
        assert_eq!(
            parse_when("--x", "2026-01-01", start).ok(),
            parse_timestamp("2026-01-01")
        );
    }
}
