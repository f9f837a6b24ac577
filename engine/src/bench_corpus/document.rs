//! One generated item: pm-cli's seeded 32-bit LCG, the type and status rules, the canonical
//! document built from an [`ItemPlan`], and its history lines (a `create`, then no-op depth lines).

use serde_json::{Map, Value, json};

use super::shape::{CorpusShape, ItemPlan, base_ms, corpus_id};
use crate::clock::format_iso_ms;
use crate::hash::{EMPTY_DOC_HASH, HashEpoch, item_hash};
use crate::history::{HistoryEntry, item_patch};
use crate::item::ItemDoc;
use crate::item::canon::{CanonSchema, canonicalize_owned};
use crate::timestamp::parse_timestamp;

/// The ten weighted type slots of non-Epic items (`Story` is deliberately one of them).
pub const WEIGHTED_TYPES: [&str; 10] = [
    "Task", "Task", "Task", "Task", "Issue", "Feature", "Feature", "Chore", "Story", "Decision",
];

/// The author pm-cli's generator initializes the tracker with (`author_default`).
pub const FIXTURE_AUTHOR: &str = "pm-scale-benchmark";

/// pm-cli's `createSeededRandom`: `state = state·1664525 + 1013904223 (mod 2³²)`, value
/// `state / 2³²`.
#[derive(Clone, Debug)]
pub struct Lcg(u32);

impl Lcg {
    /// Returns a generator seeded like `seed >>> 0`.
    pub fn new(seed: u64) -> Lcg {
        Lcg((seed & 0xffff_ffff) as u32)
    }

    /// Advances and returns the next value in `[0, 1)`.
    pub fn next_unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        f64::from(self.0) / 4_294_967_296.0
    }
}

/// Returns the built-in status of item `index` (by `index % 20`; 70% closed).
pub fn status_for(index: u64) -> &'static str {
    match index % 20 {
        0 | 17 | 18 => "open",
        1..=14 => "closed",
        15 | 16 => "canceled",
        _ if index % 40 == 19 => "in_progress",
        _ => "blocked",
    }
}

/// Returns the status of the planned item (a custom status wins over the built-in rule).
pub fn planned_status(plan: &ItemPlan) -> &'static str {
    plan.custom_status.unwrap_or_else(|| status_for(plan.index))
}

/// Returns the type of the planned item, drawing from `random` only when the rule needs it:
/// a custom type and every 20th item (an `Epic`) consume no draw.
fn planned_type(plan: &ItemPlan, random: &mut Lcg) -> &'static str {
    if let Some(custom) = plan.custom_type {
        return custom;
    }
    if plan.index.is_multiple_of(20) {
        return "Epic";
    }
    WEIGHTED_TYPES[(random.next_unit() * WEIGHTED_TYPES.len() as f64) as usize]
}

/// Returns the type of the planned item (see [`build_document`] for the draw order).
pub fn planned_type_for(plan: &ItemPlan, seed: u64) -> &'static str {
    planned_type(plan, &mut Lcg::new(seed + plan.index))
}

fn annotation(plan: &ItemPlan, text: String) -> Value {
    json!([{"created_at": plan.timestamp, "author": plan.author, "text": text}])
}

