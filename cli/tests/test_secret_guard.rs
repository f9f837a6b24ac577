//! The mutation secret guard (`settings.mutation_guard.secret_guard`) end to end: pm-cli's
//! advisory bytes on the write transcript (step 083), the warning on stderr in both encodings,
//! a block that writes nothing and echoes no credential, the `--force` override, `off`, and the
//! commands and modes that are not scanned.
//!
//! Credential-shaped samples are assembled from fragments, so this file holds no literal token.

use std::path::Path;

use serde_json::Value;

use crate::common::{ErrorEnvelope, TestTracker};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn aws_key() -> String {
    ["AK", "IAIOSFODNN7EXAMPLE"].concat()
}

fn github_token() -> String {
    ["gh", "p_", "123456789012345678901234567890"].concat()
}

/// A tracker (`init --defaults`, so `secret_guard: advise`) with one task `pm-a`.
fn tracker() -> Result<TestTracker, Box<dyn std::error::Error>> {
    let t = TestTracker::new()?;
    for args in [
        &["init", "--defaults"][..],
        &["create", "task", "Alpha", "--id", "pm-a"],
    ] {
        let run = t.pm(args)?;
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    }
    Ok(t)
}

/// Sets `mutation_guard.secret_guard` in the tracker's settings.json.
fn set_guard(t: &TestTracker, mode: &str) -> TestResult {
    let path = t.root().join("settings.json");
    let mut settings: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    settings["mutation_guard"]["secret_guard"] = Value::String(mode.to_owned());
    pm_engine::atomic::write(&path, serde_json::to_string_pretty(&settings)?.as_bytes())?;
    Ok(())
}

fn item_text(t: &TestTracker, id: &str) -> Result<String, Box<dyn std::error::Error>> {
    Ok(std::fs::read_to_string(
        t.root().join(format!("tasks/{id}.toon")),
    )?)
}

/// Runs `pm args` in `ws` with the write transcript's environment for step 083.
fn transcript_step_083(
    ws: &Path,
    json: bool,
) -> Result<(i32, String, String), Box<dyn std::error::Error>> {
    let home = ws.join("../home");
    std::fs::create_dir_all(&home)?;
    let mut args = vec![
        "create".to_owned(),
        "task".into(),
        "Rotate credentials".into(),
        "--id".into(),
        "pm-t050".into(),
        "--description".into(),
        format!("Old key {} leaked", aws_key()),
    ];
    if json {
        args.push("--json".into());
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pm"))
        .env_clear()
        .current_dir(ws)
        .env("HOME", &home)
        .env("PM_GLOBAL_PATH", &home)
        .env("PM_PATH", ".agents/pm")
        .env("PM_CLOCK", "2026-09-02T01:22:00.000Z")
        .env("PM_CLOCK_TICK_MS", "0")
        .env("PM_SEED", "golden-transcript-2")
        .env("PM_AUTHOR", "golden-author")
        .args(&args)
        .output()?;
    Ok((
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout)?,
        String::from_utf8(out.stderr)?,
    ))
}

#[test]
fn advise_matches_pm_cli_on_the_write_transcript() -> TestResult {
    let archive = pm_testkit::shared_file("golden/write-transcript.tar.gz");
    let dir = pm_testkit::extract_tar_gz(&archive)?;
    let golden = dir.path().join("write-transcript");
    for (ext, json) in [("toon", false), ("json", true)] {
        let t = TestTracker::from_tree(&golden.join("snapshots/082-config"))?;
        let (code, stdout, stderr) = transcript_step_083(&t.workspace(), json)?;
        assert_eq!(code, 0, "{ext}: {stderr}");
        let out = golden.join(format!("stdout/{ext}/083-create.{ext}"));
        assert_eq!(stdout, std::fs::read_to_string(&out)?, "stdout ({ext})");
        let err = golden.join(format!("stdout/{ext}/083-create.{ext}.stderr"));
        assert_eq!(stderr, std::fs::read_to_string(&err)?, "stderr ({ext})");
        assert_eq!(
            stderr,
            "warning:secret_guard_detected:1:rules=aws_access_key\n"
        );
        // Advice never stops the write.
        assert!(item_text(&t, "pm-t050")?.contains(&aws_key()));
    }
    Ok(())
}

