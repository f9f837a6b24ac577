//! Property tests of the read-output layer on random list envelopes: printed output never
//! exceeds the budget and its receipts tell the truth, retained rows are a prefix, continuation
//! walks return every row exactly once, and sessions never serve an item twice.

use std::collections::BTreeSet;
use std::error::Error;

use clap::Parser;
use pm_cli::Cli;
use pm_cli::read_output::{
    CommandKind, Finished, OutputCursor, ReadMeta, ReadOutputRequest, Surface, finish_read,
};
use pm_cli::render::{Format, budget, encode};
use proptest::collection::vec;
use proptest::prelude::*;
use serde_json::{Value, json};

fn request(flags: &[&str]) -> Result<ReadOutputRequest, Box<dyn Error>> {
    let cli = Cli::try_parse_from(["pm", "where"].iter().chain(flags))?;
    Ok(ReadOutputRequest::parse(
        &cli.global,
        "list",
        CommandKind::Read,
    )?)
}

fn run(list: &Value, flags: &[&str], format: Format) -> Result<Finished, TestCaseError> {
    let req = request(flags).map_err(|e| TestCaseError::fail(e.to_string()))?;
    finish_read(
        list.clone(),
        &ReadMeta::new(Surface::List, "list"),
        &req,
        format,
    )
    .map_err(|e| TestCaseError::fail(e.to_string()))
}

fn title() -> impl Strategy<Value = String> {
    let ch = prop_oneof![
        12 => proptest::char::range('a', 'z'),
        2 => Just(' '),
        1 => Just('é'),
        1 => Just('😀'),
        1 => Just(','),
        1 => Just('"'),
        1 => Just(':'),
    ];
    vec(ch, 0..320).prop_map(|c| c.into_iter().collect())
}

/// A `pm list`-shaped envelope with `n` rows (ids `pm-0000`…), each with a title and tags.
fn list() -> impl Strategy<Value = Value> {
    vec((title(), vec("[a-z]{1,8}", 0..5), 0u8..5), 0..60).prop_map(|specs| {
        let rows: Vec<Value> = specs
            .into_iter()
            .enumerate()
            .map(|(i, (title, tags, priority))| {
                json!({"id": format!("pm-{i:04}"), "title": title, "priority": priority, "tags": tags})
            })
            .collect();
        let n = rows.len();
        json!({"items": rows, "count": n, "total": n, "has_more": false, "truncated": false,
            "next_cursor": null, "projection": {"mode": "fields", "fields": ["id", "title", "priority", "tags"]},
            "now": "2026-09-01T00:00:00.000Z"})
    })
}

fn format() -> impl Strategy<Value = Format> {
    prop_oneof![Just(Format::Json), Just(Format::Toon)]
}

