//! `pm contracts`: the machine-readable description of pm's command line, generated from the clap
//! command tree, the command registry (`commands::registry`), the read-surface table
//! (`read_output::Surface`) and the error-code table.
//! Nothing here lists a command or a flag by hand; a new command shows up by itself.

use clap::CommandFactory;
use pm_engine::{Error, ErrorCode};
use serde_json::{Map, Value, json};

use crate::commands::{Cli, registry};
use crate::ctx::Ctx;
use crate::exit;
use crate::failure;
use crate::failure::Result;
use crate::read_output::{self, Bound, Dimension, Finished, ReadMeta, RowShape, Surface};
use crate::render::Format;

/// The declared degradation ladder, from richest to smallest.
const DEGRADATION_LADDER: [&str; 5] = ["full", "compact", "brief", "summary", "counts"];

/// The exit-code vocabulary: code, name, outcome token, whether it counts as success.
const EXIT_VOCABULARY: [(u8, &str, &str, bool); 8] = [
    (exit::SUCCESS, "success", "effect", true),
    (exit::FAILURE, "generic_failure", "internal_failure", false),
    (exit::USAGE, "usage", "refused_input", false),
    (exit::NOT_FOUND, "not_found", "refused_tracker_state", false),
    (exit::CONFLICT, "conflict", "conflict", false),
    (
        exit::DEPENDENCY_FAILED,
        "dependency_failed",
        "dependency_failed",
        false,
    ),
    (exit::NO_EFFECT, "no_effect", "no_effect", true),
    (
        exit::PARTIAL_EFFECT,
        "partial_effect",
        "partial_effect",
        true,
    ),
];

/// Returns whether `command` (a top-level command name) prints an NDJSON stream (one JSON
/// document per line, a trailer line last) instead of one document.
pub fn streams_ndjson(command: &str) -> bool {
    registry::by_name(command).is_some_and(|spec| spec.ndjson)
}

/// Print pm's machine-readable contracts: commands, flags, output and error contracts
///
/// Generated from the command grammar and pm's output and error tables. Without flags it prints
/// a summary row per command; --command narrows to one command (with its full contract),
/// --flags-only lists flags, --full adds every table (and lifts the output budget).
#[derive(Debug, clap::Args)]
pub struct ContractsArgs {
    /// Describe only this command (a name such as get, or a path such as "item reopen")
    #[arg(long, value_name = "COMMAND")]
    pub command: Option<String>,

    /// List each command's flags and nothing else
    #[arg(long, conflicts_with_all = ["full", "summary"])]
    pub flags_only: bool,

    /// Print only the summary rows, even for --command
    #[arg(long, conflicts_with = "full")]
    pub summary: bool,

    /// Print every contract table (implies an unbounded output budget)
    #[arg(long)]
    pub full: bool,
}

/// Builds the contracts document and runs it through the read-output layer.
///
/// # Errors
/// `invalid_argument_value` for an unknown `--command`; the read-output refusals.
pub fn cmd_contracts(ctx: &Ctx, args: &ContractsArgs) -> Result<Finished> {
    let modes = ctx.read_output.modes(Surface::Contracts);
    let full = args.full || modes.contains(&"full");
    let summary_flag = args.summary || modes.contains(&"summary");
    let format = ctx.read_output.resolve_format(ctx.format, None);
    let result = contracts_document(args.command.as_deref(), full, summary_flag, args, format)?;
    let meta = ReadMeta::new(Surface::Contracts, "contracts")
        .legacy_switch("--full", args.full)
        .legacy_switch("--summary", args.summary);
    let mut request = ctx.read_output.clone();
    if full && request.budget.is_none() {
        request.budget = Some(Bound::Unbounded);
    }
    read_output::finish_read(result, &meta, &request, format)
}

