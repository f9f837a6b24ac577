//! Outside a tracker, commands that need one fail with `not_in_project` and exit 3; under
//! `--json` the envelope carries the `init` retry (machine contract C7).

use crate::common::{ErrorEnvelope, TestTracker};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[test]
fn text_mode_reports_on_stderr() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm(&["where"])?;
    let root = t.workspace().join(".agents/pm");
    assert_eq!(run.stdout, "");
    assert_eq!(
        t.redact(&run.stderr),
        "error[not_in_project]: no pm tracker found (looked for [TRACKER]/.agents/pm)\n\
         hint: run `pm init` in the project root, or point --pm-path/PM_PATH at an existing \
         tracker (looked for [TRACKER]/.agents/pm)\n"
    );
    assert_eq!(run.code, 3);
    assert!(!root.exists(), "a refused command writes nothing");
    Ok(())
}

#[test]
fn json_mode_prints_one_envelope_with_the_init_retry() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm(&["where", "--json"])?;
    assert_eq!(run.code, 3);
    assert_eq!(
        t.redact(&run.stderr),
        "error[not_in_project]: no pm tracker found (looked for [TRACKER]/.agents/pm)\n"
    );
    let env: ErrorEnvelope = run.json()?;
    assert!(!env.ok);
    let e = env.error;
    assert_eq!(e.code, "not_in_project");
    assert_eq!(e.exit_code, 3);
    assert_eq!(e.title, "Tracker not found");
    assert!(e.why.is_some() && !e.examples.is_empty());
    assert_eq!(
        e.recovery.suggested_retry.map(|r| t.redact(&r)).as_deref(),
        Some("pm --pm-path [TRACKER]/.agents/pm init --defaults")
    );
    assert_eq!(e.recovery.attempted_command, "pm where --json");
    assert_eq!(e.refusal.surface, "where");
    assert_eq!(e.refusal.exit_code, 3);
    assert!(!e.changed);
    Ok(())
}

#[test]
fn exit_code_is_the_same_with_and_without_json() -> TestResult {
    let t = TestTracker::new()?;
    let outside = t.outside();
    let text = t.pm_in(&outside, &["where"], &[])?;
    let json = t.pm_in(&outside, &["where", "--output-format", "json"], &[])?;
    assert_eq!((text.code, json.code), (3, 3));
    assert_eq!(json.json::<ErrorEnvelope>()?.error.code, "not_in_project");
    assert_eq!(text.stdout, "");
    Ok(())
}

#[test]
fn explicit_path_without_settings_is_not_a_tracker() -> TestResult {
    let t = TestTracker::new()?;
    let missing = t.workspace().join("nowhere");
    let missing = missing.to_str().ok_or("non-UTF-8 temp path")?;
    let run = t.pm(&["--pm-path", missing, "where", "--json"])?;
    assert_eq!(run.code, 3);
    let e = run.json::<ErrorEnvelope>()?.error;
    assert_eq!(
        e.recovery.suggested_retry.map(|r| t.redact(&r)).as_deref(),
        Some("pm --pm-path [TRACKER]/nowhere init --defaults")
    );

    let run = t.pm_in(&t.workspace(), &["where"], &[("PM_PATH", "elsewhere")])?;
    assert_eq!(run.code, 3);
    assert!(
        t.redact(&run.stderr)
            .contains("(looked for [TRACKER]/elsewhere)"),
        "{}",
        run.stderr
    );
    Ok(())
}
