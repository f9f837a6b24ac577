//! Ranking: the keyword search score and hit order, and the
//! critical order, relevance signals, token packer and actionability behind `context` and
//! `next`. Pure functions over summaries and documents; no I/O.

pub mod context;
pub mod critical;
pub mod item;
pub mod next;
pub mod packer;
pub mod relevance;
pub mod search;
pub mod sections;
