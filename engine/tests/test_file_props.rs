//! Property tests of the tracker file readers on damaged files: an item file (TOON and
//! Markdown), `settings.json` and the schema files, each with forged lines (cut, random bytes,
//! invalid UTF-8, other JSON, conflict markers, BOMs, CRLF). Opening the tracker and every
//! tracker-wide read answer with a result or a structured error, never a panic.

use std::path::{Path, PathBuf};

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

use pm_engine::ErrorCode;
use pm_engine::item::ItemFormat;
use pm_engine::item::codec::{parse_item, serialize_item};
use pm_engine::read::health::tracker_health;
use pm_engine::read::{GetDepth, GetScope, TrackerView, ValidateOptions, get_item, validate};
use pm_engine::settings::SettingsEnv;
use pm_engine::tracker::Tracker;

use crate::history_forgery::{Forgery, forge_stream, forgery};
use crate::history_fuzz::{config, doc};

/// The files a case damages, relative to the tracker root.
const FILES: &[&str] = &[
    "tasks/gd-t1.toon",
    "settings.json",
    "schema/types.json",
    "schema/statuses.json",
    "schema/fields.json",
    "schema/workflows.json",
];

fn sample_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/trackers/sample/.agents/pm")
}

fn structured<T>(what: &str, result: &pm_engine::Result<T>) -> Result<(), TestCaseError> {
    match result {
        Err(err) if err.code() == ErrorCode::Internal => {
            Err(TestCaseError::fail(format!("{what}: internal error {err}")))
        }
        _ => Ok(()),
    }
}

fn damaged(text: &str, forgeries: &[Forgery], crlf: bool) -> Vec<u8> {
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    // Spread the forgeries over the file rather than only its first lines.
    let mut spread = vec![Forgery::Keep; lines.len()];
    for (i, forgery) in forgeries.iter().enumerate() {
        if let Some(slot) = spread.get_mut((i * 7) % lines.len().max(1)) {
            *slot = forgery.clone();
        }
    }
    forge_stream(&lines, &spread, crlf, true)
}

proptest! {
    #![proptest_config(config(512, "proptest-regressions/test_file_props.txt"))]

    /// A damaged serialized item parses or is refused with a structured error.
    #[test]
    fn damaged_item_files_parse_or_are_refused(
        doc in doc(),
        markdown in any::<bool>(),
        forgeries in vec(forgery(), 1..4),
        crlf in any::<bool>(),
    ) {
        let format = if markdown { ItemFormat::Markdown } else { ItemFormat::Toon };
        let Ok(bytes) = serialize_item(&doc, format) else {
            return Ok(());
        };
        let text = String::from_utf8_lossy(&bytes);
        let path = Path::new("tasks/pm-a.toon");
        let schema = pm_engine::item::canon::CanonSchema::default();
        structured("parse", &parse_item(&bytes, format, path, &schema))?;
        let damaged = damaged(&text, &forgeries, crlf);
        structured("parse", &parse_item(&damaged, format, path, &schema))?;
    }
}

proptest! {
    #![proptest_config(config(64, "proptest-regressions/test_file_props.txt"))]

    /// The sample tracker with one damaged file: opening it and the tracker-wide reads answer.
    #[test]
    fn tracker_reads_answer_on_damaged_files(
        file in select(FILES),
        forgeries in vec(forgery(), 1..5),
        crlf in any::<bool>(),
    ) {
        let dir = tempfile::tempdir()?;
        pm_testkit::copy_tree(&sample_root(), dir.path())?;
        let path = dir.path().join(file);
        let text = std::fs::read_to_string(&path)?;
        pm_engine::atomic::write(&path, &damaged(&text, &forgeries, crlf))?;
        let view = TrackerView::open(Tracker::at(dir.path()), &SettingsEnv::default());
        structured("open", &view)?;
        let Ok(view) = view else {
            return Ok(());
        };
        let options = ValidateOptions {
            checks: Vec::new(),
            stale_blockers: true,
            counts: false,
            diagnostic_limit: None,
            generated_at: "2026-09-01T00:00:00.000Z".into(),
            now_ms: 1_788_220_800_000,
        };
        structured("validate", &validate(&view, &options))?;
        structured("health", &tracker_health(&view, 0))?;
        structured("get", &get_item(&view, "gd-t1", GetScope::at(GetDepth::Deep)))?;
        structured("scan", &view.scan())?;
    }
}
