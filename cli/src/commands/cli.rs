//! The top of the command-line grammar: the global flags plus one subcommand (clap derive).
//! Help text is the doc comment of each item: imperative first line, no trailing period.
//! It lives beside the commands because it names them; modules below `commands` that need the
//! grammar (parse-error classification, the secret guard) are handed a built `clap::Command`.

use std::ffi::OsString;

use clap::{Args, ColorChoice, Parser};

use crate::args::GlobalArgs;
use crate::commands::Command;
use crate::commands::registry;

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

/// Returns the top of the grammar without subcommands: what `#[command(...)]` on [`Cli`] and
/// its global flags declare.
fn root() -> clap::Command {
    let root = clap::Command::new("pm")
        .version(env!("CARGO_PKG_VERSION"))
        .color(ColorChoice::Never)
        .args_override_self(true)
        .subcommand_required(true)
        .max_term_width(100);
    GlobalArgs::augment_args(root)
}

/// Returns a grammar that parses `argv` exactly as [`Cli`] does when it parses at all: the
/// global flags plus only the subcommand argv names (none for `pm --version`), or `None` when
/// argv names no subcommand of pm (`help`, a typo).
///
/// Building the whole grammar is most of a short invocation's start-up (issue 22). The lazy
/// grammar is for the normal path only: help, parse errors and every tree walker (contracts,
/// completions, the guard) use the full `Cli::command()`, so their bytes cannot change.
pub fn invoked_grammar(argv: &[OsString]) -> Option<clap::Command> {
    let root = root();
    let Some(name) = subcommand_token(&root, argv) else {
        return Some(root);
    };
    let spec = registry::by_token(name)?;
    let sub = (spec.augment)(clap::Command::new(spec.name)).aliases(spec.aliases.iter().copied());
    Some(root.subcommand(sub))
}

/// Returns the first operand of `argv` that is not the value of a global flag: the subcommand
/// name clap will look up, or `None` before `--`, a non-UTF-8 operand or the end.
fn subcommand_token<'a>(root: &clap::Command, argv: &'a [OsString]) -> Option<&'a str> {
    let mut tokens = argv.iter().skip(1);
    while let Some(token) = tokens.next() {
        let token = token.to_str()?;
        if token == "--" {
            return None;
        }
        if let Some(long) = token.strip_prefix("--") {
            if !long.contains('=') && takes_value(root, long) {
                tokens.next();
            }
        } else if !token.starts_with('-') || token == "-" {
            return Some(token);
        }
    }
    None
}

