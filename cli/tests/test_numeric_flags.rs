//! Numeric flags (`cli/src/args/numbers.rs`): each kind's accepted forms, its refusal text and
//! exit code, and where the refusal comes among a command's other checks (pm-cli's order),
//! on the sample tracker and outside any tracker.

use serde_json::Value;

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Where a row runs: in the sample tracker's workspace, or in a directory without a tracker.
#[derive(Clone, Copy, Debug)]
enum Place {
    Tracker,
    Outside,
}

/// A refusal: where, the arguments, the exit code and the first line of stderr.
const REFUSALS: &[(Place, &[&str], i32, &str)] = &[
    (
        Place::Tracker,
        &["list", "--limit", "+3"],
        2,
        r#"error[invalid_argument_value]: invalid value "+3" for --limit: --limit must be a non-negative integer."#,
    ),
    (
        Place::Tracker,
        &["list", "--offset=-1"],
        2,
        r#"error[invalid_argument_value]: invalid value "-1" for --offset: --offset must be a non-negative integer."#,
    ),
    (
        Place::Tracker,
        &["list", "--tree", "--tree-depth", "1.5"],
        2,
        r#"error[invalid_argument_value]: invalid value "1.5" for --tree-depth: --tree-depth must be a non-negative integer."#,
    ),
    (
        Place::Tracker,
        &["search", "sensor", "--limit", "abc"],
        2,
        r#"error[invalid_argument_value]: invalid value "abc" for --limit: must be a non-negative integer"#,
    ),
    (
        Place::Tracker,
        &["search", "sensor", "--min-score", "inf"],
        2,
        r#"error[invalid_argument_value]: invalid value "inf" for --min-score: Search --min-score must be a finite number >= 0"#,
    ),
    (
        Place::Tracker,
        &["next", "--blocked-limit", "1.5"],
        2,
        r#"error[invalid_argument_value]: invalid value "1.5" for --blocked-limit: --blocked-limit must be an integer"#,
    ),
    (
        Place::Tracker,
        &["next", "--token-budget", "0"],
        2,
        r#"error[invalid_argument_value]: invalid value "0" for --token-budget: --token-budget must be a positive integer"#,
    ),
    (
        Place::Tracker,
        &["context", "--activity-limit", "0x10"],
        2,
        r#"error[invalid_argument_value]: invalid value "0x10" for --activity-limit: --activity-limit must be an integer"#,
    ),
    (
        Place::Tracker,
        &["deps", "gd-f1", "--max-depth", "0"],
        2,
        r#"error[invalid_argument_value]: invalid value "0" for --max-depth: expected a whole number of at least 1"#,
    ),
    (
        Place::Tracker,
        &["graph", "paths", "gd-f1", "gd-t1", "--max-paths", "abc"],
        2,
        r#"error[invalid_argument_value]: invalid value "abc" for --max-paths: expected a whole number of at least 1"#,
    ),
    (
        Place::Tracker,
        &["events", "--limit", "1001"],
        2,
        r#"error[invalid_argument_value]: invalid value "1001" for --limit: expected a whole number from 1 to 1000"#,
    ),
    (
        Place::Tracker,
        &["activity", "--limit", "0"],
        2,
        r#"error[invalid_argument_value]: invalid value "0" for --limit: expected a whole number of at least 1 (or --unbounded)"#,
    ),
    (
        Place::Tracker,
        &["list", "--output-budget", "9007199254740992"],
        2,
        "error[invalid_argument_value]: --output-budget must be a positive integer or unbounded.",
    ),
    (
        Place::Tracker,
        &["get", "gd-f1", "--for", "inspect", "--token-budget", "10"],
        2,
        "error[invalid_argument_value]: Context intent token budget must be at least 256",
    ),
    // Order: list reads the tracker and its filters before its numbers.
    (
        Place::Outside,
        &["list", "--limit", "abc"],
        3,
        "error[not_in_project]: no pm tracker found (looked for [OUTSIDE]/.agents/pm)",
    ),
    (
        Place::Tracker,
        &["list", "--limit", "abc", "--sort", "nope"],
        2,
        r#"error[invalid_argument_value]: invalid value "nope" for --sort: Invalid --sort value "nope". Use priority|deadline|updated_at|created_at|title|parent."#,
    ),
    (
        Place::Tracker,
        &["list", "--tree-depth", "x", "--limit", "y", "--offset", "z"],
        2,
        r#"error[invalid_argument_value]: invalid value "y" for --limit: --limit must be a non-negative integer."#,
    ),
    // The output controls come before every command's own numbers.
    (
        Place::Outside,
        &["list", "--limit", "abc", "--output-limit", "abc"],
        2,
        "error[invalid_argument_value]: --output-limit must be a positive integer or unbounded.",
    ),
    // search, next and deps check their numbers before the tracker, graph after the
    // subcommand, context's limit before the intent and next's after it.
    (
        Place::Outside,
        &["search", "sensor", "--limit", "abc", "--min-score", "x"],
        2,
        r#"error[invalid_argument_value]: invalid value "x" for --min-score: Search --min-score must be a finite number >= 0"#,
    ),
    (
        Place::Outside,
        &["next", "--limit", "abc", "--blocked-limit", "y"],
        2,
        r#"error[invalid_argument_value]: invalid value "abc" for --limit: --limit must be an integer"#,
    ),
    (
        Place::Tracker,
        &["deps", "nope", "--max-depth", "abc"],
        2,
        r#"error[invalid_argument_value]: invalid value "abc" for --max-depth: expected a whole number of at least 1"#,
    ),
    (
        Place::Tracker,
        &["graph", "communities", "--limit", "abc"],
        2,
        "error[unsupported_subcommand]: graph communities is not supported; supported: ancestors, descendants, predecessors, successors, paths, impact, analyze, audit",
    ),
    (
        Place::Tracker,
        &["context", "--limit", "abc", "--for", "nope"],
        2,
        r#"error[invalid_argument_value]: invalid value "abc" for --limit: --limit must be an integer"#,
    ),
    (
        Place::Tracker,
        &["next", "--limit", "abc", "--for", "nope"],
        2,
        r#"error[unknown_context_intent]: Unknown context intent "nope" for next. Did you mean "execute"?"#,
    ),
];