/// Returns the contracts document for the selection.
fn contracts_document(
    command: Option<&str>,
    full: bool,
    summary_flag: bool,
    args: &ContractsArgs,
    format: Format,
) -> Result<Value> {
    let mut root = Cli::command();
    root.build();
    let all = tree(&root);
    let selected: Vec<&(String, &clap::Command)> = match command {
        None => all.iter().collect(),
        Some(wanted) => {
            let wanted = wanted.split_whitespace().collect::<Vec<_>>().join(" ");
            let picked: Vec<_> = all
                .iter()
                .filter(|(path, cmd)| {
                    *path == wanted
                        || path.starts_with(&format!("{wanted} "))
                        || (!path.contains(' ') && cmd.get_all_aliases().any(|a| a == wanted))
                })
                .collect();
            if picked.is_empty() {
                return Err(Error::InvalidArgument {
                    field: "--command".into(),
                    value: wanted,
                    reason: "no such command".into(),
                    allowed: all.iter().map(|(p, _)| p.clone()).collect(),
                }
                .into());
            }
            picked
        }
    };
    let scoped = command.is_some();
    let summary = !full && !args.flags_only && (summary_flag || !scoped);
    let mut doc = Map::new();
    doc.insert("schema_version".into(), json!(1));
    doc.insert("schema_id".into(), json!("pm.contracts.v1"));
    doc.insert(
        "selected".into(),
        json!({
            "command": command,
            "summary": summary,
            "flags_only": args.flags_only,
            "full": full,
            "command_scoped": scoped,
        }),
    );
    doc.insert(
        "commands".into(),
        selected.iter().map(|(p, _)| json!(p)).collect(),
    );
    let rows: Vec<Value> = selected
        .iter()
        .map(|(path, cmd)| {
            if args.flags_only {
                json!({"command": path, "flags": flag_spellings(cmd)})
            } else {
                summary_row(path, cmd, format)
            }
        })
        .collect();
    doc.insert("command_summaries".into(), Value::Array(rows));
    if args.flags_only {
        return Ok(Value::Object(doc));
    }
    doc.insert(
        "output_policy".into(),
        json!({
            "token_estimate": "ceil(utf8_bytes / 4)",
            "degradation_ladder": DEGRADATION_LADDER,
            "global_ladder_scope": "union_not_per_command",
            "allows_unbounded_opt_out": true,
        }),
    );
    if !summary {
        doc.insert(
            "command_contracts".into(),
            selected
                .iter()
                .map(|(path, cmd)| command_contract(path, cmd))
                .collect(),
        );
    }
    if full {
        doc.insert("global_flags".into(), global_flags(&root));
        doc.insert("read_output_dimensions".into(), dimensions());
        doc.insert("command_exit_contracts".into(), exit_contracts());
        doc.insert("error_codes".into(), error_codes());
    }
    Ok(Value::Object(doc))
}

/// Returns every command of the tree as `(path, command)`, depth first, in declaration order
/// (clap's generated `help` is left out).
fn tree(root: &clap::Command) -> Vec<(String, &clap::Command)> {
    fn walk<'a>(cmd: &'a clap::Command, prefix: &str, out: &mut Vec<(String, &'a clap::Command)>) {
        for sub in cmd.get_subcommands() {
            if sub.get_name() == "help" || sub.is_hide_set() {
                continue;
            }
            let path = if prefix.is_empty() {
                sub.get_name().to_owned()
            } else {
                format!("{prefix} {}", sub.get_name())
            };
            out.push((path.clone(), sub));
            walk(sub, &path, out);
        }
    }
    let mut out = Vec::new();
    walk(root, "", &mut out);
    out
}

/// Returns the read surface of a command path, when its top-level command has one.
fn surface_of(path: &str) -> Option<Surface> {
    registry::by_name(path.split(' ').next().unwrap_or_default()).and_then(|spec| spec.surface)
}

