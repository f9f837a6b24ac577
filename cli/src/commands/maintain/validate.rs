//! `pm validate`: runs pm's nine tracker checks (or those named by `--check-*` flags) and prints
//! pm's validation envelope through the read-output layer; `--strict-exit` turns warnings into
//! exit 1 with the report still printed.

use pm_engine::read::validate::{CheckName, SUMMARY_LIMIT};
use pm_engine::read::{TrackerView, ValidateOptions, validate};

use crate::clock_reads::ReadClock;
use crate::ctx::Ctx;
use crate::exit;
use crate::failure::Result;
use crate::read_output::{Finished, ReadMeta, Surface, finish_read};
use crate::render::Format;

/// Check the tracker: metadata, resolution, lifecycle, references, files, history and storage
///
/// Without a --check-* flag every check runs (metadata, resolution, lifecycle,
/// dependency_references, files, command_references, history_drift, format_version,
/// storage_integrity); --check-lifecycle also runs dependency_references. TOON output shows at
/// most 5 entries per diagnostic list (`*_truncated` says when more exist); --json shows all.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Check required metadata fields of the metadata profile and duplicate issue codes
    #[arg(long)]
    pub check_metadata: bool,

    /// Check resolution fields on done items
    #[arg(long)]
    pub check_resolution: bool,

    /// Check lifecycle consistency, cycles, hierarchy and dangling references
    #[arg(long)]
    pub check_lifecycle: bool,

    /// Also report stale blocker context (implies --check-lifecycle)
    #[arg(long)]
    pub check_stale_blockers: bool,

    /// Check linked project files (missing links, unlinked project files)
    #[arg(long)]
    pub check_files: bool,

    /// Check item ids named by linked test commands
    #[arg(long)]
    pub check_command_references: bool,

    /// Verify history chains and compare item files with their history
    #[arg(long)]
    pub check_history_drift: bool,

    /// Check storage integrity (unreadable or duplicate items, broken streams, config files)
    #[arg(long)]
    pub check_storage_integrity: bool,

    /// Keep counts and drop the per-item diagnostic lists
    #[arg(long, conflicts_with = "full")]
    pub counts: bool,

    /// Include the per-item diagnostic lists (the default)
    #[arg(long)]
    pub full: bool,

    /// Exit 1 when a warning or failure is reported; the report is still printed
    #[arg(long, visible_alias = "fail-on-warn")]
    pub strict_exit: bool,
}

/// The `validate` result after the read-output layer.
pub type ValidateOutput = Finished;

/// Validates the tracker of `ctx`.
///
/// # Errors
/// `not_in_project`; `io_error` when item folders or the history directory cannot be listed;
/// the read-output refusals.
pub fn cmd_validate(ctx: &Ctx, args: &ValidateArgs) -> Result<ValidateOutput> {
    let flags = [
        (args.check_metadata, CheckName::Metadata),
        (args.check_resolution, CheckName::Resolution),
        (args.check_lifecycle, CheckName::Lifecycle),
        (args.check_files, CheckName::Files),
        (args.check_command_references, CheckName::CommandReferences),
        (args.check_history_drift, CheckName::HistoryDrift),
        (args.check_storage_integrity, CheckName::StorageIntegrity),
    ];
    let checks = flags
        .into_iter()
        .filter_map(|(on, c)| on.then_some(c))
        .collect();
    let view = TrackerView::open(ctx.tracker()?, &ctx.settings_env())?;
    let format = ctx.read_output.resolve_format(ctx.format, None);
    // pm lists every affected id under --json and a 5-entry summary otherwise.
    let diagnostic_limit = (format != Format::Json).then_some(SUMMARY_LIMIT);
    // One clock read: the report's timestamp and the instant lock ttls are measured against.
    let now_ms = ReadClock::new(&ctx.clock).instant();
    let options = ValidateOptions {
        checks,
        stale_blockers: args.check_stale_blockers,
        counts: args.counts,
        diagnostic_limit,
        generated_at: pm_engine::clock::format_iso_ms(now_ms),
        now_ms,
    };
    let report = validate(&view, &options)?;
    let strict_failure = args.strict_exit && report.fails_strict();
    let value = serde_json::to_value(&report)
        .map_err(|e| pm_engine::Error::internal(format!("validate report: {e}")))?;
    let meta = ReadMeta::new(Surface::Validate, "validate");
    let mut finished = finish_read(value, &meta, &ctx.read_output, format)?;
    if strict_failure && finished.exit_code == exit::SUCCESS {
        finished.exit_code = exit::FAILURE;
    }
    Ok(finished)
}
