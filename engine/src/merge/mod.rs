//! Git merge support: the history-stream merge, post-merge reconciliation and merge receipts.

pub mod clone_config;
pub mod history;
pub mod receipts;
pub mod reconcile;
