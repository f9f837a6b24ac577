use std::path::{Path, PathBuf};

use serde_json::json;

use super::*;
use crate::hash::{EMPTY_DOC_HASH, item_hash};
use crate::history::{item_patch, verify_chain};

type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

fn doc(fields: serde_json::Value) -> ItemDoc {
    let mut d = ItemDoc::empty();
    d.metadata.insert("id".into(), json!("pm-a"));
    d.metadata.insert("title".into(), json!("one"));
    d.metadata.insert("tags".into(), json!([]));
    for (k, v) in fields.as_object().cloned().unwrap_or_default() {
        d.metadata.insert(k, v);
    }
    d
}

fn hash(d: &ItemDoc) -> String {
    if d.is_empty() {
        EMPTY_DOC_HASH.to_string()
    } else {
        item_hash(d, HashEpoch::V2)
    }
}

fn entry(ts: &str, before: &ItemDoc, after: &ItemDoc) -> HistoryEntry {
    let mut e = HistoryEntry::new(
        ts,
        "me",
        "update",
        item_patch(before, after),
        hash(before),
        hash(after),
    );
    e.item_hash_version = Some(2);
    e
}

fn text(entries: &[HistoryEntry]) -> String {
    entries
        .iter()
        .map(|e| format!("{}\n", e.to_line()))
        .collect()
}

fn parse(text: &str) -> Vec<HistoryEntry> {
    parse_stream(text.as_bytes(), "pm-a", Path::new("pm-a.jsonl"))
        .expect("merged stream parses")
        .entries
}

/// A base with one create, ours changing `priority` twice, theirs changing `title` in between.
fn diverged() -> (String, String, String) {
    let a = doc(json!({}));
    let base = vec![entry("2026-01-01T00:00:00.000Z", &ItemDoc::empty(), &a)];
    let o1 = doc(json!({"priority": 1}));
    let o2 = doc(json!({"priority": 0}));
    let mut ours = base.clone();
    ours.push(entry("2026-01-01T00:01:00.000Z", &a, &o1));
    ours.push(entry("2026-01-01T00:03:00.000Z", &o1, &o2));
    let t1 = doc(json!({"title": "two"}));
    let mut theirs = base.clone();
    theirs.push(entry("2026-01-01T00:02:00.000Z", &a, &t1));
    (text(&base), text(&ours), text(&theirs))
}

#[test]
fn union_of_tails_verifies_and_replays_both_sides() -> TestResult {
    let (base, ours, theirs) = diverged();
    let merged = merge_streams(
        base.as_bytes(),
        ours.as_bytes(),
        theirs.as_bytes(),
        Path::new("pm-a.jsonl"),
    )?;
    assert_eq!(merged.report.strategy, StreamStrategy::UnionReanchor);
    assert_eq!(
        (
            merged.report.common_entries,
            merged.report.entries_from_ours,
            merged.report.entries_from_theirs,
            merged.report.entries_total
        ),
        (1, 2, 1, 4)
    );
    let entries = parse(&merged.text);
    let ts: Vec<&str> = entries.iter().map(|e| &e.ts[14..16]).collect();
    assert_eq!(ts, ["00", "01", "02", "03"]);
    let report = verify_chain(&entries);
    assert!(report.is_ok(), "{:?}", report.issues);
    assert_eq!(report.doc, doc(json!({"title": "two", "priority": 0})));
    // The prefix line is kept byte for byte.
    assert_eq!(merged.text.lines().next(), base.lines().next());
    assert_eq!(merged.patches_repaired, 0);
    Ok(())
}

#[test]
fn the_merge_is_the_same_either_way_round_up_to_tie_order() -> TestResult {
    let (base, ours, theirs) = diverged();
    let p = Path::new("pm-a.jsonl");
    let a = merge_streams(base.as_bytes(), ours.as_bytes(), theirs.as_bytes(), p)?;
    let b = merge_streams(base.as_bytes(), theirs.as_bytes(), ours.as_bytes(), p)?;
    assert_eq!(a.text, b.text);
    Ok(())
}

#[test]
fn one_sided_changes_fast_forward_and_equal_sides_are_identical() -> TestResult {
    let (base, ours, _) = diverged();
    let p = Path::new("pm-a.jsonl");
    let ff = merge_streams(base.as_bytes(), ours.as_bytes(), base.as_bytes(), p)?;
    assert_eq!(ff.report.strategy, StreamStrategy::FastForwardOurs);
    assert_eq!(ff.text, ours);
    let ft = merge_streams(base.as_bytes(), base.as_bytes(), ours.as_bytes(), p)?;
    assert_eq!(ft.report.strategy, StreamStrategy::FastForwardTheirs);
    assert_eq!(ft.text, ours);
    let same = merge_streams(base.as_bytes(), ours.as_bytes(), ours.as_bytes(), p)?;
    assert_eq!(same.report.strategy, StreamStrategy::Identical);
    assert!(!same.report.reanchored);
    Ok(())
}

#[test]
fn an_entry_on_both_tails_is_kept_once() -> TestResult {
    let (base, ours, theirs) = diverged();
    let shared_line = ours.lines().nth(1).expect("ours has a tail");
    let theirs = format!("{theirs}{shared_line}\n");
    let merged = merge_streams(
        base.as_bytes(),
        ours.as_bytes(),
        theirs.as_bytes(),
        Path::new("pm-a.jsonl"),
    )?;
    assert_eq!(merged.report.entries_from_theirs, 1);
    assert_eq!(parse(&merged.text).len(), 4);
    Ok(())
}

