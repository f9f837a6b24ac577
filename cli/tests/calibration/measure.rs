//! Runs the calibration reads on a generated tier with the real `pm` binary and measures them:
//! the five intents, the carried-session orientation and the two cursor walks, plus the receipt
//! consistency rules every printed envelope must satisfy.

use std::error::Error;
use std::path::{Path, PathBuf};

use pm_engine::json::{to_compact, to_pretty};
use serde_json::{Map, Value, json};

use super::gate::{IntentValues, SessionValues, TierValues, WalkValues, round4};

type Res<T> = Result<T, Box<dyn Error + Send + Sync>>;

/// The five intents in gate order: name and argv.
pub const INTENTS: [(&str, &[&str]); 5] = [
    ("context:orient", &["context", "--for", "orient"]),
    ("get:inspect", &["get", "pm-s0000000", "--for", "inspect"]),
    (
        "list:triage",
        &["list", "--for", "triage", "--status", "all"],
    ),
    ("next:execute", &["next", "--for", "execute"]),
    (
        "search:discover",
        &["search", "status:all Synthetic", "--for", "discover"],
    ),
];
/// The orientation order of the carried session.
pub const SESSION_ORDER: [&str; 5] = [
    "context:orient",
    "list:triage",
    "search:discover",
    "get:inspect",
    "next:execute",
];
/// The session's token budget.
pub const SESSION_BUDGET: u64 = 20_000;
/// Keys a continuation page (`--after`) must not repeat.
pub const PAGE_METADATA: [&str; 13] = [
    "applied_limit",
    "completeness",
    "context_intent",
    "count",
    "filters",
    "has_more",
    "now",
    "omission_receipt",
    "projection",
    "row_contract",
    "sorting",
    "total",
    "truncated",
];
/// Row collections of the five surfaces.
const ROW_KEYS: [&str; 7] = [
    "items",
    "high_level",
    "low_level",
    "ready",
    "decision_needed",
    "blocked",
    "held_by_others",
];

/// A generated tier in a temp dir (`work/` is the workspace) with a hermetic environment.
pub struct Workspace {
    tmp: tempfile::TempDir,
}

/// One printed read.
pub struct Printed {
    /// Its stdout parsed as JSON.
    pub value: Value,
    /// Its stdout length in bytes.
    pub bytes: u64,
}

/// ceil(bytes / 4), the estimator of every receipt.
pub fn tokens(bytes: u64) -> u64 {
    bytes.div_ceil(4)
}

impl Workspace {
    /// Generates `items` scratch items (seed 42) and builds the index once.
    pub fn generate(items: u64) -> Res<Workspace> {
        let ws = Workspace {
            tmp: tempfile::tempdir()?,
        };
        for dir in ["home", "global"] {
            std::fs::create_dir(ws.tmp.path().join(dir))?;
        }
        let n = items.to_string();
        let args = [
            "bench", "generate", "--items", &n, "--out", "work", "--json",
        ];
        let out = ws.command(ws.tmp.path(), &args)?.output()?;
        if !out.status.success() {
            return Err(format!(
                "bench generate failed: {}",
                String::from_utf8_lossy(&out.stdout)
            )
            .into());
        }
        ws.json(&["list", "--limit", "1"])?;
        Ok(ws)
    }

    fn root(&self) -> PathBuf {
        self.tmp.path().join("work")
    }

    fn command(&self, dir: &Path, args: &[&str]) -> Res<assert_cmd::Command> {
        let mut cmd = assert_cmd::Command::cargo_bin("pm")?;
        cmd.env_clear()
            .current_dir(dir)
            .env("PM_CLOCK", "2026-09-01T00:00:00.000Z")
            .env("PM_SEED", "calibration")
            .env("PM_CLOCK_TICK_MS", "0")
            .env("PM_AUTHOR", "context-intent-calibration")
            .env("PM_GLOBAL_PATH", self.tmp.path().join("global"))
            .env("HOME", self.tmp.path().join("home"))
            .env("NO_COLOR", "1")
            .args(args);
        Ok(cmd)
    }

