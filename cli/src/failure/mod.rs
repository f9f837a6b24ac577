//! How a failed run is reported: under JSON one `{"ok": false, "error": {…}}` document on stdout
//! (machine contract C1–C7), otherwise `error[<code>]:`, `hint:` and `caused by:` lines on stderr.

mod echo;
mod error;
mod guidance;
mod hints;
mod invocation;
mod usage;

use std::io::{self, Write};

use pm_engine::Error;
use serde::Serialize;

pub use echo::{MAX_ECHO_CHARS, redact_echo};
pub use error::{CliError, ReadOutputRefusal, Result, UsageKind};
pub use invocation::{Invocation, shell_quote};
pub use usage::{ParseOutcome, from_clap};

use crate::exit;
use crate::render::{Format, render};

/// The JSON error document: `{"ok": false, "error": {…}}`.
#[derive(Debug, Serialize)]
pub struct FailureEnvelope {
    /// Always `false`.
    pub ok: bool,
    /// What went wrong and how to recover.
    pub error: FailureBody,
}

/// The `error` object of the envelope (pm's problem fields, moved inside `error`).
#[derive(Debug, Serialize)]
pub struct FailureBody {
    /// Stable snake_case code (`docs/errors.md`).
    pub code: &'static str,
    /// The specific message (pm's `detail`).
    pub message: String,
    /// Short headline of the code.
    pub title: &'static str,
    /// The corrective action.
    pub required: &'static str,
    /// Why pm refuses, when worth saying.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<&'static str>,
    /// Example commands.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub examples: &'static [&'static str],
    /// Machine-usable recovery data.
    pub recovery: Recovery,
    /// Ordered next actions.
    pub next_steps: &'static [&'static str],
    /// The process exit code (the same with and without `--json`).
    pub exit_code: u8,
    /// What was refused.
    pub refusal: Refusal,
    /// One-line fix computed from the error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Whether the failed command left tracker files changed (only a torn mutation does).
    pub changed: bool,
    /// Structured details of the refusal (`item_revision_conflict`: revisions and
    /// `changes_since`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<serde_json::Value>,
}

/// The recovery bundle.
#[derive(Debug, Serialize)]
pub struct Recovery {
    /// `pm <args>`, shell-quoted.
    pub attempted_command: String,
    /// The arguments after `pm`.
    pub normalized_args: Vec<String>,
    /// The flags that were typed.
    pub provided_fields: Vec<String>,
    /// Required arguments that were absent.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// Declared flags close to an unknown one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggested_flags: Vec<String>,
    /// Commands close to an unknown one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidate_commands: Vec<String>,
    /// The legal values of the refused argument.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_values: Vec<String>,
    /// A complete command line that is expected to work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggested_retry: Option<String>,
}

/// The refused surface.
#[derive(Debug, Serialize)]
pub struct Refusal {
    /// The offending flag, the missing operand, or the command that refused.
    pub surface: String,
    /// The rejected value, when a value was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected_value: Option<String>,
    /// Every legal value (never truncated), when the domain is finite.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub legal_domain: Option<Vec<String>>,
    /// The process exit code.
    pub exit_code: u8,
}

