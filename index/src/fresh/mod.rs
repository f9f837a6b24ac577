//! Freshness: is the projection still what the files say? The sources and their stat
//! signatures, the order-independent digests, the sweep that recomputes them (with recorded
//! folder listings), the per-file check against the `sources` table, and the opt-in directory
//! mode. Nothing here repairs the projection (`crate::apply` does) or answers a read.

pub mod check;
pub mod digest;
pub mod dirsig;
pub mod listings;
pub mod source;
pub mod sweep;