    /// Runs `pm args… --json` in the workspace; exit 0 and one JSON document are required.
    pub fn json(&self, args: &[&str]) -> Res<Printed> {
        let args = [args, &["--json"]].concat();
        let out = self.command(&self.root(), &args)?.output()?;
        let stdout = String::from_utf8(out.stdout)?;
        if out.status.code() != Some(0) {
            return Err(format!("pm {args:?} exited {:?}: {stdout}", out.status.code()).into());
        }
        Ok(Printed {
            value: serde_json::from_str(&stdout)?,
            bytes: stdout.len() as u64,
        })
    }
}

fn u(v: &Value, path: &[&str]) -> Option<u64> {
    path.iter().try_fold(v, |v, k| v.get(k))?.as_u64()
}

/// Returns the rows of `value`'s row collections.
fn rows(value: &Value) -> impl Iterator<Item = &Value> {
    ROW_KEYS
        .iter()
        .filter_map(|k| value.get(k).and_then(Value::as_array))
        .flatten()
}

/// Returns the rules a standalone intent read breaks: a `context_intent` receipt for `name`
/// that is feasible, not omitted, within its budget, whose estimate is the printed size.
pub fn intent_receipt_violations(name: &str, printed: &Printed) -> Vec<String> {
    let Some(r) = printed.value.get("context_intent") else {
        return vec![format!("{name}: no context_intent receipt")];
    };
    let mut v = Vec::new();
    let label = format!(
        "{}:{}",
        r["command"].as_str().unwrap_or(""),
        r["intent"].as_str().unwrap_or("")
    );
    if label != name {
        v.push(format!("{name}: receipt names {label}"));
    }
    let estimate = u(r, &["estimated_tokens"]).unwrap_or(u64::MAX);
    let budget = u(r, &["token_budget"]).unwrap_or(0);
    if estimate != tokens(printed.bytes) {
        v.push(format!(
            "{name}: receipt estimate {estimate} != ceil({} B / 4)",
            printed.bytes
        ));
    }
    if estimate > budget || printed.bytes > budget * 4 {
        v.push(format!(
            "{name}: {estimate} tokens exceed the budget {budget}"
        ));
    }
    for (key, want) in [
        ("within_budget", true),
        ("declaration_feasible", true),
        ("result_omitted", false),
    ] {
        if r[key] != json!(want) {
            v.push(format!("{name}: receipt {key} is {}", r[key]));
        }
    }
    v
}

/// Measures the five intents; returns their values, violations, and the printed results.
pub fn intents(ws: &Workspace) -> Res<(Vec<IntentValues>, Vec<String>, Vec<Printed>)> {
    let mut values = Vec::new();
    let mut violations = Vec::new();
    let mut printed = Vec::new();
    for (name, args) in INTENTS {
        let p = ws.json(args)?;
        violations.extend(intent_receipt_violations(name, &p));
        let r = &p.value["context_intent"];
        values.push(IntentValues {
            intent: name.to_owned(),
            declared_tokens: u(r, &["declared_token_budget"]).unwrap_or(0),
            degradation: r["degradation"].as_str().unwrap_or("").to_owned(),
            bytes: p.bytes,
            tokens: tokens(p.bytes),
            rows: rows(&p.value).count() as u64,
        });
        printed.push(p);
    }
    Ok((values, violations, printed))
}

/// Returns the rules one session step breaks: receipts present, estimates equal to the printed
/// size, spend carried from `before`, and the immutable state fields unchanged.
pub fn session_step_violations(step: &str, printed: &Printed, before: &Value) -> Vec<String> {
    let (Some(rs), Some(ro)) = (
        printed.value.get("read_session"),
        printed.value.get("read_output"),
    ) else {
        return vec![format!("{step}: read_output or read_session missing")];
    };
    let mut v = Vec::new();
    let size = tokens(printed.bytes);
    let budget = u(before, &["token_budget"]).unwrap_or(0);
    let spent_before = u(before, &["spent_tokens"]).unwrap_or(0);
    let total = u(rs, &["spent_total_tokens"]).unwrap_or(u64::MAX);
    let charged = u(rs, &["charged_this_call_tokens"]).unwrap_or(0);
    for (what, got, want) in [
        ("read_output estimate", u(ro, &["estimated_tokens"]), size),
        (
            "spent_this_call_tokens",
            u(rs, &["spent_this_call_tokens"]),
            size,
        ),
        (
            "spent_before_tokens",
            u(rs, &["spent_before_tokens"]),
            spent_before,
        ),
        (
            "spent_total_tokens",
            Some(total),
            budget.min(spent_before + charged),
        ),
        (
            "next_state.spent_tokens",
            u(rs, &["next_state", "spent_tokens"]),
            total,
        ),
        (
            "remaining_tokens",
            u(rs, &["remaining_tokens"]),
            budget.saturating_sub(total),
        ),
    ] {
        if got != Some(want) {
            v.push(format!("{step}: {what} {got:?} != {want}"));
        }
    }
    for key in ["id", "version", "token_budget"] {
        if rs["next_state"][key] != before[key] {
            v.push(format!("{step}: next_state.{key} changed"));
        }
    }
    v
}

