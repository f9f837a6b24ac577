//! TOON encoding of rendered values: pm's stdout TOON renderer plus a newline.
//! The renderer itself is `pm_engine::toon::render_output` (the only TOON codec).

use serde_json::Value;

/// Returns the TOON text of `value` with a trailing newline.
pub(super) fn encode(value: &Value) -> String {
    let mut text = pm_engine::toon::render_output(value);
    text.push('\n');
    text
}