fn first_line(text: Option<&clap::builder::StyledStr>) -> String {
    text.map(|t| t.to_string().lines().next().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

/// Returns the summary row of one command.
fn summary_row(path: &str, cmd: &clap::Command, format: Format) -> Value {
    let mut row = Map::new();
    row.insert("command".into(), json!(path));
    row.insert("intent".into(), json!(first_line(cmd.get_about())));
    row.insert("output".into(), json!(output_kind(path, cmd)));
    if let Some(surface) = surface_of(path) {
        row.insert(
            "default_max_estimated_tokens".into(),
            json!(surface.budget_class().ceiling(format)),
        );
    }
    Value::Object(row)
}

/// Returns how a command prints its success: a group only dispatches, a stream prints NDJSON.
fn output_kind(path: &str, cmd: &clap::Command) -> &'static str {
    if cmd.has_subcommands() {
        "command_group"
    } else if streams_ndjson(path.split(' ').next().unwrap_or_default()) {
        "ndjson_stream"
    } else {
        "document"
    }
}

/// Returns `--flag <VALUE>` spellings of a command's own (non-global) flags and operands.
fn flag_spellings(cmd: &clap::Command) -> Vec<String> {
    own_args(cmd)
        .map(|arg| {
            let value = value_name(arg);
            match arg.get_long() {
                Some(long) if arg.get_action().takes_values() => format!("--{long} <{value}>"),
                Some(long) => format!("--{long}"),
                None if arg.is_required_set() => format!("<{value}>"),
                None => format!("[{value}]"),
            }
        })
        .collect()
}

/// The arguments a command declares itself (globals and hidden ones left out).
fn own_args(cmd: &clap::Command) -> impl Iterator<Item = &clap::Arg> {
    cmd.get_arguments()
        .filter(|a| !a.is_global_set() && !a.is_hide_set())
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
}

fn value_name(arg: &clap::Arg) -> String {
    arg.get_value_names()
        .and_then(|names| names.first())
        .map_or_else(|| arg.get_id().as_str().to_uppercase(), ToString::to_string)
}

/// Returns the contract of one argument: spelling, value, domain, cardinality and help.
fn arg_contract(arg: &clap::Arg) -> Value {
    let mut m = Map::new();
    match arg.get_long() {
        Some(long) => {
            m.insert("flag".into(), json!(format!("--{long}")));
            if let Some(short) = arg.get_short() {
                m.insert("short".into(), json!(format!("-{short}")));
            }
            let aliases: Vec<String> = arg
                .get_visible_aliases()
                .unwrap_or_default()
                .iter()
                .map(|a| format!("--{a}"))
                .collect();
            if !aliases.is_empty() {
                m.insert("aliases".into(), json!(aliases));
            }
        }
        None => {
            m.insert("operand".into(), json!(value_name(arg)));
        }
    }
    let takes_value = arg.get_action().takes_values();
    m.insert("takes_value".into(), json!(takes_value));
    if takes_value {
        m.insert("value_name".into(), json!(value_name(arg)));
    }
    let domain: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| v.get_name().to_owned())
        .collect();
    if !domain.is_empty() {
        m.insert("allowed_values".into(), json!(domain));
    }
    m.insert("required".into(), json!(arg.is_required_set()));
    let repeatable = matches!(
        arg.get_action(),
        clap::ArgAction::Append | clap::ArgAction::Count
    ) || arg.get_num_args().is_some_and(|n| n.max_values() > 1);
    m.insert("repeatable".into(), json!(repeatable));
    m.insert("help".into(), json!(first_line(arg.get_help())));
    Value::Object(m)
}

/// Returns the full contract of one command.
fn command_contract(path: &str, cmd: &clap::Command) -> Value {
    let mut m = Map::new();
    m.insert("command".into(), json!(path));
    m.insert("intent".into(), json!(first_line(cmd.get_about())));
    let aliases: Vec<&str> = cmd.get_visible_aliases().collect();
    if !aliases.is_empty() {
        m.insert("aliases".into(), json!(aliases));
    }
    let subcommands: Vec<&str> = cmd
        .get_subcommands()
        .filter(|s| s.get_name() != "help" && !s.is_hide_set())
        .map(clap::Command::get_name)
        .collect();
    if !subcommands.is_empty() {
        m.insert("subcommands".into(), json!(subcommands));
    }
    let (operands, flags): (Vec<&clap::Arg>, Vec<&clap::Arg>) =
        own_args(cmd).partition(|a| a.is_positional());
    m.insert(
        "operands".into(),
        operands.into_iter().map(arg_contract).collect(),
    );
    m.insert(
        "flags".into(),
        flags.into_iter().map(arg_contract).collect(),
    );
    m.insert("output".into(), json!(output_kind(path, cmd)));
    m.insert(
        "read_surface".into(),
        surface_of(path).map_or(Value::Null, surface_contract),
    );
    m.insert(
        "exit_codes".into(),
        json!([
            exit::SUCCESS,
            exit::FAILURE,
            exit::USAGE,
            exit::NOT_FOUND,
            exit::CONFLICT,
            exit::DEPENDENCY_FAILED
        ]),
    );
    Value::Object(m)
}