/// Builds the canonical document of the planned item (pm-cli's `buildSyntheticItemDocument`).
pub fn build_document(shape: &CorpusShape, plan: &ItemPlan, count: u64, seed: u64) -> ItemDoc {
    let i = plan.index;
    let mut random = Lcg::new(seed + i);
    let status = planned_status(plan);
    let item_type = planned_type(plan, &mut random);
    let terminal =
        matches!(status, "closed" | "canceled") || shape.terminal_statuses.contains(&status);
    let ts = &plan.timestamp;
    let mut m = Map::new();
    let mut put = |key: &str, value: Value| {
        m.insert(key.to_string(), value);
    };
    put("id", json!(plan.id));
    put(
        "title",
        json!(format!("Synthetic {} {i}", item_type.to_lowercase())),
    );
    put(
        "description",
        json!(format!(
            "Deterministic scale fixture item {i} for read, graph, history, and serialization benchmarks."
        )),
    );
    put("type", json!(item_type));
    put("status", json!(status));
    put("priority", json!(i % 5));
    put(
        "tags",
        json!([
            "benchmark",
            format!("area:synthetic-{}", i % 16),
            format!("team:{}", i % 32)
        ]),
    );
    put("created_at", json!(ts));
    put("updated_at", json!(ts));
    put("author", json!(plan.author));
    put("estimated_minutes", json!(15 + (i % 16) * 15));
    put(
        "acceptance_criteria",
        json!(format!("Synthetic acceptance criterion {i}")),
    );
    if let Some(parent) = plan.parent {
        put("parent", json!(corpus_id(parent)));
    }
    if terminal {
        put("closed_at", json!(ts));
        put("close_reason", json!(format!("Synthetic {status} fixture")));
    }
    if status == "closed" {
        put("resolution", json!("Synthetic benchmark work completed"));
        put(
            "expected_result",
            json!("Fixture remains queryable and valid"),
        );
        put(
            "actual_result",
            json!("Fixture generated deterministically"),
        );
    }
    if status == "in_progress" {
        put("assignee", json!(format!("agent-{}", i % 64)));
    }
    if status == "blocked" {
        put("blocked_by", json!(corpus_id(i.saturating_sub(1))));
        put("blocked_reason", json!("Synthetic dependency wait"));
    }
    if i > 0 && !plan.dependency_kinds.is_empty() {
        let deps: Vec<Value> = plan
            .dependency_kinds
            .iter()
            .enumerate()
            .map(|(offset, kind)| {
                let target = if offset > 0 && i + 1 < count { i + 1 } else { i - 1 };
                json!({"id": corpus_id(target), "kind": kind, "created_at": ts, "author": plan.author})
            })
            .collect();
        put("dependencies", Value::Array(deps));
    }
    if plan.has_comment {
        put(
            "comments",
            annotation(plan, format!("Synthetic evidence comment {i}")),
        );
    }
    if plan.has_note {
        put(
            "notes",
            annotation(plan, format!("Private synthetic context note {i}")),
        );
    }
    if plan.has_learning {
        put(
            "learnings",
            annotation(plan, format!("Durable synthetic learning {i}")),
        );
    }
    for field in shape.custom_fields {
        put(field, json!(format!("synthetic-{}-{}", shape.name, i % 8)));
    }
    let body = format!(
        "## Synthetic context {i}\n\nThis seeded body represents project knowledge for item {}.\nSignal bucket: {}.",
        plan.id,
        (random.next_unit() * 1000.0) as u64
    );
    canonicalize_owned(ItemDoc { metadata: m, body }, &CanonSchema::NONE)
}

/// Returns the item's history stream text: one `create` line from the empty document, then
/// `history_entries_per_item − 1` no-op `synthetic:history:k` lines 1 ms apart, each `\n`-ended.
pub fn history_text(doc: &ItemDoc, entries: usize) -> String {
    let author = doc.str_field("author").unwrap_or_default().to_string();
    let created = doc.str_field("created_at").unwrap_or_default().to_string();
    let hash = item_hash(doc, HashEpoch::V2);
    let mut create = HistoryEntry::new(
        created.clone(),
        author.clone(),
        "create",
        item_patch(&ItemDoc::empty(), doc),
        EMPTY_DOC_HASH,
        hash.clone(),
    );
    create.author_source = Some("asserted".into());
    create.message = Some("Synthetic scale fixture".into());
    let mut text = create.to_line();
    text.push('\n');
    let created_ms = parse_timestamp(&created).unwrap_or_else(base_ms);
    for k in 1..entries {
        let mut entry = HistoryEntry::new(
            format_iso_ms(created_ms + k as i64),
            author.clone(),
            format!("synthetic:history:{k}"),
            Vec::new(),
            hash.clone(),
            hash.clone(),
        );
        entry.author_source = Some("asserted".into());
        entry.message = Some("Synthetic history depth fixture".into());
        text.push_str(&entry.to_line());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::super::shape::{SCRATCH, plan_item};
    use super::*;

    #[test]
    fn the_lcg_matches_pm_cli() {
        // seed 42: state = 42·1664525 + 1013904223 = 1083814273; /2³² = 0.2523…
        let mut random = Lcg::new(42);
        assert_eq!((random.next_unit() * 1000.0) as u64, 252);
    }

    #[test]
    fn epics_draw_their_signal_bucket_first() {
        let doc = build_document(&SCRATCH, &plan_item(&SCRATCH, 0, 100, 42), 100, 42);
        assert!(doc.body.ends_with("Signal bucket: 252."), "{}", doc.body);
        assert_eq!(doc.str_field("type"), Some("Epic"));
    }

    #[test]
    fn statuses_follow_the_twenty_slot_rule() {
        let counts = (0..40).fold([0; 5], |mut acc, i| {
            let slot = ["open", "closed", "canceled", "in_progress", "blocked"]
                .iter()
                .position(|s| *s == status_for(i))
                .expect("known status");
            acc[slot] += 1;
            acc
        });
        assert_eq!(counts, [6, 28, 4, 1, 1]);
    }
}
