//! The fast history-head reader agrees with the full stream parser on every corpus stream (it
//! answers all of them, with the same fields and line spans).

use std::error::Error;

use pm_engine::history::{parse_stream, parse_stream_heads};

#[test]
fn heads_match_the_full_parser_on_every_corpus_stream() -> Result<(), Box<dyn Error>> {
    let corpus = pm_testkit::extract_corpus()?;
    let dir = corpus.path().join(".agents/pm/history");
    let mut streams = 0;
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let bytes = std::fs::read(&path)?;
        let full = parse_stream(&bytes, "x", &path)?;
        let heads = parse_stream_heads(&bytes).ok_or_else(|| format!("deferred: {path:?}"))?;
        assert_eq!(heads.spans, full.spans, "{path:?}");
        assert_eq!(heads.heads.len(), full.entries.len());
        for (h, e) in heads.heads.iter().zip(&full.entries) {
            assert_eq!(
                (h.ts.as_ref(), h.author.as_ref(), h.op.as_ref()),
                (e.ts.as_str(), e.author.as_str(), e.op.as_str())
            );
            assert_eq!(h.agent_harness.as_deref(), e.agent_harness.as_deref());
            assert_eq!(h.agent_instance.as_deref(), e.agent_instance.as_deref());
            assert_eq!(h.message.as_deref(), e.message.as_deref());
            assert_eq!(h.patch_len, e.patch.len());
        }
        streams += 1;
    }
    assert_eq!(streams, 2_551);
    Ok(())
}
