//! Corpus shapes (pm-cli's `corpus-shape` declarations) and the per-item plan: parent, timestamp,
//! author, edge kinds, annotations and custom type/status of item `i` of `n`. Pure arithmetic.

use serde_json::{Value, json};

use crate::clock::{days_from_civil, format_iso_ms};

/// The schema URI pm-cli stamps on every corpus-shape declaration.
pub const CORPUS_SHAPE_SCHEMA: &str = "https://schema.unbrained.dev/pm/corpus-shape/v1";

/// One weighted edge kind of a shape's dependency mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeWeight {
    /// The dependency kind.
    pub kind: &'static str,
    /// Its weight in the deterministic rotation.
    pub weight: usize,
}

/// A corpus population declaration (pm-cli's `CorpusShape`; field order is its JSON order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorpusShape {
    /// Stable shape name.
    pub name: &'static str,
    /// Human-readable intent.
    pub description: &'static str,
    /// Maximum parent-chain depth.
    pub hierarchy_depth: u32,
    /// Children per parent.
    pub hierarchy_fanout: u64,
    /// Days spanned by the timestamps.
    pub age_span_days: i64,
    /// History lines per item.
    pub history_entries_per_item: usize,
    /// Comments per 100 items.
    pub comments_per_100_items: u64,
    /// Notes per 100 items.
    pub notes_per_100_items: u64,
    /// Learnings per 100 items.
    pub learnings_per_100_items: u64,
    /// The weighted dependency-kind rotation.
    pub edge_kind_mix: &'static [EdgeWeight],
    /// Distinct authors.
    pub author_cardinality: u64,
    /// Disconnected components.
    pub component_count: u64,
    /// Whether a second `related` edge forms 2-cycles every 17th item.
    pub include_cycles: bool,
    /// Custom types registered before generation.
    pub custom_types: &'static [&'static str],
    /// Custom statuses registered before generation.
    pub custom_statuses: &'static [&'static str],
    /// Custom statuses with terminal semantics.
    pub terminal_statuses: &'static [&'static str],
    /// Custom string fields registered before generation.
    pub custom_fields: &'static [&'static str],
}

const COMMON_EDGE_MIX: [EdgeWeight; 6] = [
    EdgeWeight {
        kind: "implements",
        weight: 5,
    },
    EdgeWeight {
        kind: "blocked_by",
        weight: 2,
    },
    EdgeWeight {
        kind: "discovered_from",
        weight: 2,
    },
    EdgeWeight {
        kind: "verifies",
        weight: 2,
    },
    EdgeWeight {
        kind: "supersedes",
        weight: 1,
    },
    EdgeWeight {
        kind: "related",
        weight: 4,
    },
];

/// The `scratch` shape: seconds-old, shallow, one history line per item (the calibration shape).
pub const SCRATCH: CorpusShape = CorpusShape {
    name: "scratch",
    description: "Seconds-old, shallow project with minimal history.",
    hierarchy_depth: 2,
    hierarchy_fanout: 50,
    age_span_days: 0,
    history_entries_per_item: 1,
    comments_per_100_items: 2,
    notes_per_100_items: 1,
    learnings_per_100_items: 1,
    edge_kind_mix: &[EdgeWeight {
        kind: "related",
        weight: 1,
    }],
    author_cardinality: 2,
    component_count: 1,
    include_cycles: false,
    custom_types: &[],
    custom_statuses: &[],
    terminal_statuses: &[],
    custom_fields: &[],
};

/// The `representative` shape: two years of history, typed lineage, custom schema.
pub const REPRESENTATIVE: CorpusShape = CorpusShape {
    name: "representative",
    description: "Medium-lived project with rich evidence and typed lineage.",
    hierarchy_depth: 5,
    hierarchy_fanout: 8,
    age_span_days: 730,
    history_entries_per_item: 12,
    comments_per_100_items: 30,
    notes_per_100_items: 12,
    learnings_per_100_items: 10,
    edge_kind_mix: &COMMON_EDGE_MIX,
    author_cardinality: 32,
    component_count: 1,
    include_cycles: false,
    custom_types: &["Experiment"],
    custom_statuses: &["review"],
    terminal_statuses: &[],
    custom_fields: &["domain"],
};

