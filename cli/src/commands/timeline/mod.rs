//! History reads and repair: `history`, `history-repair`, `events` and `activity`.

pub mod activity;
pub mod events;
pub mod history;
pub mod history_repair;
