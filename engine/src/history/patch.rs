//! RFC 6902 JSON Patch application: the strict mode replay and verification use, and the
//! lenient mode of `history-repair` (a `replace` on a missing path becomes `add`; failing ops
//! are skipped).

use std::borrow::Cow;
use std::fmt;

use serde_json::Value;

use super::bounds::check_nesting;
pub use super::bounds::{CopyBudget, MAX_COPIED_VALUES, MAX_NESTING};
use super::entry::{PatchOp, PatchOpKind};

/// Why one operation could not be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatchErrorKind {
    /// The pointer is neither empty nor starts with `/`.
    InvalidPointer,
    /// The target (for `add`: its parent) does not exist.
    PathNotFound,
    /// An array index past the end (`add` allows `len`, the others `len - 1`).
    IndexOutOfBounds,
    /// An array token that is neither digits nor (for `add`) `-`.
    InvalidIndex,
    /// `add`, `replace` or `test` without a `value`.
    MissingValue,
    /// `move` or `copy` without a `from`.
    MissingFrom,
    /// `move` into its own descendant.
    MoveIntoDescendant,
    /// A `test` whose value differs.
    TestFailed,
    /// An unknown `op`.
    UnknownOp(String),
    /// The value would nest deeper than [`MAX_NESTING`] levels below the document root.
    TooDeep,
    /// A `copy` of more values than the replay's [`CopyBudget`] has left.
    CopyTooLarge,
}

impl PatchErrorKind {
    /// Returns a short snake_case name.
    pub fn as_str(&self) -> &str {
        match self {
            PatchErrorKind::InvalidPointer => "invalid_pointer",
            PatchErrorKind::PathNotFound => "path_not_found",
            PatchErrorKind::IndexOutOfBounds => "index_out_of_bounds",
            PatchErrorKind::InvalidIndex => "invalid_index",
            PatchErrorKind::MissingValue => "missing_value",
            PatchErrorKind::MissingFrom => "missing_from",
            PatchErrorKind::MoveIntoDescendant => "move_into_descendant",
            PatchErrorKind::TestFailed => "test_failed",
            PatchErrorKind::UnknownOp(_) => "unknown_op",
            PatchErrorKind::TooDeep => "too_deep",
            PatchErrorKind::CopyTooLarge => "copy_too_large",
        }
    }
}

/// A failed operation of a patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatchError {
    /// 0-based index of the operation in the patch.
    pub index: usize,
    /// The operation name.
    pub op: String,
    /// The operation's (mapped) path.
    pub path: String,
    /// What went wrong.
    pub kind: PatchErrorKind,
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "op {} ({} {}): {}",
            self.index,
            self.op,
            self.path,
            self.kind.as_str()
        )?;
        if let PatchErrorKind::UnknownOp(op) = &self.kind {
            write!(f, " {op:?}")?;
        }
        Ok(())
    }
}

impl std::error::Error for PatchError {}

/// What lenient application did with one operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LenientOutcome {
    /// Applied as written.
    Applied,
    /// A `replace` whose target was missing, applied as `add`.
    ReplaceBecameAdd,
    /// Not applied; the document is unchanged by it.
    Skipped(PatchErrorKind),
}

/// Applies `ops` in order, strictly: a `replace`, `remove` or `test` on a missing path fails,
/// an array `add` needs an index ≤ length or `-`.
///
/// # Errors
/// Returns the first failing operation. Earlier operations stay applied; each operation is
/// all-or-nothing.
pub fn apply_strict(doc: &mut Value, ops: &[PatchOp]) -> Result<(), PatchError> {
    apply_strict_within(doc, ops, &mut CopyBudget::default())
}

/// [`apply_strict`] drawing `copy` operations from `budget`, for a replay of many patches.
///
/// # Errors
/// As [`apply_strict`].
pub fn apply_strict_within(
    doc: &mut Value,
    ops: &[PatchOp],
    budget: &mut CopyBudget,
) -> Result<(), PatchError> {
    for (index, op) in ops.iter().enumerate() {
        apply_op_within(doc, op, budget).map_err(|kind| PatchError {
            index,
            op: op.op.as_str().to_string(),
            path: op.path.clone(),
            kind,
        })?;
    }
    Ok(())
}

/// Applies `ops` the way `pm history-repair` does: a `replace` on a missing path is applied as
/// `add`, and operations that still cannot apply are skipped. Returns one outcome per op.
pub fn apply_lenient(doc: &mut Value, ops: &[PatchOp]) -> Vec<LenientOutcome> {
    apply_lenient_within(doc, ops, &mut CopyBudget::default())
}

