//! Appending to a history stream: a single `write_all` of the lines (each plus `\n`) in append
//! mode, then fsync. Streams are never rewritten here; the only cut is the removal of a torn
//! last line (an append that a crash interrupted), which readers skip anyway.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use super::entry::HistoryEntry;
use crate::confine::Root;
use crate::error::{Error, IoResultExt, Result};

/// Appends `lines` to the stream `path` of the tracker at `root` in one `write_all`, following
/// no symlink; when `cut_at` is given the stream is first cut to that length (the start of a
/// torn last line). Creates the stream (and `history/`) when missing.
///
/// # Errors
/// `Error::PathUnsafe` for a symlinked `history/` or stream; `Error::Io` naming `path`.
pub fn append_lines(root: &Root, path: &Path, lines: &[String], cut_at: Option<u64>) -> Result<()> {
    let (dir, name) = root
        .parent_of(path, true)?
        .ok_or_else(|| Error::internal(format!("no folder for {}", path.display())))?;
    let mut buf = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for line in lines {
        buf.push_str(line);
        buf.push('\n');
    }
    if let Some(len) = cut_at
        && let Some(mut file) = dir.open_rw(name)?
    {
        file.set_len(len).at(path)?;
        file.seek(SeekFrom::End(0)).at(path)?;
        file.write_all(buf.as_bytes()).at(path)?;
        return file.sync_data().at(path);
    }
    if buf.is_empty() {
        return Ok(());
    }
    dir.append(name, buf.as_bytes())
}

/// Appends `entry` to the stream at `path` as one compact JSON line.
///
/// Creates the stream (and its directory) when missing; the line and its `\n` go out in one
/// `write_all` in `O_APPEND` mode followed by fsync ([`crate::atomic::append_line`]), so a crash
/// leaves at worst a torn last line that readers skip. The caller holds the item lock.
///
/// # Errors
/// [`crate::Error::Io`] naming `path` when the directory, open, write or fsync fails.
pub fn append_entry(path: &Path, entry: &HistoryEntry) -> Result<()> {
    crate::atomic::append_line(path, &entry.to_line())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::entry::PatchOp;
    use crate::history::stream::read_stream;
    use serde_json::json;

    #[test]
    fn appends_one_line_per_entry() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("history").join("pm-a.jsonl");
        let first = HistoryEntry::new(
            "2026-09-01T00:00:00.000Z",
            "me",
            "create",
            vec![PatchOp::add("/metadata/id", json!("pm-a"))],
            crate::hash::EMPTY_DOC_HASH,
            "h1",
        );
        let mut second = first.clone();
        second.op = "update".into();
        append_entry(&path, &first)?;
        append_entry(&path, &second)?;
        let text = std::fs::read_to_string(&path)?;
        assert_eq!(text, format!("{}\n{}\n", first.to_line(), second.to_line()));
        let read = read_stream(&path, "pm-a")?;
        assert_eq!(read.entries, vec![first, second]);
        Ok(())
    }
}
