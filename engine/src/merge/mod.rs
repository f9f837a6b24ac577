//! Git merges of tracker files: the fence (`fence.rs`: driver names, `.gitattributes` block),
//! its installation (`install.rs`), the repository around a tracker (`repo.rs`), the pure
//! three-way merges (`item.rs` field-aware items, `text.rs` lines, `json.rs` JSON and JSONL),
//! the item driver's file handling (`driver.rs`), the history-stream merge (`history.rs`),
//! post-merge reconciliation (`reconcile.rs`), the clone's driver configuration
//! (`clone_config.rs`) and merge receipts (`receipt.rs` as the item driver writes them,
//! `receipts.rs` the store reconcile and report read).
//! No clap, no printing: `pm merge` in the CLI wires these.

pub mod clone_config;
pub mod driver;
pub mod fence;
pub mod history;
pub mod install;
pub mod item;
pub mod json;
pub mod receipt;
pub mod receipts;
pub mod reconcile;
pub mod repo;
pub mod text;

pub use fence::Artifact;
pub use item::{ItemMerge, Side, merge_items};
pub use repo::GitRepo;
