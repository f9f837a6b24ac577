//! The command line grammar: pm's global flags and the top-level parser (clap derive).
//! Help text is the doc comment of each item: imperative first line, no trailing period.

use std::path::PathBuf;

use clap::{ColorChoice, Parser};

use crate::commands::Command;
use crate::render::Format;

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

/// Flags every command accepts, before or after the subcommand name.
#[derive(Debug, Default, clap::Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Print JSON instead of TOON; errors become one JSON document on stdout
    #[arg(long, global = true)]
    pub json: bool,

    /// Select the output encoding (overrides --json)
    #[arg(long, global = true, value_name = "FORMAT")]
    pub output_format: Option<Format>,

    /// Use this tracker storage directory instead of discovering one (env: PM_PATH)
    #[arg(long = "pm-path", alias = "path", global = true, value_name = "DIR")]
    pub pm_path: Option<PathBuf>,

    /// Print nothing on stdout; errors still go to stderr
    #[arg(long, global = true)]
    pub quiet: bool,

    /// Record this author on mutations (env: PM_AUTHOR)
    #[arg(long, global = true, value_name = "NAME")]
    pub author: Option<String>,

    /// Answer reads by scanning tracker files instead of the index (env: PM_NO_INDEX=1)
    #[arg(long, global = true)]
    pub no_index: bool,

    /// Refuse a mutation unless the item is at this revision: <item_hash> or <id>=<item_hash>
    #[arg(long, global = true, value_name = "HASH")]
    pub expect_hash: Vec<String>,
    /// Keep only these row fields, sections or projection modes of a read (comma-separated)
    #[arg(long, global = true, value_name = "CSV")]
    pub output_include: Option<String>,

    /// Bound every row collection of a read to N rows, or unbounded
    #[arg(
        long,
        global = true,
        value_name = "N|unbounded",
        allow_negative_numbers = true
    )]
    pub output_limit: Option<String>,

    /// Fit a read into N estimated tokens (ceil(bytes/4) of the printed output), or unbounded
    #[arg(
        long,
        global = true,
        value_name = "N|unbounded",
        allow_negative_numbers = true
    )]
    pub output_budget: Option<String>,

    /// Share a token budget and served items across reads (JSON from read_session.next_state)
    #[arg(long, global = true, value_name = "JSON")]
    pub output_session: Option<String>,

    /// Continue a row collection a budget or limit cut short (a read's next_cursor)
    #[arg(long, global = true, value_name = "CURSOR")]
    pub output_cursor: Option<String>,

    /// Print the row contract of a read (row paths, jq selector, TOON encoding)
    #[arg(long, global = true)]
    pub output_row_contract: bool,
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
