//! Item files a read skipped: named in the envelope (`notices`, one entry per file with path,
//! line, cause and fix) and, when stderr is a terminal, one warning line each on stderr. Every
//! corpus read (`list`, `search`, `next`, `context`) reports them the same way.

use std::io::{IsTerminal, Write};

use pm_engine::notice::Notice;
use pm_engine::read::skipped::skipped_files;
use serde_json::{Map, Value};

/// Adds `notices` to `env` when the read skipped files, and warns on a terminal's stderr.
pub fn report(env: &mut Map<String, Value>, notices: &[Notice]) {
    let skipped = skipped_files(notices);
    if skipped.is_empty() {
        return;
    }
    if std::io::stderr().is_terminal() {
        let mut err = std::io::stderr().lock();
        for file in &skipped {
            // A closed stderr must not fail the read.
            let _ = writeln!(err, "{}", file.warning_line());
        }
    }
    env.insert(
        "notices".into(),
        serde_json::to_value(&skipped).unwrap_or(Value::Null),
    );
}
