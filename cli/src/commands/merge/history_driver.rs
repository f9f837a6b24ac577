//! `pm merge driver history %O %A %B [--output <path>]`: the git merge driver of history
//! streams. Reads the three versions, merges the tails (`pm_engine::merge::history`) and writes
//! the result over ours (`%A`, what git reads back) or `--output`.

use std::path::{Path, PathBuf};

use pm_engine::merge::history::{StreamMergeReport, StreamStrategy, merge_streams};
use serde::Serialize;

use crate::failure::Result;

const REANCHOR_GUIDANCE: &str = "The merged history chain was re-anchored. Run \"pm merge reconcile --dry-run\" to inspect the complete post-merge repair, then \"pm merge reconcile\" to apply it; use --force only after explicitly accepting reported discards.";

/// The driver's result (pm's layout).
#[derive(Debug, Serialize)]
pub struct HistoryDriverOutput {
    /// Always true: a history merge never conflicts.
    pub ok: bool,
    /// Always `history`.
    pub artifact: &'static str,
    /// The file written (absolute).
    pub output_path: String,
    /// The `--prefer` side (history merges need none; echoed as pm does).
    pub requested_preference: String,
    /// What the merge did.
    pub history: StreamMergeReport,
    /// What to run next, when the chain was re-anchored.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub guidance: Vec<&'static str>,
    /// When the driver ran.
    pub generated_at: String,
}

/// Merges the streams at `base`, `ours` and `theirs` (relative paths resolve against `cwd`)
/// and writes the result to `output` (default: `ours`).
///
/// # Errors
/// I/O errors reading a side or writing the result; a side with conflict markers or invalid
/// lines.
pub fn run(
    cwd: &Path,
    base: &Path,
    ours: &Path,
    theirs: &Path,
    output: Option<&Path>,
    prefer: &str,
    generated_at: String,
) -> Result<HistoryDriverOutput> {
    let read = |p: &Path| -> Result<Vec<u8>> {
        let path = cwd.join(p);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(source) => Err(pm_engine::Error::Io { path, source }.into()),
        }
    };
    let target: PathBuf = cwd.join(output.unwrap_or(ours));
    let merged = merge_streams(&read(base)?, &read(ours)?, &read(theirs)?, &target)?;
    pm_engine::atomic::write(&target, merged.text.as_bytes())?;
    let reanchored = merged.report.strategy == StreamStrategy::UnionReanchor;
    Ok(HistoryDriverOutput {
        ok: true,
        artifact: "history",
        output_path: target.display().to_string(),
        requested_preference: prefer.to_string(),
        history: merged.report,
        guidance: if reanchored {
            vec![REANCHOR_GUIDANCE]
        } else {
            Vec::new()
        },
        generated_at,
    })
}
