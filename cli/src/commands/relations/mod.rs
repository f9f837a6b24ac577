//! Dependency reads and edits: `graph` and `deps`.

pub mod deps;
pub mod deps_result;
pub mod graph;
pub mod graph_reach;
pub mod graph_read;
pub mod graph_result;
