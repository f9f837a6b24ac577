//! `pm activity`: the digest and event modes over a window of the sample tracker's history,
//! pages resumed with `--after`, filters, the default 24-hour window on the pinned clock, and
//! refusals (unknown id 3, bad values and cursors 2).

use std::error::Error;

use serde_json::Value;

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn Error>>;

/// The sample tracker's history runs from 2026-03-02 to 2026-03-06.
const FROM: &str = "2026-03-01T00:00:00Z";

fn json_of(t: &TestTracker, args: &[&str]) -> Result<Value, Box<dyn Error>> {
    let mut argv = args.to_vec();
    argv.push("--json");
    let run = t.pm(&argv)?;
    assert_eq!(
        (run.stderr.as_str(), run.code),
        ("", 0),
        "{args:?}: {}",
        run.stdout
    );
    Ok(serde_json::from_str(&run.stdout)?)
}

fn ids(rows: &Value) -> Vec<String> {
    rows.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r["id"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn digest_of_the_window() -> TestResult {
    let t = TestTracker::sample()?;
    let out = json_of(
        &t,
        &["activity", "--from", FROM, "--to", "2026-03-05T12:00:00Z"],
    )?;
    let rows = &out["activity_digest"];
    assert_eq!(
        ids(rows),
        [
            "gd-i2", "gd-t2", "gd-t4", "gd-i1", "gd-t1", "gd-t3", "gd-f1", "gd-e1", "gd-c1",
            "gd-m1", "gd-d1", "gd-f2"
        ]
    );
    assert_eq!(
        rows[1],
        serde_json::json!({
            "id": "gd-t2", "type": "Task", "status": "in_progress",
            "title": "Debounce the sampling timer", "event_count": 5,
            "first_ts": "2026-03-04T10:00:00.000Z", "last_ts": "2026-03-05T09:05:00.000Z",
            "operations": "claim:2, create:1, release:1, update:1"
        })
    );
    assert_eq!(
        out["projection"],
        serde_json::json!({"mode": "digest", "row_key": "activity_digest"})
    );
    assert_eq!(
        out["omission_receipt"]["omitted_field_groups"][0]["name"],
        "event_rows"
    );
    assert_eq!(out["total_count"], 12);
    assert_eq!(out["activity_summary"]["event_count"], 24);
    assert_eq!(
        out["activity_summary"]["window"],
        serde_json::json!({"from": "2026-03-01T00:00:00.000Z", "to": "2026-03-05T12:00:00.000Z"})
    );
    assert_eq!(
        out["applied_bound"],
        serde_json::json!({"kind": "limit", "source": "default", "value": 15})
    );
    Ok(())
}

#[test]
fn default_window_is_the_last_day_of_the_pinned_clock() -> TestResult {
    let t = TestTracker::sample()?;
    // The harness clock is 2026-09-01: nothing happened in the last 24 hours.
    let out = json_of(&t, &["activity"])?;
    assert_eq!(out["count"], 0);
    assert_eq!(
        out["activity_summary"]["window"]["to"],
        "2026-09-01T00:00:00.000Z"
    );
    assert_eq!(
        out["activity_summary"]["window"]["from"],
        "2026-08-31T00:00:00.000Z"
    );
    // A mutation now shows up.
    let run = t.pm(&["update", "gd-c1", "--priority", "1"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = json_of(&t, &["activity", "--raw"])?;
    assert_eq!(ids(&out["compact_activity"]), ["gd-c1"]);
    assert_eq!(out["compact_activity"][0]["op"], "update");
    Ok(())
}

#[test]
fn event_pages_resume_after_the_cursor() -> TestResult {
    let t = TestTracker::sample()?;
    let all = json_of(&t, &["activity", "--raw", "--from", FROM, "--unbounded"])?;
    let total = all["compact_activity"].as_array().map_or(0, Vec::len);
    assert_eq!(total, 26);
    assert!(all.get("applied_bound").is_none());
    let mut rows: Vec<Value> = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let mut args = vec!["activity", "--raw", "--from", FROM, "--limit", "10"];
        if let Some(a) = after.as_deref() {
            args.extend(["--after", a]);
        }
        let page = json_of(&t, &args)?;
        rows.extend(
            page["compact_activity"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        );
        match page["next_cursor"].as_str() {
            Some(next) => after = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(Value::Array(rows), all["compact_activity"]);
    Ok(())
}

#[test]
fn modes_and_filters() -> TestResult {
    let t = TestTracker::sample()?;
    let full = json_of(
        &t,
        &[
            "activity", "--full", "--from", FROM, "--id", "t2", "--op", "claim",
        ],
    )?;
    let rows = full["activity"].as_array().ok_or("rows")?;
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter()
            .all(|r| r["op"] == "claim" && r["id"] == "gd-t2" && r["patch"].is_array())
    );
    assert_eq!(full["omission_receipt"]["has_omissions"], false);
    let prov = json_of(
        &t,
        &[
            "activity",
            "--provenance",
            "--from",
            FROM,
            "--author",
            "field-tech",
        ],
    )?;
    let rows = prov["provenance_activity"].as_array().ok_or("rows")?;
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .all(|r| r["author"] == "field-tech" && r.get("patch").is_none())
    );
    Ok(())
}

#[test]
fn refusals() -> TestResult {
    let t = TestTracker::sample()?;
    let run = t.pm(&["activity", "--id", "gd-nope"])?;
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("error[item_not_found]"),
        "{}",
        run.stderr
    );
    for args in [
        &["activity", "--from", "yesterday"][..],
        &["activity", "--limit", "0"],
        &["activity", "--limit", "5", "--unbounded"],
        &["activity", "--raw", "--full"],
        &[
            "activity",
            "--from",
            "2026-03-05T00:00:00Z",
            "--to",
            "2026-03-04T00:00:00Z",
        ],
        &["activity", "--after", "not a cursor"],
    ] {
        let run = t.pm(args)?;
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}");
    }
    // A cursor of another query is refused.
    let page = json_of(&t, &["activity", "--raw", "--from", FROM, "--limit", "2"])?;
    let cursor = page["next_cursor"].as_str().ok_or("cursor")?;
    let run = t.pm(&["activity", "--full", "--from", FROM, "--after", cursor])?;
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.starts_with("error[invalid_query_cursor]"),
        "{}",
        run.stderr
    );
    Ok(())
}
