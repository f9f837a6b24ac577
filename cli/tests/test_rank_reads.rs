//! `search`, `next` and `context`: byte comparison with pm-cli's read goldens (fx-100 and the
//! real tracker; query-cursor fingerprints masked, see docs/compatibility.md), index ≡ scan,
//! and the refusals of the three commands.

use std::error::Error;
use std::path::Path;

use serde_json::Value;

use crate::common::{ErrorEnvelope, Run, TestTracker};
use crate::test_get::READS_ENV;

type TestResult = Result<(), Box<dyn Error>>;
/// Runs pm with arguments.
type RunFn<'a> = dyn Fn(&[&str]) -> Result<Run, Box<dyn Error>> + 'a;
/// Environment pairs of a run.
type Env = Vec<(&'static str, String)>;

/// Decodes base64url without padding.
fn base64url(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Replaces every query cursor in `text` by its payload without the fingerprint, so outputs
/// compare on the position the cursor encodes (after_id, after_index).
fn mask_cursors(text: &str) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let Some(start) = line.find("eyJ2ZXJzaW9uIjox") else {
            out.push_str(line);
            continue;
        };
        let end = line[start..].find('"').map_or(line.len(), |e| start + e);
        let payload = base64url(&line[start..end])
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .map(|mut v| {
                if let Some(o) = v.as_object_mut() {
                    o.shift_remove("fingerprint");
                }
                v.to_string()
            })
            .unwrap_or_default();
        out.push_str(&line[..start]);
        out.push_str(&payload.replace('"', "'"));
        out.push_str(&line[end..]);
    }
    out
}

fn golden(fixture: &str, label: &str, ext: &str) -> Result<String, Box<dyn Error>> {
    let path = pm_testkit::shared_file(&format!("golden/reads/{fixture}/{label}.{ext}"));
    Ok(std::fs::read_to_string(path)?)
}

fn compare(run: &RunFn<'_>, fixture: &str, label: &str, argv: &[&str]) -> TestResult {
    for (extra, ext) in [(None, "toon"), (Some("--json"), "json")] {
        let mut args = argv.to_vec();
        args.extend(extra);
        let out = run(&args)?;
        assert_eq!(
            (out.stderr.as_str(), out.code),
            ("", 0),
            "{fixture}/{label}.{ext}"
        );
        assert_eq!(
            mask_cursors(&out.stdout),
            mask_cursors(&golden(fixture, label, ext)?),
            "{fixture}/{label}.{ext}"
        );
    }
    Ok(())
}

fn fx100() -> Result<(TestTracker, Env), Box<dyn Error>> {
    let t = TestTracker::fx100()?;
    let pm_path = t.workspace().join(".agents/pm").display().to_string();
    let mut env: Vec<(&str, String)> = READS_ENV
        .iter()
        .map(|(k, v)| (*k, (*v).to_owned()))
        .collect();
    env.push(("PM_PATH", pm_path));
    Ok((t, env))
}

fn runner<'a>(
    t: &'a TestTracker,
    dir: &'a Path,
    env: &'a [(&'static str, String)],
) -> impl Fn(&[&str]) -> Result<Run, Box<dyn Error>> + 'a {
    move |args| {
        let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        t.pm_in(dir, args, &pairs)
    }
}

#[test]
fn fx100_search_matches_the_goldens() -> TestResult {
    let (t, env) = fx100()?;
    let dir = t.workspace();
    let run = runner(&t, &dir, &env);
    compare(
        &run,
        "fx-100",
        "search",
        &["search", "synthetic", "--limit", "10"],
    )?;
    compare(
        &run,
        "fx-100",
        "search2",
        &["search", "learning", "--limit", "10"],
    )
}

#[test]
fn self_tracker_search_matches_the_goldens() -> TestResult {
    let corpus = pm_testkit::shared_corpus()?;
    let t = TestTracker::new()?;
    let mut env: Vec<(&str, String)> = READS_ENV
        .iter()
        .map(|(k, v)| (*k, (*v).to_owned()))
        .collect();
    env.push(("PM_PATH", corpus.join(".agents/pm").display().to_string()));
    let run = runner(&t, &corpus, &env);
    compare(
        &run,
        "self-tracker",
        "search",
        &["search", "benchmark", "--limit", "10"],
    )?;
    compare(
        &run,
        "self-tracker",
        "search2",
        &["search", "toon", "output", "budget", "--limit", "10"],
    )
}

