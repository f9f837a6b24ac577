//! `pm events`: the NDJSON stream (rows, trailer), cursor continuation in batch and row modes,
//! filters, refusals, and lines appended to a history file by another process.

use std::io::Write;

use serde_json::Value;

use crate::common::{AUTHOR, ErrorEnvelope, Run, TestTracker};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Parses every stdout line; the last must be the trailer.
fn lines(run: &Run) -> Result<(Vec<Value>, Value), Box<dyn std::error::Error>> {
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    let mut docs: Vec<Value> = run
        .stdout
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let trailer = docs.pop().ok_or("no trailer")?;
    assert_eq!(trailer["record_type"], "pm.stream.trailer");
    assert_eq!(trailer["count"].as_u64(), Some(docs.len() as u64));
    Ok((docs, trailer))
}

/// A tracker with items pm-a and pm-b: create a, create b, comment on a, close b.
fn tracker() -> Result<TestTracker, Box<dyn std::error::Error>> {
    let t = TestTracker::new()?;
    for args in [
        &["init", "--defaults"][..],
        &["create", "task", "Alpha", "--id", "pm-a"],
        &["create", "task", "Beta", "--id", "pm-b"],
        &["comments", "pm-a", "--add", "first look"],
        &["close", "pm-b", "done"],
    ] {
        let run = t.pm(args)?;
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    }
    Ok(t)
}

#[test]
fn stream_lists_every_mutation_in_order_then_a_trailer() -> TestResult {
    let t = tracker()?;
    let (rows, trailer) = lines(&t.pm(&["events"])?)?;
    let summary: Vec<(String, String, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["item_id"].as_str().unwrap_or_default().to_owned(),
                r["type"].as_str().unwrap_or_default().to_owned(),
                r["version"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("pm-a".into(), "create".into(), 1),
            ("pm-b".into(), "create".into(), 1),
            ("pm-a".into(), "comment_add".into(), 2),
            ("pm-b".into(), "close".into(), 2),
        ]
    );
    for row in &rows {
        assert_eq!(row["author"], AUTHOR);
        assert!(row["patch_count"].as_u64().is_some_and(|n| n > 0));
        assert!(row.get("entry").is_none() && row.get("cursor").is_none());
    }
    assert_eq!(trailer["has_more"], false);
    assert_eq!(trailer["next_cursor"], Value::Null);
    assert_eq!(trailer["source"], "history_event_index");

    // The same answer from the history files, and the same bytes under --json.
    let scanned = t.pm(&["events", "--no-index"])?;
    let (scanned_rows, scanned_trailer) = lines(&scanned)?;
    assert_eq!(scanned_rows, rows);
    assert_eq!(scanned_trailer["source"], "authoritative_history");
    let json = t.pm(&["events", "--json"])?;
    assert_eq!(lines(&json)?.0, rows);
    Ok(())
}

#[test]
fn batch_cursor_pages_through_without_gaps() -> TestResult {
    let t = tracker()?;
    let (all, _) = lines(&t.pm(&["events"])?)?;
    let mut seen = Vec::new();
    let mut since: Option<String> = None;
    loop {
        let mut args = vec!["events", "--limit", "1"];
        if let Some(cursor) = &since {
            args.extend(["--since", cursor.as_str()]);
        }
        let (rows, trailer) = lines(&t.pm(&args)?)?;
        seen.extend(rows);
        match trailer["next_cursor"].as_str() {
            Some(next) => {
                assert_eq!(trailer["has_more"], true);
                since = Some(next.to_owned());
            }
            None => break,
        }
    }
    assert_eq!(seen, all);
    Ok(())
}

#[test]
fn row_mode_puts_a_cursor_on_every_event() -> TestResult {
    let t = tracker()?;
    let (rows, _) = lines(&t.pm(&["events", "--cursor-mode", "row", "--full"])?)?;
    assert_eq!(rows.len(), 4);
    for row in &rows {
        assert!(row["cursor"].as_str().is_some_and(|c| !c.is_empty()));
        assert!(row["entry"]["patch"].is_array());
    }
    // Continuing after the second event yields the last two.
    let cursor = rows[1]["cursor"].as_str().ok_or("cursor")?;
    let (rest, _) = lines(&t.pm(&["events", "--since", cursor])?)?;
    let types: Vec<&str> = rest.iter().filter_map(|r| r["type"].as_str()).collect();
    assert_eq!(types, ["comment_add", "close"]);
    Ok(())
}

