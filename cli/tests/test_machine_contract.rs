//! The `--json` enumeration gate (seed 004 G0–G2 adapted to pm, machine contract C1–C7): every
//! command of the clap tree that accepts `--json` is driven through error arms and an empty arm.
//!
//! The command list is never written down here: it is walked from `pm_cli::Cli`, and the
//! arguments each command needs are synthesized from its declared arguments (an item id comes
//! from the tracker the gate creates). A command added later is gated by itself.

use std::error::Error;
use std::path::Path;

use clap::CommandFactory;
use pm_cli::Cli;
use serde_json::Value;

use crate::common::{Run, TestTracker};

type TestResult = Result<(), Box<dyn Error>>;

/// The id of the one item of the seeded tracker.
const ITEM: &str = "pm-gate";
/// An id no tracker holds.
const MISSING: &str = "pm-zzzz9";

/// Setup steps a command's success arm needs (`{id}` is the seeded item): a command that can
/// only succeed on an item in some state says so here. Everything else runs as synthesized.
const SETUP: &[(&str, &[&str])] = &[
    ("release", &["claim", "{id}"]),
    ("item reopen", &["close", "{id}", "done"]),
];

/// Commands whose success arm needs a git worktree around the tracker (`merge install`).
const NEEDS_GIT: &[&str] = &["merge"];

/// Arguments a command needs beyond its synthesized operands (a flag pm requires itself).
/// `{other}` is a second item of the seeded tracker.
const EXTRA_ARGS: &[(&str, &[&str])] = &[
    ("deps", &["--add", "{other}"]),
    // The outside-a-tracker arm runs twice in one directory; the second run replaces the fixture.
    ("bench generate", &["--force"]),
];

/// The second item of the seeded tracker.
const OTHER: &str = "pm-gate2";

/// One command of the tree (`item reopen` is `["item", "reopen"]`).
#[derive(Debug)]
struct Leaf {
    /// The subcommand path.
    path: Vec<String>,
    /// Whether it takes further subcommands (a group).
    group: bool,
    /// Arguments it cannot run without, with `{id}` where an item id goes.
    required: Vec<String>,
    /// Whether it needs an item id.
    needs_id: bool,
    /// A flag with a finite value domain, to pass a value outside it.
    enum_flag: Option<String>,
}

impl Leaf {
    fn name(&self) -> String {
        self.path.join(" ")
    }

    /// Returns `path… required…` with `{id}` replaced by `id`.
    fn argv(&self, id: &str) -> Vec<String> {
        let mut argv = self.path.clone();
        argv.extend(self.required.iter().map(|a| a.replace("{id}", id)));
        let name = self.name();
        if let Some((_, extra)) = EXTRA_ARGS.iter().find(|(n, _)| *n == name) {
            argv.extend(extra.iter().map(|a| a.replace("{other}", OTHER)));
        }
        argv
    }
}

/// Walks the clap tree and returns every command (leaves and groups) that accepts `--json`.
fn commands() -> Vec<Leaf> {
    let mut root = Cli::command();
    root.build();
    let mut out = Vec::new();
    walk(&root, &mut Vec::new(), &mut out);
    out
}

fn walk(cmd: &clap::Command, path: &mut Vec<String>, out: &mut Vec<Leaf>) {
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        path.push(sub.get_name().to_owned());
        // Introspect the declared option, not the help text (G0).
        let json = sub
            .get_arguments()
            .any(|a| a.get_long() == Some("json") && !a.get_action().takes_values());
        if json {
            out.push(leaf(sub, path));
        }
        walk(sub, path, out);
        path.pop();
    }
}

fn leaf(cmd: &clap::Command, path: &[String]) -> Leaf {
    let mut required = Vec::new();
    let mut needs_id = false;
    // Operands clap declares optional may still be needed (`close <ID> [REASON]`, where pm
    // checks the reason itself): an optional operand with a known name is filled too.
    for arg in cmd.get_positionals() {
        let name = arg
            .get_value_names()
            .and_then(|n| n.first())
            .map(ToString::to_string)
            .unwrap_or_default();
        if !arg.is_required_set() && !KNOWN_OPERANDS.contains(&name.as_str()) {
            break;
        }
        required.push(synthesize(arg, &name, &mut needs_id));
    }
    for arg in cmd
        .get_opts()
        .filter(|a| a.is_required_set() && !a.is_global_set())
    {
        let long = arg.get_long().unwrap_or_default();
        let name = arg
            .get_value_names()
            .and_then(|n| n.first())
            .map(ToString::to_string)
            .unwrap_or_default();
        required.push(format!("--{long}"));
        required.push(synthesize(arg, &name, &mut needs_id));
    }
    let enum_flag = cmd
        .get_opts()
        .filter(|a| !a.is_global_set() && !a.get_possible_values().is_empty())
        .find_map(|a| a.get_long().map(|l| format!("--{l}")));
    Leaf {
        path: path.to_vec(),
        group: cmd.has_subcommands(),
        required,
        needs_id,
        enum_flag,
    }
}

