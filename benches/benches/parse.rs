//! Parse + canonicalize + hash of every item of the real pm-cli tracker (2,536 TOON files),
//! single-threaded and with rayon; then the seed-42 generated corpus at 2,243 and 10k: parse +
//! canonicalize + hash, and the item hash alone. Input bytes are read once, outside the loop.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pm_engine::hash::{HashEpoch, item_hash};
use pm_engine::item::ItemFormat;
use pm_engine::item::canon::CanonSchema;
use pm_engine::item::codec::parse_item;
use rayon::prelude::*;
use std::hint::black_box;
use std::path::{Path, PathBuf};

/// Items in the corpus.
const CORPUS_ITEMS: usize = 2_536;

/// Reads every `<folder>/<id>.toon` below the tracker root.
fn load_items(tracker: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut items = Vec::new();
    let folders = std::fs::read_dir(tracker).expect("tracker root is readable");
    for folder in folders.map(|e| e.expect("directory entry").path()) {
        if !folder.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&folder).expect("folder is readable") {
            let path = file.expect("directory entry").path();
            if path.extension().is_some_and(|e| e == "toon") {
                let bytes = std::fs::read(&path).expect("item file is readable");
                items.push((path, bytes));
            }
        }
    }
    items.sort();
    items
}

fn parse_and_hash(path: &Path, bytes: &[u8]) -> String {
    let doc =
        parse_item(bytes, ItemFormat::Toon, path, &CanonSchema::NONE).expect("corpus item parses");
    item_hash(&doc, HashEpoch::V2)
}

fn bench_parse(c: &mut Criterion) {
    let corpus = pm_testkit::extract_corpus().expect("corpus extracts");
    let items = load_items(&corpus.path().join(".agents/pm"));
    assert_eq!(items.len(), CORPUS_ITEMS);

    let mut group = c.benchmark_group("parse_canon_hash");
    group.throughput(Throughput::Elements(items.len() as u64));
    group.sample_size(20);
    group.bench_function(BenchmarkId::new("single_thread", items.len()), |b| {
        b.iter(|| {
            for (path, bytes) in &items {
                black_box(parse_and_hash(path, bytes));
            }
        });
    });
    group.bench_function(BenchmarkId::new("rayon", items.len()), |b| {
        b.iter(|| {
            items.par_iter().for_each(|(path, bytes)| {
                black_box(parse_and_hash(path, bytes));
            });
        });
    });
    group.finish();
}

fn bench_generated(c: &mut Criterion) {
    let mut group = c.benchmark_group("generated_corpus");
    group.sample_size(20);
    for n in pm_benches::tiers() {
        let corpus = pm_benches::Corpus::generate(n);
        let items = load_items(corpus.tracker().root());
        assert_eq!(items.len(), n);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("parse_canon_hash", n), |b| {
            b.iter(|| {
                items.par_iter().for_each(|(path, bytes)| {
                    black_box(parse_and_hash(path, bytes));
                });
            });
        });
        let docs: Vec<_> = items
            .iter()
            .map(|(path, bytes)| {
                parse_item(bytes, ItemFormat::Toon, path, &CanonSchema::NONE).expect("parses")
            })
            .collect();
        group.bench_function(BenchmarkId::new("item_hash", n), |b| {
            b.iter(|| {
                for doc in &docs {
                    black_box(item_hash(doc, HashEpoch::V2));
                }
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench_parse, bench_generated);
criterion_main!(benches);
