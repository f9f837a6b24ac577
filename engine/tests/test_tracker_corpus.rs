//! The real pm-cli tracker corpus through discovery, settings, schema and item enumeration.

use pm_engine::schema::{self, UnknownFieldPolicy};
use pm_engine::settings::{GovernancePreset, Settings, SettingsEnv};
use pm_engine::tracker::{ItemFormat, Tracker};
use std::collections::BTreeSet;
use std::error::Error;
use std::path::{Path, PathBuf};

type TestResult = Result<(), Box<dyn Error>>;

/// Every `*.toon`/`*.md` file directly inside a non-history folder of the tracker.
fn corpus_item_files(root: &Path) -> Result<BTreeSet<PathBuf>, Box<dyn Error>> {
    let mut out = BTreeSet::new();
    for dir in std::fs::read_dir(root)? {
        let dir = dir?.path();
        if !dir.is_dir() || dir.file_name().is_some_and(|n| n == "history") {
            continue;
        }
        for file in std::fs::read_dir(&dir)? {
            let path = file?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.ends_with(".toon") || name.ends_with(".md") {
                out.insert(path);
            }
        }
    }
    Ok(out)
}

#[test]
fn corpus_settings_schema_and_items() -> TestResult {
    let corpus = pm_testkit::extract_corpus()?;
    let cwd = corpus.path().join(".agents/pm/stories");
    let tracker = Tracker::open(&cwd, None)?;
    assert_eq!(tracker.root(), corpus.path().join(".agents/pm"));
    assert_eq!(tracker.workspace_root(), corpus.path());

    let loaded = schema::load(&tracker, &SettingsEnv::default())?;
    assert!(loaded.notices.is_empty(), "{:?}", loaded.notices);
    let settings = &loaded.settings;
    assert_eq!(settings.id_prefix(), "pm-");
    assert_eq!(settings.token_length(), 6);
    assert_eq!(settings.item_format(), ItemFormat::Toon);
    // No `governance` key: pm runs the repo under preset `default`.
    assert_eq!(settings.governance().preset, GovernancePreset::Default);
    assert!(settings.governance().force_required_for_stale_lock);
    assert!(settings.record_test_results());
    assert_eq!(settings.definition_of_done().len(), 4);

    let schema = &loaded.schema;
    let story = schema.types.resolve("user-story").ok_or("Story resolves")?;
    assert_eq!(
        (story.name.as_str(), story.folder.as_str()),
        ("Story", "stories")
    );
    assert_eq!(story.aliases, ["agent-story", "story", "user-story"]);
    assert_eq!(story.default_status.as_deref(), Some("open"));
    assert_eq!(schema.types.definitions().len(), 12);
    let fields: Vec<_> = schema
        .fields
        .definitions()
        .iter()
        .map(|f| f.key.as_str())
        .collect();
    assert_eq!(fields, ["escape_class", "gate_evidence"]);
    assert!(
        schema
            .fields
            .get("gate_evidence")
            .is_some_and(|f| f.value_schema.is_some())
    );
    assert_eq!(schema.statuses.definitions().len(), 6);
    assert_eq!(schema.statuses.resolve("In-Progress"), Some("in_progress"));
    assert_eq!(schema.unknown_field_policy, UnknownFieldPolicy::Allow);

    let listed = tracker.item_files(&schema.types)?;
    assert!(listed.notices.is_empty(), "{:?}", listed.notices);
    assert_eq!(listed.files.len(), 2536);
    let enumerated: BTreeSet<PathBuf> = listed.files.iter().map(|f| f.path.clone()).collect();
    assert_eq!(
        enumerated.len(),
        listed.files.len(),
        "no file is listed twice"
    );
    assert_eq!(enumerated, corpus_item_files(tracker.root())?);
    let stories: Vec<_> = listed
        .files
        .iter()
        .filter(|f| f.folder == "stories")
        .collect();
    assert_eq!(stories.len(), 53);
    assert!(
        stories
            .iter()
            .all(|f| f.type_name == "Story" && f.format == ItemFormat::Toon)
    );

    let first = &listed.files[0];
    let located = tracker.locate_item(
        &first.stem.to_uppercase(),
        settings.id_prefix_raw(),
        &schema.types,
    )?;
    assert_eq!(located.path, first.path);
    let bare = first.stem.trim_start_matches("pm-");
    assert_eq!(
        tracker.locate_item(bare, "pm-", &schema.types)?.path,
        first.path
    );
    Ok(())
}

#[test]
fn corpus_settings_sparse_rewrite_is_a_fixed_point() -> TestResult {
    let corpus = pm_testkit::extract_corpus()?;
    let root = corpus.path().join(".agents/pm");
    let original = std::fs::read_to_string(root.join("settings.json"))?;
    let (mut settings, notices) = Settings::read(&root, &SettingsEnv::default())?;
    assert!(notices.is_empty());
    assert_eq!(settings.to_sparse_json(), original);
    settings.set(&["output", "default_format"], "json".into())?;
    let rewritten = settings.to_sparse_json();
    assert_eq!(
        rewritten,
        original.replace(
            "\"default_format\": \"toon\"",
            "\"default_format\": \"json\""
        )
    );
    Ok(())
}

#[test]
fn fx100_full_tree_settings_round_trip() -> TestResult {
    let fixture = pm_testkit::extract_tar_gz(&pm_testkit::shared_file(
        "golden/reads/fx-100-tracker.tar.gz",
    ))?;
    let tracker = Tracker::open(fixture.path(), Some(Path::new(".agents/pm")))?;
    let original = std::fs::read_to_string(tracker.settings_path())?;
    let loaded = schema::load(&tracker, &SettingsEnv::default())?;
    assert!(loaded.notices.is_empty(), "{:?}", loaded.notices);
    assert_eq!(
        loaded.settings.governance().preset,
        GovernancePreset::Minimal
    );
    assert_eq!(loaded.settings.to_full_json(), original);
    assert_eq!(loaded.settings.to_sparse_json(), original);
    let listed = tracker.item_files(&loaded.schema.types)?;
    assert_eq!(listed.files.len(), 100);
    Ok(())
}