impl CorpusShape {
    /// Returns the built-in shape called `name` (case-insensitive), if any.
    pub fn named(name: &str) -> Option<CorpusShape> {
        match name.trim().to_lowercase().as_str() {
            "scratch" => Some(SCRATCH),
            "representative" => Some(REPRESENTATIVE),
            _ => None,
        }
    }

    /// Returns the names [`CorpusShape::named`] accepts.
    pub fn names() -> Vec<String> {
        vec!["scratch".into(), "representative".into()]
    }

    /// Returns the declaration as pm-cli's manifest writes it.
    pub fn to_json(&self) -> Value {
        let mix: Vec<Value> = self
            .edge_kind_mix
            .iter()
            .map(|e| json!({"kind": e.kind, "weight": e.weight}))
            .collect();
        json!({
            "schema": CORPUS_SHAPE_SCHEMA,
            "name": self.name,
            "description": self.description,
            "hierarchy_depth": self.hierarchy_depth,
            "hierarchy_fanout": self.hierarchy_fanout,
            "age_span_days": self.age_span_days,
            "history_entries_per_item": self.history_entries_per_item,
            "comments_per_100_items": self.comments_per_100_items,
            "notes_per_100_items": self.notes_per_100_items,
            "learnings_per_100_items": self.learnings_per_100_items,
            "edge_kind_mix": mix,
            "author_cardinality": self.author_cardinality,
            "component_count": self.component_count,
            "include_cycles": self.include_cycles,
            "custom_types": self.custom_types,
            "custom_statuses": self.custom_statuses,
            "terminal_statuses": self.terminal_statuses,
            "custom_fields": self.custom_fields,
        })
    }

    /// Returns the edge kinds item `index` carries: none for item 0, else the weighted
    /// rotation's `index % total` slot, plus `related` every 17th item when cycles are on.
    pub fn edge_kinds(&self, index: u64) -> Vec<&'static str> {
        if index == 0 {
            return Vec::new();
        }
        let total: usize = self.edge_kind_mix.iter().map(|e| e.weight).sum();
        let mut slot = (index % total as u64) as usize;
        let mut kinds = Vec::with_capacity(2);
        for edge in self.edge_kind_mix {
            if slot < edge.weight {
                kinds.push(edge.kind);
                break;
            }
            slot -= edge.weight;
        }
        if self.include_cycles
            && index > 2
            && index.is_multiple_of(17)
            && !kinds.contains(&"related")
        {
            kinds.push("related");
        }
        kinds
    }

    fn hierarchy_capacity(&self) -> u64 {
        let mut capacity: u64 = 0;
        let mut width: u64 = 1;
        for _ in 0..self.hierarchy_depth {
            capacity = capacity.saturating_add(width);
            width = width.saturating_mul(self.hierarchy_fanout);
        }
        capacity
    }
}

/// The deterministic plan of one generated item (pm-cli's `CorpusShapeItemPlan`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemPlan {
    /// Zero-based position.
    pub index: u64,
    /// The item id.
    pub id: String,
    /// The parent's index, for non-roots.
    pub parent: Option<u64>,
    /// The component.
    pub component: u64,
    /// The timestamp (`created_at` and `updated_at`).
    pub timestamp: String,
    /// The author.
    pub author: String,
    /// The dependency kinds.
    pub dependency_kinds: Vec<&'static str>,
    /// Whether the item has a comment.
    pub has_comment: bool,
    /// Whether the item has a note.
    pub has_note: bool,
    /// Whether the item has a learning.
    pub has_learning: bool,
    /// The custom type, when the shape picks one for this item.
    pub custom_type: Option<&'static str>,
    /// The custom status, when the shape picks one for this item.
    pub custom_status: Option<&'static str>,
}

