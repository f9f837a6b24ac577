//! The `Command` enum (one variant per subcommand) and the dispatch `match`; nothing else.
//! Each command lives in `commands/<name>.rs` as `XxxArgs`, `cmd_xxx` and `XxxOutput`.

mod init;
mod r#where;

use std::io::{self, Write};

use pm_engine::Result;

pub use init::{InitArgs, InitOutput, InitSummary, InitTarget, cmd_init};
pub use r#where::{WhereArgs, WhereOutput, cmd_where};

use crate::ctx::Ctx;
use crate::exit;
use crate::read_output::{CommandKind, Finished};
use crate::render::{Format, render, render_summarized};

/// pm's subcommands. Variants carry no doc comment: the help text is the one on `XxxArgs`.
#[derive(Debug, clap::Subcommand)]
#[allow(missing_docs)]
pub enum Command {
    Init(InitArgs),
    Where(WhereArgs),
}

impl Command {
    /// Returns the subcommand name as typed on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Init(_) => "init",
            Command::Where(_) => "where",
        }
    }

    /// Returns whether the command is a read surface (the universal `--output-*` controls
    /// apply), a read surface in a mutation mode, or neither.
    pub fn read_kind(&self) -> CommandKind {
        match self {
            Command::Init(_) | Command::Where(_) => CommandKind::NotRead,
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
    /// `pm where`.
    Where(WhereOutput),
    /// A read surface's result after the read-output layer (`read_output::finish_read`),
    /// printed in the encoding it was measured in.
    Read(Finished),
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
            CommandOutput::Where(output) => render(output, format, out),
            CommandOutput::Read(finished) => render(&finished.value, finished.format, out),
        }
    }

    /// Returns the exit code of a successful run: 0, or 2 for a read omitted for its budget.
    pub fn exit_code(&self) -> u8 {
        match self {
            CommandOutput::Read(finished) => finished.exit_code,
            _ => exit::SUCCESS,
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
        Command::Where(args) => cmd_where(ctx, args).map(CommandOutput::Where),
    }
}
