//! Governance rules a mutation enforces (`settings.governance`): the create-mode option policy,
//! close validation and duplicate detection at create. Each rule decides from values the
//! caller passes in; the mutations in [`crate::mutate`] apply the decisions.

pub mod close_policy;
pub mod create_options;
pub mod create_policy;
pub mod similarity;

pub use close_policy::{CLOSE_FIELDS, CloseValidation, check_close, missing_close_fields};
pub use create_options::{canonical_option, flag_label};
pub use create_policy::{CreateMode, CreatePolicy, GivenOptions, check_create, create_policy};
pub use similarity::{DuplicateMode, SimilarItem, decide, find_similar};
