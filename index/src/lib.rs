//! The derived, rebuildable SQLite projection of a pm tracker and the read facade over it.
//! It never decides what an answer means (that is `pm_engine`'s `Query::matches`) and never renders.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![warn(missing_docs)]
