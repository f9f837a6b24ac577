//! clap errors go through pm's error path: exit 2, `error[<code>]` on stderr in text mode, and
//! exactly one JSON envelope on stdout under `--json` / `--output-format json`.

use crate::common::{ErrorEnvelope, TestTracker};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[test]
fn unknown_flag_in_text_mode() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm(&["where", "--jsn"])?;
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "error[unknown_option]: unknown option '--jsn'\nhint: did you mean '--json'?\n"
    );
    assert_eq!(run.code, 2);
    Ok(())
}

#[test]
fn unknown_flag_in_json_mode() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm(&["--json", "where", "--jsn"])?;
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "error[unknown_option]: unknown option '--jsn'\n"
    );
    let env: ErrorEnvelope = run.json()?;
    assert!(!env.ok);
    let e = env.error;
    assert_eq!(e.code, "unknown_option");
    assert_eq!(e.message, "unknown option '--jsn'");
    assert_eq!(e.exit_code, 2);
    assert_eq!(e.recovery.attempted_command, "pm --json where --jsn");
    assert_eq!(e.recovery.normalized_args, ["--json", "where", "--jsn"]);
    assert_eq!(e.recovery.provided_fields, ["--json", "--jsn"]);
    assert_eq!(e.recovery.suggested_flags, ["--json"]);
    assert_eq!(
        e.recovery.suggested_retry.as_deref(),
        Some("pm --json where --json")
    );
    assert_eq!(e.refusal.surface, "--jsn");
    assert_eq!(e.refusal.exit_code, 2);
    assert_eq!(e.hint.as_deref(), Some("did you mean '--json'?"));
    assert!(!e.changed);
    assert_eq!(e.title, "Unknown option");
    assert!(!e.required.is_empty() && !e.next_steps.is_empty());
    Ok(())
}

#[test]
fn output_format_json_also_selects_the_envelope() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm(&["--output-format=json", "--bogus"])?;
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "error[unknown_option]: unknown option '--bogus'\n"
    );
    let env: ErrorEnvelope = run.json()?;
    assert_eq!(env.error.code, "unknown_option");
    assert!(env.error.recovery.suggested_retry.is_none());
    assert_eq!(
        env.error.hint.as_deref(),
        Some("run `pm --help` for the accepted arguments")
    );
    Ok(())
}

#[test]
fn unknown_subcommand() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm(&["wher"])?;
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "error[unknown_command]: unknown command 'wher'\nhint: did you mean 'where'?\n"
    );
    assert_eq!(run.code, 2);

    let run = t.pm(&["wher", "--json"])?;
    assert_eq!(run.code, 2);
    let e = run.json::<ErrorEnvelope>()?.error;
    assert_eq!(e.code, "unknown_command");
    assert_eq!(e.recovery.candidate_commands, ["where"]);
    assert_eq!(
        e.recovery.suggested_retry.as_deref(),
        Some("pm where --json")
    );
    assert_eq!(e.refusal.surface, "pm");
    assert_eq!(e.refusal.rejected_value.as_deref(), Some("wher"));
    assert!(
        e.refusal
            .legal_domain
            .is_some_and(|d| d.contains(&"where".to_owned()))
    );
    Ok(())
}

#[test]
fn missing_command() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm(&[])?;
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.starts_with(
            "error[missing_required_argument]: a command is required\nhint: use one of: "
        ),
        "{}",
        run.stderr
    );
    assert_eq!(run.code, 2);

    let run = t.pm(&["--json"])?;
    assert_eq!(run.code, 2);
    let e = run.json::<ErrorEnvelope>()?.error;
    assert_eq!(e.code, "missing_required_argument");
    assert_eq!(e.recovery.missing, ["<COMMAND>"]);
    Ok(())
}

#[test]
fn invalid_value_lists_the_legal_domain() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm(&["where", "--output-format", "yaml"])?;
    assert_eq!(run.stdout, "");
    assert_eq!(run.code, 2);
    assert!(run.stderr.starts_with(
        "error[invalid_argument_value]: invalid value 'yaml' for '--output-format <FORMAT>'\n"
    ));
    assert!(
        run.stderr.ends_with("hint: use one of: toon, json\n"),
        "{}",
        run.stderr
    );

    let run = t.pm(&["where", "--json", "--output-format", "yaml"])?;
    assert_eq!(run.code, 2);
    let e = run.json::<ErrorEnvelope>()?.error;
    assert_eq!(e.code, "invalid_argument_value");
    assert_eq!(e.refusal.surface, "--output-format");
    assert_eq!(e.refusal.rejected_value.as_deref(), Some("yaml"));
    assert_eq!(
        e.refusal.legal_domain,
        Some(vec!["toon".to_owned(), "json".to_owned()])
    );
    assert_eq!(e.recovery.allowed_values, ["toon", "json"]);
    Ok(())
}

#[test]
fn unexpected_positional() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm(&["where", "extra"])?;
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "error[unexpected_argument]: unexpected argument 'extra'\nhint: run `pm --help` for the accepted arguments\n"
    );
    assert_eq!(run.code, 2);
    Ok(())
}

#[test]
fn malformed_pinned_clock_is_a_usage_error() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm_in(
        &t.workspace(),
        &["where", "--json"],
        &[("PM_CLOCK", "noon")],
    )?;
    assert_eq!(run.code, 2);
    let e = run.json::<ErrorEnvelope>()?.error;
    assert_eq!(e.code, "invalid_argument_value");
    assert_eq!(e.refusal.surface, "PM_CLOCK");
    assert_eq!(e.refusal.rejected_value.as_deref(), Some("noon"));
    assert_eq!(run.stderr.lines().count(), 1);
    Ok(())
}
