//! `pm get <id>` (aliases fetch, read, show, view): one item at a depth with its linked
//! artifacts, claim state, schedule, children rollup, omission receipt and item hash.

use pm_engine::read::{GetDepth, ItemView, TrackerView, get_item};
use pm_engine::{Error, Result};

use crate::ctx::Ctx;

/// Show one item with its linked artifacts, claim state, schedule and children
///
/// Depths: brief (metadata and counts), standard (the default: adds the body, linked files,
/// tests and docs, claim state, schedule and a children count for container types), deep or
/// full (adds every collection array and a sample of children). Also prints item_hash, the
/// SHA-256 of the canonical document, equal to the last after_hash of the item's history.
#[derive(Debug, clap::Args)]
pub struct GetArgs {
    /// The item id (the tracker's prefix may be left out)
    #[arg(value_name = "ID")]
    pub id: String,

    /// Detail depth: brief, standard, deep or full (full is deep)
    #[arg(long, value_name = "DEPTH", conflicts_with = "full")]
    pub depth: Option<String>,

    /// Show everything (same as --depth deep)
    #[arg(long)]
    pub full: bool,
}

/// The `get` envelope.
pub type GetOutput = ItemView;

/// Reads the item `args.id` at the requested depth.
///
/// # Errors
/// `invalid_argument_value` for an unknown `--depth`; `not_in_project`, `item_not_found`
/// (exit 3) and the read errors of the item file and its history.
pub fn cmd_get(ctx: &Ctx, args: &GetArgs) -> Result<GetOutput> {
    let depth = match (&args.depth, args.full) {
        (_, true) => GetDepth::Deep,
        (None, false) => GetDepth::Standard,
        (Some(raw), false) => GetDepth::parse(raw).ok_or_else(|| Error::InvalidArgument {
            field: "--depth".into(),
            value: raw.clone(),
            reason: "Get --depth must be one of brief|standard|deep|full".into(),
            allowed: GetDepth::VALUES.iter().map(|v| v.to_string()).collect(),
        })?,
    };
    let view = TrackerView::open(ctx.tracker()?, &ctx.settings_env())?;
    get_item(&view, &args.id, depth)
}
