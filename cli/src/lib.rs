//! The `pm` command line: parse, build the context, dispatch, render, map errors to exit codes.

/// Runs pm with the process arguments and environment and returns the exit code.
pub fn run() -> std::process::ExitCode {
    std::process::ExitCode::SUCCESS
}