#[test]
fn filters_and_instants() -> TestResult {
    let t = tracker()?;
    let (rows, _) = lines(&t.pm(&["events", "--item", "pm-b"])?)?;
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r["item_id"] == "pm-b"));
    let (rows, _) = lines(&t.pm(&["events", "--type", "close,comment_add"])?)?;
    assert_eq!(rows.len(), 2);
    let (rows, _) = lines(&t.pm(&["events", "--author", "someone-else"])?)?;
    assert!(rows.is_empty());
    // `--since` with an instant is inclusive; the third command ran at 00:00:03.
    let (rows, _) = lines(&t.pm(&["events", "--since", "2026-09-01T00:00:03Z"])?)?;
    let types: Vec<&str> = rows.iter().filter_map(|r| r["type"].as_str()).collect();
    assert_eq!(types, ["comment_add", "close"]);
    let (rows, _) = lines(&t.pm(&["events", "--since", "2026-09-01"])?)?;
    assert_eq!(rows.len(), 4);
    Ok(())
}

#[test]
fn cursor_of_other_filters_and_bad_values_are_refused() -> TestResult {
    let t = tracker()?;
    let (rows, _) = lines(&t.pm(&["events", "--cursor-mode", "row"])?)?;
    let cursor = rows[0]["cursor"].as_str().ok_or("cursor")?;
    let run = t.pm(&["events", "--since", cursor, "--item", "pm-a", "--json"])?;
    assert_eq!(run.code, 2);
    let e = run.json::<ErrorEnvelope>()?.error;
    assert_eq!(e.code, "invalid_query_cursor");
    assert_eq!(e.refusal.surface, "--since");
    for (args, code) in [
        (
            &["events", "--since", "not a cursor"][..],
            "invalid_query_cursor",
        ),
        (
            &["events", "--since", "eyJub3QiOiJhIGN1cnNvciJ9"],
            "invalid_query_cursor",
        ),
        (&["events", "--limit", "1001"], "invalid_argument_value"),
        (
            &["events", "--cursor-mode", "page"],
            "invalid_argument_value",
        ),
    ] {
        let text = t.pm(args)?;
        assert_eq!((text.code, text.stdout.as_str()), (2, ""), "{args:?}");
        assert!(
            text.stderr.starts_with(&format!("error[{code}]")),
            "{args:?}: {}",
            text.stderr
        );
        let mut with_json = args.to_vec();
        with_json.push("--json");
        let json = t.pm(&with_json)?;
        assert_eq!(json.code, 2);
        assert_eq!(json.json::<ErrorEnvelope>()?.error.code, code, "{args:?}");
    }
    Ok(())
}

/// A history line written by something other than pm (a merge, another tool) shows up in the
/// next `pm events`, continuing the previous page's cursor.
#[test]
fn catches_lines_appended_outside_pm() -> TestResult {
    let t = tracker()?;
    let (rows, _) = lines(&t.pm(&["events", "--cursor-mode", "row"])?)?;
    let last_cursor = rows[3]["cursor"].as_str().ok_or("cursor")?.to_owned();
    let (none, _) = lines(&t.pm(&["events", "--since", &last_cursor])?)?;
    assert!(none.is_empty());

    let path = t.root().join("history/pm-a.jsonl");
    let text = std::fs::read_to_string(&path)?;
    let mut entry: Value = serde_json::from_str(text.lines().last().ok_or("empty history")?)?;
    entry["ts"] = "2026-09-02T00:00:00.000Z".into();
    entry["author"] = "outside-tool".into();
    let mut file = std::fs::OpenOptions::new().append(true).open(&path)?;
    file.write_all(format!("{}\n", serde_json::to_string(&entry)?).as_bytes())?;
    drop(file);

    for extra in [&[][..], &["--no-index"]] {
        let mut args = vec!["events", "--since", last_cursor.as_str()];
        args.extend(extra);
        let (new, trailer) = lines(&t.pm(&args)?)?;
        assert_eq!(new.len(), 1, "{extra:?}");
        assert_eq!(new[0]["item_id"], "pm-a");
        assert_eq!(new[0]["version"], 3);
        assert_eq!(new[0]["author"], "outside-tool");
        assert_eq!(new[0]["ts"], "2026-09-02T00:00:00.000Z");
        assert_eq!(trailer["has_more"], false);
    }
    Ok(())
}

#[test]
fn empty_tracker_prints_only_the_trailer() -> TestResult {
    let t = TestTracker::new()?;
    assert_eq!(t.pm(&["init", "--defaults"])?.code, 0);
    let run = t.pm(&["events", "--json"])?;
    let (rows, trailer) = lines(&run)?;
    assert!(rows.is_empty());
    assert_eq!(trailer["count"], 0);
    // Outside a tracker: the usual envelope.
    let run = t.pm_in(&t.outside(), &["events", "--json"], &[])?;
    assert_eq!(run.code, 3);
    assert_eq!(run.json::<ErrorEnvelope>()?.error.code, "not_in_project");
    Ok(())
}