/// [`apply_lenient`] drawing `copy` operations from `budget`, for a replay of many patches.
pub fn apply_lenient_within(
    doc: &mut Value,
    ops: &[PatchOp],
    budget: &mut CopyBudget,
) -> Vec<LenientOutcome> {
    ops.iter()
        .map(|op| match apply_op_within(doc, op, budget) {
            Ok(()) => LenientOutcome::Applied,
            Err(PatchErrorKind::PathNotFound | PatchErrorKind::IndexOutOfBounds)
                if op.op == PatchOpKind::Replace =>
            {
                let add = PatchOp {
                    op: PatchOpKind::Add,
                    ..op.clone()
                };
                match apply_op_within(doc, &add, budget) {
                    Ok(()) => LenientOutcome::ReplaceBecameAdd,
                    Err(kind) => LenientOutcome::Skipped(kind),
                }
            }
            Err(kind) => LenientOutcome::Skipped(kind),
        })
        .collect()
}

/// Applies one operation strictly; on error the document is unchanged.
///
/// # Errors
/// The reason the operation cannot apply.
pub fn apply_op(doc: &mut Value, op: &PatchOp) -> Result<(), PatchErrorKind> {
    apply_op_within(doc, op, &mut CopyBudget::default())
}

/// [`apply_op`] drawing a `copy` from `budget` (unchanged when the operation fails).
///
/// # Errors
/// As [`apply_op`].
pub fn apply_op_within(
    doc: &mut Value,
    op: &PatchOp,
    budget: &mut CopyBudget,
) -> Result<(), PatchErrorKind> {
    let path = parse_pointer(&op.path)?;
    match &op.op {
        PatchOpKind::Add => add(doc, &path, value_of(op)?.clone()),
        PatchOpKind::Replace => replace(doc, &path, value_of(op)?.clone()),
        PatchOpKind::Remove => remove(doc, &path).map(drop),
        PatchOpKind::Test => {
            let actual = get(doc, &path)?;
            if json_equal(actual, value_of(op)?) {
                Ok(())
            } else {
                Err(PatchErrorKind::TestFailed)
            }
        }
        PatchOpKind::Copy => {
            let from = parse_pointer(op.from.as_deref().ok_or(PatchErrorKind::MissingFrom)?)?;
            let value = get(doc, &from)?;
            let size = budget.size_of(value)?;
            let value = value.clone();
            add(doc, &path, value)?;
            budget.spend(size);
            Ok(())
        }
        PatchOpKind::Move => {
            let from = parse_pointer(op.from.as_deref().ok_or(PatchErrorKind::MissingFrom)?)?;
            if path.len() > from.len() && path[..from.len()] == from[..] {
                return Err(PatchErrorKind::MoveIntoDescendant);
            }
            let position = key_position(doc, &from);
            let value = remove(doc, &from)?;
            if let Err(kind) = add(doc, &path, value.clone()) {
                put_back(doc, &from, position, value);
                return Err(kind);
            }
            Ok(())
        }
        PatchOpKind::Unknown(op) => Err(PatchErrorKind::UnknownOp(op.clone())),
    }
}

