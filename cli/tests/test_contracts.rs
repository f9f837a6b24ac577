//! `pm contracts` and `pm completions` end to end: generated from the clap tree, usable outside a
//! tracker, checked as data against the tree and the error-code table.

use clap::CommandFactory;
use pm_cli::Cli;
use serde_json::Value;

use crate::common::{ErrorEnvelope, TestTracker};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn json(t: &TestTracker, args: &[&str]) -> Result<Value, Box<dyn std::error::Error>> {
    let mut argv = args.to_vec();
    argv.push("--json");
    let run = t.pm_in(&t.outside(), &argv, &[])?;
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    assert_eq!(run.stderr, "");
    run.json()
}

fn top_level_names() -> Vec<String> {
    Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_owned())
        .collect()
}

#[test]
fn summary_lists_every_command_outside_a_tracker() -> TestResult {
    let t = TestTracker::new()?;
    let doc = json(&t, &["contracts"])?;
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["selected"]["summary"], true);
    let commands: Vec<&str> = doc["commands"]
        .as_array()
        .ok_or("commands")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for name in top_level_names() {
        assert!(commands.contains(&name.as_str()), "{name}");
    }
    let rows = doc["command_summaries"].as_array().ok_or("rows")?;
    assert_eq!(rows.len(), commands.len());
    let events = rows
        .iter()
        .find(|r| r["command"] == "events")
        .ok_or("events row")?;
    assert_eq!(events["output"], "ndjson_stream");
    let contracts = rows
        .iter()
        .find(|r| r["command"] == "contracts")
        .ok_or("contracts row")?;
    assert_eq!(contracts["default_max_estimated_tokens"], 4500);
    assert!(doc.get("error_codes").is_none());
    // TOON is the default encoding and says the same.
    let toon = t.pm_in(&t.outside(), &["contracts"], &[])?;
    assert_eq!(toon.code, 0);
    assert!(
        toon.stdout.starts_with("schema_version: 1\n"),
        "{}",
        toon.stdout
    );
    Ok(())
}

#[test]
fn full_carries_error_codes_and_exit_vocabulary() -> TestResult {
    let t = TestTracker::new()?;
    let doc = json(&t, &["contracts", "--full"])?;
    let codes = doc["error_codes"].as_array().ok_or("error_codes")?;
    assert_eq!(codes.len(), pm_engine::ErrorCode::ALL.len());
    let not_in_project = codes
        .iter()
        .find(|c| c["code"] == "not_in_project")
        .ok_or("not_in_project")?;
    assert_eq!(not_in_project["exit_code"], 3);
    assert_eq!(not_in_project["family"], "not_found");
    assert_eq!(not_in_project["title"], "Tracker not found");
    let vocabulary = doc["command_exit_contracts"]["vocabulary"]
        .as_array()
        .ok_or("vocabulary")?;
    let exits: Vec<u64> = vocabulary
        .iter()
        .filter_map(|v| v["exit_code"].as_u64())
        .collect();
    assert_eq!(exits, [0, 1, 2, 3, 4, 5, 6, 7]);
    assert!(
        doc["global_flags"]
            .as_array()
            .ok_or("global_flags")?
            .iter()
            .any(|f| f["flag"] == "--json")
    );
    let dims = doc["read_output_dimensions"].as_array().ok_or("dims")?;
    assert_eq!(dims.len(), 4);
    assert_eq!(dims[0]["projection_modes"]["list"][0], "brief");
    assert_eq!(
        dims[0]["projection_modes"]["stats"],
        Value::Array(Vec::new())
    );
    Ok(())
}

#[test]
fn command_scope_and_flags_only() -> TestResult {
    let t = TestTracker::new()?;
    let doc = json(&t, &["contracts", "--command", "events"])?;
    assert_eq!(doc["commands"], serde_json::json!(["events"]));
    let contract = &doc["command_contracts"][0];
    let mode = contract["flags"]
        .as_array()
        .ok_or("flags")?
        .iter()
        .find(|f| f["flag"] == "--cursor-mode")
        .ok_or("--cursor-mode")?;
    assert_eq!(mode["allowed_values"], serde_json::json!(["batch", "row"]));
    assert_eq!(contract["read_surface"]["surface"], "events");

    let doc = json(&t, &["contracts", "--command", "item"])?;
    assert_eq!(doc["commands"], serde_json::json!(["item", "item reopen"]));
    assert_eq!(doc["command_contracts"][0]["output"], "command_group");
    let reopen = &doc["command_contracts"][1];
    let operands: Vec<&str> = reopen["operands"]
        .as_array()
        .ok_or("operands")?
        .iter()
        .filter_map(|o| o["operand"].as_str())
        .collect();
    assert_eq!(operands, ["ID", "REASON"]);

    let doc = json(
        &t,
        &["contracts", "--flags-only", "--command", "completions"],
    )?;
    assert_eq!(
        doc["command_summaries"],
        serde_json::json!([{"command": "completions", "flags": ["<SHELL>"]}])
    );

    // An alias names its command.
    let doc = json(&t, &["contracts", "--command", "show", "--summary"])?;
    assert_eq!(doc["commands"], serde_json::json!(["get"]));
    assert!(doc.get("command_contracts").is_none());
    Ok(())
}

#[test]
fn unknown_command_is_refused_with_the_domain() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm_in(
        &t.outside(),
        &["contracts", "--command", "nope", "--json"],
        &[],
    )?;
    assert_eq!(run.code, 2);
    let e = run.json::<ErrorEnvelope>()?.error;
    assert_eq!(e.code, "invalid_argument_value");
    assert_eq!(e.refusal.surface, "--command");
    assert!(
        e.refusal
            .legal_domain
            .ok_or("domain")?
            .contains(&"events".to_owned())
    );
    let text = t.pm_in(&t.outside(), &["contracts", "--command", "nope"], &[])?;
    assert_eq!((text.code, text.stdout.as_str()), (2, ""));
    Ok(())
}

#[test]
fn completions_for_each_shell() -> TestResult {
    let t = TestTracker::new()?;
    for shell in ["bash", "zsh", "fish"] {
        let run = t.pm_in(&t.outside(), &["completions", shell], &[])?;
        assert_eq!(run.code, 0);
        assert_eq!(run.stderr, "");
        for name in top_level_names() {
            assert!(run.stdout.contains(&name), "{shell}: {name}");
        }
        let doc = json(&t, &["completions", shell])?;
        assert_eq!(doc["shell"], shell);
        assert_eq!(doc["script"], run.stdout.as_str());
    }
    let run = t.pm_in(&t.outside(), &["completions", "tcsh"], &[])?;
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.starts_with("error[invalid_argument_value]"),
        "{}",
        run.stderr
    );
    Ok(())
}
