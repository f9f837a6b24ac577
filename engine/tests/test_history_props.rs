//! Property tests of history replay on arbitrary patches: every JSON-Patch operation (the six,
//! unknown ones, root and escaped pointers, missing or extra `value`/`from`, values of every
//! type) either applies or fails its entry with `patch_apply_failed`; nothing panics, and a
//! chain recorded from a reference replay verifies to the reference document.

use proptest::prelude::*;
use serde_json::Value;

use pm_engine::history::diff::history_state;
use pm_engine::history::patch::apply_op;
use pm_engine::history::{ChainIssueKind, apply_lenient, apply_strict, item_patch};
use pm_engine::json::to_compact;

use crate::history_fuzz::{
    chain, check_replay, config, doc, json_value, op, op_value, shaped, shaped_root,
};

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
