//! Read paths over the real pm-cli corpus: every item's `get` metadata equals, key for key and
//! in order, what pm printed for it in `list --all --full` (reads golden), and every item hash
//! `get` reports equals its stream's last `after_hash`.

use std::collections::BTreeMap;
use std::error::Error;
use std::io::Read;

use pm_engine::read::get::{current_item_hash, project_item};
use pm_engine::read::{GetDepth, TrackerView};
use pm_engine::settings::SettingsEnv;
use pm_engine::tracker::Tracker;
use rayon::prelude::*;
use serde_json::{Map, Value};

type TestResult = Result<(), Box<dyn Error>>;

/// Keys `list --full` moves or `get` replaces by counts: compared separately.
const COLLECTIONS: [&str; 9] = [
    "comments",
    "notes",
    "learnings",
    "files",
    "tests",
    "test_runs",
    "docs",
    "reminders",
    "events",
];

fn without(map: &Map<String, Value>, drop: &[&str]) -> Vec<(String, Value)> {
    map.iter()
        .filter(|(k, _)| !drop.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[test]
fn get_metadata_matches_pm_for_every_corpus_item() -> TestResult {
    let corpus = pm_testkit::shared_corpus()?;
    let view = TrackerView::open(
        Tracker::at(corpus.join(".agents/pm")),
        &SettingsEnv::default(),
    )?;
    let mut text = String::new();
    let golden = pm_testkit::shared_file("golden/reads/self-tracker/list-all-full.json.gz");
    flate2::read::GzDecoder::new(std::fs::File::open(golden)?).read_to_string(&mut text)?;
    let golden: Value = serde_json::from_str(&text)?;
    let pm_items: BTreeMap<&str, &Map<String, Value>> = golden["items"]
        .as_array()
        .ok_or("items")?
        .iter()
        .filter_map(|item| Some((item["id"].as_str()?, item.as_object()?)))
        .collect();
    let runtime: Vec<&str> = view
        .schema()
        .fields
        .definitions()
        .iter()
        .map(|f| f.metadata_key.as_str())
        .collect();
    let scanned = view.scan()?;
    assert_eq!(scanned.len(), 2_536);
    let failures: Vec<String> = scanned
        .par_iter()
        .filter_map(|item| {
            let doc = match &item.doc {
                Ok(doc) => doc,
                Err(err) => return Some(format!("{}: {err}", item.file.path.display())),
            };
            let id = doc.id()?;
            let Some(pm) = pm_items.get(id) else {
                return Some(format!("{id}: not in the golden"));
            };
            let ours = project_item(doc, GetDepth::Standard, false, &runtime);
            let mut drop = COLLECTIONS.to_vec();
            drop.extend(["notes_count", "tests_count", "collection_counts", "body"]);
            if without(&ours, &drop) != without(pm, &COLLECTIONS) {
                return Some(format!("{id}: metadata or key order differs"));
            }
            if ours.get("test_runs") != pm.get("test_runs") {
                return Some(format!("{id}: test_runs differ"));
            }
            let stream = match view.stream(id) {
                Ok(stream) => stream,
                Err(err) => return Some(format!("{id}: {err}")),
            };
            let last = stream.entries.last()?.after_hash.clone();
            (current_item_hash(doc, &stream.entries) != last)
                .then(|| format!("{id}: item hash differs from the last after_hash"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} items differ: {failures:#?}",
        failures.len()
    );
    Ok(())
}
