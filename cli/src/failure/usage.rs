//! Turns clap's parse errors into pm's `CliError::Usage` (so they share the error envelope and
//! exit code 2), and its help/version "errors" into plain text for stdout.

use clap::error::{ContextKind, ContextValue, ErrorKind};

use super::{CliError, UsageKind};

/// What a failed `try_parse` means for the run.
#[derive(Debug)]
pub enum ParseOutcome {
    /// `--help`, `--version` or `help`: print this text on stdout and exit 0.
    Display(String),
    /// A usage mistake (or, for clap's I/O kinds, an internal error).
    Failure(CliError),
}

/// Classifies a clap error; `root` is the grammar it came from (an unknown command is answered
/// with its visible command names).
pub fn from_clap(err: &clap::Error, root: &clap::Command) -> ParseOutcome {
    let rendered = err.render().to_string();
    let usage = |kind, detail: String, flag: Option<String>| CliError::Usage {
        kind,
        detail,
        flag,
        value: None,
        suggestions: Box::default(),
        allowed: Box::default(),
    };
    let error = match err.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            return ParseOutcome::Display(rendered);
        }
        ErrorKind::UnknownArgument => {
            let arg = first(err, ContextKind::InvalidArg).unwrap_or_default();
            let suggestions = strings(err, ContextKind::SuggestedArg);
            if arg.starts_with('-') {
                let flag = arg
                    .split_once('=')
                    .map_or(arg.as_str(), |(f, _)| f)
                    .to_owned();
                CliError::Usage {
                    kind: UsageKind::UnknownOption,
                    detail: format!("unknown option '{flag}'"),
                    flag: Some(flag),
                    value: None,
                    suggestions: suggestions.into(),
                    allowed: Box::default(),
                }
            } else {
                usage(
                    UsageKind::UnexpectedArgument,
                    format!("unexpected argument '{arg}'"),
                    Some(arg),
                )
            }
        }
        ErrorKind::InvalidSubcommand => {
            let name = first(err, ContextKind::InvalidSubcommand).unwrap_or_default();
            CliError::Usage {
                kind: UsageKind::UnknownCommand,
                detail: format!("unknown command '{name}'"),
                flag: None,
                value: Some(name),
                suggestions: strings(err, ContextKind::SuggestedSubcommand).into(),
                // pm has no nested command groups yet, so the legal domain is the top level.
                allowed: command_names(root).into(),
            }
        }
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let mut allowed = strings(err, ContextKind::ValidSubcommand);
            if allowed.is_empty() {
                allowed = command_names(root);
            }
            CliError::Usage {
                kind: UsageKind::MissingRequiredArgument,
                detail: "a command is required".into(),
                flag: Some("<COMMAND>".into()),
                value: None,
                suggestions: Box::default(),
                allowed: allowed.into(),
            }
        }
        ErrorKind::MissingRequiredArgument => {
            let missing = strings(err, ContextKind::InvalidArg);
            usage(
                UsageKind::MissingRequiredArgument,
                format!("missing required argument: {}", missing.join(", ")),
                missing.first().cloned(),
            )
        }
        ErrorKind::InvalidValue => {
            let arg = first(err, ContextKind::InvalidArg).unwrap_or_default();
            let value = first(err, ContextKind::InvalidValue).unwrap_or_default();
            CliError::Usage {
                kind: UsageKind::InvalidValue,
                detail: first_line(&rendered),
                flag: Some(flag_name(&arg)),
                value: Some(value),
                suggestions: strings(err, ContextKind::SuggestedValue).into(),
                allowed: strings(err, ContextKind::ValidValue).into(),
            }
        }
        ErrorKind::ArgumentConflict => usage(
            UsageKind::ConflictingArguments,
            first_line(&rendered),
            first(err, ContextKind::InvalidArg).map(|a| flag_name(&a)),
        ),
        ErrorKind::Io | ErrorKind::Format => CliError::internal(first_line(&rendered)),
        // Value-count, validation and encoding problems are all bad values.
        _ => usage(
            UsageKind::InvalidValue,
            first_line(&rendered),
            first(err, ContextKind::InvalidArg).map(|a| flag_name(&a)),
        ),
    };
    ParseOutcome::Failure(error)
}

/// Returns the names of pm's visible top-level commands.
fn command_names(root: &clap::Command) -> Vec<String> {
    root.get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_owned())
        .collect()
}

fn strings(err: &clap::Error, kind: ContextKind) -> Vec<String> {
    match err.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    }
}

fn first(err: &clap::Error, kind: ContextKind) -> Option<String> {
    strings(err, kind).into_iter().next()
}

/// Returns `--flag` from clap's `--flag <VALUE>` (or a positional's `<NAME>` unchanged).
fn flag_name(arg: &str) -> String {
    if arg.starts_with('-') {
        arg.split([' ', '=']).next().unwrap_or(arg).to_owned()
    } else {
        arg.to_owned()
    }
}

/// Returns the first line of clap's message without its `error: ` prefix.
fn first_line(rendered: &str) -> String {
    let line = rendered.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line).to_owned()
}
