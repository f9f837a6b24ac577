//! The conformance measurement of a generated population (pm-cli's corpus-shape profile):
//! observed authors, components, depth, fanout, timestamps, annotations and edge kinds, checked
//! against the declaration. Generation fails when they drift.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::shape::{CorpusShape, ItemPlan};

/// Accumulates [`ItemPlan`]s in generation order.
#[derive(Debug)]
pub struct Measurement {
    shape: CorpusShape,
    items: u64,
    authors: BTreeSet<String>,
    components: BTreeSet<u64>,
    depths: Vec<u32>,
    children: Vec<u64>,
    max_depth: u32,
    max_fanout: u64,
    history_entries: u64,
    first: Option<String>,
    last: Option<String>,
    annotations: [u64; 3],
    edge_kinds: Vec<(&'static str, u64)>,
    mismatches: Vec<String>,
}

/// The finished profile.
#[derive(Clone, Debug)]
pub struct Profile {
    /// True when every declared invariant holds.
    pub matches_declaration: bool,
    /// The profile as pm-cli's manifest writes it (`measured_shape`).
    pub json: Value,
    /// Total history lines.
    pub history_entry_count: u64,
}

impl Measurement {
    /// Returns an empty measurement of `shape`.
    pub fn new(shape: CorpusShape) -> Measurement {
        Measurement {
            shape,
            items: 0,
            authors: BTreeSet::new(),
            components: BTreeSet::new(),
            depths: Vec::new(),
            children: Vec::new(),
            max_depth: 0,
            max_fanout: 0,
            history_entries: 0,
            first: None,
            last: None,
            annotations: [0; 3],
            edge_kinds: Vec::new(),
            mismatches: Vec::new(),
        }
    }

    /// Adds the next plan (plans must arrive in index order).
    pub fn add(&mut self, plan: &ItemPlan) {
        self.items += 1;
        self.authors.insert(plan.author.clone());
        self.components.insert(plan.component);
        let mut depth = 1;
        if let Some(parent) = plan.parent {
            let parent_depth = self.depths.get(parent as usize).copied();
            if parent_depth.is_none() {
                self.mismatches.push(format!(
                    "parent_missing:{}",
                    super::shape::corpus_id(parent)
                ));
            }
            depth = parent_depth.unwrap_or(0) + 1;
            if let Some(count) = self.children.get_mut(parent as usize) {
                *count += 1;
                self.max_fanout = self.max_fanout.max(*count);
            }
        }
        self.depths.push(depth);
        self.children.push(0);
        self.max_depth = self.max_depth.max(depth);
        self.history_entries += self.shape.history_entries_per_item as u64;
        if self.first.as_ref().is_none_or(|f| plan.timestamp < *f) {
            self.first = Some(plan.timestamp.clone());
        }
        if self.last.as_ref().is_none_or(|l| plan.timestamp > *l) {
            self.last = Some(plan.timestamp.clone());
        }
        for (slot, present) in [plan.has_comment, plan.has_note, plan.has_learning]
            .into_iter()
            .enumerate()
        {
            self.annotations[slot] += u64::from(present);
        }
        for kind in &plan.dependency_kinds {
            match self.edge_kinds.iter_mut().find(|(k, _)| k == kind) {
                Some((_, n)) => *n += 1,
                None => self.edge_kinds.push((kind, 1)),
            }
        }
    }

    /// Finishes the measurement.
    pub fn finish(self) -> Profile {
        let shape = &self.shape;
        let mut mismatches = self.mismatches;
        if self.items == 0 {
            mismatches.push("item_count:empty".into());
        }
        let expected_authors = shape.author_cardinality.min(self.items);
        if self.authors.len() as u64 != expected_authors {
            mismatches.push(format!(
                "author_count:{}!={expected_authors}",
                self.authors.len()
            ));
        }
        let expected_components = shape.component_count.min(self.items);
        if self.components.len() as u64 != expected_components {
            mismatches.push(format!(
                "component_count:{}!={expected_components}",
                self.components.len()
            ));
        }
        if self.max_depth > shape.hierarchy_depth {
            mismatches.push(format!(
                "hierarchy_depth:{}>{}",
                self.max_depth, shape.hierarchy_depth
            ));
        }
        if self.max_fanout > shape.hierarchy_fanout {
            mismatches.push(format!(
                "hierarchy_fanout:{}>{}",
                self.max_fanout, shape.hierarchy_fanout
            ));
        }
        let rates = [
            ("comments", shape.comments_per_100_items),
            ("notes", shape.notes_per_100_items),
            ("learnings", shape.learnings_per_100_items),
        ];
        for (slot, (name, rate)) in rates.iter().enumerate() {
            let complete = self.items / 100;
            let remainder = self.items % 100;
            let minimum = complete * rate + (rate + remainder).saturating_sub(100);
            let maximum = complete * rate + (*rate).min(remainder);
            let observed = self.annotations[slot];
            if observed < minimum || observed > maximum {
                mismatches.push(format!("{name}:{observed}!in[{minimum},{maximum}]"));
            }
        }
        let mut unique: Vec<String> = Vec::new();
        for m in mismatches {
            if !unique.contains(&m) {
                unique.push(m);
            }
        }
        let edge_kinds: Map<String, Value> = self
            .edge_kinds
            .iter()
            .map(|(k, n)| ((*k).to_string(), json!(n)))
            .collect();
        let json = json!({
            "shape": shape.name,
            "item_count": self.items,
            "author_count": self.authors.len(),
            "component_count": self.components.len(),
            "hierarchy_depth": self.max_depth,
            "hierarchy_fanout": self.max_fanout,
            "timestamp_range": {"first": self.first, "last": self.last},
            "history_entry_count": self.history_entries,
            "annotations": {
                "comments": self.annotations[0],
                "notes": self.annotations[1],
                "learnings": self.annotations[2],
            },
            "edge_kinds": edge_kinds,
            "matches_declaration": unique.is_empty(),
            "mismatches": unique,
        });
        Profile {
            matches_declaration: json["matches_declaration"] == json!(true),
            json,
            history_entry_count: self.history_entries,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::shape::{REPRESENTATIVE, SCRATCH, plan_item};
    use super::*;

    fn measure(shape: CorpusShape, n: u64, seed: u64) -> Profile {
        let mut m = Measurement::new(shape);
        for i in 0..n {
            m.add(&plan_item(&shape, i, n, seed));
        }
        m.finish()
    }

    #[test]
    fn builtin_shapes_conform_at_every_size() {
        for shape in [SCRATCH, REPRESENTATIVE] {
            for n in [1, 2, 100, 2_243] {
                let profile = measure(shape, n, 42);
                assert!(
                    profile.matches_declaration,
                    "{} {n}: {}",
                    shape.name, profile.json
                );
            }
        }
    }

    #[test]
    fn scratch_100_profile_matches_pm_cli() {
        let profile = measure(SCRATCH, 100, 42);
        assert_eq!(profile.json["hierarchy_fanout"], json!(50));
        assert_eq!(profile.json["hierarchy_depth"], json!(2));
        assert_eq!(
            profile.json["annotations"],
            json!({"comments": 2, "notes": 1, "learnings": 1})
        );
        assert_eq!(profile.json["edge_kinds"], json!({"related": 99}));
    }
}
