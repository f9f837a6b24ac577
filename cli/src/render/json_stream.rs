//! JSON output whose rows are produced while printing: a root object written as usual except
//! that one key's empty array is replaced by rows a [`RowSource`] hands over one at a time.
//! A row is either a value or a list of entries, some of them stored compact JSON text that is
//! re-indented in place ([`super::compact`]), so a large listing is neither held as values
//! nor as text in full. The bytes equal those of the same rows rendered as one value.

use std::io::{self, Write};

use serde_json::{Map, Value};

use super::json::{CHUNK, Sink, newline, write_value};

/// One entry of a row object.
pub enum RowEntry<'a> {
    /// A key and a value to print.
    Value(&'a str, &'a Value),
    /// A key and the compact text of `pm_engine::json::to_compact`, printed re-indented.
    Compact(&'a str, &'a str),
    /// A key and a string value.
    Text(&'a str, &'a str),
}

/// One row of a streamed array.
pub enum StreamedRow<'a> {
    /// A row built as a value.
    Value(&'a Value),
    /// An object row given entry by entry (keys in print order, none of them an array index:
    /// JavaScript would print those first).
    Entries(&'a [RowEntry<'a>]),
}

/// Produces the rows of a streamed array, in order.
pub trait RowSource {
    /// Hands every row to `emit`.
    fn each_row(&self, emit: &mut dyn FnMut(StreamedRow<'_>));
}

/// Writes the root object `root` with the rows of `rows` in place of its `key` entry (whose
/// own value is ignored), followed by a newline.
///
/// # Errors
/// The first error of `out`.
pub(super) fn write(
    root: &Map<String, Value>,
    key: &str,
    rows: &dyn RowSource,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut sink = Sink::Write {
        buf: String::with_capacity(CHUNK + 1024),
        out,
        failed: None,
    };
    if root.is_empty() {
        sink.push("{}");
    } else {
        sink.push("{");
        for (i, (name, value)) in root.iter().enumerate() {
            if i > 0 {
                sink.push(",");
            }
            newline(&mut sink, 1);
            pm_engine::json::write_string(sink.buf(), name);
            sink.push(": ");
            if name == key {
                write_rows(&mut sink, rows, 1);
            } else {
                write_value(&mut sink, value, 1);
            }
        }
        newline(&mut sink, 0);
        sink.push("}");
    }
    sink.push("\n");
    sink.finish()
}

fn write_rows(sink: &mut Sink<'_>, rows: &dyn RowSource, depth: usize) {
    let mut count = 0usize;
    sink.push("[");
    rows.each_row(&mut |row| {
        if count > 0 {
            sink.push(",");
        }
        count += 1;
        newline(sink, depth + 1);
        match row {
            StreamedRow::Value(value) => write_value(sink, value, depth + 1),
            StreamedRow::Entries(entries) => write_entries(sink, entries, depth + 1),
        }
        sink.spill();
    });
    if count > 0 {
        newline(sink, depth);
    }
    sink.push("]");
}

fn write_entries(sink: &mut Sink<'_>, entries: &[RowEntry<'_>], depth: usize) {
    if entries.is_empty() {
        sink.push("{}");
        return;
    }
    sink.push("{");
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 {
            sink.push(",");
        }
        newline(sink, depth + 1);
        let (RowEntry::Value(key, _) | RowEntry::Compact(key, _) | RowEntry::Text(key, _)) = entry;
        pm_engine::json::write_string(sink.buf(), key);
        sink.push(": ");
        match entry {
            RowEntry::Value(_, value) => write_value(sink, value, depth + 1),
            RowEntry::Compact(_, text) => super::compact::reindent(sink.buf(), text, depth + 1),
            RowEntry::Text(_, text) => pm_engine::json::write_string(sink.buf(), text),
        }
        sink.spill();
    }
    newline(sink, depth);
    sink.push("}");
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Rows held as values, streamed either whole or as entries with compact collections.
    struct Rows(Vec<Value>, bool);

    impl RowSource for Rows {
        fn each_row(&self, emit: &mut dyn FnMut(StreamedRow<'_>)) {
            for row in &self.0 {
                let Value::Object(map) = row else {
                    emit(StreamedRow::Value(row));
                    continue;
                };
                if !self.1 {
                    emit(StreamedRow::Value(row));
                    continue;
                }
                let texts: Vec<(&str, Option<String>)> = map
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.as_str(),
                            v.is_array().then(|| pm_engine::json::to_compact(v)),
                        )
                    })
                    .collect();
                let entries: Vec<RowEntry<'_>> = texts
                    .iter()
                    .zip(map.values())
                    .map(|((k, text), v)| match (text, v) {
                        (Some(text), _) => RowEntry::Compact(k, text),
                        (None, Value::String(s)) => RowEntry::Text(k, s),
                        (None, v) => RowEntry::Value(k, v),
                    })
                    .collect();
                emit(StreamedRow::Entries(&entries));
            }
        }
    }

    fn streamed(root: &Value, rows: &Rows) -> io::Result<String> {
        let mut out = Vec::new();
        if let Value::Object(map) = root {
            write(map, "items", rows, &mut out)?;
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    #[test]
    fn streamed_rows_print_as_the_whole_value_would() -> io::Result<()> {
        let rows: Vec<Value> = (0..2500)
            .map(|i| {
                json!({"id": format!("pm-{i}"), "n": i, "comments": [{"text": "a,b", "at": i}],
                    "files": [], "body": "z".repeat(i % 97), "meta": {}})
            })
            .collect();
        for rows in [Vec::new(), vec![json!({})], vec![json!(1), json!([])], rows] {
            let whole = json!({"items": rows.clone(), "count": rows.len(), "next": null});
            let root = json!({"items": [], "count": rows.len(), "next": null});
            let expected = super::super::json::encode(&whole);
            assert_eq!(streamed(&root, &Rows(rows.clone(), false))?, expected);
            assert_eq!(streamed(&root, &Rows(rows, true))?, expected);
        }
        Ok(())
    }
}
