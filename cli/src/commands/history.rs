//! `pm history <id>`: an item's history stream as compact rows or raw entries, and with
//! `--verify` the replayed chain, torn tail and current-file check. Works for deleted items.

use pm_engine::Result;
use pm_engine::read::{HistoryMode, HistoryOptions, HistoryView, TrackerView, history_view};

use crate::ctx::Ctx;

/// Show an item's history: who changed which fields when, optionally verified
///
/// Compact rows (the default) list each entry's index, timestamp, operation, author, number of
/// patch operations and changed fields; --full prints the raw entries with their JSON patches
/// and hashes. --verify replays the whole stream from the empty document and checks every
/// before_hash and after_hash, reports a torn last line, and compares the current item file
/// with the last after_hash. A deleted item's history is still shown.
#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    /// The item id (the tracker's prefix may be left out)
    #[arg(value_name = "ID")]
    pub id: String,

    /// Print compact rows (the default)
    #[arg(long, conflicts_with = "full")]
    pub compact: bool,

    /// Print the raw entries: JSON patches, hashes and provenance
    #[arg(long)]
    pub full: bool,

    /// Show only the latest N entries
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,

    /// Replay the stream and verify every hash and the current item file
    #[arg(long)]
    pub verify: bool,

    /// Exit 1 when verification fails; the result is still printed (requires --verify)
    #[arg(long, visible_alias = "fail-on-warn", requires = "verify")]
    pub strict_exit: bool,
}

/// The `history` envelope.
pub type HistoryOutput = HistoryView;

/// Reads the history of `args.id`.
///
/// # Errors
/// `not_in_project`, `item_not_found` (no item file and no stream), `history_invalid_json`
/// for a stream line that does not parse (a torn last line is reported, not an error).
pub fn cmd_history(ctx: &Ctx, args: &HistoryArgs) -> Result<HistoryOutput> {
    let options = HistoryOptions {
        mode: if args.full {
            HistoryMode::Full
        } else {
            HistoryMode::Compact
        },
        limit: args.limit,
        verify: args.verify,
    };
    let view = TrackerView::open(ctx.tracker()?, &ctx.settings_env())?;
    history_view(&view, &args.id, &options)
}