fn ids(value: &Value) -> Vec<String> {
    value["items"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Returns the size of the most compacted useful envelope (what a budget of 1 reports).
fn minimum_envelope(list: &Value, format: Format) -> Result<u64, TestCaseError> {
    let out = run(list, &["--output-budget", "1"], format)?;
    Ok(out.value["read_output"]["omitted_result_estimated_tokens"]
        .as_u64()
        .unwrap_or(0))
}

fn check_row(original: &Value, kept: &Value) -> Result<(), TestCaseError> {
    prop_assert_eq!(&original["id"], &kept["id"]);
    let (full, shown) = (
        original["title"].as_str().unwrap_or_default(),
        kept["title"].as_str().unwrap_or_default(),
    );
    match shown.strip_suffix('…') {
        Some(prefix) if shown != full => prop_assert!(full.starts_with(prefix)),
        _ => prop_assert_eq!(full, shown),
    }
    let tags = original["tags"].as_array().cloned().unwrap_or_default();
    let kept_tags = kept["tags"].as_array().cloned().unwrap_or_default();
    prop_assert!(kept_tags.len() <= tags.len());
    prop_assert_eq!(&tags[..kept_tags.len()], &kept_tags[..]);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn output_fits_and_receipts_tell_the_truth(list in list(), budget in 1u64..2500, format in format()) {
        let limit = budget.to_string();
        let out = run(&list, &["--output-budget", &limit], format)?;
        let printed = encode(&out.value, format);
        let estimate = budget::tokens_for_bytes(printed.len());
        let again = run(&list, &["--output-budget", &limit], format)?;
        prop_assert_eq!(&printed, &encode(&again.value, format));
        prop_assert_eq!(out.value["read_output"]["estimated_tokens"].as_u64().unwrap_or(estimate), estimate);
        let originals = list["items"].as_array().cloned().unwrap_or_default();
        if out.exit_code == 2 {
            prop_assert_eq!(out.value["output_budget_exceeded"]["omitted_result"].as_bool(), Some(true));
            prop_assert!(out.value["read_output"]["omitted_result_estimated_tokens"].as_u64().is_some_and(|n| n > budget));
            return Ok(());
        }
        prop_assert_eq!(out.exit_code, 0);
        prop_assert!(estimate <= budget, "{} > {}", estimate, budget);
        let kept = out.value["items"].as_array().cloned().unwrap_or_default();
        prop_assert!(kept.len() <= originals.len());
        for (original, row) in originals.iter().zip(&kept) {
            check_row(original, row)?;
        }
        prop_assert_eq!(out.value["count"].as_u64(), Some(kept.len() as u64));
        let compacted: Vec<String> = out.value["read_output"]["compacted_row_paths"].as_array()
            .map(|a| a.iter().filter_map(|p| p.as_str().map(str::to_owned)).collect()).unwrap_or_default();
        if kept.len() < originals.len() {
            prop_assert_eq!(out.value["has_more"].as_bool(), Some(true));
            prop_assert!(compacted.contains(&"items".to_owned()));
            let cursor = OutputCursor::decode(out.value["next_cursor"].as_str().unwrap_or_default())
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(cursor.offset, kept.len() as u64);
            prop_assert_eq!(cursor.total, originals.len() as u64);
            let entry = &out.value["output_budget_truncation"]["continuations"][0];
            prop_assert_eq!(entry["retained_rows"].as_u64(), Some(kept.len() as u64));
            prop_assert_eq!(entry["remaining_rows"].as_u64(), Some((originals.len() - kept.len()) as u64));
        } else {
            prop_assert!(!compacted.contains(&"items".to_owned()));
        }
        if out.value.get("read_output").is_none() {
            let mut unchanged = out.value.clone();
            if let Some(m) = unchanged.as_object_mut() {
                m.shift_remove("omission_receipt");
            }
            prop_assert_eq!(&unchanged, &list);
        }
        // Above the most compacted envelope, nothing is ever omitted.
        let minimum = minimum_envelope(&list, format)?;
        if minimum > 0 && budget >= minimum + 16 {
            prop_assert_eq!(out.exit_code, 0);
        }
    }

    #[test]
    fn budget_walks_return_every_row_once(list in list(), extra in 0u64..1500, format in format()) {
        // Any row's most compacted form (a 240-unit title, one tag) fits in 256 more tokens
        // than the first row's, so every page of the walk is feasible.
        let minimum = minimum_envelope(&list, format)?;
        let budget = (minimum + 256 + extra).to_string();
        let all = ids(&list);
        let mut seen: Vec<String> = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..=all.len() + 1 {
            let mut flags = vec!["--output-budget", budget.as_str()];
            if let Some(c) = &cursor {
                flags.extend(["--output-cursor", c.as_str()]);
            }
            let out = run(&list, &flags, format)?;
            prop_assert_eq!(out.exit_code, 0);
            let page = ids(&out.value);
            prop_assert!(!page.is_empty() || all.is_empty());
            seen.extend(page);
            match out.value["next_cursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        prop_assert_eq!(seen, all);
    }

    #[test]
    fn limit_walks_return_every_row_once(list in list(), limit in 1usize..12) {
        let all = ids(&list);
        let limit_text = limit.to_string();
        let mut seen: Vec<String> = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..=all.len() + 1 {
            let mut flags = vec!["--output-budget", "unbounded", "--output-limit", limit_text.as_str()];
            if let Some(c) = &cursor {
                flags.extend(["--output-cursor", c.as_str()]);
            }
            let out = run(&list, &flags, Format::Toon)?;
            let page = ids(&out.value);
            prop_assert!(page.len() <= limit);
            prop_assert_eq!(out.value["count"].as_u64(), Some(page.len() as u64));
            seen.extend(page);
            match out.value["next_cursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        prop_assert_eq!(seen, all);
    }

    #[test]
    fn sessions_never_serve_an_item_twice(
        picks in vec(vec(0usize..30, 1..20), 1..4),
        token_budget in 2000u64..60000,
    ) {
        let mut state = json!({"version": 1, "id": "walk", "token_budget": token_budget, "spent_tokens": 0, "seen_item_ids": []});
        let mut served: Vec<String> = Vec::new();
        for pick in picks {
            let chosen: BTreeSet<usize> = pick.into_iter().collect();
            let rows: Vec<Value> = chosen.iter().map(|i| json!({"id": format!("pm-{i:02}"), "title": format!("Item {i}")})).collect();
            let n = rows.len();
            let list = json!({"items": rows, "count": n, "projection": {"mode": "brief"}});
            let session = state.to_string();
            let out = run(&list, &["--output-session", &session], Format::Json)?;
            if out.exit_code == 2 {
                break;
            }
            let before: BTreeSet<String> = state["seen_item_ids"].as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect()).unwrap_or_default();
            let receipt = &out.value["read_session"];
            let mut full = BTreeSet::new();
            let mut refs = 0;
            for row in out.value["items"].as_array().cloned().unwrap_or_default() {
                let id = row["id"].as_str().unwrap_or_default().to_owned();
                if row.get("context_ref").is_some() {
                    prop_assert!(before.contains(&id));
                    let expected_ref = format!("session:walk:{id}");
                    prop_assert_eq!(row["context_ref"].as_str(), Some(expected_ref.as_str()));
                    refs += 1;
                } else {
                    prop_assert!(!before.contains(&id));
                    full.insert(id);
                }
            }
            served.extend(full.iter().cloned());
            let printed = budget::measure(&out.value, Format::Json);
            let spent_before = state["spent_tokens"].as_u64().unwrap_or(0);
            let remaining_before = token_budget - spent_before;
            prop_assert_eq!(receipt["spent_before_tokens"].as_u64(), Some(spent_before));
            prop_assert_eq!(receipt["spent_this_call_tokens"].as_u64(), Some(printed));
            let charged = remaining_before.min(printed);
            prop_assert_eq!(receipt["charged_this_call_tokens"].as_u64(), Some(charged));
            let total = (spent_before + charged).min(token_budget);
            prop_assert_eq!(receipt["spent_total_tokens"].as_u64(), Some(total));
            prop_assert_eq!(receipt["remaining_tokens"].as_u64(), Some(token_budget - total));
            prop_assert_eq!(receipt["seen_before_count"].as_u64(), Some(before.len() as u64));
            prop_assert_eq!(receipt["new_item_count"].as_u64(), Some(full.len() as u64));
            prop_assert_eq!(receipt["suppressed_repeat_count"].as_u64(), Some(refs));
            prop_assert!(printed <= remaining_before);
            let expected: BTreeSet<String> = before.union(&full).cloned().collect();
            let next: BTreeSet<String> = receipt["next_state"]["seen_item_ids"].as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect()).unwrap_or_default();
            prop_assert_eq!(next, expected);
            state = receipt["next_state"].clone();
        }
        let distinct: BTreeSet<&String> = served.iter().collect();
        prop_assert_eq!(distinct.len(), served.len());
    }

    #[test]
    fn include_selectors_project_or_refuse_with_the_domain(
        list in list(),
        picks in vec(prop_oneof![Just("id"), Just("title"), Just("tags"), Just("nope"), Just("zzz")], 1..4),
    ) {
        let csv = picks.join(",");
        let req = request(&["--output-include", &csv]).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let result = finish_read(list.clone(), &ReadMeta::new(Surface::List, "list"), &req, Format::Json);
        let known: BTreeSet<&str> = picks.iter().copied().filter(|p| matches!(*p, "id" | "title" | "tags")).collect();
        let rows = list["items"].as_array().map_or(0, Vec::len);
        match result {
            Ok(out) => {
                prop_assert!(!known.is_empty() || rows == 0);
                for row in out.value["items"].as_array().cloned().unwrap_or_default() {
                    let keys: BTreeSet<String> = row.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
                    prop_assert!(keys.iter().all(|k| known.contains(k.as_str())));
                }
            }
            Err(error) => {
                prop_assert!(known.is_empty() && rows > 0);
                prop_assert_eq!(error.code().as_str(), "command_failed");
                let pm_cli::failure::CliError::ReadOutput { allowed, flag, .. } = &error else {
                    return Err(TestCaseError::fail("not a read-output refusal"));
                };
                prop_assert_eq!(*flag, "--output-include");
                for expected in ["brief", "compact", "full", "id", "priority", "tags", "title"] {
                    prop_assert!(allowed.iter().any(|a| a == expected));
                }
            }
        }
    }
}
