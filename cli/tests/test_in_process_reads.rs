//! A read built in-process — plain request values, no argv and no clap parse — prints the same
//! bytes, warnings and exit code as the `pm` binary given the equivalent command line, for
//! list, get, search, context and next, in TOON and JSON, with output dimensions, on the
//! sample tracker and on the real corpus.

use std::error::Error;
use std::path::Path;

use pm_cli::args::GlobalArgs;
use pm_cli::commands::{ContextArgs, GetArgs, ListArgs, NextArgs, SearchArgs};
use pm_cli::ctx::Environment;
use pm_cli::request::{Read, ReadRequest, read};

use crate::common::{AUTHOR, SEED, TestTracker};

type TestResult = Result<(), Box<dyn Error>>;

/// The pinned clock of both runs.
const CLOCK: &str = "2026-09-01T00:00:00.000Z";

/// One case: the command line and the request an in-process caller builds for it.
struct Case {
    argv: &'static [&'static str],
    request: ReadRequest,
}

fn case(argv: &'static [&'static str], read: Read, global: GlobalArgs) -> Case {
    Case {
        argv,
        request: ReadRequest { read, global },
    }
}

fn json() -> GlobalArgs {
    GlobalArgs {
        json: true,
        ..GlobalArgs::default()
    }
}

fn plain() -> GlobalArgs {
    GlobalArgs::default()
}

/// The environment the harness pins for the binary, as an in-process caller passes it.
fn environment(tracker: &TestTracker) -> Environment {
    let outside = tracker.outside();
    let mut env = Environment::with_cwd(tracker.workspace());
    env.pm_clock = Some(CLOCK.into());
    env.pm_seed = Some(SEED.into());
    env.pm_clock_tick_ms = Some("0".into());
    env.pm_author = Some(AUTHOR.into());
    env.home = Some(outside.clone().into_os_string());
    env.pm_global_path = outside
        .parent()
        .map(|tmp| tmp.join("global").into_os_string());
    env.no_color = Some("1".into());
    env
}

/// Runs every case both ways and compares stdout, stderr and the exit code.
fn assert_same(tracker: &TestTracker, cases: Vec<Case>) -> TestResult {
    for case in cases {
        let cli = tracker.pm_in(&tracker.workspace(), case.argv, &[("PM_CLOCK", CLOCK)])?;
        let ours = read(case.request, environment(tracker));
        let argv = case.argv.join(" ");
        assert_eq!(
            String::from_utf8(ours.stdout)?,
            cli.stdout,
            "stdout of `pm {argv}`"
        );
        assert_eq!(
            String::from_utf8(ours.stderr)?,
            cli.stderr,
            "stderr of `pm {argv}`"
        );
        assert_eq!(i32::from(ours.code), cli.code, "exit code of `pm {argv}`");
        assert!(!cli.stdout.is_empty(), "`pm {argv}` printed nothing");
    }
    Ok(())
}

fn get(id: &str) -> GetArgs {
    GetArgs {
        id: id.into(),
        ..GetArgs::default()
    }
}

fn search(keywords: &[&str]) -> Box<SearchArgs> {
    Box::new(SearchArgs {
        keywords: keywords.iter().map(|k| (*k).to_string()).collect(),
        ..SearchArgs::default()
    })
}

#[test]
fn reads_in_process_print_what_the_binary_prints() -> TestResult {
    let tracker = TestTracker::sample()?;
    let limited = GlobalArgs {
        output_limit: Some("2".into()),
        ..json()
    };
    let budgeted = GlobalArgs {
        output_budget: Some("300".into()),
        ..plain()
    };
    let cases = vec![
        case(&["list"], Read::List(ListArgs::default()), plain()),
        case(
            &["list", "--all", "--json"],
            Read::List(ListArgs {
                all: true,
                ..ListArgs::default()
            }),
            json(),
        ),
        case(
            &["list", "--all", "--full", "--output-limit", "2", "--json"],
            Read::List(ListArgs {
                all: true,
                full: true,
                ..ListArgs::default()
            }),
            limited,
        ),
        case(&["get", "gd-f1"], Read::Get(get("gd-f1")), plain()),
        case(
            &["get", "gd-t1", "--full", "--json"],
            Read::Get(GetArgs {
                full: true,
                ..get("gd-t1")
            }),
            json(),
        ),
        case(
            &["search", "soil"],
            Read::Search(search(&["soil"])),
            plain(),
        ),
        case(
            &["search", "daily", "export", "--json"],
            Read::Search(search(&["daily", "export"])),
            json(),
        ),
        case(&["context"], Read::Context(ContextArgs::default()), plain()),
        case(
            &["context", "--json"],
            Read::Context(ContextArgs::default()),
            json(),
        ),
        case(&["next"], Read::Next(NextArgs::default()), plain()),
        case(
            &["next", "--output-budget", "300"],
            Read::Next(NextArgs::default()),
            budgeted,
        ),
    ];
    assert_same(&tracker, cases)
}

#[test]
fn corpus_reads_in_process_print_what_the_binary_prints() -> TestResult {
    let corpus = pm_testkit::extract_corpus()?;
    let tracker = TestTracker::from_tree(Path::new(corpus.path()))?;
    let unbounded = GlobalArgs {
        output_budget: Some("unbounded".into()),
        ..json()
    };
    let cases = vec![
        case(
            &["list", "--all", "--output-budget", "unbounded", "--json"],
            Read::List(ListArgs {
                all: true,
                ..ListArgs::default()
            }),
            unbounded,
        ),
        case(
            &["search", "history", "repair", "--json"],
            Read::Search(search(&["history", "repair"])),
            json(),
        ),
        case(&["next", "--json"], Read::Next(NextArgs::default()), json()),
        case(&["context"], Read::Context(ContextArgs::default()), plain()),
    ];
    assert_same(&tracker, cases)
}

/// An error report has no command line to echo (`recovery.attempted_command` is `pm`), but
/// the code, the exit code and the document's shape are the binary's.
#[test]
fn an_in_process_error_reports_the_same_code() -> TestResult {
    let tracker = TestTracker::sample()?;
    let cli = tracker.pm_in(&tracker.workspace(), &["get", "gd-nope", "--json"], &[])?;
    let ours = read(
        ReadRequest {
            read: Read::Get(get("gd-nope")),
            global: json(),
        },
        environment(&tracker),
    );
    let ours: serde_json::Value = serde_json::from_slice(&ours.stdout)?;
    let theirs: serde_json::Value = serde_json::from_str(&cli.stdout)?;
    assert_eq!(ours["error"]["code"], theirs["error"]["code"]);
    assert_eq!(ours["error"]["exit_code"], theirs["error"]["exit_code"]);
    assert_eq!(ours["error"]["recovery"]["attempted_command"], "pm");
    assert_eq!(cli.code, 3);
    Ok(())
}
