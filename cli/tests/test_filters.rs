//! One filter front-end (issue 22): `list` and `search` (and `context`, `next`, `aggregate`)
//! read tag escapes, `--parent` case and bad values the same way, and echo what was given.

use std::collections::BTreeSet;
use std::error::Error;

use serde_json::Value;

use crate::common::{ErrorEnvelope, TestTracker};

type TestResult = Result<(), Box<dyn Error>>;

/// A sample task whose first tag holds a comma.
const COMMA_TAGGED: &str = r#"id: gd-x1
title: Seal the probe housing
description: Keep water out of the probe electronics.
type: Task
status: open
priority: 2
tags[2]: "probe,wet",sensor
created_at: "2026-03-04T10:00:00.000Z"
updated_at: "2026-03-05T09:05:00.000Z"
author: sample-author
parent: gd-f1
body: ""
"#;

fn tracker() -> Result<TestTracker, Box<dyn Error>> {
    let t = TestTracker::sample()?;
    let path = t.root().join("tasks/gd-x1.toon");
    pm_engine::atomic::write(&path, COMMA_TAGGED.as_bytes())?;
    Ok(t)
}

/// Runs `pm args… --json` and returns the document (exit 0 asserted).
fn read(t: &TestTracker, args: &[&str]) -> Result<Value, Box<dyn Error>> {
    let mut argv = args.to_vec();
    argv.push("--json");
    let run = t.pm(&argv)?;
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    run.json()
}

fn ids(doc: &Value) -> BTreeSet<String> {
    (doc["items"].as_array().into_iter().flatten())
        .filter_map(|r| r["id"].as_str().map(str::to_owned))
        .collect()
}

/// `list --all` and `search e` (every sample item contains an `e`) with the same filters.
fn both<'a>(extra: &[&'a str]) -> [Vec<&'a str>; 2] {
    [
        [&["list", "--all"][..], extra].concat(),
        [&["search", "e"][..], extra].concat(),
    ]
}

#[test]
fn an_escaped_comma_is_one_tag_in_list_and_search() -> TestResult {
    let t = tracker()?;
    for argv in both(&["--tag", r"probe\,wet"]) {
        let doc = read(&t, &argv)?;
        assert_eq!(ids(&doc), BTreeSet::from(["gd-x1".to_owned()]), "{argv:?}");
        assert_eq!(doc["filters"]["tag"], r"probe\,wet", "{argv:?}");
    }
    // Unescaped, the comma separates two tags no item has.
    for argv in both(&["--tag", "probe,wet"]) {
        assert!(ids(&read(&t, &argv)?).is_empty(), "{argv:?}");
    }
    Ok(())
}

#[test]
fn parent_is_case_insensitive_in_list_and_search() -> TestResult {
    let t = tracker()?;
    for argv in both(&["--parent", "GD-F1"]) {
        let doc = read(&t, &argv)?;
        let lower: Vec<&str> =
            (argv.iter().map(|a| if *a == "GD-F1" { "gd-f1" } else { a })).collect();
        let want = ids(&read(&t, &lower)?);
        assert!(want.contains("gd-x1") && want.contains("gd-t2"), "{want:?}");
        assert_eq!(ids(&doc), want, "{argv:?}");
        // The echo is the value as given.
        assert_eq!(doc["filters"]["parent"], "GD-F1", "{argv:?}");
    }
    let doc = read(
        &t,
        &["aggregate", "--parent", "GD-F1", "--group-by", "parent"],
    )?;
    assert_eq!(doc["groups"][0]["group"]["parent"], "gd-f1");
    Ok(())
}

#[test]
fn every_read_refuses_a_bad_value_alike() -> TestResult {
    let t = tracker()?;
    let cases: &[&[&str]] = &[
        &["--priority", "-1"],
        &["--priority", "7"],
        &["--type", "nope"],
        &["--assignee", "none"],
        &["--assignee-filter", "someone"],
    ];
    for extra in cases {
        let mut seen: Option<(String, String)> = None;
        let [list, search] = both(extra);
        let mut reads = vec![list, search];
        for command in [&["context"][..], &["next"], &["aggregate"]] {
            reads.push([command, extra].concat());
        }
        for mut argv in reads {
            argv.push("--json");
            let run = t.pm(&argv)?;
            assert_eq!(run.code, 2, "{argv:?}: {}", run.stdout);
            let envelope: ErrorEnvelope = run.json()?;
            let got = (envelope.error.code, envelope.error.message);
            assert_eq!(got.0, "invalid_argument_value", "{argv:?}");
            match &seen {
                Some(first) => assert_eq!(&got, first, "{argv:?}"),
                None => seen = Some(got),
            }
        }
    }
    // Time bounds and statuses: list and search (the reads that offer them).
    for extra in [
        &["--updated-after", ""][..],
        &["--updated-after", "7x"],
        &["--status", "nope"],
    ] {
        let [list, search] = both(extra);
        let message = |mut argv: Vec<&str>| -> Result<String, Box<dyn Error>> {
            argv.push("--json");
            let run = t.pm(&argv)?;
            assert_eq!(run.code, 2, "{argv:?}: {}", run.stdout);
            Ok(run.json::<ErrorEnvelope>()?.error.message)
        };
        assert_eq!(message(list)?, message(search)?, "{extra:?}");
    }
    Ok(())
}
