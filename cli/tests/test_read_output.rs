//! The read-output layer on real pm results (reads goldens) and synthetic envelopes: results
//! that fit pass through byte for byte, compaction keeps pm's receipt shapes and cursors, and
//! the universal controls are refused on commands that are not read surfaces.

use std::error::Error;
use std::io::Read;

use clap::Parser;
use pm_cli::Cli;
use pm_cli::read_output::{
    CommandKind, Finished, OutputCursor, ReadMeta, ReadOutputRequest, Surface, finish_read,
};
use pm_cli::render::{Format, budget, encode};
use serde_json::{Map, Value, json};

use crate::common::{ErrorEnvelope, TestTracker};

type TestResult = Result<(), Box<dyn Error>>;

/// Parses global flags the way `pm` does and validates them for a read surface.
fn request(flags: &[&str]) -> Result<ReadOutputRequest, Box<dyn Error>> {
    let argv = ["pm", "where"].iter().chain(flags);
    let cli = Cli::try_parse_from(argv)?;
    Ok(ReadOutputRequest::parse(
        &cli.global,
        "list",
        CommandKind::Read,
    )?)
}

fn golden(relative: &str) -> Result<String, Box<dyn Error>> {
    let path = pm_testkit::shared_file(&format!("golden/reads/{relative}"));
    if relative.ends_with(".gz") {
        let mut text = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(path)?).read_to_string(&mut text)?;
        return Ok(text);
    }
    Ok(std::fs::read_to_string(path)?)
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn finish(
    value: Value,
    meta: &ReadMeta,
    request: &ReadOutputRequest,
    format: Format,
) -> Result<Finished, Box<dyn Error>> {
    Ok(finish_read(value, meta, request, format)?)
}

/// Every golden that fits its default budget prints byte for byte as pm printed it, with the
/// omission receipt derived by the layer (get keeps the command's own receipt).
#[test]
fn fitting_goldens_pass_through_byte_for_byte() -> TestResult {
    let cases = [
        ("list", Surface::List, "list"),
        ("list-open", Surface::List, "list"),
        ("list-all-full", Surface::List, "list-all"),
        ("get", Surface::Get, "get"),
        ("search", Surface::Search, "search"),
        ("search2", Surface::Search, "search"),
        ("context", Surface::Context, "context"),
        ("next", Surface::Next, "next"),
        ("stats", Surface::Stats, "stats"),
        ("health", Surface::Health, "health"),
        ("validate", Surface::Validate, "validate"),
    ];
    for fixture in ["fx-100", "self-tracker"] {
        for (label, surface, spelling) in cases {
            if fixture == "self-tracker" && matches!(label, "list" | "validate" | "list-all-full") {
                continue; // compacted by pm's snapshot algorithm, or 20 MB
            }
            let data: Value = serde_json::from_str(&golden(&format!("{fixture}/{label}.json"))?)?;
            let mut result = object(data);
            if surface != Surface::Get {
                result.shift_remove("omission_receipt");
            }
            let meta = ReadMeta::new(surface, spelling);
            let flags: &[&str] = if label == "list-all-full" {
                &["--output-budget", "unbounded"]
            } else {
                &[]
            };
            for (format, ext) in [(Format::Json, "json"), (Format::Toon, "toon")] {
                if label == "validate" && format == Format::Toon {
                    continue; // pm's validate samples fewer rows in TOON: other data
                }
                let expected = golden(&format!("{fixture}/{label}.{ext}"))?;
                let out = finish(
                    Value::Object(result.clone()),
                    &meta,
                    &request(flags)?,
                    format,
                )?;
                assert_eq!(out.exit_code, 0, "{fixture}/{label}.{ext}");
                assert!(
                    encode(&out.value, format) == expected,
                    "{fixture}/{label}.{ext} differs"
                );
            }
        }
    }
    Ok(())
}

/// Rebuilds the unbounded `pm list --json` result of the self-tracker (305 active items, brief
/// projection) from its `list --all` golden and the compacted `list` golden's envelope.
/// The list envelope of the self tracker and its rows.
type EnvelopeAndRows = (Map<String, Value>, Vec<Value>);

