//! `pm events` pages through the facade (`Index::events`), each including the freshness check:
//! the first page of 100, a page of 100 after a mid-stream cursor, a one-item filter, and the
//! scan path for comparison, on the seed-42 corpus at 2,243 and 10k (and 100k with
//! `PM_BENCH_LARGE=1`).

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use pm_engine::schema::RuntimeSchema;
use pm_index::{EventQuery, EventSince, Index, IndexOptions};
use std::hint::black_box;

fn bench_events(c: &mut Criterion) {
    let schema = RuntimeSchema::builtin();
    let mut group = c.benchmark_group("events");
    group.sample_size(20);
    for n in pm_benches::tiers() {
        let corpus = pm_benches::Corpus::generate(n);
        let tracker = corpus.tracker();
        Index::open(&tracker, &schema, IndexOptions::default())
            .rebuild(std::time::Duration::from_secs(60))
            .expect("build");
        let first = EventQuery {
            limit: 100,
            ..EventQuery::default()
        };
        let middle = Index::open(&tracker, &schema, IndexOptions::default())
            .events(&EventQuery {
                limit: 1000,
                ..EventQuery::default()
            })
            .expect("events")
            .rows
            .next
            .expect("more than 1,000 events");
        let after = EventQuery {
            since: Some(EventSince::After(middle)),
            limit: 100,
            ..EventQuery::default()
        };
        let one_item = EventQuery {
            streams: vec![pm_benches::corpus_id(n as u64 / 2)],
            limit: 100,
            ..EventQuery::default()
        };
        for (name, query) in [
            ("page_100", &first),
            ("page_100_after_cursor", &after),
            ("one_item", &one_item),
        ] {
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.iter(|| {
                    // A fresh facade per page, as a CLI process has.
                    let index = Index::open(&tracker, &schema, IndexOptions::default());
                    let page = index.events(query).expect("events");
                    assert_eq!(page.source(), pm_engine::query::Source::Index);
                    black_box(page)
                });
            });
        }
        let scan_only = IndexOptions {
            scan_only: true,
            ..IndexOptions::default()
        };
        group.bench_with_input(BenchmarkId::new("scan_page_100", n), &n, |b, _| {
            b.iter(|| {
                let index = Index::open(&tracker, &schema, scan_only);
                black_box(index.events(&first).expect("events"))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench_events);
criterion_main!(benches);
