//! `next` and `context` print the same bytes from the index's ranking rows as from a scan on the
//! real tracker (deadlines, reminders, explicit order, risk, blockers, deep hierarchies), at a
//! clock that leaves upcoming agenda events, across limits, intents, filters and `--parent`.

use std::error::Error;

use crate::common::TestTracker;
use crate::test_get::READS_ENV;

#[test]
fn corpus_next_and_context_index_equals_scan() -> Result<(), Box<dyn Error>> {
    let dir = pm_testkit::extract_corpus()?;
    let t = TestTracker::new()?;
    let pm_path = dir.path().join(".agents/pm").display().to_string();
    let mut env: Vec<(&str, &str)> = READS_ENV.to_vec();
    env.push(("PM_CLOCK", "2026-01-01T00:00:00.000Z"));
    env.push(("PM_PATH", &pm_path));
    let mut scan_env = env.clone();
    scan_env.push(("PM_NO_INDEX", "1"));
    for argv in [
        vec!["next", "--limit", "10"],
        vec!["next", "--json", "--explain-ranking"],
        vec!["next", "--for", "execute"],
        vec!["next", "--parent", "pm-usfg", "--include-decisions"],
        vec!["next", "--type", "Task", "--blocked-limit", "3", "--json"],
        vec!["context", "--limit", "2"],
        vec!["context", "--json", "--explain-ranking"],
        vec!["context", "--for", "orient"],
        vec!["context", "--parent", "pm-usfg", "--json"],
        vec!["context", "--type", "Feature", "--limit", "4"],
    ] {
        let a = t.pm_in(dir.path(), &argv, &env)?;
        let b = t.pm_in(dir.path(), &argv, &scan_env)?;
        assert_eq!(a.code, 0, "{argv:?}: {}", a.stderr);
        assert_eq!(a.stdout, b.stdout, "{argv:?}");
    }
    let agenda = t.pm_in(dir.path(), &["context", "--json"], &env)?;
    assert!(
        agenda.stdout.contains("\"kind\": \"reminder\""),
        "{}",
        agenda.stdout
    );
    assert!(agenda.stdout.contains("\"kind\": \"deadline\""));
    Ok(())
}
