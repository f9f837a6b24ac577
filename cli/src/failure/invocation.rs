//! The command line as typed, kept for error reports (`recovery.attempted_command`, …) and for
//! choosing the error encoding when clap could not parse it.

use std::ffi::OsString;

use super::echo::{scrub, scrub_text};
use crate::render::Format;

/// The arguments of one pm run, as typed.
#[derive(Clone, Debug, Default)]
pub struct Invocation {
    /// Arguments after the program name (lossily decoded).
    args: Vec<String>,
    /// The subcommand name once parsing succeeded.
    command: Option<String>,
}

impl Invocation {
    /// Captures `argv` (including the program name, which is dropped).
    pub fn from_argv(argv: &[OsString]) -> Invocation {
        Invocation {
            args: argv
                .iter()
                .skip(1)
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            command: None,
        }
    }

    /// Records the subcommand that parsing selected.
    pub fn set_command(&mut self, name: &str) {
        self.command = Some(name.to_owned());
    }

    /// Returns the arguments after the program name as an error report may echo them
    /// (credentials redacted, each cut at 200 characters).
    pub fn echoed_args(&self) -> Vec<String> {
        self.args.iter().map(|a| scrub(a)).collect()
    }

    /// Returns `text` (a message, hint or cause) as an error report may print it: credentials
    /// redacted and every over-long quoted argument cut.
    pub fn echo_text(&self, text: &str) -> String {
        scrub_text(text, &self.args)
    }

    /// Returns the command that refused: the subcommand name, or `pm` before one is known.
    pub fn surface(&self) -> String {
        self.command.clone().unwrap_or_else(|| "pm".into())
    }

    /// Returns `pm <args>` with every argument echoed and shell-quoted.
    pub fn attempted_command(&self) -> String {
        command_line(&self.args)
    }

    /// Returns the attempted command with the first argument equal to `from` (or `from=…`)
    /// replaced by `to`, or `None` when no argument matches.
    pub fn retry_with(&self, from: &str, to: &str) -> Option<String> {
        let mut args = self.args.clone();
        let slot = args
            .iter_mut()
            .take_while(|a| *a != "--")
            .find(|a| *a == from || a.strip_prefix(from).is_some_and(|r| r.starts_with('=')))?;
        *slot = match slot.split_once('=') {
            Some((_, value)) if from.starts_with('-') => format!("{to}={value}"),
            _ => to.to_owned(),
        };
        Some(command_line(&args))
    }

    /// Returns every flag that was typed (`--x=1` as `--x`), in order, before a `--`.
    pub fn provided_fields(&self) -> Vec<String> {
        self.options()
            .filter(|a| a.starts_with('-') && a.len() > 1)
            .map(|a| scrub(a.split_once('=').map_or(a, |(flag, _)| flag)))
            .collect()
    }

    /// Returns the output format the arguments ask for, read without a full parse (used when
    /// clap itself rejected the command line).
    pub fn requested_format(&self) -> Format {
        let mut explicit = None;
        let mut json = false;
        let mut tokens = self.options();
        while let Some(arg) = tokens.next() {
            match arg.split_once('=') {
                _ if arg == "--json" => json = true,
                Some(("--output-format", value)) => explicit = format_named(value),
                None if arg == "--output-format" => explicit = tokens.next().and_then(format_named),
                _ => {}
            }
        }
        Format::resolve(explicit, json, None)
    }

    /// Returns whether `--quiet` was typed (read without a full parse).
    pub fn requested_quiet(&self) -> bool {
        self.options().any(|a| a == "--quiet")
    }

    fn options(&self) -> impl Iterator<Item = &str> {
        self.args
            .iter()
            .map(String::as_str)
            .take_while(|a| *a != "--")
    }
}

fn format_named(name: &str) -> Option<Format> {
    match name {
        "json" => Some(Format::Json),
        "toon" => Some(Format::Toon),
        _ => None,
    }
}

/// Returns `pm` followed by the echoed (redacted, bounded), shell-quoted arguments.
fn command_line(args: &[String]) -> String {
    std::iter::once("pm".to_owned())
        .chain(args.iter().map(|a| shell_quote(&scrub(a))))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Quotes `arg` for a POSIX shell when it contains anything but plain word characters.
pub fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv(args: &[&str]) -> Invocation {
        let argv: Vec<OsString> = std::iter::once("pm")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        Invocation::from_argv(&argv)
    }

    #[test]
    fn attempted_command_is_shell_quoted() {
        let i = inv(&["search", "it's here", "--json", ""]);
        assert_eq!(i.attempted_command(), "pm search 'it'\\''s here' --json ''");
        assert_eq!(i.provided_fields(), vec!["--json"]);
        assert_eq!(i.surface(), "pm");
    }

    #[test]
    fn format_prescan_follows_precedence() {
        assert_eq!(inv(&["x", "--json"]).requested_format(), Format::Json);
        assert_eq!(
            inv(&["--output-format", "json", "x"]).requested_format(),
            Format::Json
        );
        assert_eq!(
            inv(&["--output-format=json"]).requested_format(),
            Format::Json
        );
        assert_eq!(
            inv(&["--json", "--output-format=toon"]).requested_format(),
            Format::Toon
        );
        assert_eq!(
            inv(&["--output-format", "yaml"]).requested_format(),
            Format::Toon
        );
        assert_eq!(inv(&["x", "--", "--json"]).requested_format(), Format::Toon);
        assert!(inv(&["--quiet"]).requested_quiet());
    }

    #[test]
    fn retry_replaces_the_offending_token() {
        let i = inv(&["--jsn", "list", "--pm-pth=a b"]);
        assert_eq!(
            i.retry_with("--jsn", "--json").as_deref(),
            Some("pm --json list '--pm-pth=a b'")
        );
        assert_eq!(
            i.retry_with("--pm-pth", "--pm-path").as_deref(),
            Some("pm --jsn list '--pm-path=a b'")
        );
        assert_eq!(
            inv(&["lst"]).retry_with("lst", "list").as_deref(),
            Some("pm list")
        );
        assert_eq!(i.retry_with("--nope", "--json"), None);
    }
}
