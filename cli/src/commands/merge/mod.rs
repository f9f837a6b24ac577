//! `pm merge`: the git merge fence. One command with pm-cli's positional grammar
//! (`pm merge <subcommand> [artifact] [base] [ours] [theirs]`); this file holds the arguments
//! and routes each subcommand to its file: `install.rs` (`merge install`), `driver.rs`
//! (`merge driver item|json|relationship`), `history_driver.rs` (`merge driver history`),
//! `reconcile.rs` (`merge reconcile`) and `report.rs` (`merge report`). The merges themselves
//! live in `pm_engine::merge`.

mod driver;
pub mod history_driver;
mod install;
pub mod reconcile;
pub mod report;

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
    /// Merge subcommand: install, reconcile, report or driver
    #[arg(value_enum, value_name = "SUBCOMMAND")]
    pub subcommand: MergeSubcommand,

    /// driver only: artifact class to merge (item, history, relationship, json)
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

    /// reconcile only: audit message recorded on repaired history streams
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,

    /// reconcile only: permit the audited history ownership override
    #[arg(long)]
    pub force: bool,

    /// report only: include receipts already recorded in history
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

/// Runs `pm merge <subcommand>`.
///
/// # Errors
/// Whatever the subcommand refuses.
pub fn cmd_merge(ctx: &Ctx, args: &MergeArgs) -> Result<MergeOutput> {
    match (args.subcommand, args.artifact) {
        (MergeSubcommand::Install, _) => install::cmd_merge_install(ctx, args),
        (MergeSubcommand::Driver, Some(DriverArtifact::History)) => history(ctx, args),
        (MergeSubcommand::Driver, _) => driver::cmd_merge_driver(ctx, args),
        (MergeSubcommand::Reconcile, _) => MergeOutput::of(
            &reconcile::run(ctx, args.dry_run, args.message.clone(), args.force)?,
            0,
        ),
        (MergeSubcommand::Report, _) => {
            MergeOutput::of(&report::run(ctx, args.include_reconciled)?, 0)
        }
    }
}

/// `pm merge driver history %O %A %B`.
fn history(ctx: &Ctx, args: &MergeArgs) -> Result<MergeOutput> {
    let (Some(base), Some(ours), Some(theirs)) = (&args.base, &args.ours, &args.theirs) else {
        return Err(crate::failure::CliError::Usage {
            kind: crate::failure::UsageKind::MissingRequiredArgument,
            detail: "merge driver history needs the base, ours and theirs paths (git's %O %A %B)"
                .into(),
            flag: None,
            value: None,
            suggestions: Box::new([]),
            allowed: Box::new([]),
        });
    };
    let prefer = match args.prefer {
        Prefer::Ours => "ours",
        Prefer::Theirs => "theirs",
    };
    let merged = history_driver::run(
        &ctx.cwd,
        base,
        ours,
        theirs,
        args.output.as_deref(),
        prefer,
        crate::clock_reads::ReadClock::new(&ctx.clock).stamp(),
    )?;
    MergeOutput::of(&merged, 0)
}