/// Pretty-printed size of `row` as an array entry nested `depth` levels deep.
fn row_bytes(row: &Value, depth: usize) -> u64 {
    let text = to_pretty(row);
    (text.len() + 2 * depth * text.lines().count().saturating_sub(1)) as u64
}

/// Runs the orientation with one carried session; `standalone` are the five intents' printed
/// results in [`INTENTS`] order (the full rows of the unsuppressed control).
pub fn session(ws: &Workspace, standalone: &[Printed]) -> Res<(SessionValues, Vec<String>)> {
    let mut state = json!({"version": 1, "id": "orientation", "token_budget": SESSION_BUDGET,
        "spent_tokens": 0, "seen_item_ids": []});
    let mut violations = Vec::new();
    let (mut delivered, mut suppressed, mut control, mut compact_bytes, mut compact_spent) =
        (0, 0, 0, 0, 0);
    for step in SESSION_ORDER {
        let index = INTENTS
            .iter()
            .position(|(n, _)| *n == step)
            .ok_or("unknown step")?;
        let state_text = to_compact(&state);
        let args = [INTENTS[index].1, &["--output-session", &state_text]].concat();
        let p = ws.json(&args)?;
        violations.extend(session_step_violations(step, &p, &state));
        delivered += p.bytes;
        control += p.bytes;
        let compact = to_compact(&p.value).len() as u64 + 1;
        compact_bytes += compact;
        compact_spent += tokens(compact);
        suppressed += u(&p.value, &["read_session", "suppressed_repeat_count"]).unwrap_or(0);
        for reference in rows(&p.value).filter(|r| r.get("context_ref").is_some()) {
            let full = rows(&standalone[index].value).find(|r| r.get("id") == reference.get("id"));
            match full {
                Some(full) => {
                    control += row_bytes(full, 2) - row_bytes(reference, 2).min(row_bytes(full, 2))
                }
                None => violations.push(format!(
                    "{step}: suppressed {} has no full row to compare",
                    reference["id"]
                )),
            }
        }
        state = p.value["read_session"]["next_state"].clone();
    }
    let spent = u(&state, &["spent_tokens"]).unwrap_or(0);
    let seen = state["seen_item_ids"].as_array().map_or(0, Vec::len) as u64;
    if suppressed == 0 && seen > 0 && SESSION_ORDER.len() > 1 {
        violations.push("session: no repeat was suppressed".into());
    }
    Ok((
        SessionValues {
            commands: SESSION_ORDER.len() as u64,
            token_budget: SESSION_BUDGET,
            spent_tokens: spent,
            remaining_tokens: SESSION_BUDGET.saturating_sub(spent),
            seen_items: seen,
            suppressed_repeats: suppressed,
            delivered_bytes: delivered,
            unsuppressed_control_bytes: control,
            compact_json_spent_tokens: compact_spent,
            compact_json_delivered_bytes: compact_bytes,
        },
        violations,
    ))
}

/// One walk: the bounded read, the unbounded baseline, and how to read a baseline row's id.
pub struct WalkSpec {
    /// `command:intent`.
    pub name: &'static str,
    /// The bounded read.
    pub bounded: &'static [&'static str],
    /// The single unbounded read.
    pub unbounded: &'static [&'static str],
    /// Path of the id inside an unbounded row.
    pub unbounded_id: &'static [&'static str],
}

