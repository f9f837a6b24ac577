//! Rows without the read-output envelope: `list --format csv|table|ndjson`,
//! `list --stream` and `search --format ndjson`. Which encoding applies, the flags that need
//! the envelope and are refused, and the output.

use serde_json::{Map, Value, json};

use super::list::ListArgs;
use crate::commands::CommandOutput;
use crate::ctx::Ctx;
use crate::failure::{CliError, Result, UsageKind};
use crate::render::{Format, rows};

/// `list --format`: the envelope encodings and the row-only ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ListFormat {
    /// TOON envelope
    Toon,
    /// JSON envelope
    Json,
    /// Rows only, as RFC 4180 CSV (arrays joined by ';')
    Csv,
    /// Rows only, as a '|'-separated padded text grid
    Table,
    /// Rows only, one JSON object per line
    Ndjson,
}

impl ListFormat {
    /// Returns the flag value naming this format.
    pub fn name(self) -> &'static str {
        match self {
            ListFormat::Toon => "toon",
            ListFormat::Json => "json",
            ListFormat::Csv => "csv",
            ListFormat::Table => "table",
            ListFormat::Ndjson => "ndjson",
        }
    }

    /// Returns the envelope encoding this value selects (`None` for the row-only ones).
    pub fn envelope(self) -> Option<Format> {
        match self {
            ListFormat::Toon => Some(Format::Toon),
            ListFormat::Json => Some(Format::Json),
            ListFormat::Csv | ListFormat::Table | ListFormat::Ndjson => None,
        }
    }
}

/// A row-only way of printing a list page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Export {
    /// `--format csv`.
    Csv,
    /// `--format table`.
    Table,
    /// `--format ndjson`.
    Ndjson,
    /// `--stream`: NDJSON framed by a meta and an end record.
    Stream,
}

/// A usage error: two arguments that cannot be used together.
pub fn conflict(detail: String, flag: &str) -> CliError {
    CliError::Usage {
        kind: UsageKind::ConflictingArguments,
        detail,
        flag: Some(flag.into()),
        value: None,
        suggestions: Box::default(),
        allowed: Box::default(),
    }
}

/// Refuses the flags that only make sense inside the envelope when `spelled` (the row-only
/// option as typed) prints rows: the universal `--output-*` controls and the command's own
/// `local` ones (`(given, flag)`, e.g. `--for`, `--token-budget`).
///
/// # Errors
/// `conflicting_arguments` naming the first such flag.
pub fn refuse_envelope_controls(
    ctx: &Ctx,
    spelled: &str,
    local: &[(bool, &'static str)],
) -> Result<()> {
    let req = &ctx.read_output;
    let universal = [
        (req.format.is_some(), "--output-format"),
        (!req.include.is_empty(), "--output-include"),
        (req.limit.is_some(), "--output-limit"),
        (req.budget.is_some(), "--output-budget"),
        (req.session.is_some(), "--output-session"),
        (req.cursor.is_some(), "--output-cursor"),
        (req.row_contract, "--output-row-contract"),
    ];
    match universal
        .iter()
        .chain(local)
        .find_map(|(given, flag)| given.then_some(*flag))
    {
        Some(flag) => Err(conflict(
            format!("{spelled} prints rows without the envelope; {flag} needs the envelope."),
            flag,
        )),
        None => Ok(()),
    }
}

/// Resolves how the rows leave (`None`: pm's envelope through the read-output layer), refusing combinations that cannot be honoured: a row-only
/// encoding with an envelope control, CSV or a table under `--json` (which promises one JSON
/// document), and `--stream` without JSON or with CSV or a table.
///
/// # Errors
/// `conflicting_arguments` or `missing_required_argument` (usage, exit 2).
pub fn resolve(ctx: &Ctx, args: &ListArgs) -> Result<Option<Export>> {
    let export = match (args.stream, args.format) {
        (false, Some(ListFormat::Csv)) => Export::Csv,
        (false, Some(ListFormat::Table)) => Export::Table,
        (false, Some(ListFormat::Ndjson)) => Export::Ndjson,
        (false, _) => return Ok(None),
        (true, Some(f @ (ListFormat::Csv | ListFormat::Table | ListFormat::Toon))) => {
            return Err(conflict(
                format!(
                    "--stream prints NDJSON records and cannot be combined with --format {}.",
                    f.name()
                ),
                "--stream",
            ));
        }
        (true, Some(ListFormat::Json | ListFormat::Ndjson)) => Export::Stream,
        (true, None) if ctx.format == Format::Json => Export::Stream,
        (true, None) => {
            return Err(CliError::Usage {
                kind: UsageKind::MissingRequiredArgument,
                detail: "--stream requires --json.".into(),
                flag: Some("--json".into()),
                value: None,
                suggestions: Box::default(),
                allowed: Box::default(),
            });
        }
    };
    let spelled = if args.stream {
        "--stream".to_owned()
    } else {
        format!("--format {}", args.format.map_or("", ListFormat::name))
    };
    refuse_envelope_controls(
        ctx,
        &spelled,
        &[
            (args.intent.is_some(), "--for"),
            (args.token_budget.is_some(), "--token-budget"),
        ],
    )?;
    if ctx.json_flag && matches!(export, Export::Csv | Export::Table) {
        return Err(conflict(
            format!("--json prints one JSON document; {spelled} prints text rows."),
            "--json",
        ));
    }
    Ok(Some(export))
}

/// The rows of one answered page and what the stream records echo.
pub struct ExportPage<'a> {
    /// The command spelling (`list`, `list-open`, ...).
    pub command: &'a str,
    /// The page's rows in the chosen projection.
    pub rows: Vec<Value>,
    /// The projection's declared fields (empty for full records).
    pub declared: Vec<String>,
    /// `now` (ISO).
    pub now: String,
    /// The `filters` echo of the envelope.
    pub filters: Map<String, Value>,
}

/// Returns the command output for a row-only `export` of `page`.
pub fn output(export: Export, page: ExportPage<'_>) -> CommandOutput {
    match export {
        Export::Csv | Export::Table => {
            let columns = rows::columns(&page.declared, &page.rows);
            let text = match export {
                Export::Csv => rows::csv(&columns, &page.rows),
                _ => rows::table(&columns, &page.rows),
            };
            CommandOutput::Raw(text)
        }
        Export::Ndjson => CommandOutput::Stream(page.rows),
        Export::Stream => {
            let count = page.rows.len();
            let mut lines = Vec::with_capacity(count + 2);
            lines.push(json!({
                "type": "meta",
                "command": page.command,
                "count": count,
                "now": page.now,
                "filters": page.filters,
            }));
            lines.extend(
                page.rows
                    .into_iter()
                    .map(|item| json!({"type": "item", "command": page.command, "item": item})),
            );
            lines.push(json!({"type": "end", "command": page.command, "count": count}));
            CommandOutput::Stream(lines)
        }
    }
}