#[test]
fn fx100_next_matches_the_golden() -> TestResult {
    let (t, env) = fx100()?;
    let dir = t.workspace();
    compare(&runner(&t, &dir, &env), "fx-100", "next", &["next"])
}

#[test]
fn fx100_context_matches_the_golden() -> TestResult {
    let (t, env) = fx100()?;
    let dir = t.workspace();
    compare(
        &runner(&t, &dir, &env),
        "fx-100",
        "context",
        &["context", "--limit", "10"],
    )
}

#[test]
fn index_and_scan_answer_alike() -> TestResult {
    let (t, env) = fx100()?;
    let dir = t.workspace();
    let run = runner(&t, &dir, &env);
    let mut scan_env = env.clone();
    scan_env.push(("PM_NO_INDEX", "1".into()));
    let scan = runner(&t, &dir, &scan_env);
    for argv in [
        vec!["search", "synthetic", "task", "--limit", "7", "--json"],
        vec!["next", "--json", "--explain-ranking"],
        vec!["ctx", "--limit", "4", "--json"],
    ] {
        let a = run(&argv)?;
        let b = scan(&argv)?;
        assert_eq!(a.code, 0, "{argv:?}: {}", a.stderr);
        assert_eq!(a.stdout, b.stdout, "{argv:?}");
    }
    Ok(())
}