#[test]
fn refusals_keep_their_text_code_and_order() -> TestResult {
    let t = TestTracker::sample()?;
    let outside = t.outside();
    for (place, args, code, first_line) in REFUSALS {
        let run = match place {
            Place::Tracker => t.pm(args)?,
            Place::Outside => t.pm_in(&outside, args, &[])?,
        };
        let stderr = run
            .stderr
            .replace(&outside.display().to_string(), "[OUTSIDE]");
        assert_eq!(run.code, *code, "{args:?}: {stderr}");
        assert_eq!(stderr.lines().next(), Some(*first_line), "{args:?}");
        assert_eq!(run.stdout, "", "{args:?}");
    }
    Ok(())
}

/// Runs `args` with `--json` and returns the parsed stdout without its clock stamp (`now`;
/// each run of the harness is a second later).
fn json(t: &TestTracker, args: &[&str]) -> Result<Value, Box<dyn std::error::Error>> {
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let run = t.pm(&with_json)?;
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    let mut value: Value = serde_json::from_str(&run.stdout)?;
    if let Some(object) = value.as_object_mut() {
        object.remove("now");
    }
    Ok(value)
}

fn len(value: &Value, key: &str) -> usize {
    value[key].as_array().map_or(0, Vec::len)
}

#[test]
fn accepted_forms_follow_each_kind() -> TestResult {
    let t = TestTracker::sample()?;
    // Digits only for list, spaces around them allowed; the echo keeps the text as typed.
    let list = json(&t, &["list", "--all", "--limit", " 2"])?;
    assert_eq!(len(&list, "items"), 2);
    assert_eq!(list["filters"]["limit"], " 2");
    // search accepts a leading +.
    assert_eq!(
        len(&json(&t, &["search", "sensor", "--limit", "+1"])?, "items"),
        1
    );
    // An empty --min-score is no threshold.
    assert_eq!(
        len(
            &json(&t, &["search", "sensor", "--min-score", ""])?,
            "items"
        ),
        len(&json(&t, &["search", "sensor"])?, "items")
    );
    // next and context read zero or a negative limit as the default.
    assert_eq!(
        json(&t, &["next", "--limit=-3"])?["filters"],
        json(&t, &["next"])?["filters"]
    );
    // An intent ignores a budget it cannot read in digits.
    assert_eq!(
        json(&t, &["next", "--for", "execute", "--token-budget", "+300"])?,
        json(&t, &["next", "--for", "execute"])?
    );
    // events takes 1 to 1,000 with a leading + (its trailer counts the page).
    let events = t.pm(&["events", "--limit", "+2"])?;
    assert_eq!(events.code, 0, "{}", events.stderr);
    let trailer: Value = serde_json::from_str(events.stdout.lines().last().unwrap_or_default())?;
    assert_eq!(trailer["count"], 2);
    assert_eq!(trailer["has_more"], true);
    Ok(())
}

#[test]
fn an_envelope_names_the_flag_and_the_text() -> TestResult {
    let t = TestTracker::sample()?;
    let run = t.pm(&["deps", "gd-f1", "--node-limit", "0", "--json"])?;
    assert_eq!(run.code, 2);
    let env: Value = serde_json::from_str(&run.stdout)?;
    let error = &env["error"];
    assert_eq!(error["code"], "invalid_argument_value");
    assert_eq!(
        error["message"],
        r#"invalid value "0" for --node-limit: expected a whole number of at least 1"#
    );
    assert_eq!(error["exit_code"], 2);
    Ok(())
}