/// Returns the error envelope of `error` for the run described by `inv`.
pub fn envelope(error: &CliError, inv: &Invocation) -> FailureEnvelope {
    let code = error.code();
    let exit_code = exit::for_code(code);
    let guide = guidance::guidance(code);
    let mut recovery = Recovery {
        attempted_command: inv.attempted_command(),
        normalized_args: inv.echoed_args(),
        provided_fields: inv.provided_fields(),
        missing: Vec::new(),
        suggested_flags: Vec::new(),
        candidate_commands: Vec::new(),
        allowed_values: Vec::new(),
        suggested_retry: None,
    };
    let mut refusal = Refusal {
        surface: inv.surface(),
        rejected_value: None,
        legal_domain: None,
        exit_code,
    };
    match error {
        CliError::Usage {
            kind,
            flag,
            value,
            suggestions,
            allowed,
            ..
        } => {
            if let Some(flag) = flag {
                refusal.surface = flag.clone();
            }
            refusal.rejected_value = value.clone();
            match kind {
                UsageKind::UnknownOption => recovery.suggested_flags = suggestions.to_vec(),
                UsageKind::UnknownCommand => recovery.candidate_commands = suggestions.to_vec(),
                UsageKind::MissingRequiredArgument => recovery.missing.extend(flag.clone()),
                _ => {}
            }
            recovery.allowed_values = allowed.to_vec();
            if let [only] = &**suggestions {
                let typed = flag.as_deref().or(value.as_deref()).unwrap_or_default();
                recovery.suggested_retry = inv.retry_with(typed, only);
            }
        }
        CliError::ReadOutput {
            flag,
            value,
            allowed,
            suggestion,
            ..
        } => {
            refusal.surface = (*flag).to_owned();
            refusal.rejected_value = value.clone();
            recovery.allowed_values = allowed.to_vec();
            if let (Some(typed), Some(better)) = (value, suggestion) {
                recovery.suggested_retry = inv.retry_with(typed, better);
            }
        }
        CliError::Engine(error) => engine_recovery(error, &mut recovery, &mut refusal),
    }
    if !recovery.allowed_values.is_empty() {
        refusal.legal_domain = Some(recovery.allowed_values.clone());
    }
    let mut body = FailureBody {
        code: code.as_str(),
        message: error.to_string(),
        title: guide.title,
        required: guide.required,
        why: guide.why,
        examples: guide.examples,
        recovery,
        next_steps: guide.next_steps,
        exit_code,
        refusal,
        hint: error.hint(),
        changed: error.changed(),
        context: error.engine().and_then(context_of),
    };
    echo_fields(&mut body, inv);
    FailureEnvelope {
        ok: false,
        error: body,
    }
}

/// Fills the recovery data and the refused surface that an engine error names.
fn engine_recovery(error: &Error, recovery: &mut Recovery, refusal: &mut Refusal) {
    match error {
        Error::NotInProject { tried, .. } => {
            recovery.suggested_retry = Some(format!(
                "pm --pm-path {} init --defaults",
                shell_quote(&tried.to_string_lossy())
            ));
        }
        Error::InvalidArgument {
            field,
            value,
            allowed,
            ..
        } => {
            refusal.surface = field.clone();
            refusal.rejected_value = Some(value.clone());
            recovery.allowed_values = allowed.to_vec();
        }
        Error::ConflictingOptions { flag, .. } => refusal.surface = flag.clone(),
        Error::UnsupportedSubcommand {
            subcommand,
            supported,
            ..
        } => {
            refusal.surface = "SUBCOMMAND".into();
            refusal.rejected_value = Some(subcommand.clone());
            recovery.allowed_values = supported.clone();
        }
        Error::Lifecycle {
            holder: Some(holder),
            ..
        } => refusal.rejected_value = Some(holder.clone()),
        Error::UnresolvedReference { field, target, .. } => {
            refusal.surface = field.clone();
            refusal.rejected_value = Some(target.clone());
        }
        Error::SecretGuardBlocked { .. } => {
            // pm's compact redacted recovery: the command line held the credential, so none of
            // it is echoed (the typed flag names stay in provided_fields).
            recovery.attempted_command = "pm <mutation> [REDACTED]".into();
            recovery.normalized_args = vec!["[REDACTED]".into()];
            recovery.suggested_retry =
                Some("Remove credential-shaped content, then retry the mutation.".into());
        }
        Error::RevisionConflict { expected, .. } => {
            refusal.surface = "--expect-hash".into();
            refusal.rejected_value = Some(expected.clone());
        }
        Error::CursorNotInResult { flag, after } => {
            refusal.surface = (*flag).to_owned();
            refusal.rejected_value = Some(after.clone());
        }
        Error::MissingCreateOptions { flags, strict, .. } => {
            recovery.missing = flags.clone();
            if *strict {
                recovery.suggested_flags = std::iter::once("--create-mode progressive".into())
                    .chain(flags.iter().cloned())
                    .collect();
            }
        }
        Error::CloseValidation { id, missing } => {
            let flags: Vec<String> = missing
                .iter()
                .map(|k| pm_engine::governance::close_policy::close_field_flag(k))
                .collect();
            let args: Vec<String> = flags
                .iter()
                .flat_map(|f| [f.clone(), shell_quote("<value>")])
                .collect();
            recovery.suggested_retry = Some(format!("pm update {id} {}", args.join(" ")));
            recovery.missing = flags;
        }
        Error::LikelyDuplicate { matches } => {
            recovery.suggested_flags = vec!["--allow-duplicate".into()];
            recovery.suggested_retry = matches.first().map(|best| {
                if best.terminal {
                    format!(
                        "pm item reopen {} {}",
                        best.id,
                        shell_quote("<recurrence reason>")
                    )
                } else {
                    format!("pm get {} --full", best.id)
                }
            });
        }
        _ => {}
    }
}