/// Returns the output contract of a read surface: projection modes, row keys, legacy flags
/// per dimension and the default token ceilings.
fn surface_contract(surface: Surface) -> Value {
    let row_keys: Vec<Value> = surface
        .row_keys(&Map::new())
        .iter()
        .map(|k| {
            json!({
                "path": k.path,
                "shape": match k.shape {
                    RowShape::Collection => "collection",
                    RowShape::Single => "single",
                },
            })
        })
        .collect();
    let legacy: Map<String, Value> = Dimension::ALL
        .iter()
        .map(|d| (d.name().to_owned(), json!(surface.legacy_flags(*d))))
        .collect();
    let class = surface.budget_class();
    json!({
        "surface": surface.name(),
        "projection_modes": surface.projection_modes(),
        "row_keys": row_keys,
        "fields_supported": surface.fields_supported(),
        "legacy_flags": legacy,
        "default_max_estimated_tokens": {
            "toon": class.ceiling(Format::Toon),
            "json": class.ceiling(Format::Json),
        },
    })
}

/// Returns the flags every command accepts.
fn global_flags(root: &clap::Command) -> Value {
    root.get_arguments()
        .filter(|a| a.is_global_set() && !a.is_hide_set())
        .map(arg_contract)
        .collect()
}

/// Returns the four read-output dimensions with their canonical flags and, per surface, the
/// projection modes (`[]` where a surface has none).
fn dimensions() -> Value {
    let modes: Map<String, Value> = Surface::ALL
        .iter()
        .map(|s| (s.name().to_owned(), json!(s.projection_modes())))
        .collect();
    let dims: Vec<Value> = Dimension::ALL
        .iter()
        .map(|d| {
            let mut row = json!({"dimension": d.name(), "canonical_flag": d.canonical_flag()});
            if *d == Dimension::Include {
                row["projection_modes"] = Value::Object(modes.clone());
            }
            row
        })
        .collect();
    Value::Array(dims)
}

/// Returns the exit-code vocabulary (`cli/src/exit.rs`).
fn exit_contracts() -> Value {
    let vocabulary: Vec<Value> = EXIT_VOCABULARY
        .iter()
        .map(|(code, name, outcome, success)| {
            json!({"exit_code": code, "name": name, "outcome": outcome, "success": success})
        })
        .collect();
    json!({
        "vocabulary": vocabulary,
        "json_parity": "the exit code is the same with and without --json",
    })
}

/// Returns every error code with its family, exit code and guidance headline.
fn error_codes() -> Value {
    ErrorCode::ALL
        .iter()
        .map(|code| {
            let (title, required) = failure::code_guidance(*code);
            json!({
                "code": code.as_str(),
                "family": code.family().as_str(),
                "exit_code": exit::for_code(*code),
                "title": title,
                "required": required,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> ContractsArgs {
        ContractsArgs {
            command: None,
            flags_only: false,
            summary: false,
            full: false,
        }
    }

    #[test]
    fn every_command_of_the_tree_is_described() -> Result<()> {
        let doc = contracts_document(None, true, false, &args(), Format::Json)?;
        let mut root = Cli::command();
        root.build();
        let names: Vec<String> = tree(&root).into_iter().map(|(p, _)| p).collect();
        assert_eq!(doc["commands"], json!(names));
        assert!(names.iter().any(|n| n == "item reopen"));
        assert!(names.iter().any(|n| n == "contracts"));
        let contracts = doc["command_contracts"].as_array().map_or(0, Vec::len);
        assert_eq!(contracts, names.len());
        assert_eq!(
            doc["error_codes"].as_array().map(Vec::len),
            Some(ErrorCode::ALL.len())
        );
        Ok(())
    }

    #[test]
    fn command_scope_describes_flags_with_their_domain() -> Result<()> {
        let doc = contracts_document(Some("contracts"), false, false, &args(), Format::Toon)?;
        assert_eq!(doc["commands"], json!(["contracts"]));
        let contract = &doc["command_contracts"][0];
        let flags: Vec<&str> = contract["flags"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["flag"].as_str())
            .collect();
        assert_eq!(flags, ["--command", "--flags-only", "--summary", "--full"]);
        assert_eq!(contract["read_surface"]["surface"], "contracts");
        assert_eq!(
            contract["read_surface"]["projection_modes"],
            json!(["full", "summary"])
        );
        assert_eq!(
            contract["read_surface"]["default_max_estimated_tokens"],
            json!({"toon": 3000, "json": 4500})
        );
        Ok(())
    }

    #[test]
    fn unknown_command_lists_the_domain() {
        let err = contracts_document(Some("frobnicate"), false, false, &args(), Format::Toon)
            .err()
            .map(|e| e.code());
        assert_eq!(err, Some(ErrorCode::InvalidArgumentValue));
    }

    #[test]
    fn stream_commands_are_declared() {
        assert!(streams_ndjson("events"));
        assert!(!streams_ndjson("get"));
    }
}
