//! The `Command` enum (one variant per subcommand) and the dispatch `match`; nothing else.
//! Each command lives in `commands/<name>.rs` as `XxxArgs`, `cmd_xxx` and `XxxOutput`.

mod get;
mod history;
mod init;
mod validate;
mod r#where;

use std::io::{self, Write};

use pm_engine::Result;

pub use get::{GetArgs, GetOutput, cmd_get};
pub use history::{HistoryArgs, HistoryOutput, cmd_history};
pub use init::{InitArgs, InitOutput, InitSummary, InitTarget, cmd_init};
pub use validate::{ValidateArgs, ValidateOutput, cmd_validate};
pub use r#where::{WhereArgs, WhereOutput, cmd_where};

use crate::ctx::Ctx;
use crate::exit;
use crate::render::{Format, render, render_summarized};

/// pm's subcommands. Variants carry no doc comment: the help text is the one on `XxxArgs`.
#[derive(Debug, clap::Subcommand)]
#[allow(missing_docs)]
pub enum Command {
    #[command(visible_aliases = ["fetch", "read", "show", "view"])]
    Get(GetArgs),
    History(HistoryArgs),
    Init(InitArgs),
    Validate(ValidateArgs),
    Where(WhereArgs),
}

impl Command {
    /// Returns the subcommand name as typed on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Get(_) => "get",
            Command::History(_) => "history",
            Command::Init(_) => "init",
            Command::Validate(_) => "validate",
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
    /// `pm where`.
    Where(WhereOutput),
    /// `pm get`.
    Get(Box<GetOutput>),
    /// `pm history`; `strict` is `--strict-exit`.
    History {
        /// The envelope.
        output: Box<HistoryOutput>,
        /// `--strict-exit`.
        strict: bool,
    },
    /// `pm validate`; `strict` is `--strict-exit`.
    Validate {
        /// The envelope.
        output: Box<ValidateOutput>,
        /// `--strict-exit`.
        strict: bool,
    },
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
            CommandOutput::Get(output) => render(&**output, format, out),
            CommandOutput::History { output, .. } => render(&**output, format, out),
            CommandOutput::Validate { output, .. } => render(&**output, format, out),
        }
    }

    /// Returns the exit code of a successful run: 1 when `--strict-exit` found a failure (the
    /// result is still printed), otherwise 0.
    pub fn exit_code(&self) -> u8 {
        let failed = match self {
            CommandOutput::History {
                output,
                strict: true,
            } => output.verification.as_ref().is_some_and(|v| !v.ok),
            CommandOutput::Validate {
                output,
                strict: true,
            } => output.fails_strict(),
            _ => false,
        };
        if failed { exit::FAILURE } else { exit::SUCCESS }
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
        Command::Get(args) => cmd_get(ctx, args).map(|o| CommandOutput::Get(Box::new(o))),
        Command::History(args) => cmd_history(ctx, args).map(|o| CommandOutput::History {
            output: Box::new(o),
            strict: args.strict_exit,
        }),
        Command::Validate(args) => cmd_validate(ctx, args).map(|o| CommandOutput::Validate {
            output: Box::new(o),
            strict: args.strict_exit,
        }),
    }
}