/// Passes every field that can quote the command line through the echo rules (credentials
/// redacted, values cut at [`MAX_ECHO_CHARS`]); the arguments themselves are echoed by
/// [`Invocation`].
fn echo_fields(body: &mut FailureBody, inv: &Invocation) {
    body.message = inv.echo_text(&body.message);
    body.hint = body.hint.as_deref().map(|hint| inv.echo_text(hint));
    body.refusal.surface = echo::scrub(&body.refusal.surface);
    body.refusal.rejected_value = body.refusal.rejected_value.as_deref().map(echo::scrub);
    body.recovery.suggested_retry = body
        .recovery
        .suggested_retry
        .as_deref()
        .map(|retry| inv.echo_text(retry));
    for missing in &mut body.recovery.missing {
        *missing = echo::scrub(missing);
    }
}

/// Returns the headline and corrective action of `code` (the error catalogue of `pm contracts`).
pub fn code_guidance(code: pm_engine::ErrorCode) -> (&'static str, &'static str) {
    let guide = guidance::guidance(code);
    (guide.title, guide.required)
}

/// Returns the `internal_error` a caught panic becomes (its message is the panic's text).
pub fn from_panic(payload: &(dyn std::any::Any + Send)) -> CliError {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    CliError::internal(format!("pm panicked: {text}"))
}

/// Returns the structured context of errors that carry one.
fn context_of(error: &Error) -> Option<serde_json::Value> {
    match error {
        Error::RevisionConflict {
            id,
            expected,
            current,
            expected_recorded,
            changes_since,
            changes_since_omitted,
        } => Some(serde_json::json!({
            "item_id": id,
            "expected_revision": echo::scrub(expected),
            "current_revision": current,
            "expected_revision_recorded": expected_recorded,
            "details": {
                "changes_since": changes_since,
                "changes_since_omitted": changes_since_omitted,
            },
        })),
        Error::SecretGuardBlocked { rules, paths } => Some(serde_json::json!({
            "rules": rules,
            "paths": paths,
        })),
        _ => None,
    }
}

/// Returns the one-line report: `error[<code>]: <message>` (the message echoed as the
/// envelope's is).
fn headline(error: &CliError, inv: &Invocation) -> String {
    format!(
        "error[{}]: {}\n",
        error.code(),
        inv.echo_text(&error.to_string())
    )
}

/// Returns the human report: `error[<code>]: <message>`, then `hint:` and `caused by:` lines,
/// each echoed as the envelope's fields are.
pub fn text_report(error: &CliError, inv: &Invocation) -> String {
    let mut text = headline(error, inv);
    if let Some(hint) = error.hint() {
        text.push_str(&format!("hint: {}\n", inv.echo_text(&hint)));
    }
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(&format!(
            "caused by: {}\n",
            inv.echo_text(&cause.to_string())
        ));
        source = cause.source();
    }
    text
}

