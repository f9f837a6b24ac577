//! Conformance of the item codec on the real pm-cli tracker: every one of its 2,536 items parses,
//! re-serializes to pm's canonical bytes and hashes to pm's recorded item hash.

use pm_engine::hash::{HashEpoch, item_hash};
use pm_engine::item::canon::CanonSchema;
use pm_engine::item::codec::{parse_item, serialize_item};
use pm_engine::item::{ItemDoc, ItemFormat};
use pm_engine::schema;
use pm_engine::settings::SettingsEnv;
use pm_engine::tracker::Tracker;
use std::collections::BTreeSet;
use std::error::Error;
use std::path::Path;

type TestResult = Result<(), Box<dyn Error>>;

const ITEMS: usize = 2_536;
const UNCHANGED: usize = 969;
const CHANGED: usize = 1_567;

/// One row of `hashes.tsv`.
struct Row {
    relative: String,
    hash: String,
}

fn hash_rows(golden: &Path) -> Result<Vec<Row>, Box<dyn Error>> {
    let text = std::fs::read_to_string(golden.join("hashes.tsv"))?;
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("relative_path\titem_hash"));
    lines
        .map(|line| {
            let (relative, hash) = line.split_once('\t').ok_or("row without a tab")?;
            Ok(Row {
                relative: relative.to_string(),
                hash: hash.to_string(),
            })
        })
        .collect()
}

fn parse_file(
    root: &Path,
    relative: &str,
    schema: &CanonSchema,
) -> Result<ItemDoc, Box<dyn Error>> {
    let path = root.join(relative);
    let bytes = std::fs::read(&path)?;
    Ok(parse_item(&bytes, ItemFormat::Toon, &path, schema)?)
}

/// Returns the `after_hash` of the last line of `history/<id>.jsonl`.
fn last_after_hash(tracker: &Path, id: &str) -> Result<String, Box<dyn Error>> {
    let text = std::fs::read_to_string(tracker.join("history").join(format!("{id}.jsonl")))?;
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .ok_or("empty history stream")?;
    let entry: serde_json::Value = serde_json::from_str(last)?;
    Ok(entry["after_hash"]
        .as_str()
        .ok_or("history line without after_hash")?
        .to_string())
}

#[test]
fn corpus_items_serialize_to_pm_canonical_bytes_and_hashes() -> TestResult {
    let corpus = pm_testkit::extract_corpus()?;
    let golden = pm_testkit::extract_canonical_golden()?;
    let tracker = corpus.path().join(".agents/pm");
    let loaded = schema::load(&Tracker::open(&tracker, None)?, &SettingsEnv::default())?;
    let schema = CanonSchema::from_runtime(&loaded.schema);
    assert_eq!(
        loaded.schema.fields.definitions().len(),
        2,
        "escape_class and gate_evidence"
    );
    let rows = hash_rows(golden.path())?;
    assert_eq!(rows.len(), ITEMS);
    let changed: BTreeSet<String> = std::fs::read_to_string(golden.path().join("changed.txt"))?
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    assert_eq!(changed.len(), CHANGED);

    let (mut byte_failures, mut hash_failures, mut history_failures) = (vec![], vec![], vec![]);
    let (mut unchanged_fixed_points, mut golden_fixed_points) = (0, 0);
    for row in &rows {
        let original_bytes = std::fs::read(corpus.path().join(&row.relative))?;
        let golden_bytes = std::fs::read(golden.path().join(&row.relative))?;
        let parsed = parse_file(corpus.path(), &row.relative, &schema)?;
        let written = serialize_item(&parsed, ItemFormat::Toon)?;
        if written != golden_bytes {
            byte_failures.push(row.relative.clone());
        }
        let hash = item_hash(&parsed, HashEpoch::V2);
        if hash != row.hash {
            hash_failures.push(row.relative.clone());
        }
        let id = parsed.id().ok_or("parsed item without id")?;
        if last_after_hash(&tracker, id)? != hash {
            history_failures.push(row.relative.clone());
        }

        let reparsed = parse_file(golden.path(), &row.relative, &schema)?;
        if serialize_item(&reparsed, ItemFormat::Toon)? == golden_bytes
            && item_hash(&reparsed, HashEpoch::V2) == row.hash
        {
            golden_fixed_points += 1;
        }
        if !changed.contains(&row.relative) {
            assert_eq!(
                written, original_bytes,
                "{} is not in changed.txt but is rewritten",
                row.relative
            );
            unchanged_fixed_points += 1;
        }
    }
    assert!(
        byte_failures.is_empty(),
        "{} byte mismatches, first: {:?}",
        byte_failures.len(),
        byte_failures.first()
    );
    assert!(
        hash_failures.is_empty(),
        "{} hash mismatches, first: {:?}",
        hash_failures.len(),
        hash_failures.first()
    );
    assert!(
        history_failures.is_empty(),
        "{} history mismatches, first: {:?}",
        history_failures.len(),
        history_failures.first()
    );
    assert_eq!(golden_fixed_points, ITEMS);
    assert_eq!(unchanged_fixed_points, UNCHANGED);
    assert_eq!(unchanged_fixed_points + changed.len(), ITEMS);
    Ok(())
}
