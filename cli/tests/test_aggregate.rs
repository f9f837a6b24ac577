//! `pm aggregate` on the committed sample tracker: groups, labels, totals, completion and
//! numeric summaries, the same answer from the index and from a scan, and refusals.

use std::error::Error;

use serde_json::Value;

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn Error>>;

fn groups(v: &Value) -> Vec<(String, u64)> {
    v["groups"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|g| {
                    (
                        g["group_label"].as_str().unwrap_or_default().to_owned(),
                        g["count"].as_u64().unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn groups_by_status_by_default_over_every_item() -> TestResult {
    let t = TestTracker::sample()?;
    let out = t.pm(&["aggregate", "--json"])?;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = out.json()?;
    let got = groups(&v);
    let total: u64 = got.iter().map(|(_, n)| n).sum();
    assert_eq!(total, v["totals"]["items_considered"].as_u64().unwrap_or(0));
    assert_eq!(v["count"].as_u64(), Some(got.len() as u64));
    assert!(got.iter().all(|(label, _)| label.starts_with("status=")));
    assert_eq!(v["filters"]["group_by"], serde_json::json!(["status"]));
    Ok(())
}

#[test]
fn parent_grouping_skips_or_keeps_unparented_items() -> TestResult {
    let t = TestTracker::sample()?;
    let skipped: Value = t
        .pm(&["aggregate", "--group-by", "parent", "--json"])?
        .json()?;
    let kept: Value = t
        .pm(&[
            "aggregate",
            "--group-by",
            "parent",
            "--include-unparented",
            "--json",
        ])?
        .json()?;
    let skipped_n = skipped["totals"]["items_skipped_unparented"]
        .as_u64()
        .unwrap_or(0);
    assert!(skipped_n > 0);
    let last = groups(&kept).pop().unwrap_or_default();
    assert_eq!(last, ("parent=(unparented)".to_owned(), skipped_n));
    assert_eq!(kept["totals"]["items_skipped_unparented"].as_u64(), Some(0));
    Ok(())
}

#[test]
fn completion_sum_and_average_are_reported_per_group() -> TestResult {
    let t = TestTracker::sample()?;
    let v: Value = t
        .pm(&[
            "aggregate",
            "--group-by",
            "type",
            "--completion",
            "--sum",
            "priority",
            "--avg",
            "priority",
            "--json",
        ])?
        .json()?;
    for g in v["groups"].as_array().into_iter().flatten() {
        let count = g["count"].as_u64().unwrap_or(0);
        assert_eq!(g["completion"]["total"].as_u64(), Some(count));
        assert_eq!(g["sum"]["counted"].as_u64(), Some(count));
        let (sum, avg) = (g["sum"]["value"].as_f64(), g["avg"]["value"].as_f64());
        let gap = avg.zip(sum).map(|(a, s)| (a * count as f64 - s).abs());
        assert!(gap.is_some_and(|g| g < 1e-9), "{g}");
    }
    Ok(())
}

#[test]
fn index_and_scan_answer_the_same() -> TestResult {
    let t = TestTracker::sample()?;
    let args = [
        "aggregate",
        "--group-by",
        "tags,priority",
        "--completion",
        "--json",
    ];
    let index = t.pm(&args)?;
    let scan = t.pm_in(&t.workspace(), &args, &[("PM_NO_INDEX", "1")])?;
    assert_eq!(index.code, 0, "{}", index.stderr);
    let strip = |s: &str| -> Result<Value, Box<dyn Error>> {
        let mut v: Value = serde_json::from_str(s)?;
        v.as_object_mut().map(|m| m.shift_remove("now"));
        Ok(v)
    };
    assert_eq!(strip(&index.stdout)?, strip(&scan.stdout)?);
    Ok(())
}

#[test]
fn unknown_fields_are_refused_with_the_domain() -> TestResult {
    let t = TestTracker::sample()?;
    let out = t.pm(&["aggregate", "--group-by", "owner", "--json"])?;
    assert_eq!(out.code, 2);
    let v: Value = out.json()?;
    assert_eq!(v["ok"], Value::Bool(false));
    assert!(out.stdout.contains("assignee"), "{}", out.stdout);
    let blank = t.pm(&["aggregate", "--sum", " "])?;
    assert_eq!(blank.code, 2, "{}", blank.stderr);
    Ok(())
}
