//! `pm where`: prints which tracker this invocation resolves to, and how it was found.
//! Fails with `not_in_project` (exit 3) when no initialized tracker is found.

use serde::Serialize;

use crate::ctx::Ctx;
use crate::failure::Result;

/// Print the tracker this invocation resolves to, and its workspace root
///
/// Resolution order: --pm-path, then PM_PATH, then the nearest ancestor holding
/// .agents/pm/settings.json (or a root-layout settings.json), then ./.agents/pm.
#[derive(Debug, clap::Args)]
pub struct WhereArgs {}

/// The receipt of `pm where`.
#[derive(Debug, Serialize)]
pub struct WhereOutput {
    /// The tracker storage directory.
    pub tracker_root: String,
    /// The workspace (project) root.
    pub workspace_root: String,
}

/// Resolves the tracker of `ctx`.
///
/// # Errors
/// `not_in_project` when the resolved root holds no `settings.json`.
pub fn cmd_where(ctx: &Ctx, _args: &WhereArgs) -> Result<WhereOutput> {
    let tracker = ctx.tracker()?;
    Ok(WhereOutput {
        tracker_root: tracker.root().display().to_string(),
        workspace_root: tracker.workspace_root().display().to_string(),
    })
}
