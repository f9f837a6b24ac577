//! Item reads: `list` (its filters, pages, rows and exports), `get`, `stats` and `aggregate`.

pub mod aggregate;
pub mod get;
pub mod list;
pub mod list_echo;
pub mod list_envelope;
pub mod list_page;
pub mod list_rows;
pub mod list_stream;
pub mod list_switches;
pub mod row_export;
pub mod stats;
