//! JSON encoding of rendered values: pm's `JSON.stringify(value, null, 2)` plus a newline.
//! The byte rules (strings, numbers, key order) live in `pm_engine::json`; this file only
//! frames them: [`encode`] returns the whole text, [`write`] streams the same bytes through a
//! small buffer so a large result is never held twice, and [`len`] counts them without
//! keeping any.

use std::io::{self, Write};

use serde_json::{Map, Value};

/// How many bytes [`write`] gathers before handing them to the writer.
pub(super) const CHUNK: usize = 64 * 1024;

/// Returns the pretty JSON text of `value` with a trailing newline.
pub(super) fn encode(value: &Value) -> String {
    let mut text = pm_engine::json::to_pretty(value);
    text.push('\n');
    text
}

/// Writes exactly [`encode`]'s bytes to `out`, `CHUNK` bytes at a time.
///
/// # Errors
/// The first error of `out`.
pub(super) fn write(value: &Value, out: &mut dyn Write) -> io::Result<()> {
    let mut sink = Sink::Write {
        buf: String::with_capacity(CHUNK + 1024),
        out,
        failed: None,
    };
    write_value(&mut sink, value, 0);
    sink.push("\n");
    sink.finish()
}

/// Returns `encode(value).len()` without building the text.
pub(super) fn len(value: &Value) -> usize {
    count(|sink| {
        write_value(sink, value, 0);
        sink.push("\n");
    })
}

/// Returns the bytes one entry of a root object prints: `\n  "key": value` (the value
/// indented one level), without the separating comma.
pub(super) fn root_entry_len(key: &str, value: &Value) -> usize {
    count(|sink| {
        newline(sink, 1);
        pm_engine::json::write_string(sink.buf(), key);
        sink.push(": ");
        write_value(sink, value, 1);
    })
}

fn count(frame: impl FnOnce(&mut Sink<'_>)) -> usize {
    let mut sink = Sink::Count {
        buf: String::with_capacity(1024),
        bytes: 0,
    };
    frame(&mut sink);
    match sink {
        Sink::Count { buf, bytes } => bytes + buf.len(),
        Sink::Write { .. } => 0,
    }
}

/// Where framed bytes go: a writer behind a buffer, or only a byte count.
pub(super) enum Sink<'a> {
    Write {
        buf: String,
        out: &'a mut dyn Write,
        failed: Option<io::Error>,
    },
    Count {
        buf: String,
        bytes: usize,
    },
}

impl Sink<'_> {
    /// The buffer scalars are appended to (`pm_engine::json` writes into a `String`).
    pub(super) fn buf(&mut self) -> &mut String {
        match self {
            Sink::Write { buf, .. } | Sink::Count { buf, .. } => buf,
        }
    }

    pub(super) fn push(&mut self, text: &str) {
        self.buf().push_str(text);
    }

    /// Hands the buffer on once it holds a chunk.
    pub(super) fn spill(&mut self) {
        match self {
            Sink::Write { buf, out, failed } if buf.len() >= CHUNK => {
                if failed.is_none()
                    && let Err(e) = out.write_all(buf.as_bytes())
                {
                    *failed = Some(e);
                }
                buf.clear();
            }
            Sink::Count { buf, bytes } if buf.len() >= CHUNK => {
                *bytes += buf.len();
                buf.clear();
            }
            _ => {}
        }
    }

    pub(super) fn finish(self) -> io::Result<()> {
        match self {
            Sink::Write {
                failed: Some(e), ..
            } => Err(e),
            Sink::Write { buf, out, .. } => out.write_all(buf.as_bytes()),
            Sink::Count { .. } => Ok(()),
        }
    }
}

pub(super) fn write_value(sink: &mut Sink<'_>, value: &Value, depth: usize) {
    match value {
        Value::Null => sink.push("null"),
        Value::Bool(b) => sink.push(if *b { "true" } else { "false" }),
        Value::Number(n) => sink.push(&pm_engine::json::format_number(n)),
        Value::String(s) => pm_engine::json::write_string(sink.buf(), s),
        Value::Array(items) if items.is_empty() => sink.push("[]"),
        Value::Array(items) => {
            sink.push("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    sink.push(",");
                }
                newline(sink, depth + 1);
                write_value(sink, item, depth + 1);
                sink.spill();
            }
            newline(sink, depth);
            sink.push("]");
        }
        Value::Object(map) if map.is_empty() => sink.push("{}"),
        Value::Object(map) => write_object(sink, map, depth),
    }
}

fn write_object(sink: &mut Sink<'_>, map: &Map<String, Value>, depth: usize) {
    sink.push("{");
    let mut first = true;
    let mut entry = |sink: &mut Sink<'_>, key: &str, value: &Value| {
        if !std::mem::take(&mut first) {
            sink.push(",");
        }
        newline(sink, depth + 1);
        pm_engine::json::write_string(sink.buf(), key);
        sink.push(": ");
        write_value(sink, value, depth + 1);
    };
    // JavaScript enumerates integer-like keys first; most objects have none, and then the
    // order is the insertion order.
    if map.keys().any(|k| pm_engine::json::is_array_index(k)) {
        for key in pm_engine::json::js_key_order(map, false) {
            entry(sink, key, &map[key.as_str()]);
        }
    } else {
        for (key, value) in map {
            entry(sink, key, value);
        }
    }
    newline(sink, depth);
    sink.push("}");
}

pub(super) fn newline(sink: &mut Sink<'_>, depth: usize) {
    const SPACES: &str = "                                                                ";
    let buf = sink.buf();
    buf.push('\n');
    let mut width = depth * 2;
    while width > 0 {
        let n = width.min(SPACES.len());
        buf.push_str(&SPACES[..n]);
        width -= n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn samples() -> Vec<Value> {
        let deep = (0..40).fold(json!("leaf"), |acc, i| json!({ format!("k{i}"): [acc] }));
        vec![
            json!(null),
            json!(true),
            json!(-0.0),
            json!(1e21),
            json!(9_007_199_254_740_993_u64),
            json!(0.1),
            json!("a\u{e9}\"\\\n\u{1}\u{2028}😀"),
            json!([]),
            json!({}),
            json!({"b": 1, "10": 2, "a": {"2": [], "1": {}, "x": [1, [2, [3]]]}, "0": null}),
            json!({"items": (0..3000).map(|i| json!({"id": format!("pm-{i}"), "n": i,
                "tags": ["x", "y"], "body": "z".repeat(i % 97)})).collect::<Vec<_>>()}),
            deep,
        ]
    }

    #[test]
    fn streamed_and_counted_bytes_equal_the_encoded_text() -> io::Result<()> {
        for value in samples() {
            let text = encode(&value);
            let mut out = Vec::new();
            write(&value, &mut out)?;
            assert_eq!(String::from_utf8_lossy(&out), text);
            assert_eq!(len(&value), text.len());
            if let Value::Object(map) = &value
                && !map.is_empty()
            {
                let entries: usize = map.iter().map(|(k, v)| root_entry_len(k, v)).sum();
                assert_eq!(entries + map.len() + 3, text.len());
            }
        }
        Ok(())
    }

    #[test]
    fn a_failed_write_is_reported() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::from(io::ErrorKind::BrokenPipe))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let value = json!({"items": vec!["x".repeat(1000); 200]});
        let err = write(&value, &mut Closed).err().map(|e| e.kind());
        assert_eq!(err, Some(io::ErrorKind::BrokenPipe));
    }
}
