//! Governance is enforced as pm-cli enforces it: the strict preset's create mode refuses a bare
//! create naming the missing flags (`missing_required_option`, exit 2) until
//! `--create-mode progressive`; close validation refuses a close without closure fields
//! (`close_validation_missing_fields`, exit 2), `--validate-close warn` downgrades it to a
//! receipt warning and inline `--resolution`/`--expected`/`--actual` satisfy it; duplicate
//! detection adds pm's receipt warnings (advisory, byte for byte with write-transcript steps
//! 131/132), refuses under strict (`likely_duplicate`, exit 4, nothing written) unless
//! `--allow-duplicate`, and stays silent when off.

use std::error::Error;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{Run, TestTracker};

type TestResult = Result<(), Box<dyn Error>>;

/// Returns `testdata/trackers/<name>` (pm's init settings, `id_prefix: zq-`,
/// `author_default: zq-author`).
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../testdata/trackers/{name}"))
}

/// The flags the strict preset requires of a built-in type that a bare `create task <title>`
/// does not give (pm's `x-create-required-options` table minus `--title` and `--type`).
const STRICT_MISSING: [&str; 18] = [
    "--acceptance-criteria/--ac",
    "--assignee",
    "--author",
    "--body",
    "--comment",
    "--deadline",
    "--dep",
    "--description",
    "--doc",
    "--estimate/--estimated-minutes",
    "--file",
    "--learning",
    "--message",
    "--note",
    "--priority",
    "--status",
    "--tags",
    "--test",
];

fn error_of(run: &Run) -> Result<Value, Box<dyn Error>> {
    let doc: Value = run.json()?;
    Ok(doc["error"].clone())
}

/// Creates a task progressively under the strict preset and returns its id.
fn progressive_task(t: &TestTracker, title: &str) -> Result<String, Box<dyn Error>> {
    let run = t.pm(&[
        "create",
        "task",
        title,
        "--create-mode",
        "progressive",
        "--json",
    ])?;
    assert_eq!(run.code, 0, "{run:?}");
    let receipt: Value = run.json()?;
    Ok(receipt["id"].as_str().unwrap_or_default().to_string())
}

#[test]
fn strict_preset_refuses_a_bare_create_naming_the_missing_flags() -> TestResult {
    let t = TestTracker::from_tree(&fixture("settings-preset-strict"))?;
    let before = t.snapshot()?;
    let run = t.pm(&["create", "task", "Bare strict item", "--json"])?;
    assert_eq!(run.code, 2, "{run:?}");
    let error = error_of(&run)?;
    assert_eq!(error["code"], "missing_required_option");
    assert_eq!(
        error["message"],
        format!(
            "Missing required options {} for type \"Task\"",
            STRICT_MISSING.join(", ")
        )
    );
    assert_eq!(error["recovery"]["missing"], json!(STRICT_MISSING));
    assert_eq!(
        error["recovery"]["suggested_flags"][0],
        "--create-mode progressive"
    );
    assert_eq!(t.snapshot()?, before, "a refused create writes nothing");

    let text = t.pm(&["create", "task", "Bare strict item"])?;
    assert_eq!(text.code, 2);
    assert!(
        text.stderr
            .starts_with("error[missing_required_option]: Missing required options --acceptance-criteria/--ac, --assignee,"),
        "{}",
        text.stderr
    );

    let bad = t.pm(&["create", "task", "X", "--create-mode", "lenient", "--json"])?;
    assert_eq!(
        (bad.code, error_of(&bad)?["code"].clone()),
        (2, json!("invalid_argument_value"))
    );
    Ok(())
}

