//! Tracker upkeep and introspection: `init`, `gc`, `health`, `reindex`, `validate`, `where`, `bench`, `contracts` and `completions`.

pub mod bench;
pub mod completions;
pub mod contracts;
pub mod gc;
pub mod health;
pub mod init;
pub mod reindex;
pub mod validate;
pub mod r#where;
