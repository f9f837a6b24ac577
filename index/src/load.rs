//! The writer's side of a full build's load, and how the load is cut into batches and weighed
//! while it waits for the writer.

use crate::fresh::digest::DigestTotals;
use crate::fresh::source::{SourceFile, SourceKind};
use crate::indexer::{BuildProgress, BuildReport, CHUNK, ProgressFn, WRITEBACK_EVERY, Writeback};
use crate::project::Projected;
use crate::rows::RowWriter;

/// Roughly the memory a parsed source holds until it is written and freed: its own size, its
/// paths, and for a stream its event rows with their texts.
pub(crate) fn held_bytes(p: &Projected) -> u64 {
    let text = |t: &Option<String>| t.as_ref().map_or(0, String::len);
    let events: usize = match &p.projection {
        crate::project::Projection::History(stream) => stream
            .events
            .iter()
            .map(|e| {
                std::mem::size_of_val(e)
                    + e.stream.len()
                    + e.ts.len()
                    + e.author.len()
                    + e.op.len()
                    + text(&e.agent_harness)
                    + text(&e.agent_instance)
                    + text(&e.message)
            })
            .sum(),
        _ => 0,
    };
    let own = std::mem::size_of::<Projected>() + p.file.rel.len() + p.file.abs.as_os_str().len();
    u64::try_from(own + events).unwrap_or(u64::MAX)
}

/// Takes files from `files` as the build's batches, in order: only the leading files of `kind`
/// when one is given, else all the rest.
pub(crate) fn chunks<'f>(
    files: &'f mut std::iter::Peekable<std::vec::IntoIter<SourceFile>>,
    kind: Option<SourceKind>,
) -> impl Iterator<Item = Vec<SourceFile>> + 'f {
    std::iter::from_fn(move || {
        let mut chunk = Vec::with_capacity(CHUNK);
        while chunk.len() < CHUNK
            && let Some(file) = files.next_if(|f| kind.is_none_or(|k| f.kind == k))
        {
            chunk.push(file);
        }
        (!chunk.is_empty()).then_some(chunk)
    })
}

/// The writer's side of the load: writes parsed batches in order, tallies them, and reports
/// progress.
pub(crate) struct Load<'a, 't> {
    pub(crate) writer: RowWriter<'t>,
    pub(crate) report: &'a mut BuildReport,
    pub(crate) totals: &'a mut DigestTotals,
    pub(crate) writeback: &'a Writeback,
    pub(crate) progress: Option<ProgressFn<'a>>,
    pub(crate) done: usize,
    pub(crate) chunks: usize,
    pub(crate) total: usize,
}

impl Load<'_, '_> {
    /// Writes one batch, then hands it to `spent` to be freed.
    pub(crate) fn write(
        &mut self,
        batch: Vec<Projected>,
        spent: &std::sync::mpsc::Sender<Vec<Projected>>,
    ) -> rusqlite::Result<()> {
        for p in &batch {
            self.report.tally(p);
            let contribution = self.writer.write(p)?;
            if !matches!(p.projection, crate::project::Projection::Vanished) {
                self.totals.add(p.file.kind, contribution);
            }
        }
        self.done += batch.len();
        self.chunks += 1;
        if self.chunks.is_multiple_of(WRITEBACK_EVERY) {
            self.writeback.kick();
        }
        if let Some(report_progress) = self.progress {
            report_progress(BuildProgress {
                done: self.done,
                total: self.total,
            });
        }
        if let Err(unsent) = spent.send(batch) {
            drop(unsent.0);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn the_leading_items_then_every_other_file_are_taken_in_order() {
        let file = |rel: &str, kind| SourceFile {
            rel: rel.into(),
            abs: PathBuf::from(rel),
            kind,
            item: None,
        };
        let mut listed = vec![file("tasks/a.toon", SourceKind::Item)];
        listed.extend(
            (0..CHUNK + 1).map(|i| file(&format!("history/{i}.jsonl"), SourceKind::History)),
        );
        // Out of the usual order: still written, in the second part.
        listed.push(file("tasks/z.toon", SourceKind::Item));
        let mut files = listed.into_iter().peekable();
        let items: Vec<Vec<SourceFile>> = chunks(&mut files, Some(SourceKind::Item)).collect();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0][0].rel, "tasks/a.toon");
        let rest: Vec<Vec<SourceFile>> = chunks(&mut files, None).collect();
        assert_eq!(rest.iter().map(Vec::len).collect::<Vec<_>>(), [CHUNK, 2]);
        assert_eq!(rest[1][1].rel, "tasks/z.toon");
        assert!(files.next().is_none());
    }

    #[test]
    fn a_waiting_stream_is_counted_with_its_events_and_their_texts() {
        let stream = |events: Vec<crate::events::EventRow>| Projected {
            file: SourceFile {
                rel: "history/pm-a.jsonl".into(),
                abs: PathBuf::from("/t/history/pm-a.jsonl"),
                kind: SourceKind::History,
                item: None,
            },
            sig: crate::fresh::source::Sig {
                size: 10,
                mtime_ns: 0,
                ctime_ns: 0,
                inode: 0,
            },
            content_hash: 0,
            racy: false,
            projection: crate::project::Projection::History(crate::events::StreamProjection {
                stream: "pm-a".into(),
                events,
                projected_len: 10,
                entry_count: 0,
                prefix_hash: 0,
                error: None,
            }),
        };
        let event = |message: Option<&str>| crate::events::EventRow {
            stream: "pm-a".into(),
            position: 0,
            ts: "2026-01-01T00:00:00.000Z".into(),
            author: "ann".into(),
            op: "update".into(),
            agent_harness: None,
            agent_instance: None,
            message: message.map(str::to_string),
            patch_count: 1,
            line_offset: 0,
            line_len: 10,
            entry_json: String::new(),
        };
        let empty = held_bytes(&stream(Vec::new()));
        let one = held_bytes(&stream(vec![event(None)]));
        let two = held_bytes(&stream(vec![event(None), event(None)]));
        let long = held_bytes(&stream(vec![event(Some(&"m".repeat(1000)))]));
        assert!(empty >= std::mem::size_of::<Projected>() as u64);
        assert_eq!(two - one, one - empty);
        assert_eq!(long - one, 1000);
    }
}
