//! The secret-guard preflight (pm's `enforceMutationGuardPreflight`): before a mutating command
//! runs, every text its invocation would write (operands, flag values, a `--stdin-json`
//! document) is scanned with the engine's rules under `mutation_guard.secret_guard`.
//! This module only collects the texts and their paths; the rules and the policy are the
//! engine's (`pm_engine::guard`).

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory};
use pm_engine::guard::{Leaf, SecretGuardMode, evaluate_secret_guard, holds_secret};
use serde_json::Value;

use crate::commands::{Cli, Command};
use crate::ctx::Ctx;
use crate::failure::Result;

/// The path prefix of texts read from a `--stdin-json` document.
const STDIN_PATH: &str = "--stdin-json";

/// The longest document key used as a path segment; longer keys are named by position.
const MAX_KEY_CHARS: usize = 40;

/// Runs the guard for `command` and returns its warning tokens (without `warning:`), which
/// the caller prints on stderr before the command runs, in every output format.
///
/// # Errors
/// `mutation_secret_guard_blocked` under `secret_guard: block` when a text matches and the
/// command was not given `--force`; nothing has been written then.
pub fn preflight(ctx: &Ctx, command: &Command, matches: &ArgMatches) -> Result<Vec<String>> {
    let Some(mode) = ctx.secret_guard else {
        return Ok(Vec::new());
    };
    if mode == SecretGuardMode::Off || !command.secret_guarded() {
        return Ok(Vec::new());
    }
    let root = Cli::command();
    let (definition, matches) = leaf_command(&root, matches);
    let mut leaves = invocation_leaves(definition, matches);
    if flag(matches, "stdin_json") {
        // An unreadable stdin is the command's to report; the guard then has nothing to scan.
        if let Ok(text) = ctx.read_stdin() {
            stdin_leaves(&text, &mut leaves);
        }
    }
    let verdict = evaluate_secret_guard(mode, flag(matches, "force"), &leaves)?;
    Ok(verdict.warnings)
}

/// Returns the definition and matches of the innermost subcommand (`item reopen` → `reopen`).
fn leaf_command<'a>(
    root: &'a clap::Command,
    matches: &'a ArgMatches,
) -> (&'a clap::Command, &'a ArgMatches) {
    let (mut definition, mut matches) = (root, matches);
    while let Some((name, sub)) = matches.subcommand() {
        let Some(found) = definition.find_subcommand(name) else {
            break;
        };
        (definition, matches) = (found, sub);
    }
    (definition, matches)
}

/// Returns the values typed for the command's own arguments (global flags excluded), each
/// named by its flag (`--description`) or operand (`TITLE`), indexed when repeated
/// (`--add[1]`).
fn invocation_leaves(definition: &clap::Command, matches: &ArgMatches) -> Vec<Leaf> {
    let mut leaves = Vec::new();
    for arg in definition.get_arguments() {
        if !arg.get_action().takes_values() {
            continue;
        }
        let id = arg.get_id().as_str();
        if matches.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let Ok(Some(raw)) = matches.try_get_raw(id) else {
            continue;
        };
        let values: Vec<String> = raw.map(|v| v.to_string_lossy().into_owned()).collect();
        let name = match (arg.get_long(), arg.get_value_names()) {
            (Some(long), _) => format!("--{long}"),
            (None, Some([first, ..])) => first.to_string(),
            (None, _) => id.to_uppercase(),
        };
        match values.as_slice() {
            [only] => leaves.push(Leaf::new(name, only.clone())),
            _ => leaves.extend(
                values
                    .into_iter()
                    .enumerate()
                    .map(|(i, value)| Leaf::new(format!("{name}[{i}]"), value)),
            ),
        }
    }
    leaves
}

/// Adds the string values of a `--stdin-json` document (the whole text when it is not JSON).
fn stdin_leaves(text: &str, leaves: &mut Vec<Leaf>) {
    match serde_json::from_str::<Value>(text) {
        Ok(document) => json_leaves(STDIN_PATH, &document, leaves),
        Err(_) => leaves.push(Leaf::new(STDIN_PATH, text)),
    }
}

/// Adds every string inside `value`, named `<path>.<key>` and `<path>[<index>]`.
fn json_leaves(path: &str, value: &Value, leaves: &mut Vec<Leaf>) {
    match value {
        Value::String(text) => leaves.push(Leaf::new(path, text.clone())),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                json_leaves(&format!("{path}[{i}]"), item, leaves);
            }
        }
        Value::Object(map) => {
            for (i, (key, item)) in map.iter().enumerate() {
                json_leaves(&format!("{path}{}", key_segment(key, i)), item, leaves);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Returns `.key` for a plain field name, else `[#<position>]`: a path is printed in the
/// block error, so a key that could itself be a credential never becomes one.
fn key_segment(key: &str, position: usize) -> String {
    let plain = !key.is_empty()
        && key.chars().count() <= MAX_KEY_CHARS
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !holds_secret(key);
    if plain {
        format!(".{key}")
    } else {
        format!("[#{position}]")
    }
}

/// Returns whether the boolean flag `id` was set (false when the command has no such flag).
fn flag(matches: &ArgMatches, id: &str) -> bool {
    matches!(matches.try_get_one::<bool>(id), Ok(Some(true)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaves_of(argv: &[&str]) -> Vec<(String, String)> {
        let matches = Cli::command()
            .try_get_matches_from(argv)
            .expect("the test command line parses");
        let root = Cli::command();
        let (definition, sub) = leaf_command(&root, &matches);
        invocation_leaves(definition, sub)
            .into_iter()
            .map(|l| (l.path, l.text))
            .collect()
    }

    #[test]
    fn operands_and_flags_are_named_and_globals_left_out() {
        let got = leaves_of(&[
            "pm",
            "--author",
            "agent",
            "create",
            "task",
            "Rotate",
            "--description=d",
            "--dep",
            "pm-a",
            "--dep",
            "pm-b",
            "--json",
        ]);
        let want = [
            ("TYPE", "task"),
            ("TITLE", "Rotate"),
            ("--dep[0]", "pm-a"),
            ("--dep[1]", "pm-b"),
            ("--description", "d"),
        ];
        let mut got_sorted = got.clone();
        got_sorted.sort();
        let mut want_sorted: Vec<(String, String)> = want
            .iter()
            .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
            .collect();
        want_sorted.sort();
        assert_eq!(got_sorted, want_sorted, "{got:?}");
    }

    #[test]
    fn nested_subcommands_are_scanned() {
        let got = leaves_of(&["pm", "item", "reopen", "pm-a", "regressed"]);
        assert_eq!(
            got,
            [
                ("ID".to_owned(), "pm-a".to_owned()),
                ("REASON".to_owned(), "regressed".to_owned())
            ]
        );
    }

    #[test]
    fn stdin_documents_are_walked_without_echoing_odd_keys() {
        let secretish = ["AK", "IAIOSFODNN7EXAMPLE"].concat();
        let text = format!(
            r#"{{"title":"t","tags":["a","b"],"n":3,"{secretish}":"v","nested":{{"note":"x"}}}}"#
        );
        let mut leaves = Vec::new();
        stdin_leaves(&text, &mut leaves);
        let paths: Vec<&str> = leaves.iter().map(|l| l.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "--stdin-json.title",
                "--stdin-json.tags[0]",
                "--stdin-json.tags[1]",
                "--stdin-json[#3]",
                "--stdin-json.nested.note"
            ]
        );
        let mut raw = Vec::new();
        stdin_leaves("not json", &mut raw);
        assert_eq!(raw, [Leaf::new("--stdin-json", "not json")]);
    }
}
