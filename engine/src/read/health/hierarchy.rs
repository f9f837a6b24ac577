//! What the `integrity` check shows of the hierarchy analysis (cycles, cardinality and
//! divergence rows, the relation count and sample), with a digest of the analysis inputs so the
//! memo can keep it while no item's id, status, parent or hierarchy rows change.

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::facts::ItemFacts;
use crate::read::validate::hierarchy::analyze;

/// Hierarchy relations shown as a sample.
pub(crate) const RELATION_SAMPLE: usize = 8;

/// The hierarchy analysis as the integrity check reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct HierarchyFacts {
    /// The digest of the inputs (see [`input_digest`]).
    pub input: String,
    /// Cycle components (sorted ids) and whether every member is terminal.
    pub cycles: Vec<(Vec<String>, bool)>,
    /// `child:parent,parent:legacy|active` rows.
    pub cardinality: Vec<(String, bool)>,
    /// `child:scalar=P:dependencies=Q,R:legacy|active` rows.
    pub divergence: Vec<(String, bool)>,
    /// How many relations there are.
    pub relations: usize,
    /// The first [`RELATION_SAMPLE`] relations as pm's JSON rows.
    pub sample: Vec<Value>,
}

/// Returns the digest of everything the analysis reads, in the order it reads it (the sorted
/// items: id, terminal flag, scalar parent, hierarchy dependency rows).
pub(crate) fn input_digest(items: &[&ItemFacts]) -> String {
    let mut h = Sha256::new();
    let mut text = |s: &str| {
        h.update((s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    };
    for item in items {
        text(&item.id);
        text(if item.terminal { "t" } else { "f" });
        match &item.parent {
            Some(parent) => {
                text("p");
                text(parent);
            }
            None => text("-"),
        }
        text(&item.dependencies.len().to_string());
        for (id, kind) in &item.dependencies {
            text(id);
            text(kind);
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs the analysis over `items` (sorted as `pm validate` sorts them).
pub(crate) fn summarize(items: &[&ItemFacts], input: String) -> HierarchyFacts {
    let hierarchy = analyze(items);
    HierarchyFacts {
        input,
        cycles: hierarchy.cycles,
        cardinality: hierarchy.cardinality,
        divergence: hierarchy.divergence,
        relations: hierarchy.relations.len(),
        sample: hierarchy
            .relations
            .iter()
            .take(RELATION_SAMPLE)
            .map(|r| r.to_json())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, parent: Option<&str>) -> ItemFacts {
        ItemFacts {
            id: id.into(),
            ahead: false,
            terminal: false,
            parent: parent.map(String::from),
            dependencies: Vec::new(),
        }
    }

    #[test]
    fn the_digest_follows_every_input() {
        let (a, b) = (item("pm-a", Some("pm-b")), item("pm-b", None));
        let base = input_digest(&[&a, &b]);
        assert_eq!(base, input_digest(&[&a, &b]));
        assert_ne!(base, input_digest(&[&b, &a]));
        let mut c = a.clone();
        c.terminal = true;
        assert_ne!(base, input_digest(&[&c, &b]));
        c = a.clone();
        c.dependencies.push(("pm-b".into(), "parent".into()));
        assert_ne!(base, input_digest(&[&c, &b]));
        let facts = summarize(&[&a, &b], base);
        assert_eq!(facts.relations, 1);
        assert_eq!(facts.sample[0]["parent_id"], "pm-b");
    }
}
