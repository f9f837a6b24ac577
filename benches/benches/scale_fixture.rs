//! Scale tooling, not a benchmark: writes a seed-42 scratch corpus for cold-process CLI timings
//! (`hyperfine`, `/usr/bin/time`), the same bytes as `pm bench generate`. `PM_BENCH_OUT=<dir>
//! PM_BENCH_ITEMS=<n> cargo bench --bench scale_fixture` writes `<dir>/.agents/pm`; without
//! `PM_BENCH_OUT` it does nothing.
#![allow(clippy::disallowed_methods)] // reads PM_BENCH_* variables
#![allow(clippy::print_stderr)]

use pm_engine::bench_corpus::{CorpusOptions, SCRATCH, generate_corpus};

fn main() {
    let Some(out) = std::env::var_os("PM_BENCH_OUT") else {
        return;
    };
    let n: u64 = std::env::var("PM_BENCH_ITEMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(pm_benches::TIER_CI as u64);
    let options = CorpusOptions {
        items: n,
        seed: 42,
        shape: SCRATCH,
        force: true,
        allow_million: false,
    };
    let start = std::time::Instant::now();
    let report = generate_corpus(std::path::Path::new(&out), &options).expect("generate corpus");
    eprintln!(
        "generated {n} items in {} in {:?}",
        report.tracker_root.display(),
        start.elapsed()
    );
}