/// Operand names the synthesizer has a value for.
const KNOWN_OPERANDS: &[&str] = &["ID", "TYPE", "TITLE", "TEXT", "REASON", "VERSION"];

/// Returns a plausible value for a required argument named `name`.
fn synthesize(arg: &clap::Arg, name: &str, needs_id: &mut bool) -> String {
    if let Some(first) = arg.get_possible_values().first() {
        return first.get_name().to_owned();
    }
    match name {
        "ID" => {
            *needs_id = true;
            "{id}".into()
        }
        "TYPE" => "task".into(),
        "VERSION" | "N" => "1".into(),
        "N|TIER" => "2".into(),
        "DIR" => "gate-fixture".into(),
        _ => "contract gate".into(),
    }
}

/// Strings that only a Rust debug representation prints.
const DEBUG_MARKERS: &[&str] = &["Some(", "None,", "Vec<", "{ ..", "Ok(", "Err("];

/// Returns whether `text` holds a Rust path (`ErrorKind::NotFound`, `std::io`): `::` between
/// identifier characters. zsh completion specs (`'::target'`) are not paths.
fn has_rust_path(text: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices("::").any(|(i, _)| {
        let before = i.checked_sub(1).map(|j| bytes[j]);
        let after = bytes.get(i + 2).copied();
        before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
            && after.is_some_and(|a| a.is_ascii_alphabetic())
    })
}

fn assert_no_debug(run: &Run, what: &str) {
    for text in [&run.stdout, &run.stderr] {
        for marker in DEBUG_MARKERS {
            assert!(
                !text.contains(marker),
                "{what}: debug representation {marker:?} in output:\n{text}"
            );
        }
        assert!(!has_rust_path(text), "{what}: Rust path in output:\n{text}");
    }
}

/// C1 + C5: stdout is exactly one JSON document (a stream command prints one per line).
fn parse_stdout(run: &Run, what: &str) -> Value {
    assert!(
        run.stdout.ends_with('\n'),
        "{what}: stdout must be one JSON document ending in a newline, got {:?} (stderr {:?})",
        run.stdout,
        run.stderr
    );
    match serde_json::from_str::<Value>(&run.stdout) {
        Ok(value) => value,
        Err(err) => {
            // A stream (`pm events`) prints NDJSON: every line one document, the last a trailer.
            let lines: Vec<Value> = run
                .stdout
                .lines()
                .map(serde_json::from_str)
                .collect::<Result<_, _>>()
                .unwrap_or_else(|_| panic!("{what}: stdout is not JSON ({err}):\n{}", run.stdout));
            assert!(
                pm_cli::commands::streams_ndjson(what.split(' ').next().unwrap_or_default()),
                "{what}: {} JSON documents on stdout of a command that is not a stream",
                lines.len()
            );
            lines.last().cloned().unwrap_or(Value::Null)
        }
    }
}

/// C2 + C4: the error envelope, with the process exit code inside.
fn assert_error_envelope(run: &Run, what: &str) -> Value {
    let doc = parse_stdout(run, what);
    assert_eq!(doc["ok"], false, "{what}: {doc}");
    let error = &doc["error"];
    for key in ["code", "message"] {
        assert!(
            error[key].as_str().is_some_and(|s| !s.is_empty()),
            "{what}: error.{key} must be a non-empty string: {doc}"
        );
    }
    assert_eq!(
        error["exit_code"].as_i64(),
        Some(i64::from(run.code)),
        "{what}: {doc}"
    );
    error.clone()
}