/// The two walks of the 2,243 tier.
pub const WALKS: [WalkSpec; 2] = [
    WalkSpec {
        name: "list:triage",
        bounded: &["list", "--for", "triage", "--status", "all"],
        unbounded: &["list", "--status", "all", "--no-truncate"],
        unbounded_id: &["id"],
    },
    WalkSpec {
        name: "search:discover",
        bounded: &["search", "status:all Synthetic", "--for", "discover"],
        unbounded: &[
            "search",
            "status:all Synthetic",
            "--full",
            "--limit",
            "2244",
        ],
        unbounded_id: &["item", "id"],
    },
];

/// Follows `next_cursor` to the end and compares the walk with the unbounded call.
pub fn walk(ws: &Workspace, spec: &WalkSpec) -> Res<(WalkValues, Vec<String>)> {
    let mut violations = Vec::new();
    let (mut ids, mut pages, mut bytes, mut control, mut compact) =
        (Vec::new(), 0u64, 0u64, 0u64, 0u64);
    let mut metadata: Map<String, Value> = Map::new();
    let mut after: Option<String> = None;
    loop {
        let mut args = spec.bounded.to_vec();
        if let Some(cursor) = &after {
            args.extend(["--after", cursor.as_str()]);
        }
        let p = ws.json(&args)?;
        pages += 1;
        bytes += p.bytes;
        compact += to_compact(&p.value).len() as u64 + 1;
        if pages == 1 {
            for key in PAGE_METADATA {
                if let Some(value) = p.value.get(key) {
                    metadata.insert(key.into(), value.clone());
                }
            }
            control += p.bytes;
        } else {
            if let Some(key) = PAGE_METADATA.iter().find(|k| p.value.get(**k).is_some()) {
                violations.push(format!("{}: page {pages} repeats {key}", spec.name));
            }
            let mut repeated = metadata.clone();
            repeated.extend(p.value.as_object().cloned().unwrap_or_default());
            control += to_pretty(&Value::Object(repeated)).len() as u64 + 1;
        }
        ids.extend(
            p.value["items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r["id"].as_str().map(str::to_owned)),
        );
        after = p
            .value
            .get("next_cursor")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if after.is_none() || pages > 1_000 {
            break;
        }
    }
    let full = ws.json(spec.unbounded)?;
    let expected: Vec<String> = full.value["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            spec.unbounded_id
                .iter()
                .try_fold(r, |v, k| v.get(k))?
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    if ids != expected {
        violations.push(format!(
            "{}: walk ids ({}) differ from the unbounded call ({})",
            spec.name,
            ids.len(),
            expected.len()
        ));
    }
    let rows = ids.len().max(1) as f64;
    let full_compact = to_compact(&full.value).len() as f64 + 1.0;
    Ok((
        WalkValues {
            walk: spec.name.to_owned(),
            rows: ids.len() as u64,
            pages,
            walk_bytes: bytes,
            bytes_per_row: round4(bytes as f64 / rows),
            repeated_metadata_bytes: control,
            unbounded_bytes: full.bytes,
            walk_to_unbounded: round4(bytes as f64 / full.bytes.max(1) as f64),
            compact_json_walk_to_unbounded: round4(compact as f64 / full_compact),
        },
        violations,
    ))
}

/// Generates a tier and measures everything (walks only when `walks`), the walks on their
/// own threads.
pub fn tier(items: u64, walks: bool) -> Res<(TierValues, Vec<String>)> {
    let ws = Workspace::generate(items)?;
    std::thread::scope(|scope| {
        let handles: Vec<_> = if walks {
            WALKS
                .iter()
                .map(|spec| scope.spawn(|| walk(&ws, spec)))
                .collect()
        } else {
            Vec::new()
        };
        let (intent_values, mut violations, printed) = intents(&ws)?;
        let (session, session_violations) = session(&ws, &printed)?;
        violations.extend(session_violations);
        let mut walk_values = Vec::new();
        for handle in handles {
            let (w, v) = handle.join().map_err(|_| "walk thread panicked")??;
            walk_values.push(w);
            violations.extend(v);
        }
        Ok((
            TierValues {
                items,
                intents: intent_values,
                session,
                walks: walk_values,
            },
            violations,
        ))
    })
}
