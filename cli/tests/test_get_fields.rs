//! `get --fields`: named sections are computed whatever the depth, every
//! omission receipt's `--fields <group>` restore brings its group back, section keys can be
//! picked, and `--format` chooses the encoding.

use std::error::Error;

use serde_json::Value;

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn Error>>;

fn get_json(t: &TestTracker, args: &[&str]) -> Result<Value, Box<dyn Error>> {
    let run = t.pm(args)?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0), "{args:?}");
    Ok(serde_json::from_str(&run.stdout)?)
}

fn omitted(result: &Value) -> Vec<(String, String)> {
    result["omission_receipt"]["omitted_field_groups"]
        .as_array()
        .map(|groups| {
            groups
                .iter()
                .filter_map(|g| {
                    Some((
                        g["name"].as_str()?.to_owned(),
                        g["restore_with"].as_str()?.to_owned(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_restore_hint_of_a_depth_brings_its_group_back() -> TestResult {
    let t = TestTracker::sample()?;
    let mut restored = 0;
    for id in ["t2", "gd-f1", "gd-i1", "gd-m1"] {
        for depth in ["brief", "standard"] {
            let base = get_json(&t, &["get", id, "--depth", depth, "--json"])?;
            for (name, restore) in omitted(&base) {
                let Some(fields) = restore.strip_prefix("--fields ") else {
                    continue;
                };
                let args = ["get", id, "--depth", depth, "--fields", fields, "--json"];
                let got = get_json(&t, &args)?;
                let present = got.get(&name).is_some()
                    || got["item"].get(&name).is_some_and(|v| !v.is_null());
                assert!(present, "{args:?} did not restore {name}: {got}");
                assert!(
                    !omitted(&got).iter().any(|(n, _)| *n == name),
                    "{args:?} still lists {name} as omitted"
                );
                restored += 1;
            }
        }
    }
    assert!(restored >= 6, "only {restored} restores exercised");
    Ok(())
}

#[test]
fn named_collections_and_children_are_computed() -> TestResult {
    let t = TestTracker::sample()?;
    // A task is not a container: its children rollup exists only on request.
    let plain = get_json(&t, &["get", "t2", "--json"])?;
    assert!(plain.get("children").is_none());
    let got = get_json(
        &t,
        &["get", "t2", "--fields", "title,comments,children", "--json"],
    )?;
    assert_eq!(got["item"]["title"], plain["item"]["title"]);
    assert!(got["item"]["comments"].is_array());
    assert_eq!(got["children"]["count"], 0);
    assert!(got.get("claim_state").is_none() && got.get("linked").is_none());
    // Canonical and legacy spellings select the same result; only provenance differs.
    let canonical = get_json(
        &t,
        &[
            "get",
            "t2",
            "--output-include",
            "title,comments,children",
            "--json",
        ],
    )?;
    for key in ["item", "children", "omission_receipt"] {
        assert_eq!(got[key], canonical[key], "{key}");
    }
    assert_eq!(got["read_output"]["legacy_aliases_used"][0], "--fields");
    assert_eq!(
        canonical["read_output"]["legacy_aliases_used"],
        serde_json::json!([])
    );
    Ok(())
}

#[test]
fn keys_inside_a_section_can_be_picked() -> TestResult {
    let t = TestTracker::sample()?;
    let got = get_json(
        &t,
        &[
            "get",
            "t2",
            "--fields",
            "claim_state.assignee,linked.files",
            "--json",
        ],
    )?;
    assert_eq!(
        got["claim_state"],
        serde_json::json!({"assignee": "field-tech"})
    );
    let linked: Vec<&String> = got["linked"]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    assert_eq!(linked, ["files"]);
    assert!(got.get("item").is_none());
    let names: Vec<String> = omitted(&got).into_iter().map(|(n, _)| n).collect();
    assert!(
        names.contains(&"claim_state.last_claim".to_owned()),
        "{names:?}"
    );
    assert!(names.contains(&"linked.tests".to_owned()), "{names:?}");
    Ok(())
}

#[test]
fn refusals_and_encoding() -> TestResult {
    let t = TestTracker::sample()?;
    let unknown = t.pm(&["get", "t2", "--fields", "nope", "--json"])?;
    assert_eq!(unknown.code, 2);
    let error: Value = serde_json::from_str(&unknown.stdout)?;
    assert_eq!(error["error"]["code"], "command_failed");
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Unknown --fields selector(s) for get: nope."),
        "{message}"
    );
    assert!(message.contains("children") && message.contains("item.comments"));
    let both = t.pm(&["get", "t2", "--fields", "title", "--full"])?;
    assert_eq!(both.code, 2, "{}", both.stderr);
    assert!(
        both.stderr.contains("conflicting_arguments"),
        "{}",
        both.stderr
    );

    let json = t.pm(&["get", "t2", "--format", "json"])?;
    assert_eq!(json.code, 0);
    let parsed: Value = serde_json::from_str(&json.stdout)?;
    assert_eq!(parsed["item"]["id"], "gd-t2");
    let toon = t.pm(&["get", "t2", "--format", "json", "--output-format", "toon"])?;
    assert!(toon.stdout.starts_with("item:\n"), "{}", toon.stdout);
    Ok(())
}
