//! Reads in-process. A caller that is not a shell — the coming MCP server, a library user, a
//! test — builds a [`ReadRequest`] from plain values (no argv, no clap parse) and gets the bytes,
//! the warnings and the exit code the `pm` binary prints for the same read: both run the one
//! path behind [`crate::run_with`] (context, dispatch, the output contract, rendering).
//!
//! ```no_run
//! use pm_cli::commands::ListArgs;
//! use pm_cli::ctx::Environment;
//! use pm_cli::request::{Read, ReadRequest, read};
//!
//! let list = ListArgs { all: true, ..ListArgs::default() };
//! let response = read(ReadRequest::new(Read::List(list)), Environment::with_cwd("/repo"));
//! assert_eq!(response.code, 0);
//! ```

use std::ffi::OsString;

use crate::args::GlobalArgs;
use crate::commands::{Cli, Command, ContextArgs, GetArgs, ListArgs, NextArgs, SearchArgs};
use crate::ctx::Environment;
use crate::failure::Invocation;

/// The read commands an in-process caller can run, each with the arguments its command line
/// would give (every field public; `Default` is the command with no flags).
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one request per call, moved once into the grammar's enum
pub enum Read {
    /// `pm list`.
    List(ListArgs),
    /// `pm get <id>`.
    Get(GetArgs),
    /// `pm search <keywords>`.
    Search(Box<SearchArgs>),
    /// `pm context`.
    Context(ContextArgs),
    /// `pm next`.
    Next(NextArgs),
}

impl Read {
    /// Returns the command the grammar would have parsed.
    fn into_command(self) -> Command {
        match self {
            Read::List(args) => Command::List(args),
            Read::Get(args) => Command::Get(args),
            Read::Search(args) => Command::Search(args),
            Read::Context(args) => Command::Context(args),
            Read::Next(args) => Command::Next(args),
        }
    }
}

/// One read: the command and the global flags (output format, the output dimensions,
/// `--path`, …) its command line would carry.
#[derive(Debug)]
pub struct ReadRequest {
    /// The command and its arguments.
    pub read: Read,
    /// The global flags.
    pub global: GlobalArgs,
}

impl ReadRequest {
    /// Returns the request for `read` with no global flags.
    pub fn new(read: Read) -> ReadRequest {
        ReadRequest {
            read,
            global: GlobalArgs::default(),
        }
    }
}

/// What the read printed and how it ended.
#[derive(Debug, Default)]
pub struct Response {
    /// The exit code (the spec's table; 0 on success).
    pub code: u8,
    /// The document (or the error document in `--json` mode).
    pub stdout: Vec<u8>,
    /// Warnings and, in text mode, the error report.
    pub stderr: Vec<u8>,
}

/// Runs `request` against the tracker `env` locates (its working directory and `PM_*`
/// values) and returns the printed bytes and exit code. Error reports echo no arguments: there
/// was no command line.
pub fn read(request: ReadRequest, env: Environment) -> Response {
    let cli = Cli {
        global: request.global,
        command: request.read.into_command(),
    };
    let inv = Invocation::from_argv(&[OsString::from("pm")]);
    let mut response = Response::default();
    response.code = crate::execute(
        &cli,
        None,
        inv,
        env,
        &mut response.stdout,
        &mut response.stderr,
    );
    response
}
