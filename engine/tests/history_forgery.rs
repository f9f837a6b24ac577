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

use crate::history_fuzz::{json_value, op_value, text};

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

/// Every key `HistoryEntry` types.
const ENTRY_KEYS: &[&str] = &[
    "ts",
    "author",
    "author_source",
    "agent_harness",
    "agent_model",
    "agent_model_source",
    "agent_instance",
    "agent_provenance",
    "agent_episode",
    "op",
    "patch",
    "before_hash",
    "after_hash",
    "item_hash_version",
    "message",
    "context",
];

/// A JSON object shaped like a history entry: each known key absent, well typed (mostly) or
/// of any JSON type, `item_hash_version` legal or not, extra keys, in any order.
pub fn entry_object() -> BoxedStrategy<Value> {
    /// Absent, well typed or of any JSON type, by the given weights.
    fn member(weights: [u32; 3], well_typed: BoxedStrategy<Value>) -> BoxedStrategy<Option<Value>> {
        let [absent, typed, any] = weights;
        prop_oneof![
            absent => Just(None),
            typed => well_typed.prop_map(Some),
            any => json_value().prop_map(Some),
        ]
        .boxed()
    }
    let slot = |typed| member([1, 16, 1], typed);
    let optional = |typed| member([4, 3, 1], typed);
    let string = || text().prop_map(Value::String).boxed();
    let hash = || prop_oneof!["[0-9a-f]{64}".prop_map(Value::String), string()].boxed();
    let required = (
        slot(string()),
        slot(string()),
        slot(string()),
        slot(hash()),
        slot(hash()),
        slot(vec(op_value(), 0..4).prop_map(Value::Array).boxed()),
    );
    let version = select(vec![
        None,
        Some(json!(1)),
        Some(json!(2)),
        Some(json!(2.0)),
        Some(json!(null)),
        Some(json!(3)),
        Some(json!("2")),
        Some(json!(1.5)),
    ]);
    let strings = vec(optional(string()), 6);
    let structured = vec(optional(json_value()), 3);
    let extra = vec(("[a-z_]{1,10}|x-[A-Z]{1,3}", json_value()), 0..3);
    (required, version, strings, structured, extra)
        .prop_flat_map(
            |((ts, author, op, before, after, patch), version, strings, structured, extra)| {
                let known = [
                    ("ts", ts),
                    ("author", author),
                    ("op", op),
                    ("before_hash", before),
                    ("after_hash", after),
                    ("patch", patch),
                    ("item_hash_version", version),
                ];
                let optional_names = [
                    "author_source",
                    "agent_harness",
                    "agent_model",
                    "agent_model_source",
                    "agent_instance",
                    "message",
                    "agent_provenance",
                    "agent_episode",
                    "context",
                ];
                let mut members: Vec<(String, Value)> = known
                    .into_iter()
                    .chain(
                        optional_names
                            .into_iter()
                            .zip(strings.into_iter().chain(structured)),
                    )
                    .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
                    .collect();
                members.extend(
                    extra
                        .into_iter()
                        .filter(|(k, _)| !ENTRY_KEYS.contains(&k.as_str())),
                );
                Just(members).prop_shuffle()
            },
        )
        .prop_map(|members| Value::Object(members.into_iter().collect()))
        .boxed()
}

/// Returns whether `HistoryEntry::from_value` must accept `value`, by the rules of the line
/// format: the five required strings, a `patch` array of operations (`op` and `path`
/// strings, `from` absent, a string or null), `item_hash_version` absent, null, 1 or 2.
pub fn is_valid_entry(value: &Value) -> bool {
    let Some(map) = value.as_object() else {
        return false;
    };
    let strings = ["ts", "author", "op", "before_hash", "after_hash"]
        .iter()
        .all(|k| map.get(*k).is_some_and(Value::is_string));
    let op_ok = |op: &Value| {
        op.get("op").is_some_and(Value::is_string)
            && op.get("path").is_some_and(Value::is_string)
            && op.get("from").is_none_or(|f| f.is_string() || f.is_null())
    };
    let patch = map
        .get("patch")
        .and_then(Value::as_array)
        .is_some_and(|ops| ops.iter().all(op_ok));
    let version = match map.get("item_hash_version") {
        None | Some(Value::Null) => true,
        Some(Value::Number(n)) => matches!(n.as_f64(), Some(v) if v == 1.0 || v == 2.0),
        Some(_) => false,
    };
    strings && patch && version
}
