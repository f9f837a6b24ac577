//! Who recorded a history entry: the provenance row of an entry,
//! the `--harness` / `--agent-instance` filter, and the `--provenance-summary` rollup. One
//! definition shared by `history` and `activity`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::history::HistoryEntry;

/// One provenance row: when, what and who, with the author source and the agent identity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProvenanceRow {
    /// 1-based position in the stream.
    pub index: usize,
    /// Entry timestamp.
    pub ts: String,
    /// Operation.
    pub op: String,
    /// Resolved author.
    pub author: String,
    /// `asserted`, `configured`, `detected` or `unknown` (`null` on old lines).
    pub author_source: Option<String>,
    /// Detected agent harness.
    pub agent_harness: Option<String>,
    /// Agent model.
    pub agent_model: Option<String>,
    /// Agent instance.
    pub agent_instance: Option<String>,
    /// The entry's message.
    pub message: Option<String>,
}

impl ProvenanceRow {
    /// Returns the provenance row of `entry` at 1-based `index`.
    pub fn of(index: usize, entry: &HistoryEntry) -> ProvenanceRow {
        ProvenanceRow {
            index,
            ts: entry.ts.clone(),
            op: entry.op.clone(),
            author: entry.author.clone(),
            author_source: entry.author_source.clone(),
            agent_harness: entry.agent_harness.clone(),
            agent_model: entry.agent_model.clone(),
            agent_instance: entry.agent_instance.clone(),
            message: entry.message.clone(),
        }
    }
}

/// The `--harness` / `--agent-instance` filter: an entry passes when each non-empty list
/// contains its value (an entry without the value never passes a non-empty list).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProvenanceFilter {
    /// Accepted agent harnesses.
    pub harnesses: Vec<String>,
    /// Accepted agent instances.
    pub agent_instances: Vec<String>,
}

impl ProvenanceFilter {
    /// Returns true when no list is set.
    pub fn is_empty(&self) -> bool {
        self.harnesses.is_empty() && self.agent_instances.is_empty()
    }

    /// Returns true when `entry` passes.
    pub fn matches(&self, entry: &HistoryEntry) -> bool {
        let within = |set: &[String], value: Option<&str>| {
            set.is_empty() || value.is_some_and(|v| set.iter().any(|s| s == v))
        };
        within(&self.harnesses, entry.agent_harness.as_deref())
            && within(&self.agent_instances, entry.agent_instance.as_deref())
    }
}

/// `provenance_summary`: how many of the returned entries each author, author source, agent
/// harness and agent instance recorded (`(none)` counts entries without the value), keys in
/// code-point order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ProvenanceSummary {
    /// Entries counted.
    pub entry_count: usize,
    /// Entries per author.
    pub authors: BTreeMap<String, usize>,
    /// Entries per author source.
    pub author_sources: BTreeMap<String, usize>,
    /// Entries per agent harness.
    pub agent_harnesses: BTreeMap<String, usize>,
    /// Entries per agent instance.
    pub agent_instances: BTreeMap<String, usize>,
}

/// The key counting entries that lack a value.
pub const NO_VALUE: &str = "(none)";

impl ProvenanceSummary {
    /// Counts `entries`.
    pub fn of<'a>(entries: impl IntoIterator<Item = &'a HistoryEntry>) -> ProvenanceSummary {
        let mut summary = ProvenanceSummary::default();
        let bump = |map: &mut BTreeMap<String, usize>, value: Option<&str>| {
            *map.entry(value.unwrap_or(NO_VALUE).to_owned()).or_default() += 1;
        };
        for entry in entries {
            summary.entry_count += 1;
            bump(&mut summary.authors, Some(&entry.author));
            bump(&mut summary.author_sources, entry.author_source.as_deref());
            bump(&mut summary.agent_harnesses, entry.agent_harness.as_deref());
            bump(
                &mut summary.agent_instances,
                entry.agent_instance.as_deref(),
            );
        }
        summary
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(author: &str, harness: Option<&str>) -> HistoryEntry {
        let mut e = HistoryEntry::new(
            "2026-01-01T00:00:00.000Z",
            author,
            "update",
            Vec::new(),
            "a",
            "b",
        );
        e.agent_harness = harness.map(str::to_owned);
        e.author_source = Some("asserted".into());
        e
    }

    #[test]
    fn rows_filters_and_summary() {
        let a = entry("ann", Some("codex"));
        let b = entry("bob", None);
        let row = ProvenanceRow::of(2, &a);
        assert_eq!(
            (row.index, row.author.as_str(), row.agent_harness.as_deref()),
            (2, "ann", Some("codex"))
        );
        let filter = ProvenanceFilter {
            harnesses: vec!["codex".into()],
            agent_instances: Vec::new(),
        };
        assert!(filter.matches(&a) && !filter.matches(&b));
        assert!(ProvenanceFilter::default().matches(&b));
        let summary = ProvenanceSummary::of([&a, &b, &a]);
        assert_eq!(summary.entry_count, 3);
        assert_eq!(summary.authors["ann"], 2);
        assert_eq!(summary.agent_harnesses[NO_VALUE], 1);
        assert_eq!(summary.author_sources["asserted"], 3);
    }
}
