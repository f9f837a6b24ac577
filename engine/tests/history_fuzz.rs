//! Generators of arbitrary and forged history (patch operations on any pointer with any value,
//! chains recorded from a reference replay, torn and forged stream bytes) and the invariants
//! every history consumer keeps on them; shared by `test_history_props` and `test_history_lines`.

use std::path::Path;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::test_runner::FileFailurePersistence;
use serde_json::{Map, Value, json};

use pm_engine::Error;
use pm_engine::hash::{EMPTY_DOC_HASH, HashEpoch, replay_hash};
use pm_engine::history::diff::{history_state, state_patch};
use pm_engine::history::{
    ChainIssueKind, ChainReport, HistoryEntry, PatchOp, ReplayError, StreamRead, apply_strict,
    check_drift, parse_stream, parse_stream_heads, replay_to, replay_until, verify_chain,
};
use pm_engine::item::ItemDoc;

/// Returns the configuration of a property test: `cases` cases, failures persisted in
/// `proptest-regressions/<file>.txt` of the package (integration tests have no `lib.rs` for
/// proptest's default location), so that they are committed and replayed first.
pub fn config(cases: u32, file: &'static str) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(file))),
        ..ProptestConfig::default()
    }
}

/// Metadata keys: those canonicalization treats specially, plain ones, and keys that need
/// pointer escapes or look like array indexes.
const KEYS: &[&str] = &[
    "id",
    "title",
    "type",
    "status",
    "priority",
    "tags",
    "created_at",
    "updated_at",
    "assignee",
    "parent",
    "dependencies",
    "comments",
    "notes",
    "files",
    "docs",
    "tests",
    "test_runs",
    "reminders",
    "events",
    "plan_steps",
    "plan_validation",
    "type_options",
    "confidence",
    "severity",
    "pm_format_version",
    "deadline",
    "a/b",
    "a~b",
    "~1",
    "",
    "0",
    "10",
    "é",
];

/// Keys of nested records (dependencies, comments, tests, reminders, …).
const RECORD_KEYS: &[&str] = &[
    "id",
    "kind",
    "text",
    "author",
    "created_at",
    "at",
    "path",
    "scope",
    "command",
    "note",
    "status",
    "title",
    "timeout_seconds",
    "url",
    "0",
];

/// Returns a metadata key.
pub fn key() -> BoxedStrategy<String> {
    prop_oneof![
        4 => select(KEYS).prop_map(str::to_string),
        1 => "[a-z_]{1,8}",
    ]
    .boxed()
}

/// Returns a string: empty, plain, any printable text, whitespace and controls, a timestamp.
pub fn text() -> BoxedStrategy<String> {
    prop_oneof![
        Just(String::new()),
        "[a-z ]{0,12}",
        "\\PC{0,8}",
        Just(" \t\n\r\u{feff}x\u{2028}".to_string()),
        Just("2026-01-01T00:00:00.000Z".to_string()),
        Just("\u{0}\u{1f}\"\\<<<<<<<".to_string()),
    ]
    .boxed()
}

/// Returns a JSON scalar of any type, numbers at their edges included.
pub fn leaf() -> BoxedStrategy<Value> {
    prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => any::<i64>().prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
        1 => any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f)
            .map(Value::Number)),
        1 => select(&[0.5, -0.0, 1e300, 5e-324, 9007199254740993.0][..]).prop_map(Value::from),
        3 => text().prop_map(Value::String),
    ]
    .boxed()
}

