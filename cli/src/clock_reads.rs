//! Every clock read of a read command, in one place.
//!
//! Under pm's reproducible clock (`PM_CLOCK` + `PM_SEED`) each read advances the clock by
//! `PM_CLOCK_TICK_MS`, so the instant a command prints depends on how many reads came before
//! it: the number and order of reads is part of the command's output. Read commands take their
//! instants only through [`ReadClock`]; nothing under `commands/` reads `Ctx::clock` directly (`cli/tests/test_clock_reads.rs` checks both the source and the printed
//! instants). Mutations take their timestamps inside the engine's mutation path, from the
//! clock `Ctx` hands it.
//!
//! The reads per command, in order (a "window read" is taken only when a filter gives a
//! relative time such as `--updated-after 2d`):
//!
//! | command | reads |
//! |---|---|
//! | `list`, `next`, `activity`, `validate` | one [`ReadClock::instant`]: window base and printed `now` alike |
//! | `search`, `aggregate` | window read, then [`ReadClock::stamp`] for the printed `now` |
//! | `stats` | one [`ReadClock::stamp`] (`generated_at`) |
//! | `health` | [`ReadClock::instant`] (the age reference of the checks), then [`ReadClock::stamp`] (`generated_at`) |
//! | `context` | window read, then [`ReadClock::context_now`]: pm spends two reads (its list and calendar sections) before `now` |
//! | `gc` | one [`ReadClock::instant`] (the age reference of what it removes) |
//! | `bench generate` | one [`ReadClock::stamp`] (the manifest's `generated_at`) |

use pm_engine::clock::{Clock, EpochMs, format_iso_ms};

/// The clock as a read command may use it.
#[derive(Clone, Copy, Debug)]
pub struct ReadClock<'c> {
    clock: &'c Clock,
}

impl<'c> ReadClock<'c> {
    /// Wraps the invocation's clock.
    pub fn new(clock: &'c Clock) -> ReadClock<'c> {
        ReadClock { clock }
    }

    /// Returns the lazy base of relative time windows: it reads the clock only when a filter
    /// holds a relative time, once per such bound.
    pub fn window_base(self) -> impl Fn() -> EpochMs + 'c {
        move || self.clock.now_ms()
    }

    /// Returns one instant (one read).
    pub fn instant(self) -> EpochMs {
        self.clock.now_ms()
    }

    /// Returns one instant (one read) as `YYYY-MM-DDTHH:MM:SS.mmmZ`, for a printed `now` or
    /// `generated_at`.
    pub fn stamp(self) -> String {
        format_iso_ms(self.clock.now_ms())
    }

    /// Returns `context`'s `now`: the third read, because pm reads its clock for the list and
    /// the calendar sections first. The pinned clock ticks per read, so these two reads keep
    /// the printed instant equal to pm's.
    pub fn context_now(self) -> EpochMs {
        self.clock.now_ms();
        self.clock.now_ms();
        self.clock.now_ms()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_use_takes_its_declared_reads() {
        let clock = Clock::pinned(0, 1000);
        let read = ReadClock::new(&clock);
        assert_eq!(read.instant(), 0);
        assert_eq!(read.stamp(), "1970-01-01T00:00:01.000Z");
        assert_eq!(read.context_now(), 4000);
        let base = read.window_base();
        assert_eq!(base(), 5000);
    }

    #[test]
    fn an_unused_window_base_reads_nothing() {
        let clock = Clock::pinned(0, 1000);
        let read = ReadClock::new(&clock);
        let _unused = read.window_base();
        assert_eq!(read.instant(), 0);
    }
}