/// Runs `args` once with `--json` and once without, in fresh copies of `template` when given,
/// and checks what holds on every exit path; returns `(json run, text run)`.
fn both(
    t: &TestTracker,
    dir: &Path,
    template: Option<&Path>,
    args: &[String],
) -> Result<(Run, Run), Box<dyn Error>> {
    let what = args.join(" ");
    let mut runs = Vec::new();
    for json in [true, false] {
        let mut argv: Vec<&str> = args.iter().map(String::as_str).collect();
        if json {
            argv.push("--json");
        }
        let run = match template {
            Some(template) => {
                let copy = TestTracker::from_tree(template)?;
                copy.pm(&argv)?
            }
            None => t.pm_in(dir, &argv, &[])?,
        };
        assert_no_debug(&run, &what);
        if json {
            let doc = parse_stdout(&run, &what);
            if run.code != 0 && doc.get("ok") == Some(&Value::Bool(false)) {
                let error = assert_error_envelope(&run, &what);
                // C5: under --json, stderr carries one human line and nothing else.
                let line = format!(
                    "error[{}]: {}\n",
                    error["code"].as_str().unwrap_or_default(),
                    error["message"].as_str().unwrap_or_default()
                );
                assert_eq!(run.stderr, line, "{what}: stderr under --json");
            }
        } else if run.code != 0 && run.code != 6 && run.code != 7 {
            // Text mode: a failure prints nothing on stdout (a budget omission excepted).
            assert!(
                run.stdout.is_empty() || run.code == 2,
                "{what}: text-mode failure wrote stdout: {}",
                run.stdout
            );
            assert!(!run.stderr.is_empty(), "{what}: silent failure");
        }
        runs.push(run);
    }
    let text = runs.pop().ok_or("no text run")?;
    let json = runs.pop().ok_or("no json run")?;
    assert_eq!(
        json.code, text.code,
        "{what}: exit code differs with --json (C4)\njson: {}\ntext: {}",
        json.stderr, text.stderr
    );
    Ok((json, text))
}

/// Builds the two trackers the arms run in: an empty one and one holding the item [`ITEM`].
fn templates() -> Result<(TestTracker, TestTracker), Box<dyn Error>> {
    let empty = TestTracker::new()?;
    assert_eq!(empty.pm(&["init", "--defaults"])?.code, 0);
    let seeded = TestTracker::new()?;
    assert_eq!(seeded.pm(&["init", "--defaults"])?.code, 0);
    for (id, title) in [(ITEM, "Gate item"), (OTHER, "Other gate item")] {
        let created = seeded.pm(&["create", "task", title, "--id", id])?;
        assert_eq!(created.code, 0, "{}", created.stderr);
    }
    Ok((empty, seeded))
}

#[test]
fn gate_enumerates_the_command_tree() {
    let names: Vec<String> = commands().iter().map(Leaf::name).collect();
    // A sanity floor, not the list: the walk must see nested subcommands and aliases' targets.
    for expected in ["get", "where", "create", "item", "item reopen", "init"] {
        assert!(names.iter().any(|n| n == expected), "{expected}: {names:?}");
    }
    assert!(names.len() >= 20, "{names:?}");
}

/// Error arm, outside a tracker: `not_in_project` (exit 3) with an `init` retry (C7), or a
/// success for commands that need no tracker.
#[test]
fn gate_outside_a_tracker() -> TestResult {
    for leaf in commands().iter().filter(|l| !l.group) {
        // A fresh directory each time: `init` succeeds here and would create a tracker.
        let t = TestTracker::new()?;
        let args = leaf.argv(MISSING);
        let (json, _) = both(&t, &t.outside(), None, &args)?;
        let what = args.join(" ");
        if json.code == 0 {
            let doc = parse_stdout(&json, &what);
            assert!(doc.get("error").is_none(), "{what}: {doc}");
            continue;
        }
        let error = assert_error_envelope(&json, &what);
        assert_eq!(error["code"], "not_in_project", "{what}: {error}");
        assert_eq!(json.code, 3, "{what}");
        let retry = error["recovery"]["suggested_retry"]
            .as_str()
            .unwrap_or_default();
        assert!(retry.contains(" init"), "{what}: retry {retry:?}");
    }
    Ok(())
}

