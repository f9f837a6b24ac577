//! The `pm` command line: parse, build the context, dispatch, render, map errors to exit codes.
//! `run()` is the only code that touches the process (argv, environment, stdout, exit code).

pub mod args;
pub mod clock_reads;
pub mod commands;
pub mod ctx;
pub mod exit;
pub mod failure;
pub mod mutation;
pub mod progress;
pub mod read_output;
pub mod render;
pub mod request;

use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{ArgMatches, CommandFactory, FromArgMatches};

pub use crate::commands::Cli;
use crate::ctx::{Ctx, Environment};
use crate::failure::{Invocation, ParseOutcome};
use crate::read_output::ReadOutputRequest;
use crate::render::Format;

/// Runs pm with the process arguments and environment and returns the exit code.
pub fn run() -> ExitCode {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let stdout = io::stdout();
    let stderr = io::stderr();
    let code = run_with(
        &argv,
        Environment::capture(),
        &mut stdout.lock(),
        &mut stderr.lock(),
    );
    ExitCode::from(code)
}

/// Runs pm with explicit arguments (including the program name), environment and streams, and
/// returns the exit code.
///
/// The five steps: parse (clap derive), build [`Ctx`], dispatch, render, map errors to exit
/// codes. A broken pipe on stdout ends the run quietly with exit 0.
pub fn run_with(
    argv: &[OsString],
    env: Environment,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    let inv = Invocation::from_argv(argv);
    let (cli, matches) = match parse(argv) {
        Ok(parsed) => parsed,
        Err((err, root)) => {
            return match failure::from_clap(&err, &root) {
                ParseOutcome::Display(text) => {
                    finish(stdout.write_all(text.as_bytes()), &inv, stdout, stderr)
                }
                ParseOutcome::Failure(error) => failure::report(
                    &error,
                    &inv,
                    inv.requested_format(),
                    inv.requested_quiet(),
                    stdout,
                    stderr,
                ),
            };
        }
    };
    execute(&cli, Some(&matches), inv, env, stdout, stderr)
}

/// Runs a parsed invocation: builds [`Ctx`], runs the secret-guard preflight over the typed
/// texts in `matches`, dispatches, renders and maps the outcome to an exit code.
///
/// `matches` is `None` only for an in-process read ([`request::read`]): reads write nothing,
/// so the guard has nothing to scan.
pub(crate) fn execute(
    cli: &Cli,
    matches: Option<&ArgMatches>,
    mut inv: Invocation,
    env: Environment,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    inv.set_command(cli.command.name());
    let fallback_format = Format::resolve(cli.global.output_format, cli.global.json, None);
    let read_output =
        ReadOutputRequest::parse(&cli.global, cli.command.name(), cli.command.read_kind());
    let mut ctx = match Ctx::new(&cli.global, env) {
        Ok(ctx) => ctx,
        Err(error) => {
            return failure::report(
                &error.into(),
                &inv,
                fallback_format,
                cli.global.quiet,
                stdout,
                stderr,
            );
        }
    };
    let checked = read_output.and_then(|request| {
        cli.command.refuse_read_guard(&cli.global.expect_hash)?;
        Ok(request)
    });
    ctx.read_output = match checked {
        Ok(request) => request,
        Err(error) => return failure::report(&error, &inv, ctx.format, ctx.quiet, stdout, stderr),
    };
    ctx.read_output
        .settings_warnings
        .clone_from(&ctx.settings_issues);
    // The secret guard runs before the command, as pm's preflight does: its warnings come
    // first on stderr in every output format, and a block refuses before anything is written.
    let guarded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match matches {
        Some(matches) => commands::mutate::guard::preflight(&ctx, &cli.command, matches),
        // Only `request::read` passes no matches, and it only builds reads.
        None => Ok(Vec::new()),
    }));
    match guarded.unwrap_or_else(|payload| Err(failure::from_panic(&*payload))) {
        Ok(warnings) => {
            for warning in warnings {
                let _ = writeln!(stderr, "warning:{warning}");
            }
        }
        Err(error) => return failure::report(&error, &inv, ctx.format, ctx.quiet, stdout, stderr),
    }
    // A panic is a bug, but it still ends as one error document (C1), not a bare backtrace.
    let dispatched = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        commands::dispatch(&ctx, &cli.command)
    }));
    let output = match dispatched.unwrap_or_else(|payload| Err(failure::from_panic(&*payload))) {
        Ok(output) => output,
        Err(error) => return failure::report(&error, &inv, ctx.format, ctx.quiet, stdout, stderr),
    };
    if ctx.format == Format::Toon {
        for warning in output.warnings() {
            // Advisory only: a closed stderr must not turn a committed mutation into a failure.
            let _ = writeln!(stderr, "warning:{warning}");
        }
    }
    // A read on invalid settings answers, and says which key it could not use: on stderr in
    // text mode, and in JSON mode for outputs that have no envelope to carry the warning.
    if ctx.format == Format::Toon
        || !matches!(
            output,
            commands::CommandOutput::Read(_) | commands::CommandOutput::Streamed(_)
        )
    {
        for issue in &ctx.settings_issues {
            let _ = writeln!(stderr, "warning:{} ({})", issue.token(), issue.message());
        }
    }
    let code = output.exit_code();
    if ctx.quiet {
        return code;
    }
    finish_with(code, output.write(ctx.format, stdout), &inv, stdout, stderr)
}