#[test]
fn a_patch_that_no_longer_applies_is_rewritten_and_the_chain_verifies() -> TestResult {
    // Both sides add the first comment: replayed in order, the second `add` of the array
    // replaces it (it still applies); a `replace` of a removed key does not.
    let a = doc(json!({"estimate": 3}));
    let base = vec![entry("2026-01-01T00:00:00.000Z", &ItemDoc::empty(), &a)];
    let gone = doc(json!({}));
    let mut ours = base.clone();
    ours.push(entry("2026-01-01T00:01:00.000Z", &a, &gone));
    let changed = doc(json!({"estimate": 5}));
    let mut theirs = base.clone();
    theirs.push(entry("2026-01-01T00:02:00.000Z", &a, &changed));
    let merged = merge_streams(
        text(&base).as_bytes(),
        text(&ours).as_bytes(),
        text(&theirs).as_bytes(),
        Path::new("pm-a.jsonl"),
    )?;
    assert_eq!(merged.patches_repaired, 1);
    let report = verify_chain(&parse(&merged.text));
    assert!(report.is_ok(), "{:?}", report.issues);
    assert_eq!(report.doc, changed);
    Ok(())
}

#[test]
fn a_delete_against_an_edit_stays_last_and_empties_the_document() -> TestResult {
    // Theirs deletes the item at 00:01; ours edits it later (00:02, 00:03) and adds a field the
    // delete's patch never removed. Either way round, the merged stream ends with the delete
    // and at the empty document.
    let a = doc(json!({}));
    let base = vec![entry("2026-01-01T00:00:00.000Z", &ItemDoc::empty(), &a)];
    let mut deleted = base.clone();
    let mut delete = entry("2026-01-01T00:01:00.000Z", &a, &ItemDoc::empty());
    delete.op = DELETE_OP.into();
    deleted.push(delete);
    let e1 = doc(json!({"priority": 0}));
    let e2 = doc(json!({"priority": 0, "estimate": 5}));
    let mut edited = base.clone();
    edited.push(entry("2026-01-01T00:02:00.000Z", &a, &e1));
    edited.push(entry("2026-01-01T00:03:00.000Z", &e1, &e2));
    let p = Path::new("pm-a.jsonl");
    let (base, deleted, edited) = (text(&base), text(&deleted), text(&edited));
    for (ours, theirs) in [(&edited, &deleted), (&deleted, &edited)] {
        let merged = merge_streams(base.as_bytes(), ours.as_bytes(), theirs.as_bytes(), p)?;
        let entries = parse(&merged.text);
        let ops: Vec<&str> = entries.iter().map(|e| e.op.as_str()).collect();
        assert_eq!(ops, ["update", "update", "update", DELETE_OP]);
        let report = verify_chain(&entries);
        assert!(report.is_ok(), "{:?}", report.issues);
        assert!(report.doc.is_empty(), "{:?}", report.doc);
        assert_eq!(entries[3].after_hash, EMPTY_DOC_HASH);
        assert_eq!(merged.patches_repaired, 1);
    }
    Ok(())
}

#[test]
fn conflict_markers_in_a_side_are_refused() {
    let (base, ours, _) = diverged();
    let theirs = format!("<<<<<<< HEAD\n{ours}=======\n>>>>>>> b\n");
    let err = merge_streams(
        base.as_bytes(),
        ours.as_bytes(),
        theirs.as_bytes(),
        Path::new("pm-a.jsonl"),
    )
    .expect_err("markers refused");
    assert_eq!(
        err.code().as_str(),
        "history_merge_conflict_markers_detected"
    );
}

fn transcript() -> Option<PathBuf> {
    pm_testkit::shared_extraction("golden/write-transcript.tar.gz")
        .ok()
        .map(|d| d.join("write-transcript/snapshots"))
}

#[test]
fn the_write_transcript_merges_match_pm_byte_for_byte() -> TestResult {
    let Some(snaps) = transcript() else {
        return Err("write transcript missing".into());
    };
    // (base, ours, theirs, merged) snapshots of the two git merges (steps 112 and 124).
    let cases = [
        (
            "104-git-commit",
            "111-git-commit",
            "107-git-commit",
            "112-git-merge",
            "pm-f001",
        ),
        (
            "117-git-commit",
            "123-git-commit",
            "120-git-commit",
            "124-git-merge",
            "pm-e001",
        ),
    ];
    for (base, ours, theirs, merged, id) in cases {
        let read = |step: &str| {
            std::fs::read(
                snaps
                    .join(step)
                    .join(format!(".agents/pm/history/{id}.jsonl")),
            )
        };
        let out = merge_streams(
            &read(base)?,
            &read(ours)?,
            &read(theirs)?,
            Path::new("pm.jsonl"),
        )?;
        assert_eq!(out.text.as_bytes(), read(merged)?.as_slice(), "{merged}");
        assert!(verify_chain(&parse(&out.text)).is_ok());
    }
    Ok(())
}

#[test]
fn spliced_hashes_match_a_re_encoded_line_and_odd_lines_are_re_encoded() {
    let (before, after) = ("a".repeat(64), "b".repeat(64));
    let line = r#"{"ts":"t","op":"update","patch":[],"before_hash":"0000000000000000000000000000000000000000000000000000000000000000","after_hash":"1111111111111111111111111111111111111111111111111111111111111111","item_hash_version":2}"#;
    let spliced = splice_hashes(line, &before, &after);
    let re_encoded = rewrite_line(line, &before, &after, Some(&[]));
    assert_eq!(spliced.as_deref(), Some(re_encoded.as_str()));
    // A second `before_hash` key (inside a patch value) or a short hash is not spliced.
    let nested = line.replace(r#""patch":[]"#, r#""patch":[{"before_hash":"x"}]"#);
    assert_eq!(splice_hashes(&nested, &before, &after), None);
    let short = line.replace("\"after_hash\":\"1111", "\"after_hash\":\"");
    assert_eq!(splice_hashes(&short, &before, &after), None);
}
