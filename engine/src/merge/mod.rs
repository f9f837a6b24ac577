//! Git merges of tracker files: the fence (`fence.rs`: driver names, `.gitattributes` block),
//! its installation (`install.rs`), the repository around a tracker (`repo.rs`), the pure
//! three-way merges (`item.rs` field-aware items, `text.rs` lines, `json.rs` JSON and JSONL),
//! the item driver's file handling (`driver.rs`) and merge receipts (`receipt.rs`).
//! No clap, no printing: `pm merge` in the CLI wires these.

pub mod driver;
pub mod fence;
pub mod install;
pub mod item;
pub mod json;
pub mod receipt;
pub mod repo;
pub mod text;

pub use fence::Artifact;
pub use item::{ItemMerge, Side, merge_items};
pub use repo::GitRepo;