/// Parses argv into [`Cli`] and its matches, or returns clap's error with the grammar it came
/// from.
///
/// The normal path builds only the invoked subcommand's grammar
/// ([`commands::invoked_grammar`]); a parse it accepts is the one the full grammar gives. Any
/// other outcome but `--version` (help, a usage error) is parsed again with the full grammar,
/// so help texts and error envelopes are the full grammar's, byte for byte.
#[allow(clippy::result_large_err)]
fn parse(argv: &[OsString]) -> Result<(Cli, ArgMatches), (clap::Error, clap::Command)> {
    if let Some(mut lazy) = commands::invoked_grammar(argv) {
        match lazy.try_get_matches_from_mut(argv) {
            Ok(matches) => {
                if let Ok(cli) = Cli::from_arg_matches(&matches) {
                    return Ok((cli, matches));
                }
            }
            Err(err) if err.kind() == ErrorKind::DisplayVersion => return Err((err, lazy)),
            Err(_) => {}
        }
    }
    Cli::command()
        .try_get_matches_from(argv)
        .and_then(|matches| {
            let cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut Cli::command()))?;
            Ok((cli, matches))
        })
        .map_err(|err| (err, Cli::command()))
}

/// Maps the result of writing a successful result to the exit code: a broken pipe is a quiet
/// success (the reader went away), any other write failure is an `io_error`.
fn finish(
    written: io::Result<()>,
    inv: &Invocation,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    finish_with(exit::SUCCESS, written, inv, stdout, stderr)
}

/// As [`finish`], with `code` as the exit code of a complete write (a read omitted for its
/// budget exits 2 after printing the omission document).
fn finish_with(
    code: u8,
    written: io::Result<()>,
    inv: &Invocation,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    match written.and_then(|()| stdout.flush()) {
        Ok(()) => code,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => code,
        Err(source) => {
            let error = failure::CliError::from(pm_engine::Error::Io {
                path: "<stdout>".into(),
                source,
            });
            failure::report(&error, inv, Format::Toon, true, stdout, stderr)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stdout whose reader has gone away.
    struct Closed(io::ErrorKind);

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(self.0.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn argv(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn broken_pipe_on_stdout_is_a_quiet_success() {
        let mut stderr = Vec::new();
        let code = run_with(
            &argv(&["pm", "--help"]),
            Environment::with_cwd("/"),
            &mut Closed(io::ErrorKind::BrokenPipe),
            &mut stderr,
        );
        assert_eq!(code, exit::SUCCESS);
        assert!(stderr.is_empty());
    }

    #[test]
    fn other_stdout_failures_are_io_errors() {
        let mut stderr = Vec::new();
        let code = run_with(
            &argv(&["pm", "--version"]),
            Environment::with_cwd("/"),
            &mut Closed(io::ErrorKind::StorageFull),
            &mut stderr,
        );
        assert_eq!(code, exit::FAILURE);
        let text = String::from_utf8_lossy(&stderr);
        assert!(text.starts_with("error[io_error]: <stdout>: "), "{text}");
    }

    #[test]
    fn json_error_keeps_its_exit_code_when_stdout_is_closed() {
        let mut stderr = Vec::new();
        let code = run_with(
            &argv(&["pm", "--json", "--nope"]),
            Environment::with_cwd("/"),
            &mut Closed(io::ErrorKind::BrokenPipe),
            &mut stderr,
        );
        assert_eq!(code, exit::USAGE);
        assert_eq!(
            String::from_utf8_lossy(&stderr),
            "error[unknown_option]: unknown option '--nope'\n"
        );
    }
}
