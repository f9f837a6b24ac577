//! History streams (`history/<id>.jsonl`): the entry model, reading, RFC 6902 patches and
//! their generation, appending, hash-chain replay and verification, and the workspace stream.

pub mod anchor;
pub mod append;
mod bounds;
pub mod diff;
pub mod entry;
mod hash_parts;
mod head_scan;
mod heads;
mod line;
pub mod patch;
pub mod point;
pub mod replay;
mod replay_state;
pub mod stream;
pub mod verify;
pub mod workspace;

pub use append::append_entry;
pub use diff::{compare, compare_for_history, item_patch, state_patch};
pub use entry::{DELETE_OP, HistoryEntry, PatchOp, PatchOpKind, entry_message};
pub use heads::{EntryHead, StreamHeads, parse_stream_heads};
pub use patch::{LenientOutcome, PatchError, PatchErrorKind, apply_lenient, apply_strict};
pub use point::{HistoryPoint, ReplayError, ReplayedState, replay_point, replay_to, replay_until};
pub use replay::{
    ChainIssue, ChainIssueKind, ChainReport, DriftMismatch, check_drift, verify_chain,
};
pub use stream::{StreamRead, TornTail, parse_stream, read_stream};
pub use verify::{TrackerHistoryReport, verify_tracker_history};
pub use workspace::{WORKSPACE_STREAM_ID, check_workspace_documents, replay_workspace};
