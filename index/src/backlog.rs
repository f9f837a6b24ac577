//! A bound on the bytes of parsed batches waiting for the build's writer, so the parsers can run
//! ahead of it (while it builds indexes) without holding a whole tracker in memory.

use std::sync::{Condvar, Mutex, MutexGuard};

/// Bytes queued, and whether the writer has gone.
#[derive(Default)]
struct State {
    queued: u64,
    closed: bool,
}

/// Shared between the producer, which reserves room for a batch before sending it, and the
/// writer, which releases it once the batch is written.
pub struct Backlog {
    limit: u64,
    state: Mutex<State>,
    room: Condvar,
}

impl Backlog {
    /// A backlog holding up to `limit` bytes (a single larger batch is always let through).
    pub fn new(limit: u64) -> Backlog {
        Backlog {
            limit,
            state: Mutex::new(State::default()),
            room: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until `bytes` more fit (or nothing is queued), then counts them as queued. Returns
    /// false, without waiting any longer, once the writer has closed the backlog.
    pub fn reserve(&self, bytes: u64) -> bool {
        let mut state = self.lock();
        while !state.closed && state.queued > 0 && state.queued.saturating_add(bytes) > self.limit {
            state = self.room.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        if state.closed {
            return false;
        }
        state.queued = state.queued.saturating_add(bytes);
        true
    }

    /// Counts `bytes` as written.
    pub fn release(&self, bytes: u64) {
        let mut state = self.lock();
        state.queued = state.queued.saturating_sub(bytes);
        self.room.notify_all();
    }

    /// Tells a waiting producer that nothing more will be written (the writer finished or
    /// failed).
    pub fn close(&self) {
        self.lock().closed = true;
        self.room.notify_all();
    }
}

/// Closes the backlog when dropped: the writer holds one, so a producer waiting for room is
/// released on every way out of the writer, errors included.
pub struct CloseOnDrop<'a>(pub &'a Backlog);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn a_full_backlog_waits_for_the_writer() {
        let backlog = Backlog::new(10);
        assert!(backlog.reserve(6));
        let admitted = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                assert!(backlog.reserve(6));
                admitted.store(true, Ordering::SeqCst);
            });
            std::thread::sleep(std::time::Duration::from_millis(50));
            // 6 + 6 exceeds 10: the second batch waits until the first is written.
            assert!(!admitted.load(Ordering::SeqCst));
            backlog.release(6);
        });
        assert!(admitted.load(Ordering::SeqCst));
        // A batch larger than the limit passes when nothing else is queued.
        backlog.release(6);
        assert!(backlog.reserve(50));
    }

    #[test]
    fn closing_releases_a_waiting_producer() {
        let backlog = Backlog::new(1);
        assert!(backlog.reserve(1));
        std::thread::scope(|scope| {
            let waiting = scope.spawn(|| backlog.reserve(1));
            std::thread::sleep(std::time::Duration::from_millis(20));
            drop(CloseOnDrop(&backlog));
            assert_eq!(waiting.join().ok(), Some(false));
        });
        assert!(!backlog.reserve(0));
    }
}
