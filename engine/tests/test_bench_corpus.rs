//! The benchmark corpus generator against pm-cli's own output: the fx-100 golden fixture is
//! pm-cli's generator at 100 items, seed 42, scratch shape. Also determinism, chain
//! verification and the 2,243-tier visible counts the calibration gate relies on.

use std::collections::BTreeMap;
use std::error::Error;
use std::path::{Path, PathBuf};

use pm_engine::bench_corpus::{
    CorpusOptions, CorpusReport, MANIFEST_FILE, REPRESENTATIVE, SCRATCH, generate_corpus,
    manifest_json,
};
use pm_engine::history::verify::{DriftStatus, StreamStatus};
use pm_engine::history::verify_tracker_history;
use pm_engine::item::canon::CanonSchema;
use pm_engine::item::codec::parse_item;
use pm_engine::schema;
use pm_engine::settings::SettingsEnv;
use pm_engine::tracker::Tracker;
use serde_json::Value;

type TestResult = Result<(), Box<dyn Error>>;

fn options(items: u64, shape: pm_engine::bench_corpus::CorpusShape) -> CorpusOptions {
    CorpusOptions {
        items,
        seed: 42,
        shape,
        force: false,
        allow_million: false,
    }
}

/// Relative path → file bytes, or `None` for a directory.
type Tree = BTreeMap<PathBuf, Option<Vec<u8>>>;

/// Every file under `root` (relative path → bytes) and every directory (bytes `None`).
fn tree(root: &Path) -> Result<Tree, Box<dyn Error>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let rel = path.strip_prefix(root)?.to_path_buf();
            if path.is_dir() {
                out.insert(rel, None);
                stack.push(path);
            } else {
                out.insert(rel, Some(std::fs::read(&path)?));
            }
        }
    }
    Ok(out)
}

fn generate(dir: &Path, opts: &CorpusOptions) -> Result<CorpusReport, Box<dyn Error>> {
    Ok(generate_corpus(dir, opts)?)
}

#[test]
fn scratch_100_is_byte_identical_to_pm_cli_fx_100() -> TestResult {
    let golden = pm_testkit::extract_tar_gz(&pm_testkit::shared_file(
        "golden/reads/fx-100-tracker.tar.gz",
    ))?;
    let ours = tempfile::tempdir()?;
    let report = generate(ours.path(), &options(100, SCRATCH))?;
    let mut expected = tree(golden.path())?;
    let mut actual = tree(ours.path())?;
    let golden_manifest = expected.remove(Path::new(MANIFEST_FILE)).flatten();
    actual.remove(Path::new(MANIFEST_FILE));
    let expected_names: Vec<&PathBuf> = expected.keys().collect();
    let actual_names: Vec<&PathBuf> = actual.keys().collect();
    assert_eq!(actual_names, expected_names, "same files and folders");
    let differing: Vec<String> = expected
        .iter()
        .filter(|(path, bytes)| actual.get(*path) != Some(bytes))
        .map(|(path, _)| path.display().to_string())
        .collect();
    assert!(differing.is_empty(), "bytes differ: {differing:?}");

    // The manifest: equal apart from run-specific fields and our extra `counts` block.
    let mut golden: Value = serde_json::from_slice(&golden_manifest.ok_or("golden manifest")?)?;
    let mut ours = manifest_json(&report, "T", 0);
    for manifest in [&mut golden, &mut ours] {
        let map = manifest.as_object_mut().ok_or("object")?;
        for key in [
            "generated_at",
            "workspace_root",
            "pm_root",
            "generation_ms",
            "counts",
        ] {
            map.shift_remove(key);
        }
    }
    assert_eq!(ours, golden);
    Ok(())
}