#[test]
fn create_mode_progressive_overrides_and_full_options_satisfy_strict() -> TestResult {
    let t = TestTracker::from_tree(&fixture("settings-preset-strict"))?;
    let id = progressive_task(&t, "Staged onboarding")?;
    assert!(id.starts_with("zq-"), "{id}");

    let full = [
        "create",
        "task",
        "Fully specified",
        "--description",
        "d",
        "--status",
        "open",
        "--priority",
        "1",
        "--tags",
        "a",
        "--body",
        "b",
        "--deadline",
        "2026-10-01",
        "--estimate",
        "30",
        "--ac",
        "ok",
        "--author",
        "zq-author",
        "--message",
        "m",
        "--assignee",
        "zq-author",
        "--dep",
        &id,
        "--clear-comments",
        "--clear-notes",
        "--clear-learnings",
        "--clear-files",
        "--clear-tests",
        "--clear-docs",
        "--json",
    ];
    let run = t.pm(&full)?;
    assert_eq!(run.code, 0, "{run:?}");
    let receipt: Value = run.json()?;
    let created = receipt["id"].as_str().unwrap_or_default();
    let stream = std::fs::read_to_string(t.root().join(format!("history/{created}.jsonl")))?;
    let entry: Value = serde_json::from_str(stream.lines().next().unwrap_or_default())?;
    assert_eq!(
        entry["message"],
        "m | explicit_unset=comments,docs,files,learnings,notes,tests"
    );

    let conflict = t.pm(&[
        "create",
        "task",
        "Both",
        "--dep",
        &id,
        "--clear-deps",
        "--create-mode",
        "progressive",
        "--json",
    ])?;
    assert_eq!(conflict.code, 2, "{conflict:?}");
    let error = error_of(&conflict)?;
    assert_eq!(
        (error["code"].clone(), error["message"].clone()),
        (
            json!("conflicting_arguments"),
            json!("Cannot combine --clear-deps with --dep")
        )
    );
    Ok(())
}

#[test]
fn strict_preset_refuses_a_close_without_closure_fields() -> TestResult {
    let t = TestTracker::from_tree(&fixture("settings-preset-strict"))?;
    let id = progressive_task(&t, "Needs closure evidence")?;
    let before = t.snapshot()?;
    let run = t.pm(&["close", &id, "Done", "--json"])?;
    assert_eq!(run.code, 2, "{run:?}");
    let error = error_of(&run)?;
    assert_eq!(error["code"], "close_validation_missing_fields");
    assert_eq!(
        error["message"],
        format!(
            "Cannot close item {id}: missing resolution (--resolution), expected_result (--expected-result), actual_result (--actual-result). Populate fields or use --validate-close warn."
        )
    );
    assert_eq!(
        error["recovery"]["missing"],
        json!(["--resolution", "--expected-result", "--actual-result"])
    );
    assert_eq!(
        error["recovery"]["suggested_retry"],
        format!(
            "pm update {id} --resolution '<value>' --expected-result '<value>' --actual-result '<value>'"
        )
    );
    assert_eq!(t.snapshot()?, before, "a refused close writes nothing");

    // One inline field is not enough under strict.
    let partial = t.pm(&["close", &id, "Done", "--resolution", "Fixed", "--json"])?;
    assert_eq!(partial.code, 2);
    assert!(
        error_of(&partial)?["message"].as_str().is_some_and(
            |m| m.contains("missing expected_result (--expected-result), actual_result")
        ),
        "{partial:?}"
    );
    Ok(())
}

#[test]
fn validate_close_warn_downgrades_the_refusal_to_a_receipt_warning() -> TestResult {
    let t = TestTracker::from_tree(&fixture("settings-preset-strict"))?;
    for bare in [false, true] {
        let id = progressive_task(&t, &format!("Warn close {bare}"))?;
        let mut args = vec![
            "close",
            id.as_str(),
            "Done",
            "--resolution",
            "Fixed",
            "--validate-close",
        ];
        if !bare {
            args.push("warn");
        }
        args.push("--json");
        let run = t.pm(&args)?;
        assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
        let receipt: Value = run.json()?;
        assert_eq!(
            receipt,
            json!({
                "id": id,
                "status": "closed",
                "changed_field_count": 5,
                "close_reason": "Done",
                "warnings": [format!(
                    "close_validation_missing_fields:{id}:expected_result (--expected-result),actual_result (--actual-result)"
                )],
            })
        );
    }
    let id = progressive_task(&t, "Off close")?;
    let off = t.pm(&["close", &id, "Done", "--validate-close", "off", "--json"])?;
    assert_eq!(off.code, 0, "{off:?}");
    assert_eq!(off.json::<Value>()?.get("warnings"), None);
    let bad = t.pm(&["close", &id, "Done", "--validate-close", "loud", "--json"])?;
    assert_eq!(
        (bad.code, error_of(&bad)?["code"].clone()),
        (2, json!("invalid_argument_value"))
    );
    Ok(())
}

