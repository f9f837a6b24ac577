//! The top of the command-line grammar: the global flags plus one subcommand (clap derive).
//! Help text is the doc comment of each item: imperative first line, no trailing period.
//! It lives beside the commands because it names them; modules below `commands` that need the
//! grammar (parse-error classification, the secret guard) are handed a built `clap::Command`.

use clap::{ColorChoice, Parser};

use crate::args::GlobalArgs;
use crate::commands::Command;

/// Track work items as files in git: a project tracker for coding agents and humans
#[derive(Debug, Parser)]
#[command(
    name = "pm",
    version,
    color = ColorChoice::Never,
    args_override_self = true,
    subcommand_required = true,
    max_term_width = 100
)]
pub struct Cli {
    /// Flags accepted before or after the subcommand.
    #[command(flatten)]
    pub global: GlobalArgs,

    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn grammar_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn help_lines_are_imperative_without_trailing_period() {
        let cmd = Cli::command();
        let mut commands = vec![&cmd];
        commands.extend(cmd.get_subcommands());
        for c in commands {
            let about = c.get_about().map(ToString::to_string).unwrap_or_default();
            assert!(!about.ends_with('.'), "{}: {about:?}", c.get_name());
            for arg in c.get_arguments() {
                let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
                assert!(
                    !help.ends_with('.'),
                    "{} {}: {help:?}",
                    c.get_name(),
                    arg.get_id()
                );
            }
        }
    }
}

/// How the grammar's parse errors are classified (`failure::from_clap` over the real grammar).
#[cfg(test)]
mod parse_errors {
    use super::*;
    use crate::failure::{ParseOutcome, from_clap};
    use clap::CommandFactory;
    use pm_engine::ErrorCode;

    use crate::failure::CliError;

    fn classify(args: &[&str]) -> ParseOutcome {
        let argv = std::iter::once("pm").chain(args.iter().copied());
        match Cli::try_parse_from(argv) {
            Ok(cli) => panic!("parsed: {cli:?}"),
            Err(e) => from_clap(&e, &Cli::command()),
        }
    }

    fn usage_of(args: &[&str]) -> CliError {
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
        let CliError::Usage {
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