/// Returns whether the root's flag `--long` (or an alias) takes a value.
fn takes_value(root: &clap::Command, long: &str) -> bool {
    root.get_arguments().any(|arg| {
        let named = arg.get_long() == Some(long)
            || arg
                .get_all_aliases()
                .is_some_and(|aliases| aliases.contains(&long));
        named && arg.get_action().takes_values()
    })
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

/// The lazy grammar of a normal invocation against the full one (issue 22).
#[cfg(test)]
mod lazy {
    use super::*;
    use clap::{CommandFactory, FromArgMatches};

    fn argv(args: &[&str]) -> Vec<OsString> {
        std::iter::once("pm")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect()
    }

    /// Asserts that two subcommand definitions render and parse alike, subcommands included.
    fn assert_same(full: &mut clap::Command, lazy: &mut clap::Command) {
        let name = full.get_name().to_owned();
        assert_eq!(lazy.get_name(), name);
        let aliases =
            |c: &clap::Command| c.get_all_aliases().map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(aliases(lazy), aliases(full), "{name}: aliases");
        let ids = |c: &clap::Command| {
            let ids = c.get_arguments().map(|a| a.get_id().to_string());
            ids.collect::<Vec<_>>()
        };
        assert_eq!(ids(lazy), ids(full), "{name}: arguments");
        let help = lazy.render_help().to_string();
        assert_eq!(help, full.render_help().to_string(), "{name}: -h");
        let long_help = lazy.render_long_help().to_string();
        assert_eq!(
            long_help,
            full.render_long_help().to_string(),
            "{name}: --help"
        );
        let names: Vec<String> = full
            .get_subcommands()
            .map(|c| c.get_name().to_owned())
            .collect();
        assert_eq!(
            lazy.get_subcommands().count(),
            names.len(),
            "{name}: subcommands"
        );
        for sub in names {
            let (Some(f), Some(l)) = (
                full.find_subcommand_mut(&sub),
                lazy.find_subcommand_mut(&sub),
            ) else {
                panic!("{name}: no subcommand {sub}");
            };
            let (mut f, mut l) = (f.clone(), l.clone());
            assert_same(&mut f, &mut l);
        }
    }

    /// Every subcommand (and alias) of the full grammar gets a lazy grammar holding it alone,
    /// which renders the same help, has the same arguments and the same nested subcommands.
    #[test]
    fn lazy_grammar_matches_the_full_grammar() {
        let mut full = Cli::command();
        full.build();
        let subcommands: Vec<clap::Command> = full
            .get_subcommands()
            .filter(|c| c.get_name() != "help")
            .cloned()
            .collect();
        assert_eq!(subcommands.len(), registry::ALL.len());
        for mut sub in subcommands {
            let tokens = std::iter::once(sub.get_name().to_owned())
                .chain(sub.get_all_aliases().map(str::to_owned))
                .collect::<Vec<_>>();
            for token in tokens {
                let mut lazy = invoked_grammar(&argv(&[&token])).expect("a known subcommand");
                lazy.build();
                let built: Vec<&str> = lazy
                    .get_subcommands()
                    .map(clap::Command::get_name)
                    .collect();
                assert_eq!(
                    built,
                    [sub.get_name(), "help"],
                    "{token}: only the invoked subcommand"
                );
                let mut lazy_sub = lazy
                    .find_subcommand(sub.get_name())
                    .cloned()
                    .expect("the invoked subcommand");
                assert_same(&mut sub, &mut lazy_sub);
            }
        }
    }

    /// The lazy root has the full root's flags and version.
    #[test]
    fn lazy_root_matches_the_full_root() {
        let (mut full, mut lazy) = (Cli::command(), root());
        full.build();
        lazy.build();
        let flags = |c: &clap::Command| {
            let flags = c.get_arguments().map(|a| {
                (
                    a.get_id().to_string(),
                    a.get_long().map(str::to_owned),
                    a.is_global_set(),
                )
            });
            flags.collect::<Vec<_>>()
        };
        assert_eq!(flags(&lazy), flags(&full));
        assert_eq!(lazy.render_version(), full.render_version());
        assert_eq!(
            lazy.is_subcommand_required_set(),
            full.is_subcommand_required_set()
        );
    }

    /// What the lazy grammar accepts parses to the same `Cli` as the full grammar.
    #[test]
    fn lazy_parse_equals_full_parse() {
        let cases: &[&[&str]] = &[
            &["list", "--limit", "12"],
            &["--json", "list-open", "--type", "Task"],
            &["--output-format", "json", "ctx"],
            &["--output-format=json", "show", "pm-a1"],
            &["--path", "list", "get", "pm-a1", "--json"],
            &["--output-limit", "-3", "search", "lock"],
            &["item", "reopen", "pm-a1", "again"],
            &["comments", "pm-a1", "--add", "text"],
            &["--quiet", "create", "--title", "A", "--type", "Task"],
        ];
        for args in cases {
            let argv = argv(args);
            let lazy = invoked_grammar(&argv).expect("a known subcommand");
            let matches = lazy.try_get_matches_from(&argv).expect("lazy parse");
            let lazy = Cli::from_arg_matches(&matches).expect("lazy Cli");
            let full = Cli::try_parse_from(&argv).expect("full parse");
            assert_eq!(format!("{lazy:?}"), format!("{full:?}"), "{args:?}");
        }
    }

    #[test]
    fn the_subcommand_is_the_first_operand_after_global_flags() {
        let root = root();
        let token = |args: &[&str]| subcommand_token(&root, &argv(args)).map(str::to_owned);
        assert_eq!(
            token(&["--output-format", "json", "list"]).as_deref(),
            Some("list")
        );
        assert_eq!(
            token(&["--output-format=json", "list"]).as_deref(),
            Some("list")
        );
        assert_eq!(token(&["--path", "get", "list"]).as_deref(), Some("list"));
        assert_eq!(token(&["--json", "-V"]), None);
        assert_eq!(token(&["--", "list"]), None);
        assert!(invoked_grammar(&argv(&["help", "list"])).is_none());
        assert!(invoked_grammar(&argv(&["frobnicate"])).is_none());
        let version = invoked_grammar(&argv(&["--version"])).expect("the bare root");
        assert_eq!(version.get_subcommands().count(), 0);
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
