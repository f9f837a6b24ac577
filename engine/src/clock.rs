//! The clock every timestamp comes from: the system clock, or pm's reproducible clock
//! (`PM_CLOCK` + `PM_CLOCK_TICK_MS`) whose values the CLI passes in. Nothing else reads time.
#![allow(clippy::disallowed_methods)] // the one place allowed to read the system clock

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, as JavaScript's `Date.now()`.
pub type EpochMs = i64;

/// A source of "now".
#[derive(Debug)]
pub enum Clock {
    /// The operating system's wall clock.
    System,
    /// pm's reproducible clock: read *n* (0-based) returns `start_ms + n * tick_ms`.
    Pinned {
        /// The pinned instant (`PM_CLOCK`).
        start_ms: EpochMs,
        /// Advance per read (`PM_CLOCK_TICK_MS`, default 1).
        tick_ms: i64,
        /// Reads so far.
        reads: AtomicU64,
    },
}

impl Clock {
    /// Returns a pinned clock starting at `start_ms` that advances `tick_ms` per read.
    pub fn pinned(start_ms: EpochMs, tick_ms: i64) -> Clock {
        Clock::Pinned {
            start_ms,
            tick_ms,
            reads: AtomicU64::new(0),
        }
    }

    /// Returns the current instant in epoch milliseconds (advancing a pinned clock).
    pub fn now_ms(&self) -> EpochMs {
        match self {
            Clock::System => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0),
            Clock::Pinned {
                start_ms,
                tick_ms,
                reads,
            } => {
                let n = reads.fetch_add(1, Ordering::SeqCst) as i64;
                start_ms + n * tick_ms
            }
        }
    }

    /// Returns the current instant as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    pub fn now_iso(&self) -> String {
        format_iso_ms(self.now_ms())
    }

    /// Returns true for pm's reproducible clock.
    pub fn is_pinned(&self) -> bool {
        matches!(self, Clock::Pinned { .. })
    }
}

/// Returns how many milliseconds ago `modified` (a file time) was on the system clock; negative
/// when it lies in the future. File times are real time, so their age is measured against the
/// system clock even when the command runs on pm's reproducible clock.
pub fn file_age_ms(modified: SystemTime) -> i64 {
    match SystemTime::now().duration_since(modified) {
        Ok(age) => i64::try_from(age.as_millis()).unwrap_or(i64::MAX),
        Err(ahead) => -i64::try_from(ahead.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

/// Formats epoch milliseconds as JavaScript's `Date.prototype.toISOString()` does.
pub fn format_iso_ms(ms: EpochMs) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss, mmm) = (
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000,
    );
    if (0..=9999).contains(&y) {
        format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{mmm:03}Z")
    } else {
        let sign = if y < 0 { '-' } else { '+' };
        format!(
            "{sign}{:06}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{mmm:03}Z",
            y.abs()
        )
    }
}

/// Converts days since 1970-01-01 to a proleptic Gregorian (year, month, day).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Howard Hinnant's days_from_civil inverse.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Converts a proleptic Gregorian date to days since 1970-01-01.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_format_matches_to_iso_string() {
        assert_eq!(format_iso_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_iso_ms(1_788_220_800_000), "2026-09-01T00:00:00.000Z");
        assert_eq!(format_iso_ms(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(format_iso_ms(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn civil_round_trip() {
        for days in [-800_000, -1, 0, 1, 11_016, 20_697, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn pinned_clock_ticks_per_read() {
        let c = Clock::pinned(1000, 1);
        assert_eq!(c.now_ms(), 1000);
        assert_eq!(c.now_ms(), 1001);
        let z = Clock::pinned(5, 0);
        assert_eq!(z.now_ms(), 5);
        assert_eq!(z.now_ms(), 5);
    }
}
