//! Whole read commands in-process (`pm_cli::run_with`: parse, index facade with its freshness
//! check, ranking and packing, read-output fitting, encoding) on the seed-42 corpus at 2,243 and
//! 10k (and 100k with `PM_BENCH_LARGE=1`): a list page, search, context packing and next, plain
//! and with their `--for` intents.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;

/// Bench name and argv of every measured read.
const READS: [(&str, &[&str]); 8] = [
    (
        "list_page_20",
        &["list", "--status", "all", "--limit", "20", "--json"],
    ),
    (
        "list_triage",
        &["list", "--for", "triage", "--status", "all"],
    ),
    (
        "search_10",
        &[
            "search",
            "synthetic",
            "--status",
            "all",
            "--limit",
            "10",
            "--json",
        ],
    ),
    (
        "search_discover",
        &["search", "status:all Synthetic", "--for", "discover"],
    ),
    ("context_10", &["context", "--limit", "10", "--json"]),
    ("context_orient", &["context", "--for", "orient"]),
    ("next_10", &["next", "--limit", "10", "--json"]),
    ("next_execute", &["next", "--for", "execute"]),
];

fn bench_reads(c: &mut Criterion) {
    let mut group = c.benchmark_group("reads");
    group.sample_size(10);
    for n in pm_benches::tiers() {
        let corpus = pm_benches::Corpus::generate(n);
        // The first read builds the index; every measured read then finds it fresh.
        corpus.pm(&["list", "--limit", "1"]);
        for (name, args) in READS {
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.iter(|| black_box(corpus.pm(args)));
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_reads);
criterion_main!(benches);
