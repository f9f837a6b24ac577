//! Non-fatal findings that library calls return as values (never print): a stable snake_case
//! `code` plus a human message. Callers decide whether and where to show them.

use serde::Serialize;
use std::fmt;

/// A warning or informational finding produced by a library operation.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Notice {
    /// Stable machine code, e.g. `settings_read_invalid_json` (pm's warning token where pm has one).
    pub code: String,
    /// Human-readable detail.
    pub message: String,
}

impl Notice {
    /// Returns a notice with the given code and message.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Notice {
        Notice {
            code: code.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_code_then_message() {
        let n = Notice::new(
            "settings_read_invalid_json",
            "settings.json is not valid JSON",
        );
        assert_eq!(
            n.to_string(),
            "settings_read_invalid_json: settings.json is not valid JSON"
        );
    }
}
