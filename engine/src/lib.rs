//! pm's storage engine: tracker discovery, settings and schema, the item model with its TOON and
//! Markdown codecs, canonicalization, hashes, history, locks and atomic writes. No SQL, no CLI.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![warn(missing_docs)]
#![recursion_limit = "256"]
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

pub mod atomic;
pub mod bench_corpus;
pub mod clock;
pub mod collate;
pub mod commit;
pub mod confine;
pub mod debris;
pub mod error;
pub mod governance;
pub mod guard;
pub mod hash;
pub mod history;
pub mod ids;
pub mod init;
pub mod item;
pub mod json;
pub mod lock;
pub mod merge;
pub mod mutate;
pub mod notice;
pub mod query;
pub mod rank;
pub mod read;
pub mod scan;
pub mod schema;
pub mod settings;
pub mod summary;
pub mod timestamp;
pub mod toon;
pub mod tracker;

pub use error::{Error, ErrorCode, ErrorFamily, IoResultExt, LifecycleConflict, Result};
pub use notice::Notice;