/// Error arm, bad input: an unknown flag and a value outside a flag's domain (exit 2), an
/// unknown item id (exit 3), and a group without its subcommand (exit 2).
#[test]
fn gate_bogus_input() -> TestResult {
    let (_, seeded) = templates()?;
    let dir = seeded.workspace();
    for leaf in commands() {
        let mut cases: Vec<(Vec<String>, &str, i32)> = Vec::new();
        if leaf.group {
            cases.push((leaf.path.clone(), "missing_required_argument", 2));
        } else {
            let mut unknown = leaf.argv(ITEM);
            unknown.push("--bogus-flag".into());
            cases.push((unknown, "unknown_option", 2));
            let flag = leaf
                .enum_flag
                .clone()
                .unwrap_or_else(|| "--output-format".into());
            let mut bad = leaf.argv(ITEM);
            bad.extend([flag, "bogus-value".into()]);
            cases.push((bad, "invalid_argument_value", 2));
            if leaf.needs_id {
                cases.push((leaf.argv(MISSING), "item_not_found", 3));
            }
        }
        for (args, code, exit) in cases {
            let what = args.join(" ");
            let (json, _) = both(&seeded, &dir, None, &args)?;
            let error = assert_error_envelope(&json, &what);
            assert_eq!(error["code"], code, "{what}: {error}");
            assert_eq!(json.code, exit, "{what}");
        }
    }
    Ok(())
}

/// Empty arm: in an empty tracker (or, for a command that needs an item, a tracker holding one
/// untouched item) every command succeeds with its payload and no `error` key (C3).
#[test]
fn gate_empty_tracker() -> TestResult {
    let (empty, seeded) = templates()?;
    for leaf in commands().iter().filter(|l| !l.group) {
        let name = leaf.name();
        let base = if leaf.needs_id { &seeded } else { &empty };
        // The setup, if any, runs in a copy that then serves as the template of both runs.
        let prepared = TestTracker::from_tree(&base.workspace())?;
        if NEEDS_GIT.contains(&name.as_str()) {
            let init = std::process::Command::new("git")
                .args(["init", "-q"])
                .current_dir(prepared.workspace())
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .status()?;
            assert!(init.success(), "git init for {name}");
        }
        if let Some((_, step)) = SETUP.iter().find(|(n, _)| *n == name) {
            let step: Vec<String> = step.iter().map(|s| s.replace("{id}", ITEM)).collect();
            let argv: Vec<&str> = step.iter().map(String::as_str).collect();
            let run = prepared.pm(&argv)?;
            assert_eq!(run.code, 0, "{name} setup: {}", run.stderr);
        }
        let args = leaf.argv(ITEM);
        let (json, text) = both(
            &prepared,
            &prepared.workspace(),
            Some(&prepared.workspace()),
            &args,
        )?;
        let what = args.join(" ");
        assert_eq!(json.code, 0, "{what}: {}\n{}", json.stdout, json.stderr);
        let doc = parse_stdout(&json, &what);
        assert!(doc.get("error").is_none(), "{what}: {doc}");
        assert_ne!(doc.get("ok"), Some(&Value::Bool(false)), "{what}: {doc}");
        assert!(!text.stdout.is_empty(), "{what}: text mode printed nothing");
    }
    Ok(())
}

/// Error arm over every flag: each value-taking flag of each command gets a value outside any
/// domain. Whatever the command makes of it (refusal or success), the contract holds: one JSON
/// document, the same exit code with and without `--json`, no debug representations.
#[test]
fn gate_every_flag_with_a_bogus_value() -> TestResult {
    let (_, seeded) = templates()?;
    let template = seeded.workspace();
    let mut root = Cli::command();
    root.build();
    let mut driven = 0;
    for leaf in commands().iter().filter(|l| !l.group) {
        let cmd = leaf
            .path
            .iter()
            .try_fold(&root, |c, name| c.find_subcommand(name))
            .ok_or("command vanished from the tree")?;
        for arg in cmd.get_opts().filter(|a| !a.is_global_set()) {
            let Some(long) = arg.get_long() else { continue };
            let mut args = leaf.argv(ITEM);
            args.extend([format!("--{long}"), "bogus-value".into()]);
            let (json, _) = both(&seeded, &template, Some(&template), &args)?;
            if json.code != 0 {
                assert!(
                    (1..=5).contains(&json.code),
                    "{}: exit {}",
                    args.join(" "),
                    json.code
                );
            }
            driven += 1;
        }
    }
    assert!(driven > 20, "only {driven} flags driven");
    Ok(())
}
