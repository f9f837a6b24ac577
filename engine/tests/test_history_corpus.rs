//! Conformance of the history module against the real pm-cli tracker corpus: every stream
//! parses, every line re-serializes byte for byte.

use std::error::Error;
use std::path::{Path, PathBuf};

use pm_engine::history::{StreamRead, read_stream};

/// Lines in item streams and in `_workspace.jsonl` (spec §8.1, §8.6).
const ITEM_LINES: usize = 53_099;
const ITEM_STREAMS: usize = 2_550;
const WORKSPACE_LINES: usize = 245;

fn streams(root: &Path) -> Result<Vec<(String, PathBuf)>, Box<dyn Error>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root.join("history"))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "jsonl") {
            let id = path
                .file_stem()
                .and_then(|s| s.to_str())
                .ok_or("non-UTF-8 stream name")?
                .to_string();
            out.push((id, path));
        }
    }
    out.sort();
    Ok(out)
}

#[test]
fn every_corpus_line_parses_and_round_trips() -> Result<(), Box<dyn Error>> {
    let corpus = pm_testkit::extract_corpus()?;
    let root = corpus.path().join(".agents/pm");
    let mut item_streams = 0;
    let mut item_lines = 0;
    let mut workspace_lines = 0;
    let mut legacy_ops = 0;
    for (id, path) in streams(&root)? {
        let read: StreamRead = read_stream(&path, &id)?;
        assert!(read.torn_tail.is_none(), "{id}: torn tail");
        let text = std::fs::read_to_string(&path)?;
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), read.entries.len(), "{id}");
        for (entry, line) in read.entries.iter().zip(&lines) {
            assert_eq!(&entry.to_line(), line, "{id}: line does not round-trip");
            legacy_ops += entry
                .patch
                .iter()
                .filter(|op| op.original_path.is_some())
                .count();
        }
        if id == "_workspace" {
            workspace_lines += read.entries.len();
        } else {
            item_streams += 1;
            item_lines += read.entries.len();
        }
    }
    assert_eq!(item_streams, ITEM_STREAMS);
    assert_eq!(item_lines, ITEM_LINES);
    assert_eq!(workspace_lines, WORKSPACE_LINES);
    assert_eq!(
        legacy_ops, 63_480,
        "patch paths under /front_matter (spec §8.1)"
    );
    Ok(())
}
