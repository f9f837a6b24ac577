//! Budget fitting of read results: a 2,000-row `pm list` envelope fitted under 4,000 tokens
//! (TOON) and 6,000 tokens (JSON) by the read-output layer, measuring the printed bytes.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pm_cli::read_output::{ReadMeta, ReadOutputRequest, Surface, finish_read};
use pm_cli::render::Format;
use serde_json::{Value, json};
use std::hint::black_box;

/// A brief `pm list` envelope with `n` active rows.
fn list(n: usize) -> Value {
    let rows: Vec<Value> = (0..n)
        .map(|i| {
            json!({"id": format!("pm-{i:05}"), "status": "open", "type": "Task",
                "title": format!("Synthetic task {i}: tune the read-output budget fitting")})
        })
        .collect();
    json!({"items": rows, "count": n, "total": n, "has_more": false, "truncated": false,
        "next_cursor": null, "completeness": {"status": "complete", "unreadable_item_count": 0,
        "unreadable_directory_count": 0}, "filters": {"runtime_filters": {}},
        "projection": {"mode": "brief", "fields": ["id", "status", "type", "title"]},
        "sorting": {"sort": "default", "order": "asc"}, "now": "2026-09-01T00:00:00.000Z"})
}

fn bench_fit(c: &mut Criterion) {
    let mut group = c.benchmark_group("read_output_fit");
    for rows in [2_000usize, 10_000] {
        let result = list(rows);
        group.throughput(Throughput::Elements(rows as u64));
        for (format, name) in [(Format::Toon, "toon_4000"), (Format::Json, "json_6000")] {
            let meta = ReadMeta::new(Surface::List, "list");
            let request = ReadOutputRequest::default();
            group.bench_function(BenchmarkId::new(name, rows), |b| {
                b.iter(|| {
                    let out = finish_read(result.clone(), &meta, &request, format)
                        .expect("fits the default ceiling");
                    black_box(out);
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_fit);
criterion_main!(benches);
