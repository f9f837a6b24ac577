//! Full `pm list` rows in JSON printed while they are produced.
//!
//! When the read-output step leaves rows alone (no budget, limit, selector, session, cursor or
//! intent; see [`crate::read_output::leaves_rows_alone`]), a full-projection JSON listing does
//! not build its rows as values: each row's metadata is the compact text the index stores,
//! split into its members, put in pm's in-memory key order and re-indented as it is printed.
//! The bytes are those of the rows [`super::list_rows::project_row`] builds; rows whose keys
//! need JavaScript's key order are built that way.

use std::io::{self, Write};

use pm_engine::item::ItemDoc;
use pm_engine::query::Listing;
use pm_engine::read::record_order::IN_MEMORY_KEY_ORDER;
use pm_engine::summary::HEAVY_KEYS;
use pm_index::{Index, StoredItem};
use serde_json::Value;

use super::list_page::{ListRead, Listed, Paged, resolve_start, runtime_keys};
use super::list_rows::{Projection, full_row};
use crate::failure::Result;
use crate::read_output::Finished;
use crate::render::compact::{MemberSpan, member_spans, members};
use crate::render::{Format, RowEntry, StreamedRow, render_streamed_json};

/// The key of the rows in the list envelope.
const ROWS_KEY: &str = "items";

/// A finished list envelope (its `items` empty) and the rows to print in their place.
#[derive(Debug)]
pub struct ListStream {
    finished: Finished,
    rows: StoredRows,
}

/// The page's rows as stored, and how to print them.
#[derive(Debug)]
pub struct StoredRows {
    rows: Vec<StoredRow>,
    runtime: Vec<String>,
    body: bool,
}

/// One row: stored text printed entry by entry, or a row built as a value (its keys need
/// JavaScript's order, or pm would replace one of them).
#[derive(Debug)]
enum StoredRow {
    Text(StoredItem, Vec<MemberSpan>),
    Built(Value),
}

/// Returns true when `read` can be answered by a [`ListStream`]: full rows in JSON, no
/// `--tree`, and a read-output step that leaves rows alone.
pub fn applies(read: &ListRead<'_>, format: Format, rows_left_alone: bool) -> bool {
    rows_left_alone
        && format == Format::Json
        && read.tree.is_none()
        && matches!(read.projection, Projection::Full { .. })
}

/// Reads the page as the index stores it: the paging facts (with no rows) and the rows to
/// stream. No row's metadata is parsed unless it must be built as a value.
///
/// # Errors
/// As [`super::list_page::read_page`].
pub fn read(index: &Index<'_>, read: &ListRead<'_>) -> Result<(Listed, StoredRows)> {
    let (page, start) = resolve_start(index, read)?;
    let answer = index.list_stored(read.query, read.sort, &page)?;
    let source = answer.source();
    let stored = answer.rows;
    let runtime = runtime_keys(index);
    let body = matches!(read.projection, Projection::Full { body: true });
    let count = stored.items.len();
    let paged = Paged {
        items: Vec::new(),
        trees: None,
        start,
        last_id: stored.items.last().map(|item| item.id.clone()),
        listing: Listing {
            items: Vec::new(),
            total: stored.total,
            has_more: stored.has_more,
            next: None,
            applied_limit: stored.applied_limit,
            source,
            completeness: stored.completeness,
            notices: answer.notices,
        },
    };
    let keys: Vec<&str> = runtime.iter().map(String::as_str).collect();
    let rows = (stored.items.into_iter())
        .map(|item| {
            let light = member_spans(&item.light);
            match printable(&item.light, &light) {
                true => StoredRow::Text(item, light),
                false => StoredRow::Built(built(item, body, &keys)),
            }
        })
        .collect();
    let rows = StoredRows {
        rows,
        runtime,
        body,
    };
    Ok((paged.listed(read, Vec::new(), count), rows))
}

/// The row [`super::list_rows::project_row`] builds from a stored item.
fn built(item: StoredItem, body: bool, runtime: &[&str]) -> Value {
    let parse = |text: &str| serde_json::from_str(text).unwrap_or_default();
    let document = item.body.map(|text| ItemDoc {
        metadata: item.collections.as_deref().map(parse).unwrap_or_default(),
        body: text,
    });
    Value::Object(full_row(parse(&item.light), document, body, runtime))
}

impl StoredRows {
    /// Pairs the rows with their finished envelope.
    pub fn with(self, finished: Finished) -> ListStream {
        ListStream {
            finished,
            rows: self,
        }
    }

    /// The entries of a stored row in [`project_row`]'s order: the light record in pm's
    /// in-memory key order, the heavy collections, then the body when asked for.
    fn entries<'a>(
        &self,
        text: &'a StoredItem,
        light: &[MemberSpan],
        runtime: &[&str],
    ) -> Vec<RowEntry<'a>> {
        let light: Vec<(&str, &str)> = light.iter().map(|span| span.of(&text.light)).collect();
        let mut placed = vec![false; light.len()];
        let mut entries = Vec::with_capacity(light.len() + HEAVY_KEYS.len() + 1);
        for key in IN_MEMORY_KEY_ORDER.iter().chain(runtime) {
            if let Some(i) = light.iter().position(|(k, _)| k == key)
                && !std::mem::replace(&mut placed[i], true)
            {
                entries.push(RowEntry::Compact(light[i].0, light[i].1));
            }
        }
        for (i, (key, value)) in light.iter().enumerate() {
            if !placed[i] {
                entries.push(RowEntry::Compact(key, value));
            }
        }
        let heavy = text.collections.as_deref().map(members).unwrap_or_default();
        for key in &HEAVY_KEYS {
            if let Some((key, value)) = heavy.iter().find(|(k, _)| k == key) {
                entries.push(RowEntry::Compact(key, value));
            }
        }
        if self.body {
            entries.push(match &text.body {
                Some(body) => RowEntry::Text("body", body),
                None => RowEntry::Value("body", &Value::Null),
            });
        }
        entries
    }
}

impl ListStream {
    /// Writes the envelope with its rows.
    ///
    /// # Errors
    /// Fails when `out` cannot be written.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        match &self.finished.value {
            Value::Object(root) => render_streamed_json(root, ROWS_KEY, &self.rows, out),
            other => crate::render::render_value(other, Format::Json, out),
        }
    }

    /// The exit code of the finished read.
    pub fn exit_code(&self) -> u8 {
        self.finished.exit_code
    }
}

impl crate::render::RowSource for StoredRows {
    fn each_row(&self, emit: &mut dyn FnMut(StreamedRow<'_>)) {
        let runtime: Vec<&str> = self.runtime.iter().map(String::as_str).collect();
        for row in &self.rows {
            match row {
                StoredRow::Text(text, light) => {
                    emit(StreamedRow::Entries(&self.entries(text, light, &runtime)));
                }
                StoredRow::Built(value) => emit(StreamedRow::Value(value)),
            }
        }
    }
}

/// Whether a stored light record can lead a row printed entry by entry: every key written
/// without escapes (so its text is its name), none an array index (JavaScript prints those
/// first), and none a key the heavy collections or the body would replace.
fn printable(light: &str, spans: &[MemberSpan]) -> bool {
    spans.iter().map(|span| span.of(light)).all(|(k, _)| {
        !k.contains('\\')
            && !pm_engine::json::is_array_index(k)
            && k != "body"
            && !HEAVY_KEYS.contains(&k)
    })
}