fn self_tracker_list() -> Result<EnvelopeAndRows, Box<dyn Error>> {
    let all: Value = serde_json::from_str(&golden("self-tracker/list-all-full.json.gz")?)?;
    let page = object(serde_json::from_str(&golden("self-tracker/list.json")?)?);
    let rows: Vec<Value> = all["items"]
        .as_array()
        .map(|items| {
            items[..305]
                .iter()
                .map(|r| json!({"id": r["id"], "status": r["status"], "type": r["type"], "title": r["title"]}))
                .collect()
        })
        .unwrap_or_default();
    let mut result = Map::new();
    result.insert("items".into(), json!(rows));
    result.insert("count".into(), json!(305));
    result.insert("total".into(), json!(305));
    result.insert("has_more".into(), json!(false));
    result.insert("truncated".into(), json!(false));
    result.insert("next_cursor".into(), Value::Null);
    for key in ["completeness", "filters", "projection", "sorting", "now"] {
        result.insert(key.into(), page[key].clone());
    }
    Ok((result, rows))
}

/// Over its default ceiling, `pm list` keeps the largest prefix that fits (pm's snapshot kept
/// 76 rows by halving), with pm's receipt shape and the very cursor fingerprint pm computed.
#[test]
fn default_budget_compaction_matches_pm_shapes() -> TestResult {
    let (result, rows) = self_tracker_list()?;
    let page = object(serde_json::from_str(&golden("self-tracker/list.json")?)?);
    for (format, ceiling) in [(Format::Json, 6000), (Format::Toon, 4000)] {
        let out = finish(
            Value::Object(result.clone()),
            &ReadMeta::new(Surface::List, "list"),
            &request(&[])?,
            format,
        )?;
        assert_eq!(out.exit_code, 0);
        let env = object(out.value.clone());
        let keys: Vec<&String> = env.keys().collect();
        let expected: Vec<&String> = page.keys().collect();
        assert_eq!(keys, expected);
        let printed = budget::measure(&out.value, format);
        assert!(printed <= ceiling, "{printed} > {ceiling}");
        let kept = env["items"].as_array().map_or(0, Vec::len);
        assert!(kept > 76, "kept {kept} rows");
        assert_eq!(env["items"].as_array().map(|a| &a[..]), Some(&rows[..kept]));
        assert_eq!(env["count"], kept);
        assert_eq!(env["total"], 305);
        let receipt = &env["read_output"];
        let receipt_keys: Vec<&String> = receipt
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        let golden_keys: Vec<&String> = page["read_output"]
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        assert_eq!(receipt_keys, golden_keys);
        assert_eq!(receipt["estimated_tokens"], printed);
        assert_eq!(receipt["budget_tokens"], ceiling);
        assert_eq!(receipt["compacted_row_paths"], json!(["items"]));
        let cursor = OutputCursor::decode(env["next_cursor"].as_str().unwrap_or_default())?;
        assert_eq!(cursor.offset, kept as u64);
        assert_eq!(cursor.total, 305);
        assert_eq!(cursor.fingerprint, "QJiJrf_0T2MP-vaq");
        let disclosure = &env["output_budget_truncation"];
        let disclosure_keys: Vec<&String> = disclosure
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        let golden_disclosure: Vec<&String> = page["output_budget_truncation"]
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        assert_eq!(disclosure_keys, golden_disclosure);
        assert_eq!(
            disclosure["continuations"][0],
            json!({"path": "items", "cursor": env["next_cursor"], "retained_rows": kept,
                "remaining_rows": 305 - kept, "total_rows": 305})
        );
        assert_eq!(env["continuation_kind"], "output_cursor");
    }
    Ok(())
}

/// pm's own output cursor from the `list` golden continues our compaction of the same rows.
#[test]
fn pm_cli_cursor_continues_the_same_collection() -> TestResult {
    let (result, rows) = self_tracker_list()?;
    let page = object(serde_json::from_str(&golden("self-tracker/list.json")?)?);
    let cursor = page["next_cursor"].as_str().unwrap_or_default().to_owned();
    let req = request(&["--output-cursor", &cursor, "--output-budget", "unbounded"])?;
    let out = finish(
        Value::Object(result),
        &ReadMeta::new(Surface::List, "list"),
        &req,
        Format::Json,
    )?;
    let env = object(out.value);
    assert_eq!(env["items"].as_array().map(|a| &a[..]), Some(&rows[76..]));
    assert_eq!(env["count"], 229);
    assert_eq!(env["read_output"]["result_omitted"], false);
    Ok(())
}

