//! The committed sample tracker (`testdata/trackers/sample`) is exactly what this generator
//! builds with the engine (canonical item bytes, hash-chained history), and it validates.
//! `PM_REGENERATE_SAMPLE=1 cargo test -p pm-cli --test runner test_sample_tracker` rewrites it.
#![allow(clippy::disallowed_methods)] // reads PM_REGENERATE_SAMPLE

use std::collections::BTreeMap;
use std::error::Error;
use std::path::Path;

use pm_engine::hash::{HashEpoch, item_hash};
use pm_engine::history::{HistoryEntry, item_patch};
use pm_engine::init::{InitOptions, init_tracker};
use pm_engine::item::canon::{CanonSchema, canonicalize_owned};
use pm_engine::item::codec::serialize_item;
use pm_engine::item::{ItemDoc, ItemFormat};
use serde_json::{Value, json};

use crate::common::{TestTracker, sample_tracker_dir};

type TestResult = Result<(), Box<dyn Error>>;

const AUTHOR: &str = "sample-author";
const TECH: &str = "field-tech";

/// `2026-03-<day>T<hh>:<mm>:00.000Z`.
fn at(day: u32, hour: u32, minute: u32) -> String {
    format!("2026-03-{day:02}T{hour:02}:{minute:02}:00.000Z")
}

/// One item and its history, built mutation by mutation as pm would record them.
struct Item {
    folder: &'static str,
    doc: ItemDoc,
    entries: Vec<HistoryEntry>,
}

impl Item {
    /// The `create` entry: `fields` plus id, timestamps, author and the body.
    fn create(folder: &'static str, id: &str, ts: &str, fields: Value, body: &str) -> Item {
        let mut item = Item {
            folder,
            doc: ItemDoc::empty(),
            entries: Vec::new(),
        };
        let (id, body) = (id.to_string(), body.to_string());
        item.record(ts, AUTHOR, "create", Some(""), move |doc| {
            doc.metadata.insert("id".into(), Value::String(id));
            if let Value::Object(fields) = fields {
                doc.metadata.extend(fields);
            }
            doc.metadata.insert("created_at".into(), json!(ts));
            doc.metadata.insert("author".into(), json!(AUTHOR));
            doc.body = body;
        });
        item
    }

    /// Applies `edit`, bumps `updated_at` to `ts`, canonicalizes and records the entry.
    fn record(
        &mut self,
        ts: &str,
        author: &str,
        op: &str,
        message: Option<&str>,
        edit: impl FnOnce(&mut ItemDoc),
    ) {
        let before = self.doc.clone();
        let mut after = self.doc.clone();
        edit(&mut after);
        after.metadata.insert("updated_at".into(), json!(ts));
        let after = canonicalize_owned(after, &CanonSchema::NONE);
        let mut entry = HistoryEntry::new(
            ts,
            author,
            op,
            item_patch(&before, &after),
            item_hash(&before, HashEpoch::V2),
            item_hash(&after, HashEpoch::V2),
        );
        entry.author_source = Some("asserted".into());
        entry.message = message.map(str::to_string);
        self.entries.push(entry);
        self.doc = after;
    }

    fn set(&mut self, ts: &str, op: &str, message: Option<&str>, key: &str, value: Value) {
        let key = key.to_string();
        self.record(ts, AUTHOR, op, message, move |doc| {
            doc.metadata.insert(key, value);
        });
    }

    fn push_to(&mut self, ts: &str, author: &str, op: &str, key: &str, row: Value) {
        let key = key.to_string();
        self.record(ts, author, op, None, move |doc| {
            let list = doc.metadata.entry(key).or_insert_with(|| json!([]));
            if let Value::Array(rows) = list {
                rows.push(row);
            }
        });
    }

    fn claim(&mut self, ts: &str, who: &str, message: Option<&str>) {
        self.record(ts, who, "claim", message, |doc| {
            doc.metadata.insert("assignee".into(), json!(who));
            doc.metadata.insert("claim_principal".into(), json!(who));
        });
    }