#[test]
fn a_token_in_a_comment_is_advised_on_stderr_in_both_encodings() -> TestResult {
    let t = tracker()?;
    let text = format!("deploy with {}", github_token());
    let run = t.pm(&["comments", "pm-a", "--add", &text])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "warning:secret_guard_detected:1:rules=github_token\n"
    );
    assert!(item_text(&t, "pm-a")?.contains(&github_token()));
    let run = t.pm(&["--json", "comments", "pm-a", "--add", &text])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "warning:secret_guard_detected:1:rules=github_token\n"
    );
    let receipt: Value = serde_json::from_str(&run.stdout)?;
    assert!(receipt.is_object(), "stdout stays one JSON document");
    assert!(!run.stdout.contains("secret_guard"));
    Ok(())
}

#[test]
fn a_credential_url_in_an_update_or_comment_is_advised() -> TestResult {
    let t = tracker()?;
    let url = format!("https://ci:{}@github.com/o/r.git", github_token());
    let run = t.pm(&["update", "pm-a", "--description", &format!("clone {url}")])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "warning:secret_guard_detected:2:rules=github_token,url_credentials\n"
    );
    assert!(!run.stdout.contains(&github_token()));
    // A plain password in the userinfo is a finding of our own rule (advise writes it: the
    // receipt shows what was stored).
    let password = ["hun", "ter2"].concat();
    let plain = format!("clone https://user:{password}@host/repo.git");
    for args in [
        vec!["update", "pm-a", "--description", &plain],
        vec!["comments", "pm-a", "--add", &plain],
    ] {
        let run = t.pm(&args)?;
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(
            run.stderr,
            "warning:secret_guard_detected:1:rules=url_credentials\n"
        );
    }
    // An env reference in the password position is not a credential.
    let run = t.pm(&[
        "update",
        "pm-a",
        "--description",
        "clone https://user:${TOKEN}@host/repo.git",
    ])?;
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    Ok(())
}

#[test]
fn the_count_is_findings_and_the_rules_are_sorted() -> TestResult {
    let t = tracker()?;
    let run = t.pm(&[
        "create",
        "task",
        &aws_key(),
        "--description",
        &format!("{} and {}", github_token(), aws_key()),
        "--ac",
        "Deployed with token=AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    ])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "warning:secret_guard_detected:4:rules=aws_access_key,github_token,high_entropy_assignment\n"
    );
    // Low-entropy assignments and ordinary prose are not findings.
    let run = t.pm(&[
        "update",
        "pm-a",
        "--description",
        &format!("token={} and password: changeme", "a".repeat(40)),
    ])?;
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    Ok(())
}

#[test]
fn block_refuses_before_writing_and_echoes_no_credential() -> TestResult {
    let t = tracker()?;
    set_guard(&t, "block")?;
    let secret = aws_key();
    let description = format!("Old key {secret} leaked");
    let args = ["create", "task", "Rotate", "--description", &description];
    let before = t.snapshot()?;
    let run = t.pm(&args)?;
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr.starts_with(
            "error[mutation_secret_guard_blocked]: Mutation blocked by secret guard (aws_access_key) in --description. No detected value was logged.\nhint: "
        ),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, "");
    assert!(!run.stderr.contains(&secret), "{}", run.stderr);
    assert_eq!(t.snapshot()?, before, "a blocked create wrote something");

    let mut json_args = vec!["--json"];
    json_args.extend(args);
    let run = t.pm(&json_args)?;
    assert_eq!(run.code, 4);
    assert!(!run.stdout.contains(&secret) && !run.stderr.contains(&secret));
    let env: ErrorEnvelope = run.json()?;
    let error = env.error;
    assert_eq!(error.code, "mutation_secret_guard_blocked");
    assert_eq!(error.exit_code, 4);
    assert!(!error.changed);
    assert_eq!(error.recovery.attempted_command, "pm <mutation> [REDACTED]");
    assert_eq!(error.recovery.normalized_args, ["[REDACTED]"]);
    assert_eq!(error.recovery.provided_fields, ["--json", "--description"]);
    assert_eq!(
        error.recovery.suggested_retry.as_deref(),
        Some("Remove credential-shaped content, then retry the mutation.")
    );
    let context = error.context.ok_or("context")?;
    assert_eq!(context["rules"], serde_json::json!(["aws_access_key"]));
    assert_eq!(context["paths"], serde_json::json!(["--description"]));
    assert_eq!(t.snapshot()?, before, "a blocked create wrote something");
    Ok(())
}

