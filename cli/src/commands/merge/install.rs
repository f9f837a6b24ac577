//! `pm merge install [--dry-run]`: the receipt of `pm_engine::merge::install::install`, in
//! pm-cli's shape. The drivers call this executable.

use pm_engine::merge::fence::ConfigEntry;
use pm_engine::merge::install::{InstallReport, install};
use pm_engine::schema;
use serde::Serialize;

use super::{MergeArgs, MergeOutput};
use crate::clock_reads::ReadClock;
use crate::ctx::Ctx;
use crate::exit;
use crate::failure::Result;

/// pm's advice after an install, verbatim.
pub(crate) const INSTALL_GUIDANCE: [&str; 4] = [
    "Commit .gitattributes so every branch and collaborator shares the merge mapping.",
    "git config is per-clone: each collaborator (and each fresh worktree/clone) runs \"pm merge install\" once.",
    "After merging branches, run \"pm merge reconcile --dry-run\" to inspect the complete receipt and history repair, then apply \"pm merge reconcile\"; use --force only after explicitly accepting any discarded values.",
    "Custom item types registered later refresh this fence automatically (pm schema add-type/remove-type); rerun pm merge install only after out-of-band type-folder edits.",
];

/// The `gitattributes` block of the receipt.
#[derive(Debug, Serialize)]
struct AttributesOutput {
    path: String,
    changed: bool,
    patterns: Vec<String>,
    schema_scope: &'static str,
}

/// The receipt of `pm merge install`, keys in pm's order.
#[derive(Debug, Serialize)]
struct InstallOutput {
    ok: bool,
    dry_run: bool,
    workspace_root: String,
    pm_root: String,
    gitattributes: AttributesOutput,
    git_config: Vec<ConfigEntry>,
    guidance: [&'static str; 4],
    generated_at: String,
}

/// Runs `pm merge install`.
///
/// # Errors
/// `not_in_project`; `merge_root_not_found` (exit 3) outside a git worktree;
/// `merge_git_config_unwritable` (exit 5); `io_error`.
pub(super) fn cmd_merge_install(ctx: &Ctx, args: &MergeArgs) -> Result<MergeOutput> {
    let tracker = ctx.tracker()?;
    let loaded = schema::load(&tracker, &ctx.settings_env())?;
    let report = install(&tracker, &loaded.schema, &ctx.executable()?, args.dry_run)?;
    MergeOutput::of(
        &receipt(&report, args.dry_run, ReadClock::new(&ctx.clock).stamp()),
        exit::SUCCESS,
    )
}

fn receipt(report: &InstallReport, dry_run: bool, generated_at: String) -> InstallOutput {
    InstallOutput {
        ok: true,
        dry_run,
        workspace_root: report.repo.top_level.display().to_string(),
        pm_root: report.tracker_root.display().to_string(),
        gitattributes: AttributesOutput {
            path: report.attributes_path.display().to_string(),
            changed: report.attributes_changed,
            patterns: report.patterns.clone(),
            schema_scope: "project",
        },
        git_config: report.config.clone(),
        guidance: INSTALL_GUIDANCE,
        generated_at,
    }
}
