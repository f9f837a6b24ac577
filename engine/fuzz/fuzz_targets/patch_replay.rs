//! Fuzz target: JSON text `[doc, ops]` or `[doc, ops, after]`. The operations apply to the
//! document strictly or leniently without a panic (a failing operation changes nothing), and
//! the patch generated from `doc` to an object `after` turns `doc` into `after` (JSON input
//! nests at most 128 levels, far below the patch nesting bound).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pm_engine::history::diff::compare_for_history;
use pm_engine::history::patch::{apply_op, json_equal};
use pm_engine::history::{PatchOp, apply_lenient, apply_strict};
use pm_engine::json::to_compact;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Array(parts)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let (Some(doc), Some(Value::Array(ops))) = (parts.first(), parts.get(1)) else {
        return;
    };
    let ops: Vec<PatchOp> = ops
        .iter()
        .filter_map(|op| PatchOp::from_value(op.clone()).ok())
        .collect();
    for op in &ops {
        let mut state = doc.clone();
        if apply_op(&mut state, op).is_err() {
            assert_eq!(to_compact(&state), to_compact(doc), "a failing {op:?} changed it");
        }
    }
    let _ = apply_strict(&mut doc.clone(), &ops);
    let _ = apply_lenient(&mut doc.clone(), &ops);
    if let (Value::Object(_), Some(after @ Value::Object(_))) = (doc, parts.get(2)) {
        let patch = compare_for_history(doc, after);
        let mut state = doc.clone();
        assert!(apply_strict(&mut state, &patch).is_ok(), "{patch:?}");
        assert!(json_equal(&state, after), "{patch:?}");
    }
});
