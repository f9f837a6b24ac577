//! `pm list` and `pm stats`: byte-equal to pm-cli's reads goldens (fx-100 and the real
//! tracker) on the index path and the scan path, list filters answered the same both ways,
//! query-cursor walks, the hidden `list-*` spellings and the refusals.

use std::collections::BTreeSet;
use std::error::Error;
use std::io::Read;

use serde_json::Value;

use crate::common::{Run, TestTracker};
use crate::test_get::READS_ENV;

type TestResult = Result<(), Box<dyn Error>>;

fn golden(relative: &str) -> Result<String, Box<dyn Error>> {
    let path = pm_testkit::shared_file(&format!("golden/reads/{relative}"));
    let mut text = String::new();
    if relative.ends_with(".gz") {
        flate2::read::GzDecoder::new(std::fs::File::open(path)?).read_to_string(&mut text)?;
    } else {
        std::fs::File::open(path)?.read_to_string(&mut text)?;
    }
    Ok(text)
}

/// Runs `pm args…` the way the reads goldens were made (pinned clock ticking 1 ms, `PM_PATH`).
fn read(t: &TestTracker, args: &[&str], scan: bool) -> Result<Run, Box<dyn Error>> {
    let pm_path = t.root().display().to_string();
    let mut env = READS_ENV.to_vec();
    env.push(("PM_PATH", &pm_path));
    if scan {
        env.push(("PM_NO_INDEX", "1"));
    }
    t.pm_in(&t.workspace(), args, &env)
}

