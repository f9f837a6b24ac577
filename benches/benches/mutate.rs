//! Mutation latency in process: `create`, `update` and `comment` through the full protocol
//! (lock, read, canonicalize, atomic write with fsync, history append, unlock) on generated
//! flat trackers of 1k and 10k items. Cost must not grow with tracker size.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use pm_benches::{generate_tracker, generated_id};
use pm_engine::clock::Clock;
use pm_engine::ids::IdMinter;
use pm_engine::mutate::{
    AnnotationKind, Author, FieldEdit, MutationContext, NewItem, add_annotation, create, update,
};
use pm_engine::schema::load;
use pm_engine::settings::SettingsEnv;
use pm_engine::tracker::Tracker;

fn mutations(c: &mut Criterion) {
    let mut group = c.benchmark_group("mutate");
    group.sample_size(30);
    for size in [1_000usize, 10_000] {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join(".agents/pm");
        generate_tracker(&root, size);
        let tracker = Tracker::at(&root);
        let loaded = load(&tracker, &SettingsEnv::default()).expect("settings load");
        let clock = Clock::pinned(1_788_220_800_000, 1);
        let ctx = MutationContext::new(
            &tracker,
            &loaded.settings,
            &loaded.schema,
            &clock,
            Author::resolve(Some("bench"), None, ""),
        );
        let label = format!("flat {}k", size / 1000);
        let mut minter = IdMinter::seeded(format!("bench-{size}"));
        group.bench_function(BenchmarkId::new("create", &label), |b| {
            b.iter(|| {
                let item = NewItem {
                    type_name: "Task".into(),
                    title: "Bench create".into(),
                    ..NewItem::default()
                };
                black_box(create(&ctx, &item, &mut minter).expect("create"));
            });
        });
        let mut n = 0usize;
        group.bench_function(BenchmarkId::new("update", &label), |b| {
            b.iter(|| {
                n += 1;
                let edit = FieldEdit::Set {
                    key: "priority".into(),
                    value: (n % 5).to_string(),
                };
                black_box(update(&ctx, &generated_id(n % size), &[edit], None).expect("update"));
            });
        });
        group.bench_function(BenchmarkId::new("comment", &label), |b| {
            b.iter(|| {
                n += 1;
                let id = generated_id(n % size);
                black_box(
                    add_annotation(&ctx, &id, AnnotationKind::Comment, "bench").expect("comment"),
                );
            });
        });
    }
    group.finish();
}

criterion_group!(benches, mutations);
criterion_main!(benches);
