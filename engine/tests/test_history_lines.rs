//! Property tests of every history reader on torn and forged lines (truncated at any byte,
//! random bytes, invalid UTF-8, JSON that is not an entry, wrong hash fields, repeated keys,
//! conflict markers, BOMs, CRLF): the stream readers return entries or a structured error and
//! agree with their fast paths, and the tracker-wide reads (verification, validate, health,
//! history views, point-in-time reads) answer without a panic or an internal error.

use std::path::{Path, PathBuf};

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;

use pm_engine::ErrorCode;
use pm_engine::history::verify::verify_tracker_history;
use pm_engine::history::{HistoryEntry, HistoryPoint, parse_stream, read_stream};
use pm_engine::json::to_compact;
use pm_engine::read::health::tracker_health;
use pm_engine::read::{
    GetDepth, GetScope, HistoryMode, HistoryOptions, ProvenanceFilter, TrackerView,
    ValidateOptions, get_item, get_item_at, history_view, validate,
};
use pm_engine::settings::SettingsEnv;
use pm_engine::tracker::Tracker;

use crate::history_forgery::{check_stream, entry_object, forge_stream, forgery, is_valid_entry};
use crate::history_fuzz::{chain, check_replay, config};

fn lines_of(entries: &[HistoryEntry]) -> Vec<String> {
    entries.iter().map(HistoryEntry::to_line).collect()
}

proptest! {
    #![proptest_config(config(1024, "proptest-regressions/test_history_lines.txt"))]

    /// A stream with forged lines reads as entries or as a structured error, and whatever it
    /// reads replays without a panic.
    #[test]
    fn forged_streams_read_or_are_refused(
        chain in chain(),
        forgeries in vec(forgery(), 0..8),
        crlf in any::<bool>(),
        final_newline in any::<bool>(),
        bom in any::<bool>(),
    ) {
        let mut bytes = forge_stream(&lines_of(&chain.entries), &forgeries, crlf, final_newline);
        if bom {
            bytes.splice(0..0, *b"\xef\xbb\xbf");
        }
        if let Some(read) = check_stream(&bytes) {
            check_replay(&read.entries);
        }
    }

    /// A valid stream cut at any byte reads as its complete lines, the cut line as a torn tail
    /// (or as an entry when only the newline was cut).
    #[test]
    fn torn_streams_keep_their_complete_lines(chain in chain(), cut in any::<Index>(), crlf in any::<bool>()) {
        let bytes = forge_stream(&lines_of(&chain.entries), &[], crlf, true);
        let full = check_stream(&bytes).ok_or_else(|| TestCaseError::fail("the untouched stream must read"))?;
        let cut = cut.index(bytes.len() + 1);
        let torn = check_stream(&bytes[..cut]).ok_or_else(|| TestCaseError::fail("a torn stream must read"))?;
        let kept = torn.entries.len();
        prop_assert_eq!(&torn.entries[..], &full.entries[..kept]);
        // The cut line is kept when only its line break was cut, and torn otherwise.
        let complete = bytes[..cut].iter().filter(|b| **b == b'\n').count();
        let partial = cut > 0 && bytes[cut - 1] != b'\n';
        let ends_a_line = full.spans.iter().any(|s| s.end == cut || s.end + 1 == cut);
        prop_assert_eq!(kept, complete + usize::from(partial && ends_a_line));
        prop_assert_eq!(torn.torn_tail.is_some(), partial && !ends_a_line);
        check_replay(&torn.entries);
    }
}