/// Reports `error` on the right stream for `format` and returns the exit code.
///
/// JSON: the envelope on stdout (unless `quiet`) and one `error[<code>]:` line on stderr.
/// TOON/text: the full human report on stderr and nothing on stdout. Write failures are ignored:
/// the exit code still tells the caller what happened.
pub fn report(
    error: &CliError,
    inv: &Invocation,
    format: Format,
    quiet: bool,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    let code = exit::for_code(error.code());
    let result: io::Result<()> = match format {
        Format::Json => {
            let line = headline(error, inv);
            let written = if quiet {
                Ok(())
            } else {
                render(&envelope(error, inv), Format::Json, stdout)
            };
            written.and(stderr.write_all(line.as_bytes()))
        }
        Format::Toon => stderr.write_all(text_report(error, inv).as_bytes()),
    };
    // A closed stream cannot carry the report; the exit code still does.
    let _ = result;
    code
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn invocation(args: &[&str], command: &str) -> Invocation {
        let argv: Vec<OsString> = std::iter::once("pm")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        let mut inv = Invocation::from_argv(&argv);
        inv.set_command(command);
        inv
    }

    /// pm-cli's own `item_not_found` document (reads golden `fx-100/get-missing.json.stderr`)
    /// carries the same guidance and recovery values as our envelope.
    #[test]
    fn item_not_found_matches_pm_cli_wording() -> Result<(), Box<dyn std::error::Error>> {
        let path = pm_testkit::shared_file("golden/reads/fx-100/get-missing.json.stderr");
        let golden: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
        let error = CliError::from(Error::ItemNotFound {
            id: "pm-doesnotexist".into(),
        });
        let inv = invocation(&["get", "pm-doesnotexist", "--json"], "get");
        let ours = serde_json::to_value(envelope(&error, &inv))?;
        assert_eq!(ours["ok"], false);
        let ours = &ours["error"];
        assert_eq!(ours["message"], golden["detail"]);
        for key in [
            "code",
            "title",
            "required",
            "why",
            "examples",
            "next_steps",
            "exit_code",
            "recovery",
            "refusal",
        ] {
            assert_eq!(ours[key], golden[key], "{key}");
        }
        assert_eq!(ours["changed"], false);
        Ok(())
    }

    #[test]
    fn a_caught_panic_is_an_internal_error() {
        let caught = std::panic::catch_unwind(|| {
            if std::hint::black_box(true) {
                panic!("boom {}", 7);
            }
        });
        let Err(payload) = caught else {
            panic!("did not panic");
        };
        let error = from_panic(&*payload);
        assert_eq!(error.code().as_str(), "internal_error");
        assert!(error.to_string().contains("pm panicked: boom 7"), "{error}");
        let inv = invocation(&["where", "--json"], "where");
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(
            report(&error, &inv, Format::Json, false, &mut out, &mut err),
            1
        );
        let doc: serde_json::Value = serde_json::from_slice(&out).expect("one JSON document");
        assert_eq!(doc["error"]["code"], "internal_error");
    }

    #[test]
    fn text_report_lists_the_cause_chain() {
        let error = CliError::from(Error::Io {
            path: "/t/settings.json".into(),
            source: std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied"),
        });
        assert_eq!(
            text_report(&error, &invocation(&["list"], "list")),
            "error[io_error]: /t/settings.json: denied\n\
             hint: check that /t/settings.json exists and is readable/writable\n\
             caused by: denied\n"
        );
    }

    #[test]
    fn text_mode_writes_nothing_on_stdout() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let error = CliError::from(Error::ItemNotFound { id: "pm-x".into() });
        let inv = invocation(&["get", "pm-x"], "get");
        let code = report(&error, &inv, Format::Toon, false, &mut out, &mut err);
        assert_eq!(code, 3);
        assert!(out.is_empty());
        assert!(
            String::from_utf8_lossy(&err)
                .starts_with("error[item_not_found]: Item pm-x not found\nhint: ")
        );
    }

    #[test]
    fn invalid_argument_names_its_domain() -> Result<(), Box<dyn std::error::Error>> {
        let error = CliError::from(Error::invalid_argument(
            "--status",
            "nope",
            "unknown status",
            vec!["open".into(), "closed".into()],
        ));
        let body = envelope(&error, &invocation(&["list", "--status", "nope"], "list")).error;
        assert_eq!(body.exit_code, 2);
        assert_eq!(body.refusal.surface, "--status");
        assert_eq!(body.refusal.rejected_value.as_deref(), Some("nope"));
        assert_eq!(
            body.refusal.legal_domain,
            Some(vec!["open".into(), "closed".into()])
        );
        assert_eq!(body.recovery.allowed_values, ["open", "closed"]);
        assert_eq!(body.recovery.provided_fields, ["--status"]);
        Ok(())
    }
}
