//! Property tests of history replay on arbitrary patches: every JSON-Patch operation (the six,
//! unknown ones, root and escaped pointers, missing or extra `value`/`from`, values of every
//! type) either applies or fails its entry with `patch_apply_failed`; nothing panics, and a
//! chain recorded from a reference replay verifies to the reference document.

use proptest::prelude::*;
use serde_json::Value;

use pm_engine::history::PatchOp;

use pm_engine::history::diff::compare_for_history;
use pm_engine::history::diff::history_state;
use pm_engine::history::patch::{apply_op, json_equal};
use pm_engine::history::{ChainIssueKind, apply_lenient, apply_strict, item_patch};
use pm_engine::json::to_compact;

use crate::history_fuzz::{
    chain, check_replay, config, doc, json_value, key, op, op_value, shaped, shaped_root,
};
use proptest::sample::{Index, select};

proptest! {
    #![proptest_config(config(1024, "proptest-regressions/test_history_props.txt"))]

    /// Replay agrees with the reference replay entry by entry: the same entry fails, the same
    /// document results, and reference hashes verify.
    #[test]
    fn any_patch_applies_or_fails_its_entry(chain in chain()) {
        let report = check_replay(&chain.entries);
        let failed = report
            .issues
            .iter()
            .find(|i| i.kind == ChainIssueKind::PatchApplyFailed)
            .map(|i| i.entry - 1);
        prop_assert_eq!(failed, chain.first_failure);
        if chain.first_failure.is_none() {
            prop_assert_eq!(Some(&report.doc), chain.docs.last());
            if chain.reference_hashes {
                prop_assert!(report.is_ok(), "{:?}", report.issues);
            }
        }
    }

    /// One operation on any state (shaped or not) applies or leaves the state exactly as it
    /// was, key order included; lenient application never panics either.
    #[test]
    fn a_failing_operation_changes_nothing(
        state in prop_oneof![3 => shaped_root(), 1 => json_value()],
        ops in proptest::collection::vec(op(), 1..4),
    ) {
        for op in &ops {
            let mut after = state.clone();
            if apply_op(&mut after, op).is_err() {
                prop_assert_eq!(to_compact(&after), to_compact(&state), "{:?}", op);
            }
        }
        let mut strict = state.clone();
        let strict_ok = apply_strict(&mut strict, &ops).is_ok();
        let mut lenient = state.clone();
        let outcomes = apply_lenient(&mut lenient, &ops);
        prop_assert_eq!(outcomes.len(), ops.len());
        if strict_ok {
            prop_assert_eq!(lenient, strict);
        }
    }

    /// Operation elements that are not operations are refused when read, never later.
    #[test]
    fn operation_elements_read_or_are_refused(value in prop_oneof![op_value(), json_value()]) {
        let expected = match &value {
            Value::Object(map) => map.get("op").is_some_and(Value::is_string)
                && map.get("path").is_some_and(Value::is_string)
                && map.get("from").is_none_or(|f| f.is_string() || f.is_null()),
            _ => false,
        };
        prop_assert_eq!(pm_engine::history::PatchOp::from_value(value).is_ok(), expected);
    }

    /// The patch generated between two documents turns the first into the second.
    #[test]
    fn generated_patches_apply(before in doc(), after in doc()) {
        let patch = item_patch(&before, &after);
        let mut state = history_state(&before);
        prop_assert!(apply_strict(&mut state, &patch).is_ok(), "{:?}", patch);
        prop_assert_eq!(shaped(&state), shaped(&history_state(&after)));
    }
}

/// Returns a JSON object of any members (the root of a history state is one).
fn object(members: std::ops::Range<usize>) -> BoxedStrategy<Value> {
    proptest::collection::vec((key(), json_value()), members)
        .prop_map(|members| Value::Object(members.into_iter().collect()))
        .boxed()
}

/// Returns the pointer of every value below the root of `doc`.
fn pointers(doc: &Value, prefix: &str, out: &mut Vec<String>) {
    let children: Vec<(String, &Value)> = match doc {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| (k.replace('~', "~0").replace('/', "~1"), v))
            .collect(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), v))
            .collect(),
        _ => return,
    };
    for (token, child) in children {
        let pointer = format!("{prefix}/{token}");
        out.push(pointer.clone());
        pointers(child, &pointer, out);
    }
}