/// Returns the position of the last key of `path` in its parent object (`None` when the
/// parent is not an object or lacks the key).
fn key_position(doc: &Value, path: &[Cow<'_, str>]) -> Option<usize> {
    let (last, parent) = path.split_last()?;
    match get(doc, parent) {
        Ok(Value::Object(map)) => map.keys().position(|k| k == last),
        _ => None,
    }
}

/// Puts back the value a failed `move` removed from `from`, so that the document is unchanged:
/// at the key's old `position` in an object (key order included), else at its array index.
fn put_back(doc: &mut Value, from: &[Cow<'_, str>], position: Option<usize>, value: Value) {
    if let (Some(index), Some((last, parent))) = (position, from.split_last())
        && let Ok(Value::Object(map)) = get_mut(doc, parent)
    {
        // The key was at `index` of a map one entry longer, so `index <= map.len()`.
        map.shift_insert(index, last.to_string(), value);
        return;
    }
    // The removal left the parent array in place, one element shorter; a root `from` never
    // gets here (a move from the root to anywhere but the root moves into a descendant). The
    // value was there before, so its depth is not checked again.
    insert(doc, from, value).expect("re-adding a just-removed value succeeds");
}

fn value_of(op: &PatchOp) -> Result<&Value, PatchErrorKind> {
    op.value.as_ref().ok_or(PatchErrorKind::MissingValue)
}

/// Splits a JSON Pointer into unescaped tokens (`~1` → `/`, then `~0` → `~`).
///
/// # Errors
/// [`PatchErrorKind::InvalidPointer`] when the pointer is not empty and lacks a leading `/`.
pub fn parse_pointer(pointer: &str) -> Result<Vec<Cow<'_, str>>, PatchErrorKind> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let rest = pointer
        .strip_prefix('/')
        .ok_or(PatchErrorKind::InvalidPointer)?;
    Ok(rest
        .split('/')
        .map(|token| {
            if token.contains('~') {
                Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
            } else {
                Cow::Borrowed(token)
            }
        })
        .collect())
}

/// Returns true if the document has a value at `pointer`.
pub fn pointer_exists(doc: &Value, pointer: &str) -> bool {
    parse_pointer(pointer).is_ok_and(|path| get(doc, &path).is_ok())
}

fn array_index(token: &str, len: usize) -> Result<usize, PatchErrorKind> {
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_digit()) {
        return Err(PatchErrorKind::InvalidIndex);
    }
    match token.parse::<usize>() {
        Ok(index) if index < len => Ok(index),
        _ => Err(PatchErrorKind::IndexOutOfBounds),
    }
}

