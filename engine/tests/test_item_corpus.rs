//! Conformance of the item codec on the real pm-cli tracker: every one of its 2,536 items parses,
//! re-serializes to pm's canonical bytes and hashes to pm's recorded item hash.

use pm_engine::hash::{HashEpoch, item_hash};
use pm_engine::item::canon::CanonSchema;
use pm_engine::item::codec::{parse_item, serialize_item};
use pm_engine::item::{ItemDoc, ItemFormat};
use pm_engine::schema;
use pm_engine::settings::SettingsEnv;
use pm_engine::tracker::Tracker;
use rayon::prelude::*;
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

/// What one corpus item gave.
struct RowCheck {
    bytes_match: bool,
    hash_matches: bool,
    history_matches: bool,
    golden_fixed_point: bool,
    in_changed: bool,
    original_fixed_point: bool,
}

/// Parses, serializes and hashes one item of the corpus and its golden rewrite.
fn check_row(
    row: &Row,
    dirs: (&Path, &Path, &Path),
    schema: &CanonSchema,
    changed: &BTreeSet<String>,
) -> Result<RowCheck, Box<dyn Error>> {
    let (corpus, golden, tracker) = dirs;
    let original_bytes = std::fs::read(corpus.join(&row.relative))?;
    let golden_bytes = std::fs::read(golden.join(&row.relative))?;
    let parsed = parse_file(corpus, &row.relative, schema)?;
    let written = serialize_item(&parsed, ItemFormat::Toon)?;
    let hash = item_hash(&parsed, HashEpoch::V2);
    let id = parsed.id().ok_or("parsed item without id")?;
    let reparsed = parse_file(golden, &row.relative, schema)?;
    Ok(RowCheck {
        bytes_match: written == golden_bytes,
        hash_matches: hash == row.hash,
        history_matches: last_after_hash(tracker, id)? == hash,
        golden_fixed_point: serialize_item(&reparsed, ItemFormat::Toon)? == golden_bytes
            && item_hash(&reparsed, HashEpoch::V2) == row.hash,
        in_changed: changed.contains(&row.relative),
        original_fixed_point: written == original_bytes,
    })
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

    let dirs = (corpus.path(), golden.path(), tracker.as_path());
    let checks: Vec<RowCheck> = rows
        .par_iter()
        .map(|row| {
            check_row(row, dirs, &schema, &changed).map_err(|e| format!("{}: {e}", row.relative))
        })
        .collect::<Result<_, String>>()?;
    let failing = |pass: fn(&RowCheck) -> bool| -> Vec<&str> {
        rows.iter()
            .zip(&checks)
            .filter(|(_, c)| !pass(c))
            .map(|(r, _)| r.relative.as_str())
            .collect()
    };
    for (what, pass) in [
        (
            "canonical bytes",
            (|c| c.bytes_match) as fn(&RowCheck) -> bool,
        ),
        ("hashes.tsv hash", |c| c.hash_matches),
        ("last history after_hash", |c| c.history_matches),
        ("golden fixed point", |c| c.golden_fixed_point),
        ("unchanged original fixed point", |c| {
            c.in_changed || c.original_fixed_point
        }),
        ("changed.txt entry really changed", |c| {
            !c.in_changed || !c.original_fixed_point
        }),
    ] {
        let failures = failing(pass);
        assert!(
            failures.is_empty(),
            "{what}: {} failures, first: {:?}",
            failures.len(),
            failures.first()
        );
    }
    let unchanged = checks.iter().filter(|c| c.original_fixed_point).count();
    assert_eq!(unchanged, UNCHANGED);
    assert_eq!(
        checks.iter().filter(|c| c.golden_fixed_point).count(),
        ITEMS
    );
    assert_eq!(unchanged + changed.len(), ITEMS);
    Ok(())
}
