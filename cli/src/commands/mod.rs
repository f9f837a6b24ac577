//! The `Command` enum (one variant per subcommand) and the dispatch `match`; nothing else.
//! Each command lives in `commands/<name>.rs` as `XxxArgs`, `cmd_xxx` and `XxxOutput`.

mod gc;
mod health;
mod init;
mod reindex;
mod r#where;

use std::io::{self, Write};

use pm_engine::Result;

pub use gc::{GcArgs, GcOutput, cmd_gc};
pub use health::{HealthArgs, HealthOutput, cmd_health};
pub use init::{InitArgs, InitOutput, InitSummary, InitTarget, cmd_init};
pub use reindex::{ReindexArgs, ReindexOutput, cmd_reindex};
pub use r#where::{WhereArgs, WhereOutput, cmd_where};

use crate::ctx::Ctx;
use crate::render::{Format, render, render_summarized};

/// pm's subcommands. Variants carry no doc comment: the help text is the one on `XxxArgs`.
#[derive(Debug, clap::Subcommand)]
#[allow(missing_docs)]
pub enum Command {
    Gc(GcArgs),
    Health(HealthArgs),
    Init(InitArgs),
    Reindex(ReindexArgs),
    Where(WhereArgs),
}

impl Command {
    /// Returns the subcommand name as typed on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Gc(_) => "gc",
            Command::Health(_) => "health",
            Command::Init(_) => "init",
            Command::Reindex(_) => "reindex",
            Command::Where(_) => "where",
        }
    }
}

/// The result of any command.
#[derive(Debug)]
pub enum CommandOutput {
    /// `pm init`; `verbose` prints the full receipt in TOON too.
    Init {
        /// The full receipt.
        output: Box<InitOutput>,
        /// `--verbose`.
        verbose: bool,
    },
    /// `pm gc`.
    Gc(GcOutput),
    /// `pm health`.
    Health(HealthOutput),
    /// `pm reindex`.
    Reindex(ReindexOutput),
    /// `pm where`.
    Where(WhereOutput),
}

impl CommandOutput {
    /// Writes the output in `format` through the renderer.
    ///
    /// # Errors
    /// Fails when `out` cannot be written.
    pub fn write(&self, format: Format, out: &mut dyn Write) -> io::Result<()> {
        match self {
            CommandOutput::Init {
                output,
                verbose: false,
            } => render_summarized(&output.summary(), output, format, out),
            CommandOutput::Init {
                output,
                verbose: true,
            } => render(&**output, format, out),
            CommandOutput::Gc(output) => render(output, format, out),
            CommandOutput::Health(output) => render(output, format, out),
            CommandOutput::Reindex(output) => render(output, format, out),
            CommandOutput::Where(output) => render(output, format, out),
        }
    }
}

/// Runs `command` and returns its output.
///
/// # Errors
/// Whatever the command returns; `run()` maps it to the error envelope and exit code.
pub fn dispatch(ctx: &Ctx, command: &Command) -> Result<CommandOutput> {
    match command {
        Command::Init(args) => cmd_init(ctx, args).map(|output| CommandOutput::Init {
            output: Box::new(output),
            verbose: args.verbose,
        }),
        Command::Gc(args) => cmd_gc(ctx, args).map(CommandOutput::Gc),
        Command::Health(args) => cmd_health(ctx, args).map(CommandOutput::Health),
        Command::Reindex(args) => cmd_reindex(ctx, args).map(CommandOutput::Reindex),
        Command::Where(args) => cmd_where(ctx, args).map(CommandOutput::Where),
    }
}
