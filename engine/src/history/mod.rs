//! History streams (`history/<id>.jsonl`): the entry model, reading, RFC 6902 patches and
//! their generation, appending, and hash-chain replay and verification.

pub mod append;
pub mod diff;
pub mod entry;
pub mod patch;
pub mod stream;

pub use append::append_entry;
pub use diff::{compare, compare_for_history};
pub use entry::{HistoryEntry, PatchOp, PatchOpKind, entry_message};
pub use patch::{LenientOutcome, PatchError, PatchErrorKind, apply_lenient, apply_strict};
pub use stream::{StreamRead, TornTail, parse_stream, read_stream};
