//! Render + budget: the read-output layer fitting a real `pm list --status all` envelope of the
//! seed-42 corpus (2,243 and 10k full rows) under the default ceilings (4,000 tokens TOON, 6,000
//! JSON), measuring the printed bytes, then encoding the fitted result.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pm_cli::read_output::{ReadMeta, ReadOutputRequest, Surface, finish_read};
use pm_cli::render::{Format, encode};
use serde_json::Value;
use std::hint::black_box;

fn bench_fit(c: &mut Criterion) {
    let mut group = c.benchmark_group("render_budget");
    group.sample_size(10);
    for n in pm_benches::tiers() {
        let corpus = pm_benches::Corpus::generate(n);
        let out = corpus.pm(&["list", "--status", "all", "--no-truncate", "--json"]);
        let result: Value = serde_json::from_slice(&out).expect("list prints JSON");
        let rows = result["items"].as_array().map_or(0, Vec::len);
        group.throughput(Throughput::Elements(rows as u64));
        for (format, name) in [(Format::Toon, "toon_4000"), (Format::Json, "json_6000")] {
            let meta = ReadMeta::new(Surface::List, "list");
            let request = ReadOutputRequest::default();
            group.bench_function(BenchmarkId::new(name, n), |b| {
                b.iter(|| {
                    let out = finish_read(result.clone(), &meta, &request, format)
                        .expect("fits the default ceiling");
                    black_box(encode(&out.value, format))
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_fit);
criterion_main!(benches);