#[test]
fn same_seed_gives_the_same_bytes_and_another_seed_does_not() -> TestResult {
    let (a, b, c) = (
        tempfile::tempdir()?,
        tempfile::tempdir()?,
        tempfile::tempdir()?,
    );
    generate(a.path(), &options(300, REPRESENTATIVE))?;
    generate(b.path(), &options(300, REPRESENTATIVE))?;
    generate(
        c.path(),
        &CorpusOptions {
            seed: 7,
            ..options(300, REPRESENTATIVE)
        },
    )?;
    let strip = |mut t: Tree| {
        t.remove(Path::new(MANIFEST_FILE));
        t
    };
    let (ta, tb, tc) = (
        strip(tree(a.path())?),
        strip(tree(b.path())?),
        strip(tree(c.path())?),
    );
    assert_eq!(ta.len(), tb.len());
    assert!(ta == tb, "same seed, same bytes");
    assert!(ta != tc, "another seed changes the corpus");
    Ok(())
}

#[test]
fn calibration_tier_has_pm_clis_visible_counts() -> TestResult {
    let dir = tempfile::tempdir()?;
    let report = generate(dir.path(), &options(2_243, SCRATCH))?;
    assert_eq!(report.visible_items, 1_998);
    assert_eq!(report.by_type.get("Story"), Some(&245));
    let expected: BTreeMap<String, u64> = [
        ("open", 311),
        ("closed", 1_390),
        ("canceled", 198),
        ("in_progress", 49),
        ("blocked", 50),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(report.visible_by_status, expected);
    // Readers see exactly the visible items.
    let tracker = Tracker::at(dir.path().join(".agents/pm"));
    let loaded = schema::load(&tracker, &SettingsEnv::default())?;
    assert!(loaded.notices.is_empty(), "{:?}", loaded.notices);
    let files = tracker.item_files(&loaded.schema.types)?.files;
    assert_eq!(files.len(), 1_998);
    Ok(())
}

#[test]
fn representative_items_parse_and_every_chain_verifies() -> TestResult {
    let dir = tempfile::tempdir()?;
    let report = generate(dir.path(), &options(500, REPRESENTATIVE))?;
    assert_eq!(
        report.visible_items, 500,
        "representative registers every type"
    );
    assert_eq!(report.profile.history_entry_count, 6_000);
    let tracker = Tracker::at(dir.path().join(".agents/pm"));
    let loaded = schema::load(&tracker, &SettingsEnv::default())?;
    assert!(loaded.notices.is_empty(), "{:?}", loaded.notices);
    let canon = CanonSchema::from_runtime(&loaded.schema);
    let files = tracker.item_files(&loaded.schema.types)?.files;
    assert_eq!(files.len(), 500);
    let report = verify_tracker_history(&tracker, &files, |file| {
        let bytes = std::fs::read(&file.path).map_err(|source| pm_engine::Error::Io {
            path: file.path.clone(),
            source,
        })?;
        parse_item(&bytes, file.format, &file.path, &canon)
    })?;
    let failures: Vec<String> = report
        .items
        .iter()
        .filter(|item| {
            item.stream != StreamStatus::Ok || item.files.iter().any(|f| f.drift != DriftStatus::Ok)
        })
        .map(|item| format!("{}: {:?} {:?}", item.id, item.stream, item.issues))
        .collect();
    assert!(failures.is_empty(), "{failures:?}");
    assert_eq!(report.items.iter().map(|i| i.entries).sum::<usize>(), 6_000);
    Ok(())
}

#[test]
fn refuses_foreign_directories_and_replaces_fixtures_only_with_force() -> TestResult {
    let dir = tempfile::tempdir()?;
    std::fs::File::create(dir.path().join("keep.txt"))?;
    assert!(generate_corpus(dir.path(), &options(2, SCRATCH)).is_err());
    let fixture = tempfile::tempdir()?;
    let report = generate(fixture.path(), &options(2, SCRATCH))?;
    pm_engine::bench_corpus::write_manifest(&report, &manifest_json(&report, "T", 0))?;
    assert!(generate_corpus(fixture.path(), &options(2, SCRATCH)).is_err());
    let forced = CorpusOptions {
        force: true,
        ..options(2, SCRATCH)
    };
    assert_eq!(generate(fixture.path(), &forced)?.visible_items, 2);
    let big = CorpusOptions {
        items: 100_001,
        ..options(2, SCRATCH)
    };
    assert!(generate_corpus(tempfile::tempdir()?.path(), &big).is_err());
    Ok(())
}
