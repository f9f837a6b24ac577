//! Linked tests (`pm test <id> --add/--remove`): the `tests` collection of an item, edited with
//! pm's `tests_add` / `tests_remove` history ops. Running linked tests is not part of this module.

use serde_json::{Map, Value, json};

use super::MutationContext;
use super::protocol::{EntryExtras, Mutation, lock_existing};
use crate::error::{Error, Result};

/// One linked test as given on the command line.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkedTest {
    /// The shell command.
    pub command: String,
    /// An optional test file path.
    pub path: Option<String>,
    /// `project` (default) or `global`.
    pub scope: String,
    /// Optional timeout in seconds (positive).
    pub timeout_seconds: Option<f64>,
    /// Optional note.
    pub note: Option<String>,
}

const KEYS: [&str; 5] = ["command", "path", "scope", "timeout_seconds", "note"];

impl LinkedTest {
    /// Parses `command=<cmd>,path=<p>,scope=<s>,timeout_seconds=<n>,note=<text>` or a bare
    /// command. `command` and `note` take the rest of the text (commands and notes may contain
    /// commas), so put them last.
    ///
    /// # Errors
    /// `invalid_argument_value` for unknown keys, a missing command, an unknown scope or a
    /// timeout that is not a positive number.
    pub fn parse(raw: &str, flag: &str) -> Result<LinkedTest> {
        let invalid = |reason: &str, allowed: Vec<String>| Error::InvalidArgument {
            field: flag.into(),
            value: raw.into(),
            reason: reason.into(),
            allowed,
        };
        let trimmed = raw.trim();
        let keyed = KEYS.iter().any(|k| trimmed.starts_with(&format!("{k}=")));
        let mut test = LinkedTest {
            command: String::new(),
            path: None,
            scope: "project".into(),
            timeout_seconds: None,
            note: None,
        };
        if !keyed {
            test.command = trimmed.to_string();
        } else {
            let mut rest = trimmed;
            while !rest.is_empty() {
                let (key, tail) = rest
                    .split_once('=')
                    .ok_or_else(|| invalid("expected key=value", Vec::new()))?;
                let key = key.trim();
                let (value, next) = if key == "command" || key == "note" {
                    (tail, "")
                } else {
                    tail.split_once(',').unwrap_or((tail, ""))
                };
                let value = value.trim();
                match key {
                    "command" => test.command = value.to_string(),
                    "path" => test.path = Some(value.to_string()).filter(|p| !p.is_empty()),
                    "scope" => test.scope = value.to_ascii_lowercase(),
                    "timeout_seconds" => {
                        let seconds = value
                            .parse::<f64>()
                            .ok()
                            .filter(|s| s.is_finite() && *s > 0.0)
                            .ok_or_else(|| {
                                invalid("timeout_seconds must be a positive number", Vec::new())
                            })?;
                        test.timeout_seconds = Some(seconds);
                    }
                    "note" => test.note = Some(value.to_string()).filter(|n| !n.is_empty()),
                    _ => {
                        return Err(invalid(
                            "unknown key",
                            KEYS.iter().map(|k| (*k).to_string()).collect(),
                        ));
                    }
                }
                rest = next.trim_start();
            }
        }
        if test.command.is_empty() {
            return Err(invalid("a command is required", Vec::new()));
        }
        if !["project", "global"].contains(&test.scope.as_str()) {
            return Err(invalid(
                "unknown scope",
                vec!["project".into(), "global".into()],
            ));
        }
        Ok(test)
    }

    fn to_entry(&self) -> Value {
        let mut entry = Map::new();
        entry.insert("command".into(), json!(self.command));
        if let Some(path) = &self.path {
            entry.insert("path".into(), json!(path.replace('\\', "/")));
        }
        entry.insert("scope".into(), json!(self.scope));
        if let Some(seconds) = self.timeout_seconds {
            let number = crate::json::number_from_f64(seconds).map_or(Value::Null, Value::Number);
            entry.insert("timeout_seconds".into(), number);
        }
        if let Some(note) = &self.note {
            entry.insert("note".into(), json!(note));
        }
        Value::Object(entry)
    }
}

