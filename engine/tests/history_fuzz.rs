//! Generators of arbitrary history (patch operations on any pointer with any value, chains
//! recorded from a reference replay) and the invariants every replay consumer keeps on them;
//! shared by the history and file property tests (forged bytes are in `history_forgery`).

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{Map, Value, json};

use pm_engine::hash::{EMPTY_DOC_HASH, HashEpoch, replay_hash};
use pm_engine::history::diff::{history_state, state_patch};
use pm_engine::history::{
    ChainIssueKind, ChainReport, HistoryEntry, PatchOp, ReplayError, apply_strict, check_drift,
    replay_to, replay_until, verify_chain,
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