#[test]
fn block_scans_the_stdin_document_and_names_its_field() -> TestResult {
    let t = tracker()?;
    set_guard(&t, "block")?;
    let before = t.snapshot()?;
    let doc = format!(
        r#"{{"type":"task","title":"From stdin","description":"{}"}}"#,
        github_token()
    );
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_pm"))
        .env_clear()
        .current_dir(t.workspace())
        .env("PM_AUTHOR", "test-author")
        .env("HOME", t.outside())
        .env("PM_GLOBAL_PATH", t.outside())
        .args(["create", "--stdin-json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    std::io::Write::write_all(&mut child.stdin.take().ok_or("stdin")?, doc.as_bytes())?;
    let out = child.wait_with_output()?;
    let stderr = String::from_utf8(out.stderr)?;
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("(github_token) in --stdin-json.description."),
        "{stderr}"
    );
    assert!(!stderr.contains(&github_token()));
    assert_eq!(t.snapshot()?, before);
    Ok(())
}

#[test]
fn force_overrides_a_blocking_guard_and_says_so() -> TestResult {
    let t = tracker()?;
    set_guard(&t, "block")?;
    let text = format!("see {}", github_token());
    let run = t.pm(&["update", "pm-a", "--description", &text])?;
    assert_eq!(run.code, 4, "{}", run.stderr);
    for json in [false, true] {
        let mut args = vec!["update", "pm-a", "--description", &text, "--force"];
        if json {
            args.push("--json");
        }
        let run = t.pm(&args)?;
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(
            run.stderr,
            "warning:secret_guard_detected:1:rules=github_token\nwarning:secret_guard_force_override\n"
        );
        assert!(!run.stdout.contains(&github_token()));
    }
    assert!(item_text(&t, "pm-a")?.contains(&github_token()));
    Ok(())
}

#[test]
fn off_is_silent() -> TestResult {
    let t = tracker()?;
    set_guard(&t, "off")?;
    let run = t.pm(&["create", "task", "Rotate", "--description", &aws_key()])?;
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{}", run.stderr);
    Ok(())
}

#[test]
fn reads_and_non_writing_modes_are_not_scanned() -> TestResult {
    let t = tracker()?;
    set_guard(&t, "block")?;
    let token = github_token();
    for args in [
        vec!["search", token.as_str()],
        vec!["files", "pm-a"],
        vec!["comments", "pm-a"],
    ] {
        let run = t.pm(&args)?;
        assert!(
            !run.stderr.contains("secret_guard"),
            "{args:?}: {}",
            run.stderr
        );
        assert_ne!(run.code, 4, "{args:?}");
    }
    // Without a tracker there is no guard: the command reports the missing tracker.
    let run = t.pm_in(&t.outside(), &["create", "task", &token], &[])?;
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(!run.stderr.contains("secret_guard") && !run.stderr.contains(&token));
    Ok(())
}