#[test]
fn search_cursor_walk_returns_every_hit_once() -> TestResult {
    let (t, env) = fx100()?;
    let dir = t.workspace();
    let run = runner(&t, &dir, &env);
    let all: Value = serde_json::from_str(
        &run(&[
            "search",
            "synthetic",
            "--limit",
            "1000",
            "--output-budget",
            "unbounded",
            "--json",
        ])?
        .stdout,
    )?;
    let want: Vec<String> = all["items"]
        .as_array()
        .ok_or("items")?
        .iter()
        .filter_map(|r| r["id"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(want.len(), 100);
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let mut argv = vec!["search", "synthetic", "--limit", "30", "--json"];
        if let Some(a) = after.as_deref() {
            argv.extend(["--after", a]);
        }
        let page: Value = serde_json::from_str(&run(&argv)?.stdout)?;
        for r in page["items"].as_array().ok_or("items")? {
            seen.push(r["id"].as_str().unwrap_or_default().to_owned());
        }
        match page["next_cursor"].as_str() {
            Some(c) => after = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, want);
    Ok(())
}

#[test]
fn search_modes_filters_and_refusals() -> TestResult {
    let (t, env) = fx100()?;
    let dir = t.workspace();
    let run = runner(&t, &dir, &env);
    // Semantic and hybrid are refused with their own code (exit 2, one JSON document).
    for argv in [
        vec!["search", "synthetic", "--mode", "semantic", "--json"],
        vec!["search", "synthetic", "--hybrid", "--json"],
    ] {
        let out = run(&argv)?;
        assert_eq!(out.code, 2, "{argv:?}");
        let env: ErrorEnvelope = out.json()?;
        assert_eq!(env.error.code, "unsupported_search_mode");
    }
    // Inline filters become filters; a query of only inline tokens is refused.
    let out = run(&["search", "synthetic", "status:closed", "--json"])?;
    let v: Value = serde_json::from_str(&out.stdout)?;
    assert_eq!(v["query"], "synthetic");
    assert_eq!(v["filters"]["status"], "closed");
    assert!(
        v["items"]
            .as_array()
            .ok_or("items")?
            .iter()
            .all(|r| r["status"] == "closed")
    );
    assert_eq!(run(&["search", "status:open"])?.code, 2);
    // An explicit flag beats an inline token and warns.
    let v: Value = serde_json::from_str(
        &run(&[
            "search",
            "synthetic",
            "type:Epic",
            "--type",
            "Task",
            "--json",
        ])?
        .stdout,
    )?;
    assert_eq!(
        v["warnings"][0],
        "search_inline_filter_ignored:type:flag_takes_precedence"
    );
    // --count and --match-mode and.
    let v: Value = serde_json::from_str(
        &run(&[
            "search",
            "synthetic",
            "epic",
            "--match-mode",
            "and",
            "--count",
            "--json",
        ])?
        .stdout,
    )?;
    assert_eq!(v["count_only"], true);
    let epics = v["total"].as_u64().ok_or("total")?;
    assert!(epics > 0 && epics < 100, "{epics}");
    // Exact id.
    let v: Value = serde_json::from_str(&run(&["search", "pm-s0000007", "--json"])?.stdout)?;
    assert_eq!(v["items"][0]["score"], 1000);
    assert_eq!(v["items"][0]["matched_fields"][0], "id");
    // Full projection carries the item, projection and now.
    let v: Value = serde_json::from_str(
        &run(&["search", "synthetic", "--full", "--limit", "1", "--json"])?.stdout,
    )?;
    assert_eq!(v["items"][0]["item"]["id"], "pm-s000000y");
    assert_eq!(v["projection"]["mode"], "full");
    assert_eq!(v["mode_source"], "auto");
    Ok(())
}

#[test]
fn next_and_context_refusals_and_intents() -> TestResult {
    let (t, env) = fx100()?;
    let dir = t.workspace();
    let run = runner(&t, &dir, &env);
    assert_eq!(run(&["next", "--parent", "pm-nope"])?.code, 3);
    assert_eq!(run(&["context", "--depth", "wide"])?.code, 2);
    let v: Value = serde_json::from_str(&run(&["next", "--for", "execute", "--json"])?.stdout)?;
    assert_eq!(v["filters"]["ready_only"], true);
    assert_eq!(v["context_intent"]["intent"], "execute");
    let v: Value = serde_json::from_str(&run(&["ctx", "--for", "orient", "--json"])?.stdout)?;
    assert_eq!(v["applied_limit"], 3);
    // The intent receipt claims only what a brief-depth context holds.
    assert_eq!(v["sections_included"], serde_json::json!([]));
    assert_eq!(
        v["context_intent"]["included_field_groups"],
        serde_json::json!(["summary", "focus"])
    );
    let v: Value = serde_json::from_str(&run(&["next", "--explain-ranking", "--json"])?.stdout)?;
    assert_eq!(v["ranking"]["model"], "default-weighted-v1");
    assert_eq!(v["ranking"]["items"][0]["id"], v["recommended"]["id"]);
    assert_eq!(v["packing"]["profile"], "next");
    Ok(())
}

/// The real tracker's `next`: every count and the blocked, decision and held queues equal the
/// golden; the ready order is a documented delta (docs/compatibility.md).
#[test]
fn self_tracker_next_agrees_on_queues_and_counts() -> TestResult {
    let corpus = pm_testkit::shared_corpus()?;
    let t = TestTracker::new()?;
    let mut env: Vec<(&str, String)> = READS_ENV
        .iter()
        .map(|(k, v)| (*k, (*v).to_owned()))
        .collect();
    env.push(("PM_PATH", corpus.join(".agents/pm").display().to_string()));
    let run = runner(&t, &corpus, &env);
    let ours: Value = serde_json::from_str(&run(&["next", "--json"])?.stdout)?;
    let gold: Value = serde_json::from_str(&golden("self-tracker", "next", "json")?)?;
    for key in [
        "now",
        "blocked",
        "decision_needed",
        "held_by_others",
        "summary",
        "filters",
    ] {
        assert_eq!(ours[key], gold[key], "{key}");
    }
    let ids = |v: &Value| -> Vec<String> {
        let mut all: Vec<String> = v["ready"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(std::iter::once(&v["recommended"]))
            .filter_map(|r| r["id"].as_str().map(str::to_owned))
            .collect();
        all.sort();
        all
    };
    // The top six agree as a set up to the relevance order's tail.
    let (a, b) = (ids(&ours), ids(&gold));
    let common = a.iter().filter(|id| b.contains(id)).count();
    assert!(common >= 4, "{a:?} vs {b:?}");
    Ok(())
}
