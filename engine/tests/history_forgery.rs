//! Forged history bytes (lines cut at any byte, random bytes, invalid UTF-8, JSON that is not
//! an entry, wrong or repeated keys, conflict markers, BOMs, CRLF) and the invariants the
//! stream readers keep on them; shared by `test_history_lines` and `test_file_props`.

use std::path::Path;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use serde_json::{Value, json};

use pm_engine::Error;
use pm_engine::history::{StreamRead, parse_stream, parse_stream_heads};

use crate::history_fuzz::{json_value, op_value};

/// One way to damage a history line.
#[derive(Clone, Debug)]
pub enum Forgery {
    /// The line as written.
    Keep,
    /// Cut at a byte offset (possibly inside a UTF-8 sequence).
    Truncate(Index),
    /// One byte replaced.
    Byte(Index, u8),
    /// Bytes inserted.
    Insert(Index, Vec<u8>),
    /// Random bytes instead of the line.
    Bytes(Vec<u8>),
    /// Valid JSON that is (most likely) not an entry.
    Json(Value),
    /// A known key set to another value, or removed.
    Field(&'static str, Option<Value>),
    /// A known key given a second time.
    Repeat(&'static str, Value),
    /// The patch replaced by these elements.
    Patch(Vec<Value>),
    /// A git conflict-marker line instead of the line.
    Marker(&'static str),
    /// A byte-order mark before the line.
    Bom,
    /// Blank or whitespace-only.
    Blank(&'static str),
}

const FIELDS: &[&str] = &[
    "ts",
    "author",
    "op",
    "patch",
    "before_hash",
    "after_hash",
    "item_hash_version",
    "message",
    "agent_harness",
    "agent_instance",
    "agent_provenance",
    "context",
];

/// Returns a forgery (most lines are kept, so that streams still hold entries).
pub fn forgery() -> BoxedStrategy<Forgery> {
    let hash_like = prop_oneof![
        2 => json_value(),
        1 => "[0-9a-f]{64}".prop_map(Value::String),
        1 => select(vec![json!(1), json!(2), json!(1.0), json!(3), json!("2")]),
    ];
    prop_oneof![
        6 => Just(Forgery::Keep),
        2 => any::<Index>().prop_map(Forgery::Truncate),
        1 => (any::<Index>(), any::<u8>()).prop_map(|(at, b)| Forgery::Byte(at, b)),
        1 => (any::<Index>(), vec(any::<u8>(), 1..4)).prop_map(|(at, b)| Forgery::Insert(at, b)),
        1 => vec(any::<u8>(), 0..24).prop_map(Forgery::Bytes),
        1 => json_value().prop_map(Forgery::Json),
        2 => (select(FIELDS), proptest::option::of(hash_like.clone()))
            .prop_map(|(k, v)| Forgery::Field(k, v)),
        1 => (select(FIELDS), hash_like).prop_map(|(k, v)| Forgery::Repeat(k, v)),
        2 => vec(prop_oneof![4 => op_value(), 1 => json_value()], 0..3).prop_map(Forgery::Patch),
        1 => select(&["<<<<<<< HEAD", "=======", ">>>>>>> theirs", "  ======= x"][..])
            .prop_map(Forgery::Marker),
        1 => Just(Forgery::Bom),
        1 => select(&["", "  ", "\t\u{feff}", "\r"][..]).prop_map(Forgery::Blank),
    ]
    .boxed()
}

/// Returns the bytes of `line` damaged by `forgery`.
pub fn forge(line: &str, forgery: &Forgery) -> Vec<u8> {
    let bytes = line.as_bytes();
    let at = |index: &Index| index.index(bytes.len() + 1);
    match forgery {
        Forgery::Keep => bytes.to_vec(),
        Forgery::Truncate(index) => bytes[..at(index)].to_vec(),
        Forgery::Byte(index, byte) => {
            let mut out = bytes.to_vec();
            if let Some(b) = out.get_mut(at(index)) {
                *b = *byte;
            }
            out
        }
        Forgery::Insert(index, inserted) => {
            let mut out = bytes.to_vec();
            let at = at(index);
            out.splice(at..at, inserted.iter().copied());
            out
        }
        Forgery::Bytes(out) => out.clone(),
        Forgery::Json(value) => value.to_string().into_bytes(),
        Forgery::Field(key, value) => {
            let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(line) else {
                return bytes.to_vec();
            };
            match value {
                Some(value) => map.insert((*key).to_string(), value.clone()),
                None => map.shift_remove(*key),
            };
            Value::Object(map).to_string().into_bytes()
        }
        Forgery::Repeat(key, value) => {
            let rest = line.strip_prefix('{').unwrap_or(line);
            format!("{{{}:{value},{rest}", json!(key)).into_bytes()
        }
        Forgery::Patch(ops) => forge(line, &Forgery::Field("patch", Some(json!(ops)))),
        Forgery::Marker(marker) => marker.as_bytes().to_vec(),
        Forgery::Bom => [b"\xef\xbb\xbf", bytes].concat(),
        Forgery::Blank(blank) => blank.as_bytes().to_vec(),
    }
}

/// Returns the stream bytes of `lines`, each forged, joined with `\n` or `\r\n`, with or
/// without a final newline.
pub fn forge_stream(
    lines: &[String],
    forgeries: &[Forgery],
    crlf: bool,
    final_newline: bool,
) -> Vec<u8> {
    let separator: &[u8] = if crlf { b"\r\n" } else { b"\n" };
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(separator);
        }
        let forgery = forgeries.get(i).unwrap_or(&Forgery::Keep);
        out.extend(forge(line, forgery));
    }
    if final_newline && !lines.is_empty() {
        out.extend_from_slice(separator);
    }
    out
}

/// Checks the stream readers on `bytes` and returns what the full parser read: either a
/// structured error naming a line that exists, or entries whose lines and spans are in the
/// bytes and re-read alone as the same entry; the heads fast path answers only what the full
/// parser reads without error, with the same fields.
pub fn check_stream(bytes: &[u8]) -> Option<StreamRead> {
    let path = Path::new("history/pm-a.jsonl");
    let parsed = parse_stream(bytes, "pm-a", path);
    let lines = bytes.split(|b| *b == b'\n').count();
    match &parsed {
        Ok(read) => {
            assert_eq!(read.entries.len(), read.lines.len());
            assert_eq!(read.entries.len(), read.spans.len());
            assert!(
                read.lines.windows(2).all(|w| w[0] < w[1]),
                "{:?}",
                read.lines
            );
            for (entry, span) in read.entries.iter().zip(&read.spans) {
                let alone = parse_stream(&bytes[span.clone()], "pm-a", path)
                    .unwrap_or_else(|err| panic!("a read line does not read alone: {err}"));
                assert_eq!(alone.entries, std::slice::from_ref(entry));
            }
            if let Some(tail) = &read.torn_tail {
                assert!(tail.line <= lines && read.lines.iter().all(|l| *l < tail.line));
                assert_eq!(
                    usize::try_from(tail.offset).ok().map(|o| o + tail.len),
                    Some(bytes.len())
                );
            }
        }
        Err(Error::HistoryInvalid { line, id, .. }) => {
            assert!((1..=lines).contains(line) && id == "pm-a", "{parsed:?}");
        }
        Err(Error::ConflictMarkers { line, history, .. }) => {
            assert!((1..=lines).contains(line) && *history, "{parsed:?}");
        }
        Err(err) => panic!("unexpected stream error {err:?}"),
    }
    if let Some(heads) = parse_stream_heads(bytes) {
        let read = parsed
            .as_ref()
            .unwrap_or_else(|err| panic!("heads answered a stream the parser rejects: {err}"));
        assert!(read.torn_tail.is_none(), "heads answered a torn stream");
        assert_eq!(heads.spans, read.spans);
        assert_eq!(heads.heads.len(), read.entries.len());
        for (h, e) in heads.heads.iter().zip(&read.entries) {
            assert_eq!((&*h.ts, &*h.author, &*h.op), (&*e.ts, &*e.author, &*e.op));
            assert_eq!(h.agent_harness.as_deref(), e.agent_harness.as_deref());
            assert_eq!(h.agent_instance.as_deref(), e.agent_instance.as_deref());
            assert_eq!(h.message.as_deref(), e.message.as_deref());
            assert_eq!(h.patch_len, e.patch.len());
        }
    }
    parsed.ok()
}
