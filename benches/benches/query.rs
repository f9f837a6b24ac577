//! Warm reads through the facade, each including the full freshness check (stat sweep + digest):
//! `list --limit 20`, `list --status open --type Task --tag area:synthetic-3`, and the sweep
//! alone, on the seed-42 corpus at 2,243 and 10k (and 100k with `PM_BENCH_LARGE=1`); plus the
//! scan path for comparison.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use pm_engine::query::{Page, Query, Sort, StatusFilter};
use pm_engine::schema::RuntimeSchema;
use pm_index::internals::folder_listings::FolderListings;
use pm_index::internals::source::SweepScope;
use pm_index::internals::sweep::digest_sweep;
use pm_index::{Index, IndexOptions};
use std::hint::black_box;

fn bench_query(c: &mut Criterion) {
    let schema = RuntimeSchema::builtin();
    let mut group = c.benchmark_group("query");
    group.sample_size(20);
    for n in pm_benches::tiers() {
        let corpus = pm_benches::Corpus::generate(n);
        let tracker = corpus.tracker();
        Index::open(&tracker, &schema, IndexOptions::default())
            .rebuild(std::time::Duration::from_secs(60))
            .expect("build");
        let filtered = Query {
            status: StatusFilter::Set(vec!["open".into()]),
            types: vec!["Task".into()],
            tags: vec!["area:synthetic-3".into()],
            ..Query::new()
        };
        for (name, query) in [
            ("list_limit_20", Query::new()),
            ("list_open_task_tag", filtered),
        ] {
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.iter(|| {
                    // A fresh facade per read, as a CLI process has.
                    let index = Index::open(&tracker, &schema, IndexOptions::default());
                    let page = index
                        .list(&query, &Sort::default(), &Page::first(20))
                        .expect("list");
                    assert_eq!(page.source(), pm_engine::query::Source::Index);
                    black_box(page)
                });
            });
        }
        // What every read pays when nothing changed: the streaming digest sweep, of the item
        // folders (list, search, context, next), of history (events, activity) and of everything
        // (stats).
        for (name, scope) in [
            ("freshness_sweep_items", SweepScope::Items),
            ("freshness_sweep_all", SweepScope::All),
            ("freshness_sweep_history", SweepScope::History),
        ] {
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.iter(|| black_box(digest_sweep(&tracker, &schema, scope, None).expect("sweep")));
            });
        }
        // The same sweeps when every folder's recorded listing still holds (what reads pay
        // between changes): the names are statted without reading the folders.
        let listings = FolderListings::at(tracker.runtime_dir().join("index/listing"));
        for (name, scope) in [
            ("freshness_sweep_items_recalled", SweepScope::Items),
            ("freshness_sweep_all_recalled", SweepScope::All),
        ] {
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.iter(|| {
                    black_box(
                        digest_sweep(&tracker, &schema, scope, Some(&listings)).expect("sweep"),
                    )
                });
            });
        }
        // The floor under every per-file freshness check: one bare `statx` per item file,
        // relative to its folder, on the same pool, with the names listed beforehand and
        // nothing computed from the answers. The recalled sweep above is this plus the digest.
        #[cfg(target_os = "linux")]
        {
            let folders = stat_floor::item_folders(&tracker, &schema);
            group.bench_with_input(BenchmarkId::new("stat_floor_items", n), &n, |b, _| {
                b.iter(|| black_box(stat_floor::stat_all(&folders)));
            });
        }
        // What a read pays when the digest differs: the full sweep with the file list.
        group.bench_with_input(BenchmarkId::new("full_sweep", n), &n, |b, _| {
            b.iter(|| {
                black_box(pm_index::internals::source::sweep(&tracker, &schema).expect("sweep"))
            });
        });
        group.bench_with_input(BenchmarkId::new("scan_list_limit_20", n), &n, |b, _| {
            b.iter(|| {
                black_box(
                    pm_engine::scan::list(
                        &tracker,
                        &schema,
                        &Query::new(),
                        &Sort::default(),
                        &Page::first(20),
                    )
                    .expect("scan"),
                )
            });
        });
    }
    group.finish();
}

/// A bare parallel `statx` over listed names: what the kernel charges for the stats alone.
#[cfg(target_os = "linux")]
mod stat_floor {
    use pm_engine::schema::RuntimeSchema;
    use pm_engine::tracker::Tracker;
    use rayon::prelude::*;
    use rustix::fd::OwnedFd;
    use rustix::fs::{AtFlags, Mode, OFlags, StatxFlags};

    /// Every item folder's handle and the names of its entries.
    pub fn item_folders(tracker: &Tracker, schema: &RuntimeSchema) -> Vec<(OwnedFd, Vec<String>)> {
        schema
            .types
            .folders()
            .into_iter()
            .filter_map(|(folder, _)| {
                let dir = tracker.root().join(folder);
                let names = std::fs::read_dir(&dir)
                    .ok()?
                    .filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .collect();
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
                let fd = rustix::fs::open(&dir, flags, Mode::empty()).ok()?;
                Some((fd, names))
            })
            .collect()
    }

    /// Stats every name relative to its folder; the number of answers.
    pub fn stat_all(folders: &[(OwnedFd, Vec<String>)]) -> usize {
        let mask = StatxFlags::TYPE | StatxFlags::SIZE | StatxFlags::MTIME | StatxFlags::CTIME;
        folders
            .iter()
            .map(|(fd, names)| {
                names
                    .par_iter()
                    .filter(|name| {
                        rustix::fs::statx(fd, name.as_str(), AtFlags::empty(), mask).is_ok()
                    })
                    .count()
            })
            .sum()
    }
}

criterion_group!(benches, bench_query);
criterion_main!(benches);
