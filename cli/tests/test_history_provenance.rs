//! `pm history --provenance`, `--provenance-summary`, `--harness` and `--agent-instance`:
//! who recorded each entry, filtered by agent, counted per author.

use std::error::Error;

use serde_json::{Value, json};

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn Error>>;

fn json_of(t: &TestTracker, args: &[&str]) -> Result<Value, Box<dyn Error>> {
    let run = t.pm(args)?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0), "{args:?}");
    Ok(serde_json::from_str(&run.stdout)?)
}

/// Marks every other entry of `id`'s stream as recorded by the codex harness (instance `i1`);
/// provenance keys are outside the hashed document, so the chain still verifies.
fn mark_agents(t: &TestTracker, id: &str) -> Result<usize, Box<dyn Error>> {
    let path = t.workspace().join(format!(".agents/pm/history/{id}.jsonl"));
    let mut marked = 0;
    let mut text = String::new();
    for (i, line) in std::fs::read_to_string(&path)?.lines().enumerate() {
        let mut entry: Value = serde_json::from_str(line)?;
        if i % 2 == 1
            && let Some(map) = entry.as_object_mut()
        {
            map.insert("agent_harness".into(), json!("codex"));
            map.insert("agent_instance".into(), json!("i1"));
            marked += 1;
        }
        text.push_str(&serde_json::to_string(&entry)?);
        text.push('\n');
    }
    pm_engine::atomic::write(&path, text.as_bytes())?;
    Ok(marked)
}

#[test]
fn provenance_rows_filters_and_summary() -> TestResult {
    let t = TestTracker::sample()?;
    let marked = mark_agents(&t, "gd-t2")?;
    assert!(marked >= 1);
    let compact = json_of(&t, &["history", "gd-t2", "--json"])?;
    let total = compact["count"].as_u64().ok_or("count")? as usize;

    let out = json_of(&t, &["history", "gd-t2", "--provenance", "--json"])?;
    assert_eq!(
        out["projection"],
        json!({"mode": "provenance", "row_key": "provenance_history"})
    );
    assert_eq!(out["compact"], false);
    assert!(out.get("compact_history").is_none() && out.get("history").is_none());
    assert_eq!(
        out["omission_receipt"]["omitted_field_groups"],
        json!([{"name": "patch_and_hashes", "restore_with": "--full"}])
    );
    let rows = out["provenance_history"].as_array().ok_or("rows")?;
    assert_eq!(rows.len(), total);
    let keys: Vec<&String> = rows[1].as_object().ok_or("row")?.keys().collect();
    assert_eq!(
        keys,
        [
            "index",
            "ts",
            "op",
            "author",
            "author_source",
            "agent_harness",
            "agent_model",
            "agent_instance",
            "message"
        ]
    );
    assert_eq!(
        (rows[1]["index"].clone(), rows[1]["agent_harness"].clone()),
        (json!(2), json!("codex"))
    );
    assert_eq!(rows[0]["agent_harness"], Value::Null);

    // Filters keep the stream positions; the summary counts what was returned.
    let codex = json_of(
        &t,
        &[
            "history",
            "gd-t2",
            "--harness",
            "codex",
            "--provenance-summary",
            "--json",
        ],
    )?;
    assert_eq!(codex["count"], marked);
    let indexes: Vec<u64> = codex["compact_history"]
        .as_array()
        .ok_or("rows")?
        .iter()
        .filter_map(|r| r["index"].as_u64())
        .collect();
    assert!(indexes.iter().all(|i| i % 2 == 0), "{indexes:?}");
    assert_eq!(codex["provenance_summary"]["entry_count"], marked);
    assert_eq!(
        codex["provenance_summary"]["agent_harnesses"],
        json!({"codex": marked})
    );
    assert_eq!(
        codex["provenance_summary"]["agent_instances"],
        json!({"i1": marked})
    );
    let by_instance = json_of(
        &t,
        &["history", "gd-t2", "--agent-instance", "i1", "--json"],
    )?;
    assert_eq!(by_instance["count"], marked);
    let none = json_of(&t, &["history", "gd-t2", "--harness", "nope", "--json"])?;
    assert_eq!(
        (none["count"].clone(), none["compact_history"].clone()),
        (json!(0), json!([]))
    );
    // The chain still verifies: provenance keys are outside the item hash.
    let verified = json_of(&t, &["history", "gd-t2", "--verify", "--json"])?;
    assert_eq!(verified["verification"]["ok"], true);
    Ok(())
}

#[test]
fn one_projection_at_a_time() -> TestResult {
    let t = TestTracker::sample()?;
    for args in [
        ["history", "gd-t2", "--provenance", "--full"],
        ["history", "gd-t2", "--provenance", "--compact"],
        ["history", "gd-t2", "--provenance", "--output-include=full"],
    ] {
        let run = t.pm(&args)?;
        assert_eq!((run.stdout.as_str(), run.code), ("", 2), "{args:?}");
    }
    Ok(())
}
