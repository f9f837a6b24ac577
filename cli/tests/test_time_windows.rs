//! One meaning of a relative time everywhere (issue 21, item 4): the same value gives the same
//! absolute bound in `list`, `search` and `activity` on a pinned clock; unsigned offsets are in
//! the past, `min` is minutes and `m` is months.

use std::collections::BTreeSet;
use std::error::Error;

use serde_json::Value;

use crate::common::{SEED, TestTracker};

type TestResult = Result<(), Box<dyn Error>>;

/// Two days after the sample tracker's last change (2026-03-06T09:00).
const NOW: &str = "2026-03-07T00:00:00.000Z";

/// Returns the ids of the rows under `key` of `pm args… --json` run at [`NOW`].
fn ids(t: &TestTracker, args: &[&str], key: &str) -> Result<BTreeSet<String>, Box<dyn Error>> {
    let mut argv = args.to_vec();
    argv.push("--json");
    let env = [("PM_CLOCK", NOW), ("PM_SEED", SEED)];
    let run = t.pm_in(&t.workspace(), &argv, &env)?;
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (0, ""),
        "{args:?}: {}",
        run.stdout
    );
    let doc: Value = serde_json::from_str(&run.stdout)?;
    let rows = doc[key].as_array().ok_or(format!("{args:?}: no {key}"))?;
    Ok(rows
        .iter()
        .filter_map(|r| r["id"].as_str().map(String::from))
        .collect())
}

/// Returns the ids each of list, search and activity keeps for the window starting at `when`.
fn per_command(t: &TestTracker, when: &str) -> Result<[BTreeSet<String>; 3], Box<dyn Error>> {
    Ok([
        ids(t, &["list", "--all", "--updated-after", when], "items")?,
        // `e` occurs in every sample item, so the window alone decides.
        ids(t, &["search", "e", "--updated-after", when], "items")?,
        ids(t, &["activity", "--from", when], "activity_digest")?,
    ])
}

#[test]
fn a_relative_value_is_the_same_bound_in_list_search_and_activity() -> TestResult {
    let t = TestTracker::sample()?;
    let everything = ids(&t, &["search", "e"], "items")?;
    let last_two_days: BTreeSet<String> = ["gd-i2", "gd-m1", "gd-t1", "gd-t2"]
        .map(String::from)
        .into();
    for when in ["2d", "-2d", "48h", "2880min", "2026-03-05T00:00:00Z"] {
        let [list, search, activity] = per_command(&t, when)?;
        assert_eq!(list, last_two_days, "list --updated-after {when}");
        assert_eq!(search, list, "search --updated-after {when}");
        assert_eq!(activity, list, "activity --from {when}");
    }
    // `m` is a calendar month (pm's meaning), not a minute: a month back keeps everything.
    let [list, search, activity] = per_command(&t, "1m")?;
    assert!(everything.len() > last_two_days.len());
    assert_eq!(
        (&list, &search, &activity),
        (&everything, &everything, &everything)
    );
    Ok(())
}

#[test]
fn only_an_explicit_plus_points_ahead() -> TestResult {
    let t = TestTracker::sample()?;
    for command in [
        &["list", "--all", "--updated-after", "+1d"][..],
        &["search", "e", "--updated-after", "+1d"],
    ] {
        assert!(ids(&t, command, "items")?.is_empty(), "{command:?}");
    }
    Ok(())
}

#[test]
fn malformed_values_are_refused_alike() -> TestResult {
    let t = TestTracker::sample()?;
    for args in [
        &["list", "--updated-after", "7x"][..],
        &["search", "e", "--updated-after", "7x"],
        &["activity", "--from", "7x"],
        &["list", "--updated-after", "99999999999999999999d"],
        &["activity", "--from", "9223372036854775807w"],
    ] {
        let run = t.pm(args)?;
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.starts_with("error[invalid_argument_value]: ")
                && run.stderr.contains("(m = months)"),
            "{args:?}: {}",
            run.stderr
        );
    }
    Ok(())
}
