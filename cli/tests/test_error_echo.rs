//! What outputs repeat of the command line (issue 21, item 7): credentials in argv are
//! redacted in every echo (attempted command, normalized args, refused value, message, stderr,
//! and a successful read's `filters` and `query`), echoed values are cut at 200 characters,
//! reads refuse `--expect-hash`.

use std::error::Error;

use crate::common::{ErrorEnvelope, TestTracker};

type TestResult = Result<(), Box<dyn Error>>;

const PASSWORD: &str = "s3cr3tpw";
const URL: &str = "https://user:s3cr3tpw@host/x";
const GITHUB_TOKEN: &str = "ghp_Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LmNbVc";
const AWS_KEY: &str = "AKIAIOSFODNN7EXAMPLE";

/// Runs `args` in text mode and with `--json`, and checks that no secret appears in either
/// stream and that the JSON envelope echoes the argument redacted. Returns the JSON envelope.
fn refused_without_leaks(
    t: &TestTracker,
    args: &[&str],
    code: &str,
) -> Result<ErrorEnvelope, Box<dyn Error>> {
    let text = t.pm(args)?;
    let mut json_args = vec!["--json"];
    json_args.extend_from_slice(args);
    let json = t.pm(&json_args)?;
    for (mode, run) in [("text", &text), ("json", &json)] {
        for secret in [PASSWORD, &GITHUB_TOKEN[4..], &AWS_KEY[4..]] {
            assert!(
                !run.stdout.contains(secret) && !run.stderr.contains(secret),
                "{mode} {args:?} leaked {secret}: {}{}",
                run.stdout,
                run.stderr
            );
        }
        assert_ne!(run.code, 0, "{mode} {args:?}");
    }
    assert!(text.stdout.is_empty());
    assert!(
        text.stderr.starts_with(&format!("error[{code}]: ")),
        "{args:?}: {}",
        text.stderr
    );
    let doc: ErrorEnvelope = serde_json::from_str(&json.stdout)?;
    assert_eq!(doc.error.code, code, "{args:?}");
    let recovery = &doc.error.recovery;
    assert!(
        recovery.attempted_command.contains("[redacted]"),
        "{}",
        recovery.attempted_command
    );
    assert!(
        recovery
            .normalized_args
            .iter()
            .any(|a| a.contains("[redacted]"))
    );
    Ok(doc)
}

#[test]
fn credentials_in_argv_are_never_echoed() -> TestResult {
    let t = TestTracker::sample()?;
    let in_sentence = format!("see {URL} now");
    let bearer = format!("Authorization: Bearer {GITHUB_TOKEN}");
    let status_eq = format!("--status={URL}");
    let bogus_eq = format!("--bogus={URL}");
    let aws_phrase = format!("key {AWS_KEY} here");
    let cases: [(&[&str], &str); 9] = [
        // A flag value (runtime refusal).
        (&["list", "--status", URL], "invalid_argument_value"),
        // `--flag=value`.
        (&["list", &status_eq], "invalid_argument_value"),
        // A positional.
        (&["get", URL], "invalid_item_id"),
        (&["get", GITHUB_TOKEN], "invalid_item_id"),
        // Inside a longer string.
        (
            &["search", &in_sentence, "--mode", "semantic"],
            "unsupported_search_mode",
        ),
        (
            &["search", &aws_phrase, &bearer, "--hybrid"],
            "unsupported_search_mode",
        ),
        // Usage errors from the parser.
        (&["list", &bogus_eq], "unknown_option"),
        (&["--output-format", URL, "list"], "invalid_argument_value"),
        // A path that pm normalizes (the URL's `//` collapses).
        (&["--pm-path", URL, "list"], "not_in_project"),
    ];
    for (args, code) in cases {
        let doc = refused_without_leaks(&t, args, code)?;
        if let Some(value) = &doc.error.refusal.rejected_value {
            assert!(!value.contains(PASSWORD), "{value}");
        }
    }
    let doc = refused_without_leaks(&t, &["list", "--status", URL], "invalid_argument_value")?;
    assert_eq!(
        doc.error.refusal.rejected_value.as_deref(),
        Some("https://[redacted]@host/x")
    );
    assert!(doc.error.message.contains("https://[redacted]@host/x"));
    Ok(())
}

