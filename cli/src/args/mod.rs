//! pm's global flags (clap derive): accepted before or after any subcommand. The top-level
//! parser that combines them with the commands is `commands::Cli`.
//! Help text is the doc comment of each item: imperative first line, no trailing period.

pub mod item_id;
pub mod numbers;

use std::path::PathBuf;

use self::numbers::{Number, OutputBound};
use crate::render::Format;

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
    pub output_limit: Option<Number<OutputBound>>,

    /// Fit a read into N estimated tokens (ceil(bytes/4) of the printed output), or unbounded
    #[arg(
        long,
        global = true,
        value_name = "N|unbounded",
        allow_negative_numbers = true
    )]
    pub output_budget: Option<Number<OutputBound>>,

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