    fn release(&mut self, ts: &str, who: &str) {
        self.record(ts, who, "release", None, |doc| {
            doc.metadata.shift_remove("assignee");
            doc.metadata.shift_remove("claim_principal");
        });
    }

    fn close(&mut self, ts: &str, reason: &str) {
        let reason = reason.to_string();
        self.record(ts, AUTHOR, "close", None, |doc| {
            let m = &mut doc.metadata;
            m.insert("status".into(), json!("closed"));
            m.insert("closed_at".into(), json!(ts));
            m.insert("completed_at".into(), json!(ts));
            m.insert("close_reason".into(), Value::String(reason));
        });
    }
}

fn note(ts: &str, author: &str, text: &str) -> Value {
    json!({"created_at": ts, "author": author, "text": text})
}

/// The twelve items of the sample tracker: a garden-sensor project of our own invention.
fn items() -> Vec<Item> {
    let mut out = Vec::new();

    let mut epic = Item::create(
        "epics",
        "gd-e1",
        &at(2, 9, 0),
        json!({"title": "Garden sensor logging, first season", "type": "Epic",
               "description": "Log soil moisture and air temperature in the raised beds and publish a daily summary volunteers can read.",
               "status": "open", "priority": 1, "tags": ["season-1", "area:firmware"]}),
        "## Scope\n\nThree sensor nodes, one gateway, one summary a day.\n\nOut of scope: controlling the irrigation valves.",
    );
    epic.set(
        &at(3, 10, 0),
        "update",
        Some("First two features are under way"),
        "status",
        json!("in_progress"),
    );
    out.push(epic);

    let mut sampling = Item::create(
        "features",
        "gd-f1",
        &at(2, 9, 10),
        json!({"title": "Soil moisture sampling", "type": "Feature",
               "description": "Each node samples its probe on a fixed timer and sends the reading to the gateway.",
               "status": "open", "priority": 1, "tags": ["sensor"], "parent": "gd-e1",
               "acceptance_criteria": "Every node reports a reading every 10 minutes for 48 hours without a gap"}),
        "",
    );
    sampling.claim(&at(3, 11, 0), TECH, Some("Taking the sampling work"));
    sampling.set(
        &at(3, 11, 5),
        "update",
        None,
        "status",
        json!("in_progress"),
    );
    out.push(sampling);

    out.push(Item::create(
        "features",
        "gd-f2",
        &at(2, 9, 20),
        json!({"title": "Daily summary export", "type": "Feature",
               "description": "Once a day the gateway writes min, max and mean per bed to a file the volunteers open on their phones.",
               "status": "open", "priority": 2, "tags": ["export"], "parent": "gd-e1"}),
        "",
    ));

    let mut calibrate = Item::create(
        "tasks",
        "gd-t1",
        &at(3, 12, 0),
        json!({"title": "Calibrate the moisture probe against dry and saturated soil", "type": "Task",
               "description": "Measure raw values in oven-dried and saturated samples and store them as the two reference points.",
               "status": "open", "priority": 1, "tags": ["sensor", "calibration"], "parent": "gd-f1",
               "estimated_minutes": 60,
               "files": [{"path": "firmware/probe/calibration.h", "scope": "project", "note": "dry and wet reference constants"}]}),
        "",
    );
    calibrate.set(&at(4, 9, 0), "update", None, "status", json!("in_progress"));
    calibrate.close(
        &at(5, 16, 0),
        "Reference values measured on two soil samples and committed",
    );
    out.push(calibrate);

    let mut debounce = Item::create(
        "tasks",
        "gd-t2",
        &at(4, 10, 0),
        json!({"title": "Debounce the sampling timer", "type": "Task",
               "description": "The timer interrupt fires twice after a brown-out; ignore a second tick within one second.",
               "status": "open", "priority": 2, "tags": ["sensor"], "parent": "gd-f1", "estimated_minutes": 45}),
        "",
    );
    debounce.claim(
        &at(4, 10, 5),
        TECH,
        Some("Picking this up after calibration"),
    );
    debounce.release(&at(4, 17, 0), TECH);
    debounce.claim(&at(5, 9, 0), TECH, Some("Back on it"));
    debounce.set(&at(5, 9, 5), "update", None, "status", json!("in_progress"));
    out.push(debounce);

    out.push(Item::create(
        "tasks",
        "gd-t3",
        &at(3, 14, 0),
        json!({"title": "Write the CSV summary writer", "type": "Task",
               "description": "One row per bed and day: date, bed, min, max, mean, sample count.",
               "status": "open", "priority": 2, "tags": ["export"], "parent": "gd-f2",
               "dependencies": [{"id": "gd-t1", "kind": "related", "created_at": at(3, 14, 0), "author": AUTHOR}],
               "tests": [{"command": "cargo test -p summary", "scope": "project", "timeout_seconds": 120}]}),
        "",
    ));

    let mut wiring = Item::create(
        "tasks",
        "gd-t4",
        &at(3, 15, 0),
        json!({"title": "Document the sensor wiring", "type": "Task",
               "description": "Pin map and cable colours for the three nodes.",
               "status": "open", "priority": 3, "tags": ["docs"], "parent": "gd-f2",
               "docs": [{"path": "docs/wiring.md", "scope": "project", "note": "pin map for the three nodes"}]}),
        "",
    );
    let ts = at(4, 16, 0);
    wiring.push_to(
        &ts,
        TECH,
        "note_add",
        "notes",
        note(
            &ts,
            TECH,
            "Node 3 uses the spare header because pin 4 is damaged",
        ),
    );
    out.push(wiring);

    let mut spike = Item::create(
        "issues",
        "gd-i1",
        &at(4, 8, 0),
        json!({"title": "Readings spike when the pump starts", "type": "Issue",
               "description": "Moisture jumps by about 30 points for one sample whenever the irrigation pump switches on.",
               "status": "open", "priority": 1, "tags": ["bug", "sensor"], "parent": "gd-f1", "severity": "medium"}),
        "",
    );
    let ts = at(4, 8, 30);
    spike.push_to(
        &ts,
        TECH,
        "comment_add",
        "comments",
        note(
            &ts,
            TECH,
            "Seen on node 2 at 07:00 and 19:00, both pump cycles",
        ),
    );
    spike.set(
        &at(4, 9, 30),
        "update",
        Some("Raised: it corrupts the daily mean"),
        "priority",
        json!(0),
    );
    out.push(spike);

    let mut drift = Item::create(
        "issues",
        "gd-i2",
        &at(5, 10, 0),
        json!({"title": "Clock drifts after a week offline", "type": "Issue",
               "description": "Node clocks run about 40 seconds fast per week when the gateway is out of reach.",
               "status": "open", "priority": 2, "tags": ["bug", "time"], "severity": "low"}),
        "",
    );
    let ts = at(5, 10, 20);
    drift.push_to(
        &ts,
        AUTHOR,
        "note_add",
        "notes",
        note(&ts, AUTHOR, "Resync on every gateway contact may be enough"),
    );
    out.push(drift);

    out.push(Item::create(
        "decisions",
        "gd-d1",
        &at(2, 11, 0),
        json!({"title": "Keep readings as CSV files on the gateway", "type": "Decision",
               "description": "Plain files that volunteers can copy without extra software.",
               "status": "open", "priority": 2, "tags": ["storage"], "parent": "gd-e1"}),
        "## Context\n\nThe gateway is a small board with an SD card.\n\n## Decision\n\nAppend one CSV file per day; no database.",
    ));

    let mut trial = Item::create(
        "milestones",
        "gd-m1",
        &at(2, 11, 30),
        json!({"title": "Field trial in the north beds", "type": "Milestone",
               "description": "All three nodes run unattended for two weeks.",
               "status": "open", "priority": 1, "tags": ["season-1"], "parent": "gd-e1",
               "deadline": "2026-04-15T00:00:00.000Z"}),
        "",
    );
    trial.set(
        &at(6, 9, 0),
        "update",
        Some("Moved after the frost warning"),
        "deadline",
        json!("2026-04-22T00:00:00.000Z"),
    );
    out.push(trial);

    out.push(Item::create(
        "chores",
        "gd-c1",
        &at(2, 12, 0),
        json!({"title": "Pin the firmware toolchain version", "type": "Chore",
               "description": "Record the compiler version in the repository so builds are repeatable.",
               "status": "open", "priority": 3, "tags": ["tooling"]}),
        "",
    ));
    out
}

