//! Ranked reads: `search`, `next` and `context`, and the filters, rows and sections they share.

pub mod agenda;
pub mod context;
pub mod context_result;
pub mod context_sections;
pub mod next;
pub mod next_result;
pub mod rank_rows;
pub mod search;
pub mod search_echo;
pub mod search_result;
pub mod search_rows;
