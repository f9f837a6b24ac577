//! `pm where` inside a tracker: the resolved tracker and workspace roots, in TOON and JSON.

use serde::Deserialize;

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WhereOutput {
    tracker_root: String,
    workspace_root: String,
}

#[test]
fn where_reports_the_discovered_tracker() -> TestResult {
    let t = TestTracker::fx100()?;
    let run = t.pm(&["where", "--json"])?;
    assert_eq!(run.stderr, "");
    assert_eq!(run.code, 0);
    let out: WhereOutput = run.json()?;
    assert_eq!(t.redact(&out.tracker_root), "[TRACKER]/.agents/pm");
    assert_eq!(t.redact(&out.workspace_root), "[TRACKER]");

    let run = t.pm(&["where"])?;
    assert_eq!(
        t.redact(&run.stdout),
        "tracker_root: \"[TRACKER]/.agents/pm\"\nworkspace_root: \"[TRACKER]\"\n"
    );
    assert_eq!(run.stderr, "");
    assert_eq!(run.code, 0);
    Ok(())
}

#[test]
fn quiet_prints_nothing() -> TestResult {
    let t = TestTracker::fx100()?;
    let run = t.pm(&["--quiet", "where"])?;
    assert_eq!(
        (run.stdout.as_str(), run.stderr.as_str(), run.code),
        ("", "", 0)
    );
    Ok(())
}