/// One operation aimed at the document: its name, a target (an existing value, a new key
/// beside one, or the end of an array), a source, and a value.
#[derive(Clone, Debug)]
struct Aim {
    name: &'static str,
    path: Index,
    target: u8,
    from: Index,
    value: Value,
}

fn aim() -> impl Strategy<Value = Aim> {
    (
        select(&["add", "replace", "remove", "copy", "move", "test"][..]),
        any::<Index>(),
        0u8..4,
        any::<Index>(),
        json_value(),
    )
        .prop_map(|(name, path, target, from, value)| Aim {
            name,
            path,
            target,
            from,
            value,
        })
}

/// Turns an aim into an operation on `doc`'s pointers (`None` when the document has none).
fn aimed_op(doc: &Value, aim: &Aim) -> Option<PatchOp> {
    let mut all = Vec::new();
    pointers(doc, "", &mut all);
    if all.is_empty() {
        return None;
    }
    let existing = all[aim.path.index(all.len())].clone();
    let parent = existing.rsplit_once('/').map_or("", |(p, _)| p).to_string();
    let path = match aim.target {
        1 => format!("{parent}/new~1key"),
        2 => format!("{parent}/-"),
        _ => existing.clone(),
    };
    let from = all[aim.from.index(all.len())].clone();
    let value = match aim.name {
        // A test mostly of the value that is there.
        "test" if aim.target != 3 => doc.pointer(&path).cloned().unwrap_or(Value::Null),
        _ => aim.value.clone(),
    };
    let op = serde_json::json!({"op": aim.name, "path": path, "from": from, "value": value});
    PatchOp::from_value(op).ok()
}

/// Returns the value `pointer` addresses after an `add` there (the last element for `-` in
/// an array; in an object `-` is a key).
fn added_at<'a>(doc: &'a Value, pointer: &str) -> Option<&'a Value> {
    let appended = pointer
        .strip_suffix("/-")
        .and_then(|parent| doc.pointer(parent)?.as_array());
    match appended {
        Some(items) => items.last(),
        None => doc.pointer(pointer),
    }
}

proptest! {
    #![proptest_config(config(256, "proptest-regressions/test_history_props.txt"))]

    /// The patch generated between any two objects (not only item states: arrays that grow
    /// and shrink, kinds that change, escaped keys) turns the first into the second.
    #[test]
    fn generated_patches_turn_any_object_into_another(before in object(0..6), after in object(0..6)) {
        let patch = compare_for_history(&before, &after);
        let mut state = before.clone();
        prop_assert!(apply_strict(&mut state, &patch).is_ok(), "{:?}", patch);
        prop_assert!(json_equal(&state, &after), "{} != {} by {:?}", state, after, patch);
    }

    /// An operation on a path that exists (or a new key or the end of an array beside one)
    /// does what RFC 6902 says when it applies: the value is at the path after add, replace,
    /// copy and move, gone after remove, and a test changes nothing.
    #[test]
    fn applied_operations_do_what_they_say(
        doc in object(1..6),
        aims in proptest::collection::vec(aim(), 1..5),
    ) {
        let mut state = doc;
        for aim in &aims {
            let Some(op) = aimed_op(&state, aim) else { break };
            let before = state.clone();
            if apply_op(&mut state, &op).is_err() {
                prop_assert_eq!(to_compact(&state), to_compact(&before), "{:?}", op);
                continue;
            }
            let moved = op.from.as_deref().and_then(|f| before.pointer(f));
            let expected = match aim.name {
                "add" | "replace" => op.value.as_ref(),
                "copy" | "move" => moved,
                _ => None,
            };
            if let Some(expected) = expected {
                let found = added_at(&state, &op.path);
                prop_assert!(found.is_some_and(|f| json_equal(f, expected)), "{:?} left {}", op, state);
            }
            match aim.name {
                "test" => prop_assert_eq!(to_compact(&state), to_compact(&before)),
                "remove" => {
                    let (parent, _) = op.path.rsplit_once('/').unwrap_or(("", ""));
                    match before.pointer(parent) {
                        Some(Value::Array(items)) => {
                            let now = state.pointer(parent).and_then(Value::as_array).map(Vec::len);
                            prop_assert_eq!(now, Some(items.len() - 1));
                        }
                        _ => prop_assert!(state.pointer(&op.path).is_none(), "{:?}", op),
                    }
                }
                _ => {}
            }
        }
    }
}