fn get<'a>(doc: &'a Value, path: &[Cow<'_, str>]) -> Result<&'a Value, PatchErrorKind> {
    let mut node = doc;
    for token in path {
        node = match node {
            Value::Object(map) => map
                .get(token.as_ref())
                .ok_or(PatchErrorKind::PathNotFound)?,
            Value::Array(items) => &items[array_index(token, items.len())?],
            _ => return Err(PatchErrorKind::PathNotFound),
        };
    }
    Ok(node)
}

fn get_mut<'a>(doc: &'a mut Value, path: &[Cow<'_, str>]) -> Result<&'a mut Value, PatchErrorKind> {
    let mut node = doc;
    for token in path {
        node = match node {
            Value::Object(map) => map
                .get_mut(token.as_ref())
                .ok_or(PatchErrorKind::PathNotFound)?,
            Value::Array(items) => {
                let index = array_index(token, items.len())?;
                &mut items[index]
            }
            _ => return Err(PatchErrorKind::PathNotFound),
        };
    }
    Ok(node)
}

fn add(doc: &mut Value, path: &[Cow<'_, str>], value: Value) -> Result<(), PatchErrorKind> {
    check_nesting(path, &value)?;
    insert(doc, path, value)
}

/// `add` without the nesting check.
fn insert(doc: &mut Value, path: &[Cow<'_, str>], value: Value) -> Result<(), PatchErrorKind> {
    let Some((last, parent)) = path.split_last() else {
        *doc = value;
        return Ok(());
    };
    match get_mut(doc, parent)? {
        Value::Object(map) => {
            // An existing key keeps its position, as an assignment in JavaScript does.
            map.insert(last.to_string(), value);
            Ok(())
        }
        Value::Array(items) => {
            let index = if last == "-" {
                items.len()
            } else {
                array_index(last, items.len() + 1)?
            };
            items.insert(index, value);
            Ok(())
        }
        _ => Err(PatchErrorKind::PathNotFound),
    }
}

fn replace(doc: &mut Value, path: &[Cow<'_, str>], value: Value) -> Result<(), PatchErrorKind> {
    check_nesting(path, &value)?;
    *get_mut(doc, path)? = value;
    Ok(())
}

fn remove(doc: &mut Value, path: &[Cow<'_, str>]) -> Result<Value, PatchErrorKind> {
    let Some((last, parent)) = path.split_last() else {
        return Ok(std::mem::take(doc));
    };
    match get_mut(doc, parent)? {
        Value::Object(map) => map
            .shift_remove(last.as_ref())
            .ok_or(PatchErrorKind::PathNotFound),
        Value::Array(items) => {
            let index = array_index(last, items.len())?;
            Ok(items.remove(index))
        }
        _ => Err(PatchErrorKind::PathNotFound),
    }
}

/// Deep equality with JavaScript number semantics (`1` equals `1.0`); object key order is
/// ignored, array order is not.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => number_equal(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// JavaScript `===` on two numbers (both are IEEE doubles there).
///
/// Integers past 2^53 compare as the doubles JavaScript parses them to, so two literals that
/// round to the same double are equal (`9007199254740993 === 9007199254740992`).
pub fn number_equal(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    a.as_f64() == b.as_f64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn op(value: Value) -> PatchOp {
        PatchOp::from_value(value).expect("valid op")
    }

    fn strict(doc: &mut Value, ops: Value) -> Result<(), PatchError> {
        let ops: Vec<PatchOp> = ops
            .as_array()
            .expect("array")
            .iter()
            .cloned()
            .map(op)
            .collect();
        apply_strict(doc, &ops)
    }

    #[test]
    fn add_replace_remove_on_objects_and_arrays() -> Result<(), PatchError> {
        let mut doc = json!({"metadata": {"id": "pm-a", "tags": ["a", "c"]}, "body": ""});
        strict(
            &mut doc,
            json!([
                {"op": "replace", "path": "/body", "value": "text"},
                {"op": "add", "path": "/metadata/tags/1", "value": "b"},
                {"op": "add", "path": "/metadata/tags/-", "value": "d"},
                {"op": "add", "path": "/metadata/tags/4", "value": "e"},
                {"op": "replace", "path": "/metadata/tags/0", "value": "A"},
                {"op": "remove", "path": "/metadata/tags/2"},
                {"op": "add", "path": "/metadata/status", "value": "open"},
                {"op": "replace", "path": "/metadata/id", "value": "pm-b"},
                {"op": "test", "path": "/metadata/tags", "value": ["A", "b", "d", "e"]},
            ]),
        )?;
        assert_eq!(
            doc,
            json!({"metadata": {"id": "pm-b", "tags": ["A", "b", "d", "e"], "status": "open"}, "body": "text"})
        );
        // Replacing an existing key keeps its position.
        let keys: Vec<&String> = doc["metadata"]
            .as_object()
            .expect("object")
            .keys()
            .collect();
        assert_eq!(keys, ["id", "tags", "status"]);
        Ok(())
    }

    #[test]
    fn strict_failures() {
        let base = json!({"metadata": {"tags": ["a"]}, "body": ""});
        let cases = [
            (
                json!({"op": "replace", "path": "/metadata/x", "value": 1}),
                PatchErrorKind::PathNotFound,
            ),
            (
                json!({"op": "remove", "path": "/metadata/x"}),
                PatchErrorKind::PathNotFound,
            ),
            (
                json!({"op": "add", "path": "/metadata/x/y", "value": 1}),
                PatchErrorKind::PathNotFound,
            ),
            (
                json!({"op": "add", "path": "/metadata/tags/2", "value": 1}),
                PatchErrorKind::IndexOutOfBounds,
            ),
            (
                json!({"op": "replace", "path": "/metadata/tags/1", "value": 1}),
                PatchErrorKind::IndexOutOfBounds,
            ),
            (
                json!({"op": "remove", "path": "/metadata/tags/-"}),
                PatchErrorKind::InvalidIndex,
            ),
            (
                json!({"op": "add", "path": "metadata", "value": 1}),
                PatchErrorKind::InvalidPointer,
            ),
            (
                json!({"op": "add", "path": "/metadata/y"}),
                PatchErrorKind::MissingValue,
            ),
            (
                json!({"op": "test", "path": "/body", "value": "x"}),
                PatchErrorKind::TestFailed,
            ),
            (
                json!({"op": "frobnicate", "path": "/body"}),
                PatchErrorKind::UnknownOp("frobnicate".into()),
            ),
        ];
        for (raw, kind) in cases {
            let mut doc = base.clone();
            let err = strict(&mut doc, json!([raw])).expect_err("must fail");
            assert_eq!(err.kind, kind, "{raw}");
            assert_eq!(err.index, 0);
            assert_eq!(doc, base, "a failing op leaves the document unchanged");
        }
    }

    #[test]
    fn pointer_escapes_are_unescaped() -> Result<(), PatchError> {
        let mut doc = json!({"metadata": {"documents": {}}});
        strict(
            &mut doc,
            json!([
                {"op": "add", "path": "/metadata/documents/schema~1types.json", "value": {"a": 1}},
                {"op": "add", "path": "/metadata/documents/a~01", "value": 2},
            ]),
        )?;
        assert_eq!(
            doc,
            json!({"metadata": {"documents": {"schema/types.json": {"a": 1}, "a~1": 2}}})
        );
        assert!(pointer_exists(
            &doc,
            "/metadata/documents/schema~1types.json/a"
        ));
        assert!(!pointer_exists(
            &doc,
            "/metadata/documents/schema/types.json"
        ));
        Ok(())
    }

    #[test]
    fn move_and_copy() -> Result<(), PatchError> {
        let mut doc = json!({"a": {"b": [1, 2]}, "c": null});
        strict(
            &mut doc,
            json!([
                {"op": "copy", "from": "/a/b", "path": "/d"},
                {"op": "move", "from": "/a/b/0", "path": "/c"},
            ]),
        )?;
        assert_eq!(doc, json!({"a": {"b": [2]}, "c": 1, "d": [1, 2]}));
        let before = doc.clone();
        let err = strict(
            &mut doc,
            json!([{"op": "move", "from": "/a", "path": "/a/x"}]),
        )
        .expect_err("descendant");
        assert_eq!(err.kind, PatchErrorKind::MoveIntoDescendant);
        let err = strict(
            &mut doc,
            json!([{"op": "move", "from": "/d/1", "path": "/q/r"}]),
        )
        .expect_err("missing target parent");
        assert_eq!(err.kind, PatchErrorKind::PathNotFound);
        assert_eq!(doc, before);
        Ok(())
    }

    /// A move whose target cannot take the value puts it back at its key's position: the
    /// document is unchanged byte for byte (found by the history property tests).
    #[test]
    fn a_failed_move_keeps_the_key_order() {
        let base = json!({"metadata": {"a": 1, "b": [2, 3], "c": 4}, "body": ""});
        for (from, path) in [
            ("/metadata", "/body/0"),
            ("/metadata/a", "/metadata/x/y"),
            ("/metadata/b/0", "/nope/0"),
        ] {
            let mut doc = base.clone();
            let op = op(json!({"op": "move", "from": from, "path": path}));
            assert_eq!(apply_op(&mut doc, &op), Err(PatchErrorKind::PathNotFound));
            assert_eq!(doc.to_string(), base.to_string(), "{from} -> {path}");
        }
    }

    #[test]
    fn lenient_turns_replace_into_add_and_skips_the_rest() {
        let mut doc = json!({"metadata": {"tags": []}, "body": ""});
        let ops: Vec<PatchOp> = [
            json!({"op": "replace", "path": "/metadata/status", "value": "open"}),
            json!({"op": "remove", "path": "/metadata/gone"}),
            json!({"op": "replace", "path": "/metadata/tags/0", "value": "x"}),
            json!({"op": "replace", "path": "/metadata/a/b", "value": 1}),
            json!({"op": "replace", "path": "/body", "value": "b"}),
        ]
        .into_iter()
        .map(op)
        .collect();
        let outcomes = apply_lenient(&mut doc, &ops);
        assert_eq!(
            outcomes,
            vec![
                LenientOutcome::ReplaceBecameAdd,
                LenientOutcome::Skipped(PatchErrorKind::PathNotFound),
                LenientOutcome::ReplaceBecameAdd,
                LenientOutcome::Skipped(PatchErrorKind::PathNotFound),
                LenientOutcome::Applied,
            ]
        );
        assert_eq!(
            doc,
            json!({"metadata": {"tags": ["x"], "status": "open"}, "body": "b"})
        );
    }

    #[test]
    fn equality_follows_javascript_numbers() {
        assert!(json_equal(
            &json!({"a": 1, "b": [1.0]}),
            &json!({"b": [1], "a": 1.0})
        ));
        assert!(!json_equal(&json!([1, 2]), &json!([2, 1])));
        assert!(!json_equal(&json!({"a": null}), &json!({})));
    }

    /// Regression: integers past 2^53 compared exactly, where JavaScript (and so pm-cli's
    /// `test` operation and patch generation) sees the one double both literals parse to.
    #[test]
    fn integers_past_two_pow_53_compare_as_doubles() {
        let big = |n: i64| serde_json::Number::from(n);
        assert!(number_equal(
            &big(-9_023_331_431_145_751),
            &big(-9_023_331_431_145_752)
        ));
        assert!(number_equal(
            &serde_json::Number::from(9_007_199_254_740_993u64),
            &big(9_007_199_254_740_992)
        ));
        assert!(!number_equal(
            &big(9_007_199_254_740_991),
            &big(9_007_199_254_740_990)
        ));
        let mut doc = json!({"n": 9_007_199_254_740_993u64});
        let test = PatchOp::from_value(
            json!({"op": "test", "path": "/n", "value": 9_007_199_254_740_992u64}),
        );
        assert_eq!(test.map(|op| apply_op(&mut doc, &op)), Ok(Ok(())));
    }
}