#[test]
fn inline_closure_fields_satisfy_strict_close_in_one_write() -> TestResult {
    let t = TestTracker::from_tree(&fixture("settings-preset-strict"))?;
    let id = progressive_task(&t, "Inline closure")?;
    let run = t.pm(&[
        "close",
        &id,
        "--resolution",
        " Implemented ",
        "--expected",
        "Starts cleanly",
        "--actual-result",
        "Starts cleanly",
        "--json",
    ])?;
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    let receipt: Value = run.json()?;
    // No reason given: the resolution is the close reason (pm's precedence).
    assert_eq!(receipt["close_reason"], "Implemented");
    assert_eq!(receipt.get("warnings"), None);
    let item = std::fs::read_to_string(t.root().join(format!("tasks/{id}.toon")))?;
    for line in [
        "resolution: Implemented",
        "expected_result: Starts cleanly",
        "actual_result: Starts cleanly",
    ] {
        assert!(item.contains(line), "{line}: {item}");
    }
    let stream = std::fs::read_to_string(t.root().join(format!("history/{id}.jsonl")))?;
    assert_eq!(stream.lines().count(), 2, "create + one close entry");

    // The reason aliases.
    for flag in ["-r", "--reason", "--close-reason"] {
        let other = progressive_task(&t, &format!("Alias {flag}"))?;
        let run = t.pm(&[
            "close",
            &other,
            flag,
            "Aliased",
            "--validate-close",
            "off",
            "--json",
        ])?;
        assert_eq!(run.code, 0, "{flag}: {run:?}");
        assert_eq!(run.json::<Value>()?["close_reason"], "Aliased", "{flag}");
    }
    Ok(())
}

