//! `pm merge`: the git merge fence. One command with pm-cli's positional grammar
//! (`pm merge <subcommand> [artifact] [base] [ours] [theirs]`); this file holds the arguments
//! and routes each subcommand to its file: `install.rs` (`merge install`), `driver.rs`
//! (`merge driver item|json|relationship`). `merge reconcile`, `merge report` and
//! `merge driver history` belong to `reconcile.rs`, `report.rs` and `history_driver.rs`, each
//! exposing `cmd_merge_<name>(ctx, args) -> Result<MergeOutput>`; until those land they are
//! refused as unsupported. The merges themselves live in `pm_engine::merge`.

mod driver;
mod install;

use std::path::PathBuf;

use pm_engine::Error;
use pm_engine::merge::Side;
use serde::Serialize;
use serde_json::Value;

use crate::ctx::Ctx;
use crate::failure::Result;

/// Install the git merge drivers, or run one (git calls `pm merge driver`)
///
/// `pm merge install` records pm's merge drivers in this clone's git configuration and maps
/// the tracker's files to them in .gitattributes; run it once per clone (pm init does it for
/// a new tracker). `pm merge driver <artifact> %O %A %B` is what git runs during a merge.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// Merge subcommand: install or driver (reconcile and report are not available yet)
    #[arg(value_enum, value_name = "SUBCOMMAND")]
    pub subcommand: MergeSubcommand,

    /// driver only: artifact class to merge (item, relationship, json; history is not available yet)
    #[arg(value_enum, value_name = "ARTIFACT")]
    pub artifact: Option<DriverArtifact>,

    /// driver only: common-ancestor file path (git %O)
    #[arg(value_name = "BASE")]
    pub base: Option<PathBuf>,

    /// driver only: current-branch file path (git %A)
    #[arg(value_name = "OURS")]
    pub ours: Option<PathBuf>,

    /// driver only: other-branch file path (git %B)
    #[arg(value_name = "THEIRS")]
    pub theirs: Option<PathBuf>,

    /// install: preview changes without writing
    #[arg(long)]
    pub dry_run: bool,

    /// reconcile only (not available yet): audit message recorded on repaired history streams
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,

    /// reconcile only (not available yet): permit the audited history ownership override
    #[arg(long)]
    pub force: bool,

    /// report only (not available yet): include receipts already recorded in history
    #[arg(long)]
    pub include_reconciled: bool,

    /// driver only: write the merged content to this path instead of the ours path
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,

    /// driver only: original repository-relative path supplied by git as %P
    #[arg(long, value_name = "PATH")]
    pub item_path: Option<String>,

    /// driver only: side that wins unresolvable conflicts (ours|theirs; default ours)
    #[arg(long, value_enum, value_name = "SIDE", default_value = "ours")]
    pub prefer: Prefer,
}

/// The `pm merge` subcommands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MergeSubcommand {
    /// Install the merge drivers and .gitattributes mapping.
    Install,
    /// Record post-merge history repairs.
    Reconcile,
    /// List clone-local merge receipts.
    Report,
    /// Run a driver (git calls this).
    Driver,
}

impl MergeSubcommand {
    fn name(self) -> &'static str {
        match self {
            MergeSubcommand::Install => "install",
            MergeSubcommand::Reconcile => "reconcile",
            MergeSubcommand::Report => "report",
            MergeSubcommand::Driver => "driver",
        }
    }
}

/// The `pm merge driver` artifact classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DriverArtifact {
    /// An item file.
    Item,
    /// A history stream.
    History,
    /// An append-only JSONL store.
    Relationship,
    /// A JSON document.
    Json,
}

/// `--prefer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Prefer {
    /// The current branch wins.
    Ours,
    /// The merged-in branch wins.
    Theirs,
}

impl Prefer {
    fn side(self) -> Side {
        match self {
            Prefer::Ours => Side::Ours,
            Prefer::Theirs => Side::Theirs,
        }
    }
}

/// The result of any `pm merge` subcommand: its document and exit code (a driver that left a
/// conflict for review exits non-zero so git stops on the file).
#[derive(Debug)]
pub struct MergeOutput {
    /// The printed document.
    pub document: Value,
    /// The process exit code.
    pub exit_code: u8,
}

impl MergeOutput {
    /// Returns the output of `result` with `exit_code`.
    ///
    /// # Errors
    /// `internal_error` when the result does not serialize (a bug).
    pub fn of(result: &impl Serialize, exit_code: u8) -> Result<MergeOutput> {
        let document = serde_json::to_value(result)
            .map_err(|e| Error::internal(format!("merge output does not serialize: {e}")))?;
        Ok(MergeOutput {
            document,
            exit_code,
        })
    }
}

/// Runs `pm merge`.
///
/// # Errors
/// `unsupported_subcommand` (exit 2) for the subcommands not available yet; whatever the
/// subcommand returns.
pub fn cmd_merge(ctx: &Ctx, args: &MergeArgs) -> Result<MergeOutput> {
    match (args.subcommand, args.artifact) {
        (MergeSubcommand::Install, _) => install::cmd_merge_install(ctx, args),
        (MergeSubcommand::Driver, Some(DriverArtifact::History)) => {
            Err(unsupported("driver history"))
        }
        (MergeSubcommand::Driver, _) => driver::cmd_merge_driver(ctx, args),
        (sub @ (MergeSubcommand::Reconcile | MergeSubcommand::Report), _) => {
            Err(unsupported(sub.name()))
        }
    }
}

fn unsupported(subcommand: &str) -> crate::failure::CliError {
    Error::UnsupportedSubcommand {
        command: "merge".into(),
        subcommand: subcommand.into(),
        supported: vec![
            "install".into(),
            "driver item".into(),
            "driver relationship".into(),
            "driver json".into(),
        ],
    }
    .into()
}
