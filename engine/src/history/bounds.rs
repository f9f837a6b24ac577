//! Bounds on what patch operations may build, so that a crafted stream can neither overflow
//! the stack of the code that walks a replayed state nor exhaust memory; states pm writes stay
//! far below both.

use std::borrow::Cow;

use serde_json::Value;

use super::patch::PatchErrorKind;

/// Deepest nesting of arrays and objects an operation may leave below the document root.
///
/// Every reader of a replayed state (hashing, canonicalization, serialization, even dropping
/// it) recurses once per level, so a crafted stream that nests a value one level deeper per
/// operation would overflow the stack. States pm writes stay far below the bound: item files
/// nest at most 256 TOON levels (two containers each) or 128 JSON levels.
pub const MAX_NESTING: usize = 1024;

/// How many values (array elements, object members and scalars) the `copy` operations of
/// one replay may create. pm never writes `copy`; without a bound, copying a value into
/// itself doubles the document, and a few crafted operations exhaust memory.
pub const MAX_COPIED_VALUES: usize = 1 << 16;

/// What the `copy` operations of one replay may still create (see [`MAX_COPIED_VALUES`]):
/// one budget spans every patch a replay applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyBudget(usize);

impl Default for CopyBudget {
    fn default() -> CopyBudget {
        CopyBudget(MAX_COPIED_VALUES)
    }
}

impl CopyBudget {
    /// Returns how many values a copy of `value` creates, when the budget has that many left.
    pub(super) fn size_of(&self, value: &Value) -> Result<usize, PatchErrorKind> {
        size_within(value, self.0).ok_or(PatchErrorKind::CopyTooLarge)
    }

    /// Spends `size` values, as [`CopyBudget::size_of`] answered.
    pub(super) fn spend(&mut self, size: usize) {
        self.0 = self.0.saturating_sub(size);
    }
}

/// Whether `value` at `path` stays within [`MAX_NESTING`] levels of the document root.
pub(super) fn check_nesting(path: &[Cow<'_, str>], value: &Value) -> Result<(), PatchErrorKind> {
    match MAX_NESTING.checked_sub(path.len()) {
        Some(levels) if fits(value, levels) => Ok(()),
        _ => Err(PatchErrorKind::TooDeep),
    }
}

/// Whether `value` nests at most `levels` levels of arrays and objects (a scalar none).
fn fits(value: &Value, levels: usize) -> bool {
    match value {
        Value::Array(items) => levels > 0 && items.iter().all(|v| fits(v, levels - 1)),
        Value::Object(map) => levels > 0 && map.values().all(|v| fits(v, levels - 1)),
        _ => true,
    }
}

/// Returns how many values `value` holds (itself included) when that is at most `limit`.
fn size_within(value: &Value, limit: usize) -> Option<usize> {
    let mut size = 0;
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        size += 1;
        if size > limit {
            return None;
        }
        match value {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.values()),
            _ => {}
        }
    }
    Some(size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nested(levels: usize) -> Value {
        (0..levels).fold(json!(1), |inner, _| json!([inner]))
    }

    #[test]
    fn nesting_counts_containers_below_the_path() {
        let path: Vec<Cow<'_, str>> = vec!["metadata".into(), "a".into()];
        assert_eq!(check_nesting(&path, &nested(MAX_NESTING - 2)), Ok(()));
        assert_eq!(
            check_nesting(&path, &nested(MAX_NESTING - 1)),
            Err(PatchErrorKind::TooDeep)
        );
        assert_eq!(check_nesting(&[], &nested(MAX_NESTING)), Ok(()));
        let deep: Vec<Cow<'_, str>> = vec!["x".into(); MAX_NESTING + 1];
        assert_eq!(
            check_nesting(&deep, &json!(1)),
            Err(PatchErrorKind::TooDeep)
        );
    }

    #[test]
    fn the_copy_budget_counts_every_value() {
        let mut budget = CopyBudget::default();
        let value = json!({"a": [1, 2], "b": null});
        assert_eq!(budget.size_of(&value), Ok(5));
        budget.spend(MAX_COPIED_VALUES - 4);
        assert_eq!(budget.size_of(&value), Err(PatchErrorKind::CopyTooLarge));
        assert_eq!(budget.size_of(&json!([1, 2, 3])), Ok(4));
    }
}