struct Transcript {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

fn transcript() -> Result<Transcript, Box<dyn Error>> {
    let archive = pm_testkit::shared_file("golden/write-transcript.tar.gz");
    let dir = pm_testkit::extract_tar_gz(&archive)?;
    let root = dir.path().join("write-transcript");
    Ok(Transcript { _dir: dir, root })
}

/// Runs `pm args` in the workspace of `t` with the transcript's environment at `minute`.
fn transcript_pm(t: &TestTracker, minute: u32, args: &[&str]) -> Result<Run, Box<dyn Error>> {
    let clock = format!("2026-09-02T{:02}:{:02}:00.000Z", minute / 60, minute % 60);
    t.pm_in(
        &t.workspace(),
        args,
        &[
            ("PM_PATH", ".agents/pm"),
            ("PM_CLOCK", &clock),
            ("PM_SEED", "golden-transcript-2"),
            ("PM_AUTHOR", "golden-author"),
        ],
    )
}

#[test]
fn advisory_duplicates_match_pm_cli_write_transcript_steps_131_132() -> TestResult {
    let golden = transcript()?;
    let steps = [
        (
            131,
            "131-create",
            "pm-d101",
            "Login times out after 30 seconds on slow networks",
        ),
        (
            132,
            "132-create",
            "pm-d102",
            "Login times out after 30 seconds on a slow network",
        ),
    ];
    for (ext, flag) in [("toon", None), ("json", Some("--json"))] {
        let t = TestTracker::from_tree(&golden.root.join("snapshots/130-validate"))?;
        for (minute, name, id, description) in steps {
            let mut args = vec![
                "create",
                "task",
                "Fix login timeout on slow networks",
                "--id",
                id,
                "--description",
                description,
            ];
            args.extend(flag);
            let run = transcript_pm(&t, minute, &args)?;
            assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{name}: {run:?}");
            let expected =
                std::fs::read_to_string(golden.root.join(format!("stdout/{ext}/{name}.{ext}")))?;
            assert_eq!(run.stdout, expected, "{name} ({ext})");
            for file in [format!("tasks/{id}.toon"), format!("history/{id}.jsonl")] {
                let ours = std::fs::read(t.root().join(&file))?;
                let theirs = std::fs::read(
                    golden
                        .root
                        .join(format!("snapshots/{name}/.agents/pm/{file}")),
                )?;
                assert_eq!(ours, theirs, "{name} {file}");
            }
        }
    }
    Ok(())
}

/// Creates `title` without `PM_AUTHOR` (the fixture's `author_default` applies).
fn create_as_configured(
    t: &TestTracker,
    title: &str,
    extra: &[&str],
) -> Result<Run, Box<dyn Error>> {
    let mut args = vec!["create", "task", title, "--json"];
    args.extend(extra);
    t.pm_unset(&args, &["PM_AUTHOR"])
}

fn author_of(t: &TestTracker, id: &str) -> Result<Value, Box<dyn Error>> {
    let stream = std::fs::read_to_string(t.root().join(format!("history/{id}.jsonl")))?;
    let entry: Value = serde_json::from_str(stream.lines().next().unwrap_or_default())?;
    Ok(entry["author"].clone())
}

#[test]
fn duplicate_modes_on_the_zq_fixtures() -> TestResult {
    const TITLE: &str = "Rotate the signing keys";
    for mode in ["off", "advisory", "strict"] {
        let t = TestTracker::from_tree(&fixture(&format!("settings-dup-{mode}")))?;
        let first = create_as_configured(&t, TITLE, &[])?;
        assert_eq!(
            (first.code, first.stderr.as_str()),
            (0, ""),
            "{mode}: {first:?}"
        );
        let first: Value = first.json()?;
        let first_id = first["id"].as_str().unwrap_or_default().to_string();
        assert!(first_id.starts_with("zq-"), "{mode}: {first_id}");
        assert_eq!(first.get("warnings"), None, "{mode}: nothing to match yet");
        assert_eq!(author_of(&t, &first_id)?, "zq-author", "{mode}");

        let before = t.snapshot()?;
        let second = create_as_configured(&t, "rotate the SIGNING keys", &[])?;
        let expected_warnings = json!([
            format!("likely_duplicates:{first_id}"),
            format!("likely_duplicate_recovery:reuse:{first_id}"),
        ]);
        match mode {
            "off" => {
                assert_eq!(second.code, 0, "{second:?}");
                assert_eq!(
                    second.json::<Value>()?.get("warnings"),
                    None,
                    "off is silent"
                );
            }
            "advisory" => {
                assert_eq!(second.code, 0, "{second:?}");
                let receipt: Value = second.json()?;
                assert_eq!(receipt["warnings"], expected_warnings);
                let id = receipt["id"].as_str().unwrap_or_default();
                assert!(id.starts_with("zq-"), "{id}");
                assert_eq!(author_of(&t, id)?, "zq-author");
            }
            _ => {
                assert_eq!(second.code, 4, "{second:?}");
                let error = error_of(&second)?;
                assert_eq!(error["code"], "likely_duplicate");
                assert_eq!(
                    error["message"],
                    format!(
                        "Likely duplicate item(s) found: {first_id} (open): {TITLE}. Reuse the canonical item or pass --allow-duplicate with explicit intent."
                    )
                );
                assert_eq!(
                    error["recovery"]["suggested_flags"],
                    json!(["--allow-duplicate"])
                );
                assert_eq!(
                    error["recovery"]["suggested_retry"],
                    format!("pm get {first_id} --full")
                );
                assert_eq!(t.snapshot()?, before, "a refused create writes nothing");

                let allowed = create_as_configured(&t, TITLE, &["--allow-duplicate"])?;
                assert_eq!(allowed.code, 0, "{allowed:?}");
                let receipt: Value = allowed.json()?;
                assert_eq!(receipt["warnings"], expected_warnings);
                let id = receipt["id"].as_str().unwrap_or_default();
                assert!(id.starts_with("zq-"), "{id}");
                assert_eq!(author_of(&t, id)?, "zq-author");
            }
        }
    }
    Ok(())
}

#[test]
fn a_closed_match_is_reopened_not_reused() -> TestResult {
    let t = TestTracker::from_tree(&fixture("settings-dup-advisory"))?;
    let first = create_as_configured(&t, "Flaky upload retry", &[])?;
    let id = first.json::<Value>()?["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(t.pm(&["close", &id, "Fixed"])?.code, 0);
    let second = create_as_configured(&t, "Flaky upload retry", &[])?;
    assert_eq!(
        second.json::<Value>()?["warnings"],
        json!([
            format!("likely_duplicates:{id}"),
            format!("likely_duplicate_recovery:reopen:{id}"),
        ])
    );
    Ok(())
}
