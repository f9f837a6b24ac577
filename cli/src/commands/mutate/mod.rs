//! Commands that write items: create, update, close, the item verbs, claims, deletes, annotations, links, linked tests, and the secret guard they pass first.

pub mod append;
pub mod claim;
pub mod close;
pub mod comments;
pub mod create;
pub mod delete;
pub mod files;
pub mod guard;
pub mod item;
pub mod linked_tests;
pub mod log_args;
pub mod update;