fn same_test(entry: &Value, command: &str, path: Option<&str>) -> bool {
    entry.get("command").and_then(Value::as_str) == Some(command)
        && entry.get("path").and_then(Value::as_str) == path
}

/// Links tests to an item (op `tests_add`); a test with the same command and path is replaced
/// in place, new ones are appended (linked tests keep their order).
///
/// # Errors
/// Lock, ownership, revision and I/O errors; `item_not_found`.
pub fn tests_add(ctx: &MutationContext, raw_id: &str, tests: &[LinkedTest]) -> Result<Mutation> {
    let mut locked = lock_existing(ctx, raw_id)?;
    locked.check_ownership()?;
    let mut doc = locked.draft();
    let list = doc
        .metadata
        .entry("tests")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    if let Value::Array(items) = list {
        for test in tests {
            let path = test.path.as_deref().map(|p| p.replace('\\', "/"));
            let entry = test.to_entry();
            match items
                .iter_mut()
                .find(|e| same_test(e, &test.command, path.as_deref()))
            {
                Some(existing) => *existing = entry,
                None => items.push(entry),
            }
        }
    }
    locked.commit("tests_add", doc, EntryExtras::default())
}

/// Unlinks tests by command, path or 1-based position (op `tests_remove`).
///
/// # Errors
/// `invalid_argument_value` when a selector matches no linked test; lock, ownership, revision
/// and I/O errors.
pub fn tests_remove(
    ctx: &MutationContext,
    raw_id: &str,
    selectors: &[String],
    flag: &str,
) -> Result<Mutation> {
    let mut locked = lock_existing(ctx, raw_id)?;
    locked.check_ownership()?;
    let mut doc = locked.draft();
    let not_linked = |selector: &str| Error::InvalidArgument {
        field: flag.into(),
        value: selector.into(),
        reason: "no linked test has this command, path or position".into(),
        allowed: Vec::new(),
    };
    let Some(Value::Array(items)) = doc.metadata.get_mut("tests") else {
        return Err(not_linked(&selectors[0]));
    };
    for selector in selectors {
        let selector = selector.trim();
        let position = selector
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=items.len()).contains(n));
        let before = items.len();
        match position {
            Some(n) => {
                items.remove(n - 1);
            }
            None => items.retain(|e| {
                e.get("command").and_then(Value::as_str) != Some(selector)
                    && e.get("path").and_then(Value::as_str) != Some(selector)
            }),
        }
        if items.len() == before {
            return Err(not_linked(selector));
        }
    }
    locked.commit("tests_remove", doc, EntryExtras::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bare_and_keyed_specs() -> Result<()> {
        let bare = LinkedTest::parse("cargo test -p x", "--add")?;
        assert_eq!(bare.command, "cargo test -p x");
        assert_eq!(bare.scope, "project");
        let keyed = LinkedTest::parse(
            "path=tests\\a.rs,scope=GLOBAL,timeout_seconds=240,command=a, b && c",
            "--add",
        )?;
        assert_eq!(keyed.command, "a, b && c");
        assert_eq!(keyed.path.as_deref(), Some("tests\\a.rs"));
        assert_eq!(keyed.scope, "global");
        assert_eq!(keyed.timeout_seconds, Some(240.0));
        assert_eq!(
            keyed.to_entry(),
            json!({"command": "a, b && c", "path": "tests/a.rs", "scope": "global",
                "timeout_seconds": 240})
        );
        for bad in [
            "scope=x,command=y",
            "timeout_seconds=0,command=y",
            "path=p",
            "path=p,wat=1",
        ] {
            let err = LinkedTest::parse(bad, "--add").expect_err(bad);
            assert_eq!(err.code().as_str(), "invalid_argument_value", "{bad}");
        }
        Ok(())
    }
}