#[test]
fn echoed_values_are_cut_at_200_characters() -> TestResult {
    let t = TestTracker::sample()?;
    let long_id = "a".repeat(10_000);
    let long_status = "b".repeat(10_000);
    for args in [
        &["get", long_id.as_str()][..],
        &["list", "--status", &long_status],
        &[long_id.as_str()],
        &["list", "--bogus", &long_id],
    ] {
        for json in [false, true] {
            let mut argv = if json { vec!["--json"] } else { Vec::new() };
            argv.extend_from_slice(args);
            let run = t.pm(&argv)?;
            let size = run.stdout.len() + run.stderr.len();
            assert_ne!(run.code, 0);
            assert!(
                size < 4_000,
                "{} bytes for {:?}",
                size,
                &argv[..argv.len().min(2)]
            );
            // Text mode of an unknown option quotes only the flag; JSON echoes the whole line.
            let echoes_value = json || args[0] != "list" || args[1] != "--bogus";
            let output = format!("{}{}", run.stdout, run.stderr);
            assert!(
                !echoes_value || output.contains("more characters]"),
                "no cut marker: {}",
                run.stderr
            );
        }
    }
    let run = t.pm(&["--json", "get", &long_id])?;
    let doc: ErrorEnvelope = serde_json::from_str(&run.stdout)?;
    let cut = format!("{}…[9800 more characters]", "a".repeat(200));
    assert_eq!(
        doc.error.recovery.normalized_args,
        ["--json", "get", cut.as_str()]
    );
    // The message quotes the prefixed id (`gd-aaa…`), cut the same way.
    assert!(
        doc.error.message.starts_with("Item gd-aaa"),
        "{}",
        doc.error.message
    );
    assert!(
        doc.error
            .message
            .ends_with("…[9800 more characters] not found")
    );
    Ok(())
}

#[test]
fn reads_refuse_expect_hash() -> TestResult {
    let t = TestTracker::sample()?;
    let item = t.root().join("tasks/gd-t1.toon");
    let before = std::fs::read(&item)?;
    for args in [
        &["get", "gd-t1", "--expect-hash", "abc"][..],
        &["list", "--expect-hash", "gd-t1=abc"],
        &["search", "e", "--expect-hash", "abc"],
    ] {
        let mut argv = vec!["--json"];
        argv.extend_from_slice(args);
        let run = t.pm(&argv)?;
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        let doc: ErrorEnvelope = serde_json::from_str(&run.stdout)?;
        assert_eq!(doc.error.code, "expect_hash_requires_mutation");
        assert_eq!(doc.error.refusal.surface, "--expect-hash");
        assert_eq!(doc.error.exit_code, 2);
        let text = t.pm(args)?;
        assert_eq!(text.code, 2);
        assert!(
            text.stderr
                .starts_with("error[expect_hash_requires_mutation]: ")
        );
    }
    // A write still takes the guard (and refuses a stale one with its own code).
    let stale = "0".repeat(64);
    let run = t.pm(&[
        "--json",
        "update",
        "gd-t1",
        "--title",
        "x",
        "--expect-hash",
        &stale,
    ])?;
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(run.stdout.contains("\"item_revision_conflict\""));
    assert_eq!(std::fs::read(&item)?, before);
    Ok(())
}

#[test]
fn successful_reads_echo_their_arguments_redacted() -> TestResult {
    let t = TestTracker::new()?;
    t.pm(&["init", "--defaults"])?;
    let query = format!("{URL} {GITHUB_TOKEN}");
    for args in [
        vec!["list", "--tag", URL],
        vec!["list-open", "--assignee", URL],
        vec!["search", &query],
        vec!["next", "--tag", URL],
        vec!["context", "--tag", URL],
        vec!["aggregate", "--tag", URL],
    ] {
        for json in [true, false] {
            let mut argv = args.clone();
            if json {
                argv.push("--json");
            }
            let run = t.pm(&argv)?;
            assert_eq!(run.code, 0, "{argv:?}: {}", run.stderr);
            assert!(
                !run.stdout.contains(PASSWORD) && !run.stdout.contains(&GITHUB_TOKEN[4..]),
                "{argv:?} leaked: {}",
                run.stdout
            );
            assert!(
                run.stdout.contains("https://[redacted]@host/x"),
                "{argv:?} no echo: {}",
                run.stdout
            );
        }
    }
    Ok(())
}
