//! `pm bench generate`: the manifest it prints, a generated tracker that `pm validate` and
//! `pm get` accept, and the refusals (non-fixture target, existing fixture without --force).

use serde_json::Value;

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[test]
fn generate_writes_a_valid_tracker_and_prints_its_manifest() -> TestResult {
    let t = TestTracker::new()?;
    let run = t.pm(&[
        "bench", "generate", "--items", "100", "--out", "gen", "--json",
    ])?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0));
    let manifest: Value = run.json()?;
    assert_eq!(manifest["item_count"], 100);
    assert_eq!(manifest["seed"], 42);
    assert_eq!(manifest["shape"]["name"], "scratch");
    assert_eq!(manifest["measured_shape"]["matches_declaration"], true);
    assert_eq!(manifest["sample_ids"]["get"], "pm-s0000000");
    assert_eq!(manifest["sample_ids"]["open"][1], "pm-s000000h");
    assert_eq!(manifest["counts"]["visible_items"], 100);
    let on_disk: Value = serde_json::from_slice(&std::fs::read(
        t.workspace().join("gen/.pm-scale-fixture.json"),
    )?)?;
    assert_eq!(on_disk, manifest);

    let tracker = t.workspace().join("gen/.agents/pm");
    let tracker = tracker.to_str().ok_or("utf-8 path")?;
    let run = t.pm(&[
        "--pm-path",
        tracker,
        "validate",
        "--check-history-drift",
        "--json",
    ])?;
    assert_eq!(run.code, 0, "{}", run.stdout);
    let report: Value = run.json()?;
    assert_eq!(report["ok"], true, "{report}");
    let run = t.pm(&["--pm-path", tracker, "get", "pm-s0000001", "--json"])?;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("Synthetic task 1"));
    Ok(())
}

#[test]
fn generate_refuses_foreign_and_existing_targets() -> TestResult {
    let t = TestTracker::new()?;
    std::fs::create_dir(t.workspace().join("busy"))?;
    std::fs::File::create(t.workspace().join("busy/notes.txt"))?;
    let run = t.pm(&[
        "bench", "generate", "--items", "2", "--out", "busy", "--json",
    ])?;
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stdout.contains("invalid_argument_value"),
        "{}",
        run.stdout
    );

    let args = ["bench", "generate", "--items", "2", "--out", "fx", "--json"];
    assert_eq!(t.pm(&args)?.code, 0);
    assert_eq!(t.pm(&args)?.code, 2, "an existing fixture needs --force");
    let forced = t.pm(&[&args[..], &["--force"]].concat())?;
    assert_eq!(forced.code, 0, "{}", forced.stdout);

    let run = t.pm(&[
        "bench", "generate", "--items", "2", "--out", "x", "--shape", "odd",
    ])?;
    assert_eq!(run.code, 2);
    let run = t.pm(&["bench", "generate", "--items", "million", "--out", "y"])?;
    assert_eq!(run.code, 2, "a million items need --allow-million");
    Ok(())
}
