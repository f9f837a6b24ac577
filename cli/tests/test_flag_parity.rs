//! Flag parity with pm-cli: every flag pm-cli's own contract (`contracts-full.json`,
//! `command_flags`) lists for a core command is accepted by our grammar, except the rows of the
//! allow-list in `docs/compatibility.md` ("Flag parity allow-list"). The list is exact both
//! ways: a missing flag that is not listed fails, and so does a listed flag we now accept, so
//! the list only ever shrinks with the code.

use std::collections::{BTreeMap, BTreeSet};

use clap::CommandFactory;
use pm_cli::Cli;
use serde_json::Value;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Allow-list rows: command → the flags listed (`None` for a command not built).
type AllowList = BTreeMap<String, Option<BTreeSet<String>>>;

/// pm-cli commands outside the core surface (extension/package management, self-update,
/// telemetry): not part of the parity promise.
const OUT_OF_SCOPE: [&str; 6] = [
    "extension",
    "package",
    "packages",
    "install",
    "upgrade",
    "telemetry",
];

/// The allow-list cell of a command that we do not have at all.
const NOT_BUILT: &str = "command not built";

/// pm-cli's core commands and their flags.
fn reference() -> Result<BTreeMap<String, BTreeSet<String>>, Box<dyn std::error::Error>> {
    let path = pm_testkit::shared_file("golden/contracts/contracts-full.json");
    let doc: Value = serde_json::from_slice(&std::fs::read(path)?)?;
    let mut out = BTreeMap::new();
    for entry in doc["command_flags"].as_array().ok_or("command_flags")? {
        let command = entry["command"].as_str().ok_or("command")?;
        let head = command.split(' ').next().unwrap_or(command);
        if entry["provider"] != "core" || OUT_OF_SCOPE.contains(&head) {
            continue;
        }
        let flags = entry["flags"]
            .as_array()
            .ok_or("flags")?
            .iter()
            .filter_map(|f| f["flag"].as_str())
            .filter(|f| *f != "--help")
            .map(String::from)
            .collect();
        out.insert(command.to_string(), flags);
    }
    Ok(out)
}

/// Our command at a space-separated path (names or visible aliases), if it exists and is
/// listed.
fn find<'a>(root: &'a clap::Command, path: &str) -> Option<&'a clap::Command> {
    let mut cmd = root;
    for word in path.split(' ') {
        cmd = cmd
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .find(|c| c.get_name() == word || c.get_all_aliases().any(|a| a == word))?;
    }
    Some(cmd)
}

/// The long flags (and their aliases) a user can type on `cmd`: its own visible arguments and
/// the root's global ones. Hidden arguments (accepted only to be refused) do not count.
fn accepted(root: &clap::Command, cmd: &clap::Command) -> BTreeSet<String> {
    let own = cmd.get_arguments();
    let global = root.get_arguments().filter(|a| a.is_global_set());
    own.chain(global)
        .filter(|a| !a.is_hide_set())
        .flat_map(|a| {
            a.get_long()
                .into_iter()
                .chain(a.get_all_aliases().unwrap_or_default())
                .map(|l| format!("--{l}"))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The allow-list rows: command → the flags listed (`None` for a command not built).
fn allow_list() -> Result<AllowList, Box<dyn std::error::Error>> {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/compatibility.md"
    ))?;
    let start = doc
        .find("<!-- flag-parity:begin -->")
        .ok_or("allow-list begin marker")?;
    let end = doc
        .find("<!-- flag-parity:end -->")
        .ok_or("allow-list end marker")?;
    let mut rows = BTreeMap::new();
    for line in doc[start..end].lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (command, flags) = (cells[1].trim_matches('`'), cells[2]);
        let listed = if flags == NOT_BUILT {
            None
        } else {
            Some(
                flags
                    .split_whitespace()
                    .map(|f| f.trim_matches('`').to_string())
                    .collect(),
            )
        };
        assert!(
            rows.insert(command.to_string(), listed).is_none(),
            "allow-list row `{command}` appears twice"
        );
    }
    Ok(rows)
}

/// The allow-list row the current grammar calls for, for a failure message.
fn row(command: &str, missing: Option<&BTreeSet<String>>) -> String {
    let flags = missing.map_or(NOT_BUILT.to_string(), |m| {
        m.iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(" ")
    });
    format!("| `{command}` | {flags} | … |")
}

#[test]
fn every_pm_cli_flag_is_accepted_or_allow_listed() -> TestResult {
    let root = Cli::command();
    let allowed = allow_list()?;
    let mut wrong = Vec::new();
    for (command, flags) in reference()? {
        let missing = find(&root, &command).map(|cmd| {
            let have = accepted(&root, cmd);
            flags.difference(&have).cloned().collect::<BTreeSet<_>>()
        });
        let expected = match &missing {
            Some(m) if m.is_empty() => None,
            _ => Some(missing.clone()),
        };
        if expected.as_ref() != allowed.get(&command) {
            wrong.push(row(&command, missing.as_ref()));
        }
    }
    let reference = reference()?;
    let stale: Vec<&String> = allowed
        .keys()
        .filter(|c| !reference.contains_key(*c))
        .collect();
    assert!(
        stale.is_empty(),
        "allow-list rows for no pm-cli core command: {stale:?}"
    );
    assert!(
        wrong.is_empty(),
        "the flag-parity allow-list in docs/compatibility.md is out of date; these rows should \
         read (a command with every flag accepted has no row):\n{}",
        wrong.join("\n")
    );
    Ok(())
}

#[test]
fn the_allow_list_leaves_the_log_and_link_commands_complete() -> TestResult {
    let allowed = allow_list()?;
    for command in ["comments", "notes", "learnings", "docs"] {
        assert!(!allowed.contains_key(command), "{command} is allow-listed");
    }
    Ok(())
}
