//! `search --highlight` and `search --format ndjson`: snippets only for matched fields, marking
//! a query token as written; rows otherwise unchanged; ndjson carries the envelope's rows; both
//! answer the same from the index and the scan.

use std::error::Error;

use serde_json::Value;

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn Error>>;

fn ok_stdout(t: &TestTracker, args: &[&str]) -> Result<String, Box<dyn Error>> {
    let run = t.pm(args)?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0), "{args:?}");
    Ok(run.stdout)
}

fn rows(t: &TestTracker, args: &[&str]) -> Result<Vec<Value>, Box<dyn Error>> {
    let mut full = args.to_vec();
    full.push("--json");
    let env: Value = serde_json::from_str(&ok_stdout(t, &full)?)?;
    Ok(env["items"].as_array().cloned().unwrap_or_default())
}

#[test]
fn highlights_mark_a_query_token_in_each_matched_field() -> TestResult {
    let t = TestTracker::sample()?;
    let mut checked = 0;
    for query in ["sampling", "summary CSV", "Readings"] {
        let plain = rows(&t, &["search", query, "--limit", "20"])?;
        let marked = rows(&t, &["search", query, "--limit", "20", "--highlight"])?;
        assert_eq!(plain.len(), marked.len(), "{query}");
        let tokens: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        for (p, m) in plain.iter().zip(&marked) {
            let mut without = m.clone();
            let marks = without
                .as_object_mut()
                .and_then(|o| o.shift_remove("highlights"))
                .ok_or("a highlighted row has highlights")?;
            assert_eq!(&without, p, "highlight changes nothing else");
            let matched: Vec<&str> = p["matched_fields"]
                .as_array()
                .ok_or("matched_fields")?
                .iter()
                .filter_map(Value::as_str)
                .collect();
            for mark in marks.as_array().ok_or("highlights is an array")? {
                let field = mark["field"].as_str().ok_or("field")?;
                assert!(matched.contains(&field), "{field} is a matched field");
                let snippet = mark["snippet"].as_str().ok_or("snippet")?;
                let open = snippet.find('«').ok_or("an opening mark")?;
                let close = snippet.find('»').ok_or("a closing mark")?;
                let inside = snippet[open + '«'.len_utf8()..close].to_lowercase();
                assert!(
                    tokens.contains(&inside),
                    "{inside:?} is a token of {query:?}"
                );
                assert!(!snippet.contains('\n'), "one line");
                checked += 1;
            }
        }
    }
    assert!(checked >= 5, "only {checked} snippets checked");
    Ok(())
}

#[test]
fn ndjson_prints_the_envelope_rows_one_per_line() -> TestResult {
    let t = TestTracker::sample()?;
    let args = ["search", "sensor", "--limit", "7", "--highlight"];
    let want = rows(&t, &args)?;
    let mut nd = args.to_vec();
    nd.extend(["--format", "ndjson"]);
    let text = ok_stdout(&t, &nd)?;
    let got: Vec<Value> = text
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    assert!(!got.is_empty());
    assert_eq!(got, want);
    let mut scan = nd.clone();
    scan.push("--no-index");
    assert_eq!(ok_stdout(&t, &scan)?, text, "index and scan agree");
    Ok(())
}

#[test]
fn ndjson_refuses_what_needs_the_envelope() -> TestResult {
    let t = TestTracker::sample()?;
    for extra in [
        &["--count"][..],
        &["--output-budget", "400"],
        &["--for", "discover"],
    ] {
        let mut args = vec!["search", "task", "--format", "ndjson"];
        args.extend(extra);
        let run = t.pm(&args)?;
        assert_eq!(run.code, 2, "{args:?}");
        assert!(run.stdout.is_empty());
        assert!(
            run.stderr.contains("conflicting_arguments"),
            "{args:?}: {}",
            run.stderr
        );
    }
    Ok(())
}
