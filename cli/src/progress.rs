//! The index-build progress bar: drawn on stderr, only when stderr is a terminal and the build
//! is large, through the callback `pm_index` accepts (the library never prints).

use std::io::{IsTerminal, Write};

use pm_index::{BuildProgress, IndexOptions};

use crate::ctx::Ctx;

/// Builds smaller than this draw nothing.
const MIN_FILES: usize = 5_000;

/// Draws one progress update (`\r`-rewritten line; a newline when done).
fn draw(p: BuildProgress) {
    if p.total < MIN_FILES {
        return;
    }
    let step = (p.total / 50).max(1);
    if p.done != p.total && p.done % step > 512 {
        return;
    }
    let mut err = std::io::stderr().lock();
    let pct = p.done * 100 / p.total.max(1);
    let _ = write!(err, "\rindexing {}/{} files ({pct}%)", p.done, p.total);
    if p.done == p.total {
        let _ = writeln!(err);
    }
    let _ = err.flush();
}

/// Returns the index options of this invocation: `--no-index`/`PM_NO_INDEX`, and a progress
/// bar when stderr is a terminal.
pub fn index_options(ctx: &Ctx) -> IndexOptions<'static> {
    IndexOptions {
        scan_only: ctx.no_index,
        freshness: ctx.index_freshness,
        // One command is one read: its first freshness check stands for its later queries.
        check_once: true,
        progress: if std::io::stderr().is_terminal() {
            Some(&draw)
        } else {
            None
        },
        ..IndexOptions::default()
    }
}
