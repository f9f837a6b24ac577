//! `pm history <id>`: an item's history stream as compact rows or raw entries, and with
//! `--verify` the replayed chain, torn tail and current-file check. Works for deleted items.

use pm_engine::Error;
use pm_engine::read::{HistoryMode, HistoryOptions, ProvenanceFilter, TrackerView, history_view};

use crate::ctx::Ctx;
use crate::exit;
use crate::failure::{CliError, ReadOutputRefusal, Result};
use crate::read_output::{Finished, ReadMeta, Surface, finish_read};
use crate::render::Format;

/// Show an item's history: who changed which fields when, optionally verified
///
/// Compact rows (the default) list each entry's index, timestamp, operation, author, number of
/// patch operations and changed fields; --provenance prints who recorded each entry (author,
/// author source, agent harness, model and instance, message); --full prints the raw entries
/// with their JSON patches and hashes. --harness and --agent-instance keep only the entries an
/// agent recorded, and --provenance-summary counts the returned entries per author, author
/// source, harness and instance. --verify replays the whole stream from the empty document and checks every
/// before_hash and after_hash, reports a torn last line, and compares the current item file
/// with the last after_hash. A deleted item's history is still shown. --field <name> keeps
/// only the entries that change that field (a changed_fields name such as status or body);
/// --diff adds a diff list with each returned entry's field values before and after it,
/// replayed from the empty document.
#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    /// The item id (the tracker's prefix may be left out)
    #[arg(value_name = "ID")]
    pub id: String,

    /// Print compact rows (the default)
    #[arg(long, conflicts_with_all = ["full", "provenance"])]
    pub compact: bool,

    /// Print who recorded each entry: author, author source, agent harness, model, instance
    #[arg(long, conflicts_with = "full")]
    pub provenance: bool,

    /// Add provenance_summary: the returned entries counted per author, author source,
    /// agent harness and agent instance
    #[arg(long)]
    pub provenance_summary: bool,

    /// Only entries recorded with these agent harnesses (comma-separated)
    #[arg(long, value_name = "HARNESS", value_delimiter = ',')]
    pub harness: Vec<String>,

    /// Only entries recorded by these agent instances (comma-separated)
    #[arg(long, value_name = "INSTANCE", value_delimiter = ',')]
    pub agent_instance: Vec<String>,

    /// Print the raw entries: JSON patches, hashes and provenance
    #[arg(long)]
    pub full: bool,

    /// Show only the latest N entries (after --field filtering)
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,

    /// Add each entry's field values before and after it (a diff list beside the rows)
    #[arg(long)]
    pub diff: bool,

    /// Only entries that change this field (status, body, tags, …)
    #[arg(long, value_name = "NAME")]
    pub field: Option<String>,

    /// Output format for this read: toon or json
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,

    /// Replay the stream and verify every hash and the current item file
    #[arg(long)]
    pub verify: bool,

    /// Exit 1 when verification fails; the result is still printed (requires --verify)
    #[arg(long, visible_alias = "fail-on-warn", requires = "verify")]
    pub strict_exit: bool,
}

/// The `history` result after the read-output layer.
pub type HistoryOutput = Finished;

/// Reads the history of `args.id` and runs it through the read-output layer; with
/// `--strict-exit` a failed verification exits 1 (the result is still printed).
///
/// # Errors
/// `not_in_project`, `item_not_found` (no item file and no stream), `history_invalid_json`
/// for a stream line that does not parse (a torn last line is reported, not an error);
/// `invalid_argument_value` for an empty `--field`; the read-output refusals.
pub fn cmd_history(ctx: &Ctx, args: &HistoryArgs) -> Result<HistoryOutput> {
    let modes = ctx.read_output.modes(Surface::History);
    let full = args.full || modes.contains(&"full");
    let compact = args.compact || modes.contains(&"compact");
    if (full && (compact || args.provenance)) || (compact && args.provenance) {
        return Err(CliError::ReadOutput {
            kind: ReadOutputRefusal::ProjectionConflict,
            message: "Choose one history projection: --compact, --provenance or --full.".into(),
            flag: if full { "--full" } else { "--provenance" },
            value: None,
            allowed: Box::new(["--compact".into(), "--provenance".into(), "--full".into()]),
            suggestion: None,
        });
    }
    let field = match args.field.as_deref().map(str::trim) {
        Some("") => {
            return Err(Error::InvalidArgument {
                field: "--field".into(),
                value: String::new(),
                reason: "name a field, e.g. status or body".into(),
                allowed: Vec::new(),
            }
            .into());
        }
        other => other.map(str::to_owned),
    };
    let options = HistoryOptions {
        mode: if full {
            HistoryMode::Full
        } else if args.provenance {
            HistoryMode::Provenance
        } else {
            HistoryMode::Compact
        },
        limit: args.limit,
        verify: args.verify,
        diff: args.diff,
        field,
        provenance: ProvenanceFilter {
            harnesses: trimmed(&args.harness),
            agent_instances: trimmed(&args.agent_instance),
        },
        provenance_summary: args.provenance_summary,
    };
    let view = TrackerView::open(ctx.tracker()?, &ctx.settings_env())?;
    let result = history_view(&view, &args.id, &options)?;
    let failed = args.strict_exit && result.verification.as_ref().is_some_and(|v| !v.ok);
    let value = serde_json::to_value(&result)
        .map_err(|e| Error::internal(format!("history envelope: {e}")))?;
    let limit = args.limit.map(|n| n.to_string());
    let mut meta = ReadMeta::new(Surface::History, "history")
        .legacy_switch("--compact", args.compact)
        .legacy_switch("--full", args.full)
        .legacy_value("--limit", limit.as_deref());
    meta.operand = Some(result.id.clone());
    if let Some(format) = args.format {
        meta = meta.legacy_value("--format", Some(format.name()));
    }
    let format = ctx.read_output.resolve_format(ctx.format, args.format);
    let mut finished = finish_read(value, &meta, &ctx.read_output, format)?;
    if failed && finished.exit_code == exit::SUCCESS {
        finished.exit_code = exit::FAILURE;
    }
    Ok(finished)
}

/// The non-blank values of a comma-separated filter, trimmed.
fn trimmed(values: &[String]) -> Vec<String> {
    values
        .iter()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .collect()
}
