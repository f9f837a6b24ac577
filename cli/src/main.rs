//! The `pm` binary: everything lives in the `pm_cli` library.

/// mimalloc: the parallel parsers of a full index build and of scans allocate many small
/// values from several threads, where it is markedly faster than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    pm_cli::run()
}