/// Replaces the value of every `key` line (TOON `key: "…"`, JSON `"key": "…"`) with `[MASKED]`.
fn mask(text: &str, key: &str) -> String {
    text.lines()
        .map(|line| {
            let trimmed = line.trim_start();
            let toon = format!("{key}: ");
            let json = format!("\"{key}\": ");
            for prefix in [toon, json] {
                if trimmed.starts_with(&prefix) {
                    let indent = &line[..line.len() - trimmed.len()];
                    let comma = if trimmed.ends_with(',') { "," } else { "" };
                    return format!("{indent}{prefix}[MASKED]{comma}");
                }
            }
            line.to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Compares `pm args…` (TOON, then `--json`) with `<fixture>/<label>.{toon,json}[.gz]` on the
/// index path and on the scan path, masking `masked` keys on both sides.
fn assert_golden(
    t: &TestTracker,
    fixture: &str,
    label: &str,
    args: &[&str],
    masked: &[&str],
) -> TestResult {
    for scan in [false, true] {
        for (extra, ext) in [(None, "toon"), (Some("--json"), "json")] {
            let mut argv = args.to_vec();
            argv.extend(extra);
            let out = read(t, &argv, scan)?;
            assert_eq!(out.code, 0, "{label}.{ext}: {}", out.stderr);
            assert_eq!(out.stderr, "", "{label}.{ext}");
            let name = format!("{fixture}/{label}.{ext}");
            let expected = golden(&name).or_else(|_| golden(&format!("{name}.gz")))?;
            let (mut got, mut want) = (crate::common::without_source(&out.stdout), expected);
            for key in masked {
                got = mask(&got, key);
                want = mask(&want, key);
            }
            assert!(got == want, "{name} differs (scan: {scan})");
        }
    }
    Ok(())
}

#[test]
fn fx100_lists_match_the_goldens_on_both_paths() -> TestResult {
    let t = TestTracker::fx100()?;
    assert_golden(&t, "fx-100", "list", &["list"], &[])?;
    assert_golden(
        &t,
        "fx-100",
        "list-open",
        &["list", "--status", "open", "--limit", "20"],
        &[],
    )?;
    assert_golden(
        &t,
        "fx-100",
        "list-all-full",
        &[
            "list",
            "--all",
            "--no-truncate",
            "--output-budget",
            "unbounded",
        ],
        &[],
    )
}

#[test]
fn fx100_stats_match_the_golden_on_both_paths() -> TestResult {
    let t = TestTracker::fx100()?;
    // pm reads its clock once before stamping generated_at (…00.001Z); we stamp the first read.
    assert_golden(&t, "fx-100", "stats", &["stats"], &["generated_at"])
}

#[test]
fn self_tracker_reads_match_the_goldens() -> TestResult {
    let t = TestTracker::from_tree(&pm_testkit::shared_corpus()?)?;
    assert_golden(&t, "self-tracker", "stats", &["stats"], &["generated_at"])?;
    // Query cursors are opaque: ours fingerprint the query differently (docs/compatibility.md).
    assert_golden(
        &t,
        "self-tracker",
        "list-open",
        &["list", "--status", "open", "--limit", "20"],
        &["next_cursor"],
    )?;
    for (extra, ext) in [(None, "toon"), (Some("--json"), "json")] {
        let mut argv = vec![
            "list",
            "--all",
            "--no-truncate",
            "--output-budget",
            "unbounded",
        ];
        argv.extend(extra);
        let out = read(&t, &argv, false)?;
        assert_eq!((out.code, out.stderr.as_str()), (0, ""));
        let expected = golden(&format!("self-tracker/list-all-full.{ext}.gz"))?;
        assert!(
            crate::common::without_source(&out.stdout) == expected,
            "self-tracker/list-all-full.{ext}"
        );
    }
    Ok(())
}

fn ids(run: &Run) -> Result<Vec<String>, Box<dyn Error>> {
    let value: Value = run.json()?;
    Ok(value["items"]
        .as_array()
        .ok_or("no items")?
        .iter()
        .filter_map(|row| row["id"].as_str().map(str::to_owned))
        .collect())
}

/// The default `pm list` of the real tracker does not fit pm's 4,000-token default: we keep
/// the largest fitting prefix of pm's row order (pm's snapshot halves instead, docs/
/// compatibility.md), so our rows extend pm's 76.
#[test]
fn self_tracker_default_list_is_a_prefix_of_pm_order() -> TestResult {
    let t = TestTracker::from_tree(&pm_testkit::shared_corpus()?)?;
    let pm: Value = serde_json::from_str(&golden("self-tracker/list.json")?)?;
    let pm_ids: Vec<&str> = pm["items"]
        .as_array()
        .ok_or("no items")?
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    let out = read(&t, &["list", "--json"], false)?;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let ours = ids(&out)?;
    assert!(ours.len() >= pm_ids.len(), "{} rows", ours.len());
    assert_eq!(&ours[..pm_ids.len()], pm_ids.as_slice());
    let all = read(
        &t,
        &["list", "--json", "--output-budget", "unbounded"],
        false,
    )?;
    let all_ids = ids(&all)?;
    assert_eq!(all_ids.len(), 305);
    assert_eq!(&all_ids[..ours.len()], ours.as_slice());
    let value: Value = out.json()?;
    assert_eq!(value["total"], 305);
    assert_eq!(value["read_output"]["within_budget"], true);
    assert!(out.stdout.len().div_ceil(4) <= 6000);
    Ok(())
}

/// Every filter, order and projection gives the same output from the index and from a scan.
#[test]
fn filters_answer_the_same_on_index_and_scan() -> TestResult {
    let t = TestTracker::fx100()?;
    let cases: &[&[&str]] = &[
        &["list", "--type", "Epic"],
        &["list", "--all", "--type", "task", "--priority", "0,1"],
        &["list", "--all", "--tag", "team:3", "--tag", "BENCHMARK"],
        &["list", "--status", "closed,canceled", "--compact"],
        &["list", "--status", "blocked"],
        &["list-blocked"],
        &[
            "list",
            "--all",
            "--parent",
            "pm-s0000000",
            "--fields",
            "id,parent,title",
        ],
        &[
            "list", "--all", "--sort", "title", "--order", "desc", "--limit", "15",
        ],
        &["list", "--all", "--sort", "deadline"],
        &["list", "--all", "--sort", "created", "--offset", "90"],
        &["list", "--all", "--has-comments", "--no-notes"],
        &["list", "--all", "--empty-body"],
        &[
            "list",
            "--all",
            "--filter-risk-missing",
            "--assignee-filter",
            "unassigned",
        ],
        &[
            "list",
            "--all",
            "--updated-after",
            "2025-12-31",
            "--updated-before",
            "-1d",
        ],
        &[
            "list",
            "--all",
            "--ids",
            "pm-s0000000,pm-s000000k",
            "--full",
        ],
        &[
            "list",
            "--all",
            "--tree",
            "--fields",
            "id,tree_depth,tree_parent,tree_title",
        ],
        &[
            "list",
            "--all",
            "--tree",
            "--tree-depth",
            "0",
            "--limit",
            "3",
        ],
        &["list", "--all", "--include-body", "--limit", "2"],
        &["list-closed", "--limit", "3"],
        &["list-in-progress"],
        &["stats", "--include-empty"],
    ];
    for args in cases {
        let mut argv = args.to_vec();
        argv.push("--json");
        let index = read(&t, &argv, false)?;
        let scan = read(&t, &argv, true)?;
        assert_eq!(index.code, 0, "{args:?}: {}", index.stderr);
        // Identical apart from `source` (index / scan), which names the path that answered.
        assert!(index.stdout.contains("\"source\": \"index\"") || !args[0].starts_with("list"));
        let strip = |run: &Run| {
            mask(
                &mask(&crate::common::without_source(&run.stdout), "now"),
                "generated_at",
            )
        };
        assert_eq!(strip(&index), strip(&scan), "{args:?}");
    }
    Ok(())
}

#[test]
fn filters_select_what_they_name() -> TestResult {
    let t = TestTracker::fx100()?;
    let rows = |args: &[&str]| -> Result<Vec<Value>, Box<dyn Error>> {
        let mut argv = args.to_vec();
        argv.push("--json");
        let out = read(&t, &argv, false)?;
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        let value: Value = out.json()?;
        Ok(value["items"].as_array().cloned().unwrap_or_default())
    };
    let epics = rows(&["list", "--type", "epic", "--compact"])?;
    assert_eq!(epics.len(), 5);
    assert!(epics.iter().all(|r| r["type"] == "Epic"));
    let closed = rows(&["list-closed", "--fields", "status"])?;
    assert_eq!(closed.len(), 70);
    assert!(closed.iter().all(|r| r["status"] == "closed"));
    let high = rows(&["list", "--all", "--priority", "0", "--fields", "priority"])?;
    assert!(!high.is_empty() && high.iter().all(|r| r["priority"] == 0));
    let by_title = rows(&["list", "--all", "--sort", "title", "--fields", "title"])?;
    let titles: Vec<&str> = by_title
        .iter()
        .filter_map(|r| r["title"].as_str())
        .collect();
    assert_eq!(titles.first(), Some(&"Synthetic epic 0"));
    let tree = rows(&["list", "--all", "--tree", "--compact"])?;
    let first_child = tree.iter().position(|r| r["tree_depth"] == 1);
    assert!(first_child.is_some_and(|i| i > 0 && tree[i]["tree_parent"] == tree[i - 1]["id"]));
    Ok(())
}

/// Following `next_cursor` with `--after` returns the unbounded sequence exactly once.
#[test]
fn cursor_walks_cover_the_result_once() -> TestResult {
    let t = TestTracker::fx100()?;
    for scan in [false, true] {
        for order in [
            &["--all"][..],
            &["--all", "--sort", "priority", "--order", "desc"],
        ] {
            let mut argv = vec!["list", "--json"];
            argv.extend(order);
            let all = ids(&read(&t, &argv, scan)?)?;
            let mut walked: Vec<String> = Vec::new();
            let mut after: Option<String> = None;
            for _ in 0..20 {
                let mut page = argv.clone();
                page.extend(["--limit", "7"]);
                if let Some(cursor) = &after {
                    page.extend(["--after", cursor.as_str()]);
                }
                let out = read(&t, &page, scan)?;
                assert_eq!(out.code, 0, "{}", out.stderr);
                walked.extend(ids(&out)?);
                let value: Value = out.json()?;
                match value["next_cursor"].as_str() {
                    Some(next) => after = Some(next.to_owned()),
                    None => break,
                }
            }
            assert_eq!(walked, all, "scan: {scan}, {order:?}");
        }
    }
    Ok(())
}

#[test]
fn spellings_and_envelopes() -> TestResult {
    let t = TestTracker::fx100()?;
    let json = |args: &[&str]| -> Result<Value, Box<dyn Error>> {
        let mut argv = args.to_vec();
        argv.push("--json");
        let out = read(&t, &argv, false)?;
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        out.json()
    };
    let open_alias = json(&["list-open"])?;
    let open_flag = json(&["list", "--status", "open"])?;
    assert_eq!(open_alias["items"], open_flag["items"]);
    assert_eq!(open_alias["filters"]["status"], "open");
    let all = json(&["list-all", "--limit", "1"])?;
    assert_eq!(all["projection"]["mode"], "full");
    assert_eq!(all["filters"]["status"], "all");
    assert_eq!(
        (all["total"].as_u64(), all["has_more"].as_bool()),
        (Some(100), Some(true))
    );
    assert!(all["next_cursor"].is_string());
    let blocked = json(&["list", "--status", "blocked"])?;
    assert_eq!(
        blocked["filters"]["blocked_semantics"],
        "status_or_dependency"
    );
    let compact = json(&["list", "--compact", "--limit", "1"])?;
    let keys: Vec<&String> = compact.as_object().ok_or("object")?.keys().collect();
    assert!(
        !keys.iter().any(|k| *k == "sorting" || *k == "now"),
        "{keys:?}"
    );
    assert_eq!(compact["items"][0]["parent"], Value::Null);
    let empty = json(&["list", "--type", "Meeting"])?;
    assert_eq!(
        (empty["count"].as_u64(), empty["total"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(empty["next_cursor"], Value::Null);
    let sorted = json(&[
        "list", "--sort", "updated", "--order", "desc", "--limit", "1",
    ])?;
    assert_eq!(sorted["sorting"]["sort"], "updated_at");
    assert_eq!(sorted["sorting"]["order"], "desc");
    Ok(())
}

#[test]
fn universal_controls_apply_to_list_stats_and_get() -> TestResult {
    let t = TestTracker::fx100()?;
    let out = read(
        &t,
        &["list", "--all", "--output-limit", "3", "--json"],
        false,
    )?;
    let value: Value = out.json()?;
    assert_eq!(value["items"].as_array().map(Vec::len), Some(3));
    assert_eq!(value["applied_bound"]["value"], 3);
    let out = read(
        &t,
        &["list", "--output-include", "id,title", "--json"],
        false,
    )?;
    let value: Value = out.json()?;
    let row_keys: BTreeSet<&String> = value["items"][0].as_object().ok_or("row")?.keys().collect();
    assert_eq!(row_keys.len(), 2);
    let out = read(
        &t,
        &["list", "--all", "--brief", "--output-budget", "700"],
        false,
    )?;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.len().div_ceil(4) <= 700, "{}", out.stdout.len());
    assert!(out.stdout.contains("output_budget_truncation:"));
    let out = read(
        &t,
        &["stats", "--output-include", "by_type", "--json"],
        false,
    )?;
    let value: Value = out.json()?;
    assert!(value.get("by_status").is_none() && value.get("by_type").is_some());
    let out = read(
        &t,
        &["get", "pm-s0000000", "--output-format", "json"],
        false,
    )?;
    assert!(out.stdout.starts_with("{\n  \"item\""), "{}", out.stdout);
    let out = read(&t, &["get", "pm-s0000000", "--output-budget", "50"], false)?;
    assert_eq!(out.code, 2, "{}", out.stdout);
    Ok(())
}

#[test]
fn list_refusals() -> TestResult {
    let t = TestTracker::fx100()?;
    let cases: &[(&[&str], &str)] = &[
        (
            &["list", "--brief", "--full"],
            "projection_options_mutually_exclusive",
        ),
        (
            &["list", "--compact", "--output-include", "full"],
            "projection_options_mutually_exclusive",
        ),
        (&["list", "--fields", "id,nope"], "unknown_field_projection"),
        (&["list", "--status", "nope"], "invalid_argument_value"),
        (&["list", "--status", "all,open"], "invalid_argument_value"),
        (&["list", "--type", "Nope"], "invalid_argument_value"),
        (&["list", "--priority", "7"], "invalid_argument_value"),
        (&["list", "--limit", "-1"], "invalid_argument_value"),
        (&["list", "--sort", "nope"], "invalid_argument_value"),
        (&["list", "--order", "desc"], "missing_required_option"),
        (
            &["list", "--after", "abc", "--offset", "1"],
            "conflicting_arguments",
        ),
        (&["list", "--after", "!!"], "invalid_query_cursor"),
        (
            &["list", "--has-notes", "--no-notes"],
            "conflicting_arguments",
        ),
        (
            &["list", "--updated-after", "soon"],
            "invalid_argument_value",
        ),
        (&["list", "--assignee", "none"], "invalid_argument_value"),
        (
            &["list-open", "--status", "closed"],
            "conflicting_arguments",
        ),
    ];
    for (args, code) in cases {
        let mut argv = args.to_vec();
        argv.push("--json");
        let out = read(&t, &argv, false)?;
        assert_eq!(out.code, 2, "{args:?}: {}", out.stdout);
        let envelope: crate::common::ErrorEnvelope = out.json()?;
        assert_eq!(envelope.error.code, *code, "{args:?}");
    }
    // A cursor of another query is refused.
    let first = read(&t, &["list", "--all", "--limit", "5", "--json"], false)?;
    let value: Value = first.json()?;
    let cursor = value["next_cursor"].as_str().ok_or("cursor")?;
    let out = read(
        &t,
        &["list", "--limit", "5", "--after", cursor, "--json"],
        false,
    )?;
    let envelope: crate::common::ErrorEnvelope = out.json()?;
    assert_eq!(
        (out.code, envelope.error.code.as_str()),
        (2, "invalid_query_cursor")
    );
    Ok(())
}

#[test]
fn strict_read_refuses_a_partial_tracker() -> TestResult {
    let t = TestTracker::fx100()?;
    pm_engine::atomic::write(&t.root().join("tasks/pm-broken.toon"), b"id: [\n")?;
    let out = read(&t, &["list", "--all", "--json"], true)?;
    let value: Value = out.json()?;
    assert_eq!(value["completeness"]["status"], "partial");
    assert_eq!(value["completeness"]["unreadable_item_count"], 1);
    let out = read(&t, &["list", "--all", "--strict-read", "--json"], true)?;
    let envelope: crate::common::ErrorEnvelope = out.json()?;
    assert_eq!(
        (out.code, envelope.error.code.as_str()),
        (1, "list_source_incomplete")
    );
    Ok(())
}