/// Builds the sample workspace under `workspace` (tracker at `.agents/pm`).
fn generate(workspace: &Path) -> Result<(), Box<dyn Error>> {
    let root = workspace.join(".agents/pm");
    init_tracker(
        &root,
        &InitOptions {
            id_prefix: Some("gd-".into()),
            author_default: Some(AUTHOR.into()),
            ..InitOptions::default()
        },
    )?;
    for item in items() {
        let id = item.doc.id().ok_or("item without id")?.to_string();
        let path = root.join(item.folder).join(ItemFormat::Toon.file_name(&id));
        pm_engine::atomic::write(&path, &serialize_item(&item.doc, ItemFormat::Toon)?)?;
        let mut lines = String::new();
        for entry in &item.entries {
            lines.push_str(&entry.to_line());
            lines.push('\n');
        }
        pm_engine::atomic::write(&root.join(format!("history/{id}.jsonl")), lines.as_bytes())?;
    }
    Ok(())
}

/// Every file under `dir` (relative path → bytes); empty directories are not files (git does
/// not keep them), and `runtime/` is derived state (git ignores it; the README's sample command
/// creates an index there).
fn files(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, Box<dyn Error>> {
    fn walk(
        base: &Path,
        dir: &Path,
        out: &mut BTreeMap<String, Vec<u8>>,
    ) -> Result<(), Box<dyn Error>> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() && path.file_name().is_some_and(|n| n == "runtime") {
                continue;
            }
            if path.is_dir() {
                walk(base, &path, out)?;
            } else {
                let rel = path
                    .strip_prefix(base)?
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, std::fs::read(&path)?);
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    if dir.is_dir() {
        walk(dir, dir, &mut out)?;
    }
    Ok(out)
}

#[test]
fn committed_sample_equals_the_generator_output() -> TestResult {
    let tmp = tempfile::tempdir()?;
    generate(tmp.path())?;
    let generated = files(tmp.path())?;
    let committed_dir = sample_tracker_dir();
    if std::env::var_os("PM_REGENERATE_SAMPLE").is_some_and(|v| v == "1") {
        if committed_dir.exists() {
            std::fs::remove_dir_all(&committed_dir)?;
        }
        for (rel, bytes) in &generated {
            pm_engine::atomic::write(&committed_dir.join(rel), bytes)?;
        }
    }
    let committed = files(&committed_dir)?;
    let names = |m: &BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&committed),
        names(&generated),
        "file list differs; regenerate with PM_REGENERATE_SAMPLE=1 (docs/testing.md)"
    );
    for (rel, bytes) in &generated {
        assert!(
            committed.get(rel) == Some(bytes),
            "{rel} differs from the generator output; regenerate with PM_REGENERATE_SAMPLE=1"
        );
    }
    assert_eq!(
        generated.keys().filter(|k| k.ends_with(".toon")).count(),
        12
    );
    Ok(())
}

#[test]
fn generator_is_deterministic() -> TestResult {
    let (a, b) = (tempfile::tempdir()?, tempfile::tempdir()?);
    generate(a.path())?;
    generate(b.path())?;
    assert_eq!(files(a.path())?, files(b.path())?);
    Ok(())
}

#[test]
fn sample_tracker_passes_history_drift_validation() -> TestResult {
    let t = TestTracker::sample()?;
    let run = t.pm(&[
        "validate",
        "--check-history-drift",
        "--strict-exit",
        "--json",
    ])?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0), "{}", run.stdout);
    let report: Value = run.json()?;
    assert_eq!(report["ok"], true);
    assert_eq!(report["has_warnings"], false);
    let details = &report["checks"][0]["details"];
    assert_eq!(details["checked_items"], 12);
    assert_eq!(details["streams_checked"], 12);
    assert_eq!(details["drifted_items_count"], 0);
    Ok(())
}
