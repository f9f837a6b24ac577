//! History chain verification over the real pm-cli corpus: every item stream and the workspace
//! stream replayed and hash-checked (53,099 + 245 entries), in parallel as `pm history --verify`
//! does, and single-threaded for reference.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pm_engine::history::{HistoryEntry, read_stream, verify_chain};
use rayon::prelude::*;

/// Entries in the corpus item streams (the workspace stream adds 245).
const ITEM_ENTRIES: u64 = 53_099;

fn corpus_streams() -> (tempfile::TempDir, Vec<(String, Vec<HistoryEntry>)>) {
    let corpus = pm_testkit::extract_corpus().expect("corpus extracts");
    let history: PathBuf = corpus.path().join(".agents/pm/history");
    let mut streams = Vec::new();
    for entry in std::fs::read_dir(&history).expect("history dir") {
        let path = entry.expect("dir entry").path();
        let id = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("UTF-8 stream name")
            .to_string();
        let read = read_stream(&path, &id).expect("stream parses");
        streams.push((id, read.entries));
    }
    // Longest streams first so that the parallel run does not end on one big straggler.
    streams.sort_by_key(|(_, entries)| std::cmp::Reverse(entries.len()));
    (corpus, streams)
}

fn verify_corpus_chains(c: &mut Criterion) {
    let (_corpus, streams) = corpus_streams();
    let mut group = c.benchmark_group("history");
    group.sample_size(10);
    group.throughput(Throughput::Elements(ITEM_ENTRIES));
    group.bench_function(BenchmarkId::new("verify_chains", "corpus parallel"), |b| {
        b.iter(|| {
            let ok = streams
                .par_iter()
                .filter(|(_, entries)| verify_chain(black_box(entries)).is_ok())
                .count();
            assert_eq!(ok, streams.len());
        });
    });
    group.bench_function(BenchmarkId::new("verify_chains", "corpus 1 thread"), |b| {
        b.iter(|| {
            let ok = streams
                .iter()
                .filter(|(_, entries)| verify_chain(black_box(entries)).is_ok())
                .count();
            assert_eq!(ok, streams.len());
        });
    });
    group.finish();
}

criterion_group!(benches, verify_corpus_chains);
criterion_main!(benches);
