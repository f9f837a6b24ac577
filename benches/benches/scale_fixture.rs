//! Scale tooling, not a benchmark: writes a generated tracker for cold-process CLI timings
//! (`hyperfine`, `/usr/bin/time`). `PM_BENCH_OUT=<dir> PM_BENCH_ITEMS=<n> cargo bench --bench
//! scale_fixture` writes `<dir>/.agents/pm`; without `PM_BENCH_OUT` it does nothing.
#![allow(clippy::disallowed_methods)] // reads PM_BENCH_* variables
#![allow(clippy::print_stderr)]

fn main() {
    let Some(out) = std::env::var_os("PM_BENCH_OUT") else {
        return;
    };
    let n: usize = std::env::var("PM_BENCH_ITEMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(pm_benches::TIER_CI);
    let root = std::path::Path::new(&out).join(".agents/pm");
    let start = std::time::Instant::now();
    pm_benches::generate(&root, n);
    eprintln!(
        "generated {n} items in {} in {:?}",
        root.display(),
        start.elapsed()
    );
}
