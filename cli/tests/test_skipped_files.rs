//! Item files a read skips are named: every corpus read (`list`, `search`, `next`, `context`)
//! puts one `notices` entry per skipped file in its envelope (path, line, cause, fix), and when
//! stderr is a terminal (a real pseudo-terminal here) prints one warning line for each.

use std::io::Read;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A tracker with one good task and two item files that do not parse.
fn with_broken_files() -> Result<TestTracker, Box<dyn std::error::Error>> {
    let t = TestTracker::new()?;
    t.pm(&["init", "--defaults"])?;
    let run = t.pm(&["create", "task", "Good one", "--id", "pm-g001"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let tasks = t.root().join("tasks");
    pm_engine::atomic::write(
        &tasks.join("pm-bad1.toon"),
        b"id: \"pm-bad1\"\ntitle: \"unterminated\nstatus: open\n",
    )?;
    pm_engine::atomic::write(&tasks.join("pm-bad2.md"), b"{\"not json\n")?;
    Ok(t)
}

#[test]
fn every_corpus_read_names_the_files_it_skipped() -> TestResult {
    let t = with_broken_files()?;
    for args in [
        vec!["list", "--json"],
        vec!["search", "good", "--json"],
        vec!["next", "--json"],
        vec!["context", "--json"],
    ] {
        let run = t.pm(&args)?;
        assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{args:?}");
        let out: Value = run.json()?;
        let notices = out["notices"]
            .as_array()
            .ok_or(format!("{args:?}: {out}"))?;
        let paths: Vec<&Value> = notices.iter().map(|n| &n["path"]).collect();
        assert_eq!(
            paths,
            [&json!("tasks/pm-bad1.toon"), &json!("tasks/pm-bad2.md")],
            "{args:?}"
        );
        let first = &notices[0];
        assert_eq!(first["code"], "item_file_skipped");
        assert_eq!(first["line"], 2, "{args:?}: {first}");
        assert_eq!(first["error_code"], "item_document_invalid");
        assert!(
            first["cause"]
                .as_str()
                .is_some_and(|c| c.contains("Unterminated")),
            "{first}"
        );
        assert!(
            first["fix"]
                .as_str()
                .is_some_and(|f| f.contains("tasks/pm-bad1.toon")),
            "{first}"
        );
        assert!(notices[1].get("line").is_none(), "{}", notices[1]);
    }
    // The same answer from the scan path.
    let scanned: Value = t.pm(&["--no-index", "list", "--json"])?.json()?;
    assert_eq!(scanned["source"], "scan");
    assert_eq!(scanned["notices"].as_array().map(Vec::len), Some(2));
    // A tracker with nothing skipped has no notices key (pm's envelope unchanged).
    let clean = TestTracker::new()?;
    clean.pm(&["init", "--defaults"])?;
    let out: Value = clean.pm(&["list", "--json"])?.json()?;
    assert!(out.get("notices").is_none(), "{out}");
    Ok(())
}

/// Runs `pm args…` with stderr on a fresh pseudo-terminal; returns (stdout, terminal output).
fn run_with_tty_stderr(
    t: &TestTracker,
    args: &[&str],
) -> Result<(String, String), Box<dyn std::error::Error>> {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY)?;
    grantpt(&master)?;
    unlockpt(&master)?;
    let name = ptsname(&master, Vec::new())?;
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_str()?)?;
    let child = t
        .pm_command(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(slave))
        .spawn()?;
    let output = child.wait_with_output()?;
    // The child has exited and the parent's copy of the slave is gone: read what the
    // terminal received until the master reports the end (EIO on Linux).
    let mut master = std::fs::File::from(master);
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match master.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
        }
    }
    Ok((
        String::from_utf8(output.stdout)?,
        String::from_utf8(bytes)?.replace("\r\n", "\n"),
    ))
}

