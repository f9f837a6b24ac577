//! RFC 3339 timestamps of lock files (`created_at`) to epoch milliseconds, the subset of
//! JavaScript's `Date.parse` that pm's own lock files and other writers produce.

use crate::clock::{EpochMs, days_from_civil};

/// Parses an RFC 3339 timestamp (`2026-11-29T18:13:08.628Z`, offsets, no fraction) to epoch ms.
pub(super) fn parse_iso_ms(s: &str) -> Option<EpochMs> {
    let b = s.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(range)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let mut rest = &s[19..];
    let mut millis = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let padded = format!("{:0<3}", &frac[..digits.min(3)]);
        millis = padded.parse().ok()?;
        rest = &frac[digits..];
    }
    let offset_min = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            sign * (rest[1..3].parse::<i64>().ok()? * 60 + rest[4..6].parse::<i64>().ok()?)
        }
    };
    let days = days_from_civil(year, month as u32, day as u32);
    Some(((days * 24 + hour) * 60 + minute - offset_min) * 60_000 + second * 1000 + millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: EpochMs = 1_788_220_800_000; // 2026-09-01T00:00:00.000Z

    #[test]
    fn iso_timestamps_parse() {
        assert_eq!(parse_iso_ms("2026-09-01T00:00:00.000Z"), Some(T0));
        assert_eq!(parse_iso_ms("2026-09-01T00:00:00Z"), Some(T0));
        assert_eq!(parse_iso_ms("2026-09-01T02:00:00.5+02:00"), Some(T0 + 500));
        assert_eq!(parse_iso_ms("2026-09-01"), None);
        assert_eq!(parse_iso_ms("2026-13-01T00:00:00Z"), None);
        assert_eq!(parse_iso_ms("garbage"), None);
    }
}
