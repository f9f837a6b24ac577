//! Dependency reads and edits: `graph` and `deps`.

pub mod deps;
pub mod graph;
pub mod graph_reach;