proptest! {
    #![proptest_config(config(256, "proptest-regressions/test_history_lines.txt"))]

    /// A line holding any entry-like object reads exactly when the line format allows it, the
    /// same from bytes as from the parsed value; an entry that reads is re-serialised to a
    /// line that reads back as the same entry, and that line is a fixed point.
    #[test]
    fn entry_lines_read_by_the_rules_and_round_trip(object in entry_object()) {
        // The line as pm writes it (numbers past 2^53 rounded as in JavaScript).
        let line = to_compact(&object);
        let written: serde_json::Value = serde_json::from_str(&line)?;
        let direct = HistoryEntry::from_value(written);
        prop_assert_eq!(direct.is_ok(), is_valid_entry(&object), "{} {:?}", line, direct);
        let read = check_stream(format!("{line}\n").as_bytes());
        match direct {
            Ok(entry) => {
                let read = read.ok_or_else(|| TestCaseError::fail(format!("refused: {line}")))?;
                prop_assert_eq!(&read.entries[..], std::slice::from_ref(&entry));
                let again = entry.to_line();
                let reread = check_stream(format!("{again}\n").as_bytes())
                    .ok_or_else(|| TestCaseError::fail(format!("re-serialised line refused: {again}")))?;
                prop_assert_eq!(&reread.entries[..], std::slice::from_ref(&entry), "{}", again);
                prop_assert_eq!(reread.entries[0].to_line(), again);
            }
            Err(_) => prop_assert!(read.is_none(), "read an invalid entry: {}", line),
        }
    }
}

fn sample_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/trackers/sample/.agents/pm")
}

/// Fails on an internal error: every failure of a read must be a structured one.
fn structured<T>(what: &str, result: &pm_engine::Result<T>) -> Result<(), TestCaseError> {
    match result {
        Err(err) if err.code() == ErrorCode::Internal => {
            Err(TestCaseError::fail(format!("{what}: internal error {err}")))
        }
        _ => Ok(()),
    }
}

proptest! {
    #![proptest_config(config(64, "proptest-regressions/test_history_lines.txt"))]

    /// The sample tracker with a forged stream for an item (`gd-t1`), a forged stream without
    /// an item (`pm-zz`) and a forged workspace stream: every tracker-wide read answers.
    #[test]
    fn tracker_reads_answer_on_forged_streams(
        item_forgeries in vec(forgery(), 0..10),
        orphan in chain(),
        orphan_forgeries in vec(forgery(), 0..6),
        workspace_forgeries in vec(forgery(), 0..6),
        crlf in any::<bool>(),
    ) {
        let dir = tempfile::tempdir()?;
        pm_testkit::copy_tree(&sample_root(), dir.path())?;
        let history = dir.path().join("history");
        let item_path = history.join("gd-t1.jsonl");
        let real = std::fs::read_to_string(&item_path)?;
        let real: Vec<String> = real.lines().map(str::to_string).collect();
        let item_bytes = forge_stream(&real, &item_forgeries, crlf, true);
        let orphan_lines = lines_of(&orphan.entries);
        pm_engine::atomic::write(&item_path, &item_bytes)?;
        pm_engine::atomic::write(
            &history.join("pm-zz.jsonl"),
            &forge_stream(&orphan_lines, &orphan_forgeries, crlf, true),
        )?;
        pm_engine::atomic::write(
            &history.join("_workspace.jsonl"),
            &forge_stream(&orphan_lines, &workspace_forgeries, crlf, false),
        )?;

        // The file reader reads what the byte parser reads.
        let from_file = read_stream(&item_path, "gd-t1");
        let from_bytes = parse_stream(&item_bytes, "gd-t1", &item_path);
        prop_assert_eq!(format!("{from_file:?}"), format!("{from_bytes:?}"));

        let view = TrackerView::open(Tracker::at(dir.path()), &SettingsEnv::default())?;
        let files = view.item_files()?.files;
        structured("verify", &verify_tracker_history(view.tracker(), &files, |f| view.load(f)))?;
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
        for id in ["gd-t1", "pm-zz"] {
            for (mode, limit) in [
                (HistoryMode::Compact, None),
                (HistoryMode::Provenance, Some(2)),
                (HistoryMode::Full, Some(1)),
            ] {
                let options = HistoryOptions {
                    mode,
                    limit,
                    verify: true,
                    diff: true,
                    field: None,
                    provenance: ProvenanceFilter::default(),
                    provenance_summary: true,
                };
                structured("history", &history_view(&view, id, &options))?;
            }
            let scope = GetScope::at(GetDepth::Deep);
            structured("get", &get_item(&view, id, scope))?;
            for version in 0..real.len().max(orphan_lines.len()) + 2 {
                let at = get_item_at(&view, id, scope, HistoryPoint::Version(version));
                structured("get --at", &at)?;
            }
            let at = get_item_at(&view, id, scope, HistoryPoint::At(i64::MAX));
            structured("get --at", &at)?;
        }
    }
}