#[test]
fn a_terminal_gets_one_warning_line_per_skipped_file() -> TestResult {
    let t = with_broken_files()?;
    let (stdout, tty) = run_with_tty_stderr(&t, &["list"])?;
    assert!(stdout.contains("pm-g001"), "{stdout}");
    let lines: Vec<&str> = tty.lines().collect();
    assert_eq!(lines.len(), 2, "{tty:?}");
    assert!(
        lines[0].starts_with("warning: skipped tasks/pm-bad1.toon:2: "),
        "{tty:?}"
    );
    assert!(
        lines[1].starts_with("warning: skipped tasks/pm-bad2.md: "),
        "{tty:?}"
    );
    // Piped stderr stays silent (scripts read the envelope).
    let run = t.pm(&["list"])?;
    assert_eq!(run.stderr, "");
    Ok(())
}

/// One read's envelope and the paths its duplicate notices name.
type Answer = (Value, Vec<Value>);

/// What every corpus read answers, without the keys that may differ between two runs on the
/// same items (`now`, the context `window`, `source`, `notices`), and the paths of its duplicate notices.
fn answers(t: &TestTracker, extra: &[&str]) -> Result<Vec<Answer>, Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    for args in [
        vec!["list", "--json"],
        vec!["search", "twice", "--json"],
        vec!["next", "--json"],
        vec!["context", "--json"],
    ] {
        let args: Vec<&str> = extra.iter().copied().chain(args).collect();
        let run = t.pm(&args)?;
        assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{args:?}");
        let mut env: Value = run.json()?;
        let dups = env["notices"]
            .as_array()
            .map(|n| {
                n.iter()
                    .filter(|n| n["error_code"] == "duplicate_item_id")
                    .map(|n| n["path"].clone())
                    .collect()
            })
            .unwrap_or_default();
        if let Some(env) = env.as_object_mut() {
            for volatile in ["now", "window", "source", "notices"] {
                env.remove(volatile);
            }
        }
        out.push((env, dups));
    }
    Ok(out)
}

/// The `source` of `pm list --json`.
fn list_source(t: &TestTracker, extra: &[&str]) -> Result<Value, Box<dyn std::error::Error>> {
    let args: Vec<&str> = extra.iter().copied().chain(["list", "--json"]).collect();
    let env: Value = t.pm(&args)?.json()?;
    Ok(env["source"].clone())
}

#[test]
fn an_id_stored_twice_is_answered_once_and_the_second_file_is_named() -> TestResult {
    let t = TestTracker::new()?;
    t.pm(&["init", "--defaults"])?;
    let run = t.pm(&["create", "task", "Stored twice", "--id", "pm-d001"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The index is built while the id is stored once; the copy then reaches it by upkeep.
    let once = answers(&t, &[])?;
    assert_eq!(list_source(&t, &[])?, "index");
    assert!(once.iter().all(|(_, dups)| dups.is_empty()));
    let copy = t.root().join("issues/pm-d001.toon");
    std::fs::copy(t.root().join("tasks/pm-d001.toon"), &copy)?;
    for extra in [&[][..], &["--no-index"][..]] {
        let twice = answers(&t, extra)?;
        for ((env, dups), (alone, _)) in twice.iter().zip(&once) {
            // The same answer as with one file: the id is answered once.
            assert_eq!(env, alone, "{extra:?}");
            // `issues` comes before `tasks` in the registry: the tasks file is left out.
            assert_eq!(dups, &[json!("tasks/pm-d001.toon")], "{extra:?}");
        }
        assert_eq!(list_source(&t, extra)?, "scan");
    }
    let listed: Value = t.pm(&["list", "--json"])?.json()?;
    let fix = listed["notices"][0]["fix"].as_str().unwrap_or_default();
    assert!(
        fix.contains("issues/pm-d001.toon") && fix.contains("tasks/pm-d001.toon"),
        "{listed}"
    );
    // A rebuilt projection knows it too.
    assert_eq!(t.pm(&["reindex"])?.code, 0);
    assert_eq!(list_source(&t, &[])?, "scan");
    assert!(answers(&t, &[])?.iter().all(|(_, dups)| dups.len() == 1));
    // Once the copy is gone the index answers again, with no notice.
    std::fs::remove_file(&copy)?;
    assert_eq!(answers(&t, &[])?, once);
    assert_eq!(list_source(&t, &[])?, "index");
    Ok(())
}
