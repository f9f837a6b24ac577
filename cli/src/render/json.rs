//! JSON encoding of rendered values: pm's `JSON.stringify(value, null, 2)` plus a newline.
//! The byte rules live in `pm_engine::json`; this file only frames them.

use serde_json::Value;

/// Returns the pretty JSON text of `value` with a trailing newline.
pub(super) fn encode(value: &Value) -> String {
    let mut text = pm_engine::json::to_pretty(value);
    text.push('\n');
    text
}
