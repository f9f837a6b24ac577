//! Full index build (parse every item and stream in parallel, one writer, publish) at the
//! 2,243 / 10k (/ 100k with `PM_BENCH_LARGE=1`) tiers of the seed-42 corpus generator.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pm_engine::schema::RuntimeSchema;
use pm_index::{Index, IndexOptions};
use std::time::Duration;

fn bench_reindex(c: &mut Criterion) {
    let schema = RuntimeSchema::builtin();
    let mut group = c.benchmark_group("reindex");
    group.sample_size(10);
    for n in pm_benches::tiers() {
        let corpus = pm_benches::Corpus::generate(n);
        let tracker = corpus.tracker();
        let index = Index::open(&tracker, &schema, IndexOptions::default());
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("full_build", n), &n, |b, _| {
            b.iter(|| index.rebuild(Duration::from_secs(60)).expect("build"));
        });
    }
    group.finish();
}

criterion_group!(benches, bench_reindex);
criterion_main!(benches);
