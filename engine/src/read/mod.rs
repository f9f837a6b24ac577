//! Read-side queries over the tracker files: one item with its derived facets (`get`), an item's
//! history (`history`), and tracker validation (`validate`). Nothing here writes to the tracker.

pub mod aggregate;
pub mod children;
pub mod facets;
pub mod get;
pub mod get_at;
pub mod graph;
pub mod health;
pub mod history_view;
pub mod provenance;
pub mod receipt;
pub mod record_order;
pub mod skipped;
pub mod unsafe_paths;
pub mod validate;
pub mod view;

pub use get::{AsOf, FIELD_GROUPS, GetDepth, GetScope, ItemView, get_item};
pub use get_at::{HistoryPoint, get_item_at};
pub use history_view::{HistoryMode, HistoryOptions, HistoryView, history_view};
pub use provenance::{ProvenanceFilter, ProvenanceRow, ProvenanceSummary};
pub use receipt::{FieldGroup, OmissionReceipt};
pub use validate::{ValidateOptions, ValidateReport, validate};
pub use view::{ChildSource, TrackerView};
