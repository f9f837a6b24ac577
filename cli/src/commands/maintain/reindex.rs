//! `pm reindex`: rebuilds the derived SQLite index from the tracker files, or with `--check`
//! compares it with a scan and reports every difference. The only command that reports index
//! errors instead of falling back.

use std::time::Duration;

use pm_engine::schema::load;
use pm_index::{CheckReport, Index, ReindexReport};
use serde::Serialize;

use crate::ctx::Ctx;
use crate::failure::Result;
use crate::progress::index_options;

/// Rebuild the derived index from the tracker files
///
/// The index (runtime/index/) is a cache: reads check it against the files and repair it on
/// their own. Use this after restoring a backup or to measure a full build; --check compares
/// the index with a scan of the files without changing anything and exits 1 when they differ.
#[derive(Debug, clap::Args)]
pub struct ReindexArgs {
    /// Compare the index with a scan of the files and report differences; change nothing (exit
    /// 1 when they differ)
    #[arg(long)]
    pub check: bool,
}

/// The result of `pm reindex`.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum ReindexOutput {
    /// A rebuild.
    Rebuilt {
        /// Always true.
        ok: bool,
        /// `rebuild`.
        mode: &'static str,
        /// What was built.
        #[serde(flatten)]
        report: ReindexReport,
    },
    /// `--check`.
    Checked {
        /// True when index and scan agree.
        ok: bool,
        /// `check`.
        mode: &'static str,
        /// What was compared.
        #[serde(flatten)]
        report: CheckReport,
    },
}

impl ReindexOutput {
    /// 1 when `--check` found the index and the files disagree, otherwise 0.
    pub fn exit_code(&self) -> u8 {
        match self {
            ReindexOutput::Checked { ok: false, .. } => crate::exit::FAILURE,
            _ => crate::exit::SUCCESS,
        }
    }
}

/// Rebuilds or checks the index of the current tracker.
///
/// # Errors
/// `not_in_project`; `index_unavailable` when the build fails or another writer holds the
/// index for more than 30 seconds.
pub fn cmd_reindex(ctx: &Ctx, args: &ReindexArgs) -> Result<ReindexOutput> {
    let tracker = ctx.tracker()?;
    let loaded = load(&tracker, &ctx.settings_env())?;
    let index = Index::open(&tracker, &loaded.schema, index_options(ctx));
    if args.check {
        let report = index.check()?;
        return Ok(ReindexOutput::Checked {
            ok: report.consistent,
            mode: "check",
            report,
        });
    }
    let built = index.rebuild(Duration::from_secs(30))?;
    Ok(ReindexOutput::Rebuilt {
        ok: true,
        mode: "rebuild",
        report: ReindexReport {
            generation: built.generation,
            database: built
                .path
                .strip_prefix(tracker.root())
                .unwrap_or(&built.path)
                .display()
                .to_string(),
            items: built.items,
            unreadable_items: built.unreadable_items,
            streams: built.streams,
            events: built.events,
        },
    })
}