/// Returns any JSON value, up to three levels of arrays and objects.
pub fn json_value() -> BoxedStrategy<Value> {
    leaf()
        .prop_recursive(3, 24, 4, |inner| {
            let record_key = prop_oneof![select(RECORD_KEYS).prop_map(str::to_string), key()];
            prop_oneof![
                vec(inner.clone(), 0..4).prop_map(Value::Array),
                vec((record_key, inner), 0..4)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
        .boxed()
}

/// Returns a metadata object with any keys and values.
pub fn metadata() -> BoxedStrategy<Map<String, Value>> {
    vec((key(), json_value()), 0..6)
        .prop_map(|members| members.into_iter().collect())
        .boxed()
}

/// Returns a document with an id (and mostly a `tags` array) plus anything.
pub fn doc() -> BoxedStrategy<ItemDoc> {
    (metadata(), vec("[a-z]{1,5}", 0..3), text(), any::<bool>())
        .prop_map(|(mut metadata, tags, body, with_tags)| {
            metadata.insert("id".into(), json!("pm-a"));
            if with_tags {
                metadata.insert("tags".into(), json!(tags));
            }
            ItemDoc { metadata, body }
        })
        .boxed()
}

/// Returns a `{metadata, body}` value: what a legal root `add`/`replace` carries.
pub fn shaped_root() -> BoxedStrategy<Value> {
    (metadata(), text())
        .prop_map(|(metadata, body)| json!({"metadata": metadata, "body": body}))
        .boxed()
}

fn segment() -> BoxedStrategy<String> {
    prop_oneof![
        4 => key().prop_map(|k| k.replace('~', "~0").replace('/', "~1")),
        1 => "[0-9]{1,2}",
        1 => Just("-".to_string()),
        1 => select(&["~", "~2", "~01", "00", "-1", "18446744073709551616", " ", "body"][..])
            .prop_map(str::to_string),
    ]
    .boxed()
}

/// Returns a JSON Pointer: the root, `/metadata`, `/body`, the legacy `/front_matter`, deep,
/// escaped and index pointers, and pointers that are not pointers (no leading `/`).
pub fn pointer() -> BoxedStrategy<String> {
    let fixed = select(
        &[
            "",
            "/",
            "/metadata",
            "/body",
            "/front_matter",
            "metadata",
            "#/body",
            "/body/0",
            "/metadata/",
            "/metadata/tags/-",
            "/metadata/tags/0",
        ][..],
    )
    .prop_map(str::to_string);
    let segments =
        || vec(segment(), 0..4).prop_map(|s| s.iter().map(|s| format!("/{s}")).collect());
    prop_oneof![
        2 => fixed,
        4 => segments().prop_map(|s: String| format!("/metadata{s}")),
        1 => segments().prop_map(|s: String| format!("/front_matter{s}")),
        1 => segments(),
    ]
    .boxed()
}

/// Returns an element of a `patch` array as JSON: mostly a well-formed operation on a path
/// that likely exists (so that chains get deep), else any of the six operations or an unknown
/// one on any pointer, `value` and `from` present or missing (of any type), an extra key.
pub fn op_value() -> BoxedStrategy<Value> {
    let name = prop_oneof![
        6 => select(&["add", "remove", "replace", "move", "copy", "test"][..]),
        1 => select(&["", "ADD", "_get", "frobnicate"][..]),
    ];
    let value = proptest::option::of(prop_oneof![3 => json_value(), 1 => shaped_root()]);
    let from = proptest::option::of(prop_oneof![
        4 => pointer().prop_map(Value::String),
        1 => Just(Value::Null),
    ]);
    let any_op = (name, pointer(), value, from, any::<bool>()).prop_map(
        |(name, path, value, from, extra)| {
            let mut op = Map::new();
            op.insert("op".into(), json!(name));
            op.insert("path".into(), json!(path));
            if let Some(value) = value {
                op.insert("value".into(), value);
            }
            if let Some(from) = from {
                op.insert("from".into(), from);
            }
            if extra {
                op.insert("x".into(), json!([1]));
            }
            Value::Object(op)
        },
    );
    let existing = || {
        prop_oneof![
            4 => key().prop_map(|k| format!("/metadata/{}", k.replace('~', "~0").replace('/', "~1"))),
            1 => Just("/body".to_string()),
            1 => select(&["/metadata/tags/0", "/metadata/tags/-", "/metadata/id"][..])
                .prop_map(str::to_string),
        ]
    };
    let well_formed = (
        select(&["add", "add", "replace", "remove", "move", "copy", "test"][..]),
        existing(),
        existing(),
        prop_oneof![4 => leaf(), 1 => json_value()],
    )
        .prop_map(|(name, path, from, value)| match name {
            "remove" => json!({"op": name, "path": path}),
            "move" | "copy" => json!({"op": name, "from": from, "path": path}),
            _ => json!({"op": name, "path": path, "value": value}),
        });
    prop_oneof![3 => well_formed, 2 => any_op].boxed()
}

/// Returns a patch operation (see [`op_value`]).
pub fn op() -> BoxedStrategy<PatchOp> {
    op_value()
        .prop_filter_map("a patch operation", |v| PatchOp::from_value(v).ok())
        .boxed()
}

/// How an entry records its hashes.
#[derive(Clone, Copy, Debug)]
pub enum Hashes {
    /// The hashes of the reference replay.
    Reference,
    /// A wrong `before_hash`.
    WrongBefore,
    /// `before_hash` and `after_hash` exchanged.
    Swapped,
}

/// A stream built from a reference replay of its patches.
#[derive(Clone, Debug)]
pub struct Chain {
    /// The entries: a create of a random document, then random patches.
    pub entries: Vec<HistoryEntry>,
    /// The reference document after each entry, up to the first failing one.
    pub docs: Vec<ItemDoc>,
    /// The 0-based index of the first entry whose patch does not apply strictly (or leaves
    /// something other than `{metadata: object, body: string}`).
    pub first_failure: Option<usize>,
    /// Whether every entry records the reference hashes.
    pub reference_hashes: bool,
}

/// Returns a chain: a create, then up to five entries of random operations.
pub fn chain() -> BoxedStrategy<Chain> {
    let hashes = prop_oneof![
        6 => Just(Hashes::Reference),
        1 => Just(Hashes::WrongBefore),
        1 => Just(Hashes::Swapped),
    ];
    let epoch = select(
        &[
            (HashEpoch::V2, Some(2)),
            (HashEpoch::V2, None),
            (HashEpoch::V1, None),
            (HashEpoch::V1, Some(1)),
        ][..],
    );
    // An update is the patch to a new document (which applies), random operations, or both.
    let update = (
        prop_oneof![
            3 => doc().prop_map(|d| (Some(d), Vec::new())),
            2 => vec(op(), 1..4).prop_map(|ops| (None, ops)),
            1 => (doc(), vec(op(), 1..3)).prop_map(|(d, ops)| (Some(d), ops)),
        ],
        hashes,
    )
        .prop_map(|((target, ops), hashes)| (target, ops, hashes));
    (doc(), vec(update, 0..6), epoch)
        .prop_map(|(created, updates, (epoch, version))| {
            build_chain(&created, updates, epoch, version)
        })
        .boxed()
}

type Update = (Option<ItemDoc>, Vec<PatchOp>, Hashes);

fn build_chain(
    created: &ItemDoc,
    updates: Vec<Update>,
    epoch: HashEpoch,
    version: Option<u32>,
) -> Chain {
    let create = (Some(created.clone()), Vec::new(), Hashes::Reference);
    let mut state = json!({"metadata": {}, "body": ""});
    let mut prev = EMPTY_DOC_HASH.to_string();
    let mut chain = Chain {
        entries: Vec::new(),
        docs: Vec::new(),
        first_failure: None,
        reference_hashes: true,
    };
    for (index, (target, ops, hashes)) in std::iter::once(create).chain(updates).enumerate() {
        let mut patch = target.map_or_else(Vec::new, |t| state_patch(&state, &history_state(&t)));
        patch.extend(ops);
        let mut after = "f".repeat(64);
        if chain.first_failure.is_none() {
            let mut next = state.clone();
            match apply_strict(&mut next, &patch)
                .ok()
                .and_then(|()| shaped(&next))
            {
                Some(doc) => {
                    after = replay_hash(&doc, epoch);
                    chain.docs.push(doc);
                    state = next;
                }
                None => chain.first_failure = Some(index),
            }
        }
        let (before_hash, after_hash) = match hashes {
            Hashes::Reference => (prev.clone(), after.clone()),
            Hashes::WrongBefore => ("0".repeat(64), after.clone()),
            Hashes::Swapped => (after.clone(), prev.clone()),
        };
        chain.reference_hashes &= matches!(hashes, Hashes::Reference);
        let ts = format!("2026-01-01T00:00:0{}.000Z", index % 10);
        let mut entry = HistoryEntry::new(ts, "me", "update", patch, before_hash, after_hash);
        entry.item_hash_version = version;
        chain.entries.push(entry);
        prev = after;
    }
    chain
}

/// Returns the document of a `{metadata: object, body: string}` state.
pub fn shaped(state: &Value) -> Option<ItemDoc> {
    let root = state.as_object()?;
    Some(ItemDoc {
        metadata: root.get("metadata")?.as_object()?.clone(),
        body: root.get("body")?.as_str()?.to_string(),
    })
}

/// Checks every replay consumer on `entries` and returns the chain report: the sharing and
/// taking replays agree, issues are well formed (a patch failure is the last issue and stops
/// the replay), point-in-time replay agrees with the chain on what applies, and the drift
/// check answers.
pub fn check_replay(entries: &[HistoryEntry]) -> ChainReport {
    let report = verify_chain(entries);
    let mut owned = entries.to_vec();
    assert_eq!(
        pm_engine::history::replay::verify_chain_taking(&mut owned),
        report,
        "the taking replay differs"
    );
    let mut last = 0;
    for issue in &report.issues {
        assert!((1..=entries.len()).contains(&issue.entry), "{issue:?}");
        assert!(
            issue.entry >= last,
            "issues out of order: {:?}",
            report.issues
        );
        last = issue.entry;
        match issue.kind {
            ChainIssueKind::PatchApplyFailed => assert!(issue.detail.is_some(), "{issue:?}"),
            _ => assert!(
                issue.expected.is_some() && issue.found.is_some(),
                "{issue:?}"
            ),
        }
    }
    let failure = report
        .issues
        .iter()
        .position(|i| i.kind == ChainIssueKind::PatchApplyFailed);
    match failure {
        Some(at) => {
            assert_eq!(at + 1, report.issues.len(), "issues after a patch failure");
            assert_eq!(report.issues[at].entry, report.applied + 1);
        }
        None => assert_eq!(report.applied, entries.len()),
    }
    for version in 0..=entries.len() {
        match replay_to(entries, version) {
            Ok(state) => {
                assert!(version <= report.applied, "replayed past a failing patch");
                assert_eq!(state.version, version);
                if version == entries.len() {
                    assert_eq!(state.doc, report.doc);
                }
            }
            Err(ReplayError::Patch(issue)) => {
                assert!(version > report.applied, "{issue:?} at version {version}");
                assert_eq!(Some(&issue), failure.map(|at| &report.issues[at]));
            }
            Err(err) => panic!("version {version} of {}: {err:?}", entries.len()),
        }
    }
    assert_eq!(
        replay_to(entries, entries.len() + 1),
        Err(ReplayError::VersionOutOfRange {
            version: entries.len() + 1,
            entries: entries.len()
        })
    );
    // Entries up to the first unparseable `ts` apply: all of them when none fails.
    match replay_until(entries, i64::MAX) {
        Ok(state) => assert!(state.version <= report.applied),
        Err(ReplayError::Patch(issue)) => {
            assert_eq!(Some(&issue), failure.map(|at| &report.issues[at]));
        }
        Err(err) => panic!("replay_until: {err:?}"),
    }
    if let Some(last) = entries.last() {
        let drift = check_drift(&report.doc, entries, report.epoch);
        assert!(drift.is_none_or(|d| d.expected == last.after_hash));
    }
    report
}

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
                assert_eq!(alone.entries, [entry.clone()]);
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
