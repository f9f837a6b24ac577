//! `list --format csv|table|ndjson` and `--stream`: the page's rows without
//! the envelope, the same rows the envelope carries, and the refusals of combinations that
//! cannot be honoured.

use std::error::Error;

use serde_json::Value;

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn Error>>;

fn ok_stdout(t: &TestTracker, args: &[&str]) -> Result<String, Box<dyn Error>> {
    let run = t.pm(args)?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0), "{args:?}");
    Ok(run.stdout)
}

/// The envelope rows of `list <args> --json`.
fn envelope_rows(t: &TestTracker, args: &[&str]) -> Result<Vec<Value>, Box<dyn Error>> {
    let mut full = args.to_vec();
    full.push("--json");
    let env: Value = serde_json::from_str(&ok_stdout(t, &full)?)?;
    Ok(env["items"].as_array().cloned().unwrap_or_default())
}

/// A minimal RFC 4180 reader: records of fields, CRLF line ends, quoted fields with `""`.
fn read_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, other) => field.push(other),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') => {
                assert_eq!(chars.next(), Some('\n'), "CR without LF");
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, other) => field.push(other),
        }
    }
    assert!(field.is_empty() && record.is_empty(), "unterminated record");
    records
}

/// The cell a value should become, written independently of the renderer.
fn expected_cell(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join(";"),
        other => other.to_string(),
    }
}

#[test]
fn csv_carries_the_envelope_rows_cell_for_cell() -> TestResult {
    let t = TestTracker::sample()?;
    for projection in ["--brief", "--compact", "--full"] {
        let args = ["list", "--all", projection];
        let rows = envelope_rows(&t, &args)?;
        assert!(rows.len() > 3, "the sample tracker lists more than 3 items");
        let mut csv_args = args.to_vec();
        csv_args.extend(["--format", "csv"]);
        let records = read_csv(&ok_stdout(&t, &csv_args)?);
        let header = &records[0];
        assert_eq!(header[0], "id", "{projection}");
        assert_eq!(records.len(), rows.len() + 1, "{projection}");
        for (row, record) in rows.iter().zip(&records[1..]) {
            assert_eq!(record.len(), header.len());
            for (column, cell) in header.iter().zip(record) {
                let want = row.get(column).map_or_else(String::new, expected_cell);
                assert_eq!(cell, &want, "{projection} {column} of {}", row["id"]);
            }
            let keys = row.as_object().map_or(0, serde_json::Map::len);
            assert!(keys <= header.len(), "every key of the row is a column");
        }
    }
    Ok(())
}

#[test]
fn ndjson_and_stream_carry_the_envelope_rows() -> TestResult {
    let t = TestTracker::sample()?;
    let args = ["list", "--all", "--compact", "--limit", "5"];
    let rows = envelope_rows(&t, &args)?;
    let mut nd = args.to_vec();
    nd.extend(["--format", "ndjson"]);
    let lines: Vec<Value> = ok_stdout(&t, &nd)?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    assert_eq!(lines, rows);

    let mut streamed = args.to_vec();
    streamed.extend(["--json", "--stream"]);
    let records: Vec<Value> = ok_stdout(&t, &streamed)?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    assert_eq!(records.len(), rows.len() + 2);
    assert_eq!(records[0]["type"], "meta");
    assert_eq!(records[0]["command"], "list");
    assert_eq!(records[0]["count"], rows.len());
    assert_eq!(records[0]["filters"]["status"], "all");
    assert!(records[0]["now"].as_str().is_some_and(|n| n.ends_with('Z')));
    for (record, row) in records[1..=rows.len()].iter().zip(&rows) {
        assert_eq!(record["type"], "item");
        assert_eq!(&record["item"], row);
    }
    let end = &records[rows.len() + 1];
    assert_eq!(
        (&end["type"], &end["count"]),
        (&"end".into(), &rows.len().into())
    );
    Ok(())
}

#[test]
fn table_is_one_padded_line_per_row() -> TestResult {
    let t = TestTracker::sample()?;
    let args = ["list", "--all", "--compact"];
    let rows = envelope_rows(&t, &args)?;
    let text = ok_stdout(&t, &["list", "--all", "--compact", "--format", "table"])?;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), rows.len() + 2);
    assert!(lines[0].starts_with("id "));
    assert!(lines[1].chars().all(|c| c == '-' || c == '+'));
    let bar = lines[1].find('+').ok_or("no column rule")?;
    for (line, row) in lines[2..].iter().zip(&rows) {
        let id = row["id"].as_str().ok_or("row without id")?;
        assert!(line.starts_with(id), "{line} starts with {id}");
        assert_eq!(line.chars().nth(bar), Some('|'), "columns line up: {line}");
    }
    Ok(())
}

#[test]
fn the_index_and_the_scan_print_the_same_rows() -> TestResult {
    let t = TestTracker::sample()?;
    for format in ["csv", "table", "ndjson"] {
        let args = ["list", "--all", "--compact", "--format", format];
        let indexed = ok_stdout(&t, &args)?;
        let mut scan = args.to_vec();
        scan.push("--no-index");
        assert_eq!(indexed, ok_stdout(&t, &scan)?, "{format}");
    }
    Ok(())
}

#[test]
fn combinations_that_cannot_be_honoured_are_refused() -> TestResult {
    let t = TestTracker::sample()?;
    let cases: [(&[&str], &str); 6] = [
        (&["list", "--stream"], "missing_required_argument"),
        (
            &["list", "--json", "--format", "csv"],
            "conflicting_arguments",
        ),
        (
            &["list", "--json", "--format", "table"],
            "conflicting_arguments",
        ),
        (
            &["list", "--json", "--stream", "--format", "table"],
            "conflicting_arguments",
        ),
        (
            &["list", "--format", "ndjson", "--output-budget", "500"],
            "conflicting_arguments",
        ),
        (
            &["list", "--format", "csv", "--for", "triage"],
            "conflicting_arguments",
        ),
    ];
    for (args, code) in cases {
        let run = t.pm(args)?;
        assert_eq!(run.code, 2, "{args:?}");
        if args.contains(&"--json") {
            let doc: Value = serde_json::from_str(&run.stdout)?;
            assert_eq!(doc["error"]["code"], code, "{args:?}");
        } else {
            assert!(run.stdout.is_empty(), "{args:?} printed {}", run.stdout);
            assert!(run.stderr.contains(code), "{args:?}: {}", run.stderr);
        }
    }
    Ok(())
}
