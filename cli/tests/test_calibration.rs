//! The context-intent calibration gate on the 2- and 2,243-item generated tiers: five intents
//! within their budgets, a carried-session orientation and two cursor walks, checked against
//! `testdata/calibration/approved.json` (see docs/benchmarks.md). `PM_CALIBRATION_APPROVE=1`
//! rewrites that file with the measured values instead of checking them.
#![allow(clippy::disallowed_methods)] // reads PM_CALIBRATION_APPROVE

use std::io::Write;
use std::path::PathBuf;

use serde_json::json;

use crate::calibration::gate::{Approved, TierValues, check};
use crate::calibration::measure::{
    self, Printed, intent_receipt_violations, session_step_violations,
};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

fn approved_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/calibration/approved.json")
}

fn approved() -> Result<Approved, Box<dyn std::error::Error + Send + Sync>> {
    Ok(serde_json::from_str(&std::fs::read_to_string(
        approved_path(),
    )?)?)
}

#[test]
fn calibration_gate_holds_on_both_tiers() -> TestResult {
    let approved = approved()?;
    let mut tiers: Vec<TierValues> = Vec::new();
    let mut violations = Vec::new();
    for (items, walks) in [(2, false), (2_243, true)] {
        let (values, v) = measure::tier(items, walks)?;
        violations.extend(v);
        tiers.push(values);
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
    if std::env::var_os("PM_CALIBRATION_APPROVE").is_some_and(|v| v == "1") {
        let updated = Approved { tiers, ..approved };
        let mut text = serde_json::to_string_pretty(&updated)?;
        text.push('\n');
        std::fs::File::create(approved_path())?.write_all(text.as_bytes())?;
        return Ok(());
    }
    let violations: Vec<String> = tiers.iter().flat_map(|t| check(&approved, t)).collect();
    assert!(violations.is_empty(), "{}", violations.join("\n"));
    Ok(())
}

#[test]
fn the_approved_values_pass_their_own_gate() -> TestResult {
    let approved = approved()?;
    assert_eq!(
        approved.tiers.iter().map(|t| t.items).collect::<Vec<_>>(),
        [2, 2_243]
    );
    for tier in &approved.tiers {
        assert_eq!(check(&approved, tier), Vec::<String>::new());
    }
    Ok(())
}

/// Every ratchet fails when fed one regressed measurement or a tightened approved file.
#[test]
fn the_gate_fails_on_regressions() -> TestResult {
    let approved = approved()?;
    let base = approved.tiers[1].clone();
    type Regress = fn(&mut TierValues);
    let regressions: [(&str, Regress); 12] = [
        ("spend", |t| t.session.spent_tokens += 1),
        ("delivered", |t| t.session.delivered_bytes += 1),
        ("seen up", |t| t.session.seen_items += 1),
        ("seen down", |t| t.session.seen_items -= 1),
        ("suppressed", |t| t.session.suppressed_repeats -= 1),
        ("remaining", |t| t.session.remaining_tokens += 1),
        ("control", |t| {
            t.session.unsuppressed_control_bytes = t.session.delivered_bytes
        }),
        ("intent budget", |t| {
            t.intents[2].tokens = t.intents[2].declared_tokens + 1
        }),
        ("degradation", |t| {
            t.intents[0].degradation = "budget_receipt_only".into()
        }),
        ("walk rows", |t| t.walks[0].rows -= 1),
        ("walk ratio", |t| t.walks[1].walk_to_unbounded *= 1.2),
        ("walk control", |t| {
            t.walks[0].repeated_metadata_bytes = t.walks[0].walk_bytes
        }),
    ];
    for (name, regress) in regressions {
        let mut measured = base.clone();
        regress(&mut measured);
        assert!(
            !check(&approved, &measured).is_empty(),
            "{name} passed the gate"
        );
    }
    // A deliberately tightened approved file rejects today's measurement.
    let mut tightened = approved.clone();
    tightened.tiers[1].session.spent_tokens -= 1;
    tightened.tiers[0].session.delivered_bytes -= 1;
    tightened.tiers[1].walks[0].pages = tightened.tiers[1].walks[0].pages * 4 / 5;
    assert_eq!(check(&tightened, &approved.tiers[1]).len(), 2);
    assert_eq!(check(&tightened, &approved.tiers[0]).len(), 1);
    // pm-cli's ceilings bind the approved values themselves.
    let mut loose = approved.clone();
    loose.tiers[1].session.spent_tokens = loose.reference.spent_tokens + 1;
    assert!(!check(&loose, &approved.tiers[1]).is_empty());
    let mut unknown = base;
    unknown.items = 100;
    assert!(!check(&approved, &unknown).is_empty());
    Ok(())
}

/// The receipt rules detect a missing or inconsistent receipt (the gate's negative control).
#[test]
fn receipt_rules_detect_missing_and_inconsistent_receipts() {
    let receipt = json!({"command": "list", "intent": "triage", "token_budget": 3200,
        "estimated_tokens": 250, "within_budget": true, "declaration_feasible": true,
        "result_omitted": false});
    let good = Printed {
        value: json!({"items": [], "context_intent": receipt}),
        bytes: 1000,
    };
    assert_eq!(
        intent_receipt_violations("list:triage", &good),
        Vec::<String>::new()
    );
    let missing = Printed {
        value: json!({"items": []}),
        bytes: 1000,
    };
    assert_eq!(intent_receipt_violations("list:triage", &missing).len(), 1);
    let off_by_one = Printed {
        bytes: 1001,
        ..good
    };
    assert_eq!(
        intent_receipt_violations("list:triage", &off_by_one).len(),
        1
    );

    let before = json!({"version": 1, "id": "s", "token_budget": 20000, "spent_tokens": 100,
        "seen_item_ids": []});
    let session = |spent_before: u64, id: &str| Printed {
        value: json!({"read_output": {"estimated_tokens": 50},
            "read_session": {"spent_this_call_tokens": 50, "charged_this_call_tokens": 50,
                "spent_before_tokens": spent_before, "spent_total_tokens": spent_before + 50,
                "remaining_tokens": 20000 - spent_before - 50,
                "next_state": {"version": 1, "id": id, "token_budget": 20000,
                    "spent_tokens": spent_before + 50, "seen_item_ids": []}}}),
        bytes: 200,
    };
    assert_eq!(
        session_step_violations("list", &session(100, "s"), &before),
        Vec::<String>::new()
    );
    assert!(!session_step_violations("list", &session(0, "s"), &before).is_empty());
    assert!(!session_step_violations("list", &session(100, "t"), &before).is_empty());
    let bare = Printed {
        value: json!({}),
        bytes: 3,
    };
    assert!(!session_step_violations("list", &bare, &before).is_empty());
}

/// A long session's receipts outgrow `next --for execute`'s 1,200 tokens; the group allowance
/// then binds instead of omitting the ready queue.
#[test]
fn a_long_session_still_serves_an_intent_read() -> Result<(), Box<dyn std::error::Error>> {
    let t = crate::common::TestTracker::fx100()?;
    let seen: Vec<String> = (0..400).map(|i| format!("pm-zz{i:04}")).collect();
    let state = json!({"version": 1, "id": "long", "token_budget": 50000, "spent_tokens": 0,
        "seen_item_ids": seen});
    let state = state.to_string();
    let run = t.pm(&[
        "next",
        "--for",
        "execute",
        "--json",
        "--output-session",
        &state,
    ])?;
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{}", run.stdout);
    let v: serde_json::Value = run.json()?;
    assert!(v["recommended"]["id"].is_string(), "{}", run.stdout);
    assert_eq!(
        v["read_session"]["spent_this_call_tokens"],
        run.stdout.len().div_ceil(4)
    );
    assert_eq!(v["context_intent"]["within_budget"], false);
    Ok(())
}
