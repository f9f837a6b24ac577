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
