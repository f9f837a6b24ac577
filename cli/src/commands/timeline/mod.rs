//! History reads and repair: `history`, `history-repair`, `events` and `activity`.

pub mod activity;
pub mod activity_result;
pub mod activity_rows;
pub mod events;
pub mod history;
pub mod history_repair;
