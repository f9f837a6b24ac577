//! `pm gc`: removes derived and expired operational files by scope (`index`, `locks`,
//! `runtime`, `embeddings`, pm's `checkpoints`/`transactions`, and our `debris`). Item files and
//! history are never touched.

use pm_engine::Error;
use pm_engine::read::TrackerView;
use pm_index::{GcReport, GcScope, gc};
use serde::Serialize;

use crate::clock_reads::ReadClock;
use crate::ctx::Ctx;
use crate::failure::Result;

/// Remove derived and expired files: the index, dead locks, runtime caches, writer debris
///
/// With no --scope every scope runs. The index is rebuilt by the next read. A lock is removed
/// when its owner process is gone, or when its own created_at + ttl_seconds has passed and its
/// owner cannot be proven alive; a live owner's lock is never removed. debris removes the temp
/// files and stale-cleanup gates of killed writers once they are older than 10 minutes.
#[derive(Debug, clap::Args)]
pub struct GcArgs {
    /// Scopes to clean (comma-separated or repeated): index, embeddings, runtime, locks, checkpoints, transactions, debris
    #[arg(long = "scope", value_name = "SCOPE", value_delimiter = ',')]
    pub scopes: Vec<String>,

    /// List what would be removed without removing anything
    #[arg(long)]
    pub dry_run: bool,
}

/// The result of `pm gc`.
#[derive(Debug, Serialize)]
pub struct GcOutput {
    /// Always true.
    pub ok: bool,
    /// What each scope did.
    #[serde(flatten)]
    pub report: GcReport,
}

/// Runs `pm gc`.
///
/// # Errors
/// `invalid_argument_value` (exit 2) for an unknown scope; `not_in_project`; `io_error`.
pub fn cmd_gc(ctx: &Ctx, args: &GcArgs) -> Result<GcOutput> {
    let scopes = args
        .scopes
        .iter()
        .map(|raw| {
            let token = raw.trim().to_ascii_lowercase();
            GcScope::parse(&token).ok_or_else(|| Error::InvalidArgument {
                field: "--scope".into(),
                value: raw.clone(),
                reason: "unknown gc scope".into(),
                allowed: GcScope::ALL
                    .iter()
                    .map(|s| s.as_str().to_string())
                    .collect(),
            })
        })
        .collect::<pm_engine::Result<Vec<_>>>()?;
    let view = TrackerView::open(ctx.tracker()?, &ctx.settings_env())?;
    let types = &view.schema().types;
    let report = gc(
        view.tracker(),
        types,
        &scopes,
        args.dry_run,
        ReadClock::new(&ctx.clock).instant(),
    )?;
    Ok(GcOutput { ok: true, report })
}