/// Nested diagnostics of `validate` compact before the result is omitted, and each declared
/// diagnostic collection gets its own continuation.
#[test]
fn validate_diagnostics_compact_with_continuations() -> TestResult {
    let golden_page = object(serde_json::from_str(&golden(
        "self-tracker/validate.json",
    )?)?);
    let mut result = golden_page.clone();
    for key in [
        "read_output",
        "has_more",
        "truncated",
        "next_cursor",
        "continuation_kind",
        "output_budget_truncation",
    ] {
        result.shift_remove(key);
    }
    let out = finish(
        Value::Object(result),
        &ReadMeta::new(Surface::Validate, "validate"),
        &request(&["--output-budget", "2500"])?,
        Format::Toon,
    )?;
    assert_eq!(out.exit_code, 0);
    let env = object(out.value.clone());
    assert!(budget::measure(&out.value, Format::Toon) <= 2500);
    let paths = env["read_output"]["compacted_row_paths"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        paths
            .iter()
            .all(|p| { p.as_str().is_some_and(|p| p.starts_with("checks")) })
    );
    assert!(!paths.is_empty());
    let continuations = env["output_budget_truncation"]["continuations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(!continuations.is_empty());
    for c in &continuations {
        let cursor = OutputCursor::decode(c["cursor"].as_str().unwrap_or_default())?;
        assert_eq!(cursor.surface, Surface::Validate);
        assert_eq!(Some(cursor.path.as_str()), c["path"].as_str());
        assert_eq!(c["remaining_rows"], cursor.total - cursor.offset);
    }
    assert_eq!(env["next_cursor"], continuations[0]["cursor"]);
    assert_eq!(
        env["output_budget_truncation"]["recovery"]["cli"],
        "--output-cursor"
    );
    Ok(())
}

fn synthetic_list(n: usize) -> Value {
    let rows: Vec<Value> = (0..n)
        .map(|i| json!({"id": format!("pm-{i:05}"), "status": "open", "type": "Task", "title": format!("Synthetic task {i} with a title of moderate length")}))
        .collect();
    json!({"items": rows, "count": n, "total": n, "has_more": false, "truncated": false, "next_cursor": null,
        "projection": {"mode": "brief", "fields": ["id", "status", "type", "title"]}})
}

#[test]
fn tiny_budgets_print_the_omission_document_and_exit_2() -> TestResult {
    for format in [Format::Json, Format::Toon] {
        let out = finish(
            synthetic_list(4),
            &ReadMeta::new(Surface::List, "list"),
            &request(&["--output-budget", "10"])?,
            format,
        )?;
        assert_eq!(out.exit_code, 2);
        let env = object(out.value.clone());
        let keys: Vec<&String> = env.keys().collect();
        assert_eq!(keys, ["output_budget_exceeded", "read_output"]);
        assert_eq!(
            env["output_budget_exceeded"]["reason"],
            "requested_budget_infeasible"
        );
        let receipt = &env["read_output"];
        assert_eq!(receipt["result_omitted"], true);
        assert_eq!(receipt["within_budget"], false);
        assert_eq!(
            receipt["estimated_tokens"],
            budget::measure(&out.value, format)
        );
        assert!(
            receipt["omitted_result_estimated_tokens"]
                .as_u64()
                .is_some_and(|n| n > 10)
        );
        assert_eq!(
            receipt["canonical_options_used"],
            json!(["--output-budget"])
        );
        assert!(receipt.get("budget_source").is_none());
    }
    Ok(())
}

#[test]
fn controls_that_change_nothing_add_no_receipt() -> TestResult {
    let meta = ReadMeta::new(Surface::List, "list");
    let plain = finish(synthetic_list(3), &meta, &request(&[])?, Format::Json)?;
    for flags in [
        &["--output-limit", "5"][..],
        &["--output-budget", "5000"],
        &["--output-budget", "unbounded"],
        &["--output-format", "json"],
        &["--output-limit", "unbounded"],
    ] {
        let out = finish(synthetic_list(3), &meta, &request(flags)?, Format::Json)?;
        assert_eq!(out, plain, "{flags:?}");
        assert!(out.value.get("read_output").is_none());
    }
    for flags in [
        &["--output-include", "brief"][..],
        &["--output-row-contract"],
        &["--output-include", "id"],
    ] {
        let out = finish(synthetic_list(3), &meta, &request(flags)?, Format::Json)?;
        assert!(out.value.get("read_output").is_some(), "{flags:?}");
    }
    let contract = finish(
        synthetic_list(3),
        &meta,
        &request(&["--output-row-contract"])?,
        Format::Json,
    )?;
    let keys: Vec<String> = object(contract.value).keys().cloned().collect();
    assert_eq!(
        &keys[6..],
        [
            "projection",
            "row_contract",
            "omission_receipt",
            "read_output"
        ]
    );
    Ok(())
}

#[test]
fn output_limit_cuts_rows_and_prints_a_continuation() -> TestResult {
    let meta = ReadMeta::new(Surface::List, "list");
    let out = finish(
        synthetic_list(5),
        &meta,
        &request(&["--output-limit", "2"])?,
        Format::Json,
    )?;
    let env = object(out.value);
    assert_eq!(env["count"], 2);
    assert_eq!(env["has_more"], true);
    assert_eq!(
        env["applied_bound"],
        json!({"kind": "output_limit", "source": "explicit", "value": 2})
    );
    let cursor = OutputCursor::decode(env["next_cursor"].as_str().unwrap_or_default())?;
    assert_eq!((cursor.offset, cursor.total), (2, 5));
    assert_eq!(env["continuation_kind"], "output_cursor");
    assert!(env.get("output_budget_truncation").is_none());
    assert_eq!(
        env["read_output"]["requested_dimensions"],
        json!(["amount"])
    );
    Ok(())
}

#[test]
fn legacy_aliases_and_canonical_spellings_are_both_reported() -> TestResult {
    let meta = ReadMeta::new(Surface::List, "list")
        .legacy_switch("--compact", true)
        .legacy_value("--limit", Some("3"));
    let out = finish(
        synthetic_list(3),
        &meta,
        &request(&["--output-include", "id"])?,
        Format::Json,
    )?;
    let receipt = &out.value["read_output"];
    assert_eq!(
        receipt["canonical_options_used"],
        json!(["--output-include"])
    );
    assert_eq!(
        receipt["legacy_aliases_used"],
        json!(["--compact", "--limit"])
    );
    assert_eq!(
        receipt["migration_hints"],
        json!([
            "--compact is a compatibility alias; prefer --output-include compact.",
            "--limit is a compatibility alias; prefer --output-limit <n>."
        ])
    );
    assert_eq!(
        receipt["requested_dimensions"],
        json!(["include", "amount"])
    );
    assert_eq!(out.value["items"][0], json!({"id": "pm-00000"}));
    Ok(())
}

#[test]
fn list_all_implies_an_unbounded_cost_unless_explicit() -> TestResult {
    let big = synthetic_list(2000);
    let all = finish(
        big.clone(),
        &ReadMeta::new(Surface::List, "list-all"),
        &request(&[])?,
        Format::Toon,
    )?;
    assert_eq!(all.value["items"].as_array().map(Vec::len), Some(2000));
    assert!(all.value.get("read_output").is_none());
    let list = finish(
        big.clone(),
        &ReadMeta::new(Surface::List, "list"),
        &request(&[])?,
        Format::Toon,
    )?;
    assert!(budget::measure(&list.value, Format::Toon) <= 4000);
    let bounded = finish(
        big,
        &ReadMeta::new(Surface::List, "list-all"),
        &request(&["--output-budget", "800"])?,
        Format::Toon,
    )?;
    assert!(budget::measure(&bounded.value, Format::Toon) <= 800);
    Ok(())
}

#[test]
fn universal_controls_are_refused_on_other_commands() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm(&["where", "--output-limit", "5"])?;
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr.lines().next(),
        Some(
            "error[conflicting_arguments]: Universal output controls apply only to read commands; where is not a read surface."
        )
    );
    let run = t.pm(&["--json", "where", "--output-session", "{}"])?;
    assert_eq!(run.code, 2);
    let env: ErrorEnvelope = run.json()?;
    assert_eq!(env.error.code, "conflicting_arguments");
    assert_eq!(env.error.refusal.surface, "--output-session");
    // --output-format stays the encoding selector of every command.
    let run = t.pm(&["where", "--output-format", "json"])?;
    assert_eq!(run.code, 3);
    let env: ErrorEnvelope = run.json()?;
    assert_eq!(env.error.code, "not_in_project");
    Ok(())
}
