//! Turns clap's parse errors into pm's `Error::Usage` (so they share the error envelope and
//! exit code 2), and its help/version "errors" into plain text for stdout.

use clap::CommandFactory;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use pm_engine::{Error, UsageKind};

use crate::args::Cli;

/// What a failed `try_parse` means for the run.
#[derive(Debug)]
pub enum ParseOutcome {
    /// `--help`, `--version` or `help`: print this text on stdout and exit 0.
    Display(String),
    /// A usage mistake (or, for clap's I/O kinds, an internal error).
    Failure(Error),
}

/// Classifies a clap error.
pub fn from_clap(err: &clap::Error) -> ParseOutcome {
    let rendered = err.render().to_string();
    let usage = |kind, detail: String, flag: Option<String>| Error::Usage {
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
                Error::Usage {
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
            Error::Usage {
                kind: UsageKind::UnknownCommand,
                detail: format!("unknown command '{name}'"),
                flag: None,
                value: Some(name),
                suggestions: strings(err, ContextKind::SuggestedSubcommand).into(),
                // pm has no nested command groups yet, so the legal domain is the top level.
                allowed: command_names().into(),
            }
        }
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let mut allowed = strings(err, ContextKind::ValidSubcommand);
            if allowed.is_empty() {
                allowed = command_names();
            }
            Error::Usage {
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
            Error::Usage {
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
        ErrorKind::Io | ErrorKind::Format => Error::internal(first_line(&rendered)),
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
fn command_names() -> Vec<String> {
    Cli::command()
        .get_subcommands()
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

#[cfg(test)]
mod tests {
    use super::*;
    use pm_engine::ErrorCode;

    fn classify(args: &[&str]) -> ParseOutcome {
        let argv = std::iter::once("pm").chain(args.iter().copied());
        match Cli::try_parse_from(argv) {
            Ok(cli) => panic!("parsed: {cli:?}"),
            Err(e) => from_clap(&e),
        }
    }

    fn usage_of(args: &[&str]) -> Error {
        match classify(args) {
            ParseOutcome::Failure(e) => e,
            ParseOutcome::Display(text) => panic!("display: {text}"),
        }
    }

    use clap::Parser;

    #[test]
    fn typo_flag_gets_a_suggestion() {
        let e = usage_of(&["--jsn"]);
        assert_eq!(e.code(), ErrorCode::UnknownOption);
        assert_eq!(e.to_string(), "unknown option '--jsn'");
        assert_eq!(e.hint().as_deref(), Some("did you mean '--json'?"));
    }

    #[test]
    fn bad_format_value_lists_the_domain() {
        let e = usage_of(&["--output-format", "yaml"]);
        assert_eq!(e.code(), ErrorCode::InvalidArgumentValue);
        let Error::Usage {
            flag,
            value,
            allowed,
            ..
        } = e
        else {
            panic!("not a usage error");
        };
        assert_eq!(flag.as_deref(), Some("--output-format"));
        assert_eq!(value.as_deref(), Some("yaml"));
        assert_eq!(&*allowed, ["toon", "json"]);
    }

    #[test]
    fn missing_and_unknown_commands() {
        assert_eq!(usage_of(&[]).code(), ErrorCode::MissingRequiredArgument);
        assert_eq!(
            usage_of(&["--json"]).code(),
            ErrorCode::MissingRequiredArgument
        );
        let e = usage_of(&["frobnicate"]);
        assert_eq!(e.code(), ErrorCode::UnknownCommand);
        assert_eq!(e.to_string(), "unknown command 'frobnicate'");
    }

    #[test]
    fn help_and_version_are_display() {
        for args in [&["--help"][..], &["-V"], &["--version"], &["help"]] {
            assert!(
                matches!(classify(args), ParseOutcome::Display(_)),
                "{args:?}"
            );
        }
        let ParseOutcome::Display(v) = classify(&["--version"]) else {
            panic!("not display");
        };
        assert_eq!(v, format!("pm {}\n", env!("CARGO_PKG_VERSION")));
    }
}