/// Returns the id of generated item `index`: `pm-s` plus base36 zero-padded to 7 characters.
pub fn corpus_id(index: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut digits = Vec::new();
    let mut n = index;
    loop {
        digits.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    while digits.len() < 7 {
        digits.push(b'0');
    }
    digits.reverse();
    format!("pm-s{}", String::from_utf8_lossy(&digits))
}

/// Epoch milliseconds of 2026-01-01T00:00:00.000Z, the corpus base time.
pub fn base_ms() -> i64 {
    days_from_civil(2026, 1, 1) * 86_400_000
}

/// Returns the plan of item `index` of `count` for `shape` and `seed`.
pub fn plan_item(shape: &CorpusShape, index: u64, count: u64, seed: u64) -> ItemPlan {
    let components = shape.component_count.min(count).max(1);
    let component = index % components;
    let position = index / components;
    let capacity = shape.hierarchy_capacity().max(1);
    let offset = position % capacity;
    let start = position - offset;
    let parent = (offset != 0)
        .then(|| component + (start + (offset - 1) / shape.hierarchy_fanout) * components);
    let span_ms = shape.age_span_days * 86_400_000;
    let delta = if count == 1 {
        0
    } else {
        // JavaScript: Math.round((index / (count - 1)) * spanMs); operands are non-negative, so
        // Rust's half-away-from-zero equals Math.round's half-up.
        ((index as f64 / (count - 1) as f64) * span_ms as f64).round() as i64
    };
    let bucket = (index * 37 + seed) % 100;
    let authors = shape.author_cardinality.min(count).max(1);
    ItemPlan {
        index,
        id: corpus_id(index),
        parent,
        component,
        timestamp: format_iso_ms(base_ms() + delta),
        author: format!("pm-corpus-agent-{}", (index + seed) % authors),
        dependency_kinds: shape.edge_kinds(index),
        has_comment: bucket < shape.comments_per_100_items,
        has_note: bucket < shape.notes_per_100_items,
        has_learning: bucket < shape.learnings_per_100_items,
        custom_type: (!shape.custom_types.is_empty() && index.is_multiple_of(11))
            .then(|| shape.custom_types[(index % shape.custom_types.len() as u64) as usize]),
        custom_status: (!shape.custom_statuses.is_empty() && index.is_multiple_of(13))
            .then(|| shape.custom_statuses[(index % shape.custom_statuses.len() as u64) as usize]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_base36_padded_to_seven() {
        assert_eq!(corpus_id(0), "pm-s0000000");
        assert_eq!(corpus_id(20), "pm-s000000k");
        assert_eq!(corpus_id(40), "pm-s0000014");
        assert_eq!(corpus_id(36u64.pow(7) - 1), "pm-szzzzzzz");
    }

    #[test]
    fn scratch_blocks_of_51_are_one_root_and_fifty_children() {
        let plan = |i| plan_item(&SCRATCH, i, 10_000, 42);
        assert_eq!(plan(0).parent, None);
        assert_eq!(plan(1).parent, Some(0));
        assert_eq!(plan(50).parent, Some(0));
        assert_eq!(plan(51).parent, None);
        assert_eq!(plan(52).parent, Some(51));
        assert_eq!(plan(9_999).timestamp, "2026-01-01T00:00:00.000Z");
        assert_eq!(plan(1).dependency_kinds, vec!["related"]);
        assert!(plan(0).dependency_kinds.is_empty());
    }

    #[test]
    fn representative_rotates_edges_and_spreads_time() {
        let plan = |i| plan_item(&REPRESENTATIVE, i, 1_000, 42);
        assert_eq!(plan(1).dependency_kinds, vec!["implements"]);
        assert_eq!(plan(5).dependency_kinds, vec!["blocked_by"]);
        assert_eq!(plan(11).dependency_kinds, vec!["supersedes"]);
        assert_eq!(plan(15).dependency_kinds, vec!["related"]);
        assert_eq!(plan(999).timestamp, "2028-01-01T00:00:00.000Z"); // 2026-01-01 + 730 days
        assert_eq!(plan(1).parent, Some(0));
        assert_eq!(plan(9).parent, Some(1)); // depth 3 starts after 1 + 8 items
        assert_eq!(plan(0).custom_type, Some("Experiment"));
        assert_eq!(plan(13).custom_status, Some("review"));
    }
}
