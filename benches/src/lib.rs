//! Shared fixtures for pm's criterion benches (inputs only; no production code lives here):
//! a small deterministic tracker generator (a stand-in until the seed-42 corpus generator lands)
//! and the tier sizes the index benches run at.
#![allow(clippy::disallowed_methods)] // benches may read PM_BENCH_* variables

pub mod flat;
pub use flat::{generate_tracker, generated_id};

use pm_engine::item::codec::serialize_item;
use pm_engine::item::{ItemDoc, ItemFormat};
use rayon::prelude::*;
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;

/// The calibration tier (pm-cli's "current tracker scale").
pub const TIER_SMALL: usize = 2_243;
/// The CI tier.
pub const TIER_CI: usize = 10_000;
/// The large tier (only with `PM_BENCH_LARGE=1`).
pub const TIER_LARGE: usize = 100_000;

/// Returns the tiers to run: 2,243 and 10k, plus 100k when `PM_BENCH_LARGE=1`.
pub fn tiers() -> Vec<usize> {
    let mut tiers = vec![TIER_SMALL, TIER_CI];
    if std::env::var("PM_BENCH_LARGE").is_ok_and(|v| v == "1") {
        tiers.push(TIER_LARGE);
    }
    tiers
}

/// Returns pm-cli's generated id: `pm-s` + base36(i) zero-padded to 7 characters.
pub fn item_id(i: usize) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut n = i;
    let mut out = [b'0'; 7];
    for slot in out.iter_mut().rev() {
        *slot = DIGITS[n % 36];
        n /= 36;
    }
    format!("pm-s{}", String::from_utf8_lossy(&out))
}

const TYPES: [(&str, &str); 5] = [
    ("Task", "tasks"),
    ("Issue", "issues"),
    ("Feature", "features"),
    ("Chore", "chores"),
    ("Decision", "decisions"),
];

/// Writes a tracker of `n` items (TOON, canonical bytes) plus one history line per item under
/// `root` (the tracker root). Deterministic in `n`: statuses by `i % 20` like pm-cli's scratch
/// shape (70% closed), priorities `i % 5`, every 20th item an Epic, every 51st a root with the
/// next 50 as children, a `related` edge to the previous item, and tag `x` on every 7th item.
///
/// # Panics
/// When a file cannot be written (bench setup).
pub fn generate(root: &Path, n: usize) {
    for dir in [
        "epics",
        "tasks",
        "issues",
        "features",
        "chores",
        "decisions",
        "history",
    ] {
        std::fs::create_dir_all(root.join(dir)).expect("create folder");
    }
    (0..n).into_par_iter().for_each(|i| {
        let id = item_id(i);
        let (type_name, folder) = if i % 20 == 0 {
            ("Epic", "epics")
        } else {
            TYPES[(i * 7 + 3) % TYPES.len()]
        };
        let status = match i % 20 {
            0 | 17 | 18 => "open",
            1..=14 => "closed",
            15 | 16 => "canceled",
            _ if i % 40 == 19 => "in_progress",
            _ => "blocked",
        };
        let ts = format!(
            "2026-01-{:02}T{:02}:{:02}:{:02}.000Z",
            1 + (i / 86_400) % 28,
            (i / 3600) % 24,
            (i / 60) % 60,
            i % 60
        );
        let mut tags = vec![
            json!("benchmark"),
            json!(format!("area:synthetic-{}", i % 16)),
            json!(format!("team:{}", i % 32)),
        ];
        if i % 7 == 0 {
            tags.push(json!("x"));
        }
        let mut meta = json!({
            "id": id, "title": format!("Synthetic {} {i}", type_name.to_lowercase()),
            "description": format!("Synthetic description for item {i}."),
            "type": type_name, "status": status, "priority": i % 5, "tags": tags,
            "created_at": ts, "updated_at": ts,
            "estimated_minutes": 15 + (i % 16) * 15,
            "acceptance_criteria": format!("Acceptance criterion for item {i}."),
        });
        let m = meta.as_object_mut().expect("object");
        if i % 51 != 0 {
            m.insert("parent".into(), json!(item_id(i - i % 51)));
        }
        if i > 0 {
            m.insert(
                "dependencies".into(),
                json!([{"id": item_id(i - 1), "kind": "related", "created_at": ts, "author": "pm-bench"}]),
            );
        }
        if status == "in_progress" {
            m.insert("assignee".into(), json!(format!("agent-{}", i % 64)));
        }
        if status == "blocked" && i > 0 {
            m.insert("blocked_by".into(), json!(item_id(i - 1)));
        }
        if (37 * i) % 100 < 2 {
            m.insert(
                "comments".into(),
                json!([{"created_at": ts, "author": "pm-bench", "text": format!("Comment {i}")}]),
            );
        }
        let doc = ItemDoc {
            metadata: meta.as_object().cloned().unwrap_or_default(),
            body: format!("Body of synthetic item {i}.\n\nSignal bucket {}.", (i * 37) % 1000),
        };
        let bytes = serialize_item(&doc, ItemFormat::Toon).expect("serializable");
        write_file(&root.join(folder).join(format!("{id}.toon")), &bytes);
        let line: Value = json!({"ts": ts, "author": "pm-bench", "op": "create", "patch": [],
            "before_hash": "0", "after_hash": "1"});
        let mut text = pm_engine::json::to_compact(&line);
        text.push('\n');
        write_file(&root.join("history").join(format!("{id}.jsonl")), text.as_bytes());
    });
    write_file(&root.join("settings.json"), b"{}\n");
}

fn write_file(path: &Path, bytes: &[u8]) {
    let mut file = std::fs::File::create(path).expect("create file");
    file.write_all(bytes).expect("write file");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_match_pm_cli() {
        assert_eq!(item_id(0), "pm-s0000000");
        assert_eq!(item_id(20), "pm-s000000k");
        assert_eq!(item_id(40), "pm-s0000014");
    }
}
