//! The direct-children rollup of `pm get` on container items: counts by status, active count and
//! a bounded, id-sorted sample, over the candidates a `ChildSource` supplies (the index) or a
//! scan of every item file.

use std::cmp::Ordering;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::collate::locale_compare;
use crate::item::ItemDoc;
use crate::item::canon::js;
use crate::schema::{BUILTIN_TYPES, StatusRegistry};

/// The page size the continuation command asks for.
pub const CHILD_PAGE_LIMIT: usize = 20;

/// Item types that get a children rollup besides custom (non-built-in) types.
const CONTAINER_TYPES: [&str; 4] = ["epic", "feature", "milestone", "plan"];

/// One child in the inline sample.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChildSample {
    /// Child id.
    pub id: String,
    /// Child title.
    pub title: Value,
    /// Child type.
    pub r#type: Value,
    /// Child status.
    pub status: Value,
    /// Child priority.
    pub priority: Value,
}

/// `children{count, active, by_status, sample, sample_limit, truncated, next_offset,
/// continuation, scanned}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChildRollup {
    /// Direct children found.
    pub count: usize,
    /// Direct children whose status is not terminal.
    pub active: usize,
    /// Children per lowercased status, statuses in `localeCompare` order.
    pub by_status: Map<String, Value>,
    /// The first `sample_limit` children by id.
    pub sample: Vec<ChildSample>,
    /// The sample size asked for.
    pub sample_limit: usize,
    /// Whether children exist beyond the sample.
    pub truncated: bool,
    /// Offset of the next page, when truncated.
    pub next_offset: Option<usize>,
    /// A `pm list` command that pages through the rest, when truncated.
    pub continuation: Option<String>,
    /// Items inspected.
    pub scanned: usize,
}

/// Returns true when `item_type` gets a children rollup: Epic, Feature, Milestone, Plan and
/// every type that is not built in (case-insensitive).
pub fn is_container_type(item_type: &str) -> bool {
    let normalized = js::trim(item_type).to_lowercase();
    !normalized.is_empty()
        && (CONTAINER_TYPES.contains(&normalized.as_str())
            || !BUILTIN_TYPES
                .iter()
                .any(|(name, _)| name.eq_ignore_ascii_case(&normalized)))
}

/// The key a `parent` value is compared by: trimmed (JavaScript `trim`) and lowercased.
pub fn parent_key(raw: &str) -> String {
    js::trim(raw).to_lowercase()
}

/// Whether `parent_key(raw) == key`, without allocating when the trimmed value is ASCII (the
/// lowercase of ASCII text is its ASCII lowercase, and only ASCII text can equal it).
pub fn has_parent_key(raw: &str, key: &str) -> bool {
    let trimmed = js::trim(raw);
    if trimmed.is_ascii() {
        trimmed.len() == key.len() && trimmed.eq_ignore_ascii_case(key) && key.is_ascii()
    } else {
        trimmed.to_lowercase() == key
    }
}

/// Builds the rollup of `parent_id` over `corpus` (every readable item).
pub fn children_rollup<'a>(
    parent_id: &str,
    corpus: impl IntoIterator<Item = &'a ItemDoc>,
    statuses: &StatusRegistry,
    sample_limit: usize,
) -> ChildRollup {
    let parent = parent_key(parent_id);
    let mut scanned = 0;
    let mut active = 0;
    let mut by_status: Vec<(String, usize)> = Vec::new();
    let mut children: Vec<&ItemDoc> = Vec::new();
    for doc in corpus {
        scanned += 1;
        let is_child = doc
            .str_field("parent")
            .is_some_and(|p| parent_key(p) == parent);
        if !is_child {
            continue;
        }
        children.push(doc);
        let status = js::trim(doc.str_field("status").unwrap_or_default()).to_lowercase();
        if !statuses.is_terminal(&status) {
            active += 1;
        }
        match by_status.iter_mut().find(|(s, _)| *s == status) {
            Some((_, n)) => *n += 1,
            None => by_status.push((status, 1)),
        }
    }
    by_status.sort_by(|a, b| locale_compare(&a.0, &b.0));
    children.sort_by(|a, b| id_order(a, b));
    let sample: Vec<ChildSample> = children
        .iter()
        .take(sample_limit)
        .map(|doc| ChildSample {
            id: doc.id().unwrap_or_default().to_string(),
            title: field(doc, "title"),
            r#type: field(doc, "type"),
            status: field(doc, "status"),
            priority: field(doc, "priority"),
        })
        .collect();
    let truncated = children.len() > sample.len();
    ChildRollup {
        count: children.len(),
        active,
        by_status: by_status
            .into_iter()
            .map(|(s, n)| (s, Value::from(n)))
            .collect(),
        sample_limit,
        truncated,
        next_offset: truncated.then_some(sample.len()),
        continuation: truncated.then(|| {
            format!(
                "pm list --status all --parent {parent_id} --offset {} --limit {CHILD_PAGE_LIMIT}",
                sample.len()
            )
        }),
        sample,
        scanned,
    }
}

fn id_order(a: &ItemDoc, b: &ItemDoc) -> Ordering {
    locale_compare(a.id().unwrap_or_default(), b.id().unwrap_or_default())
}

fn field(doc: &ItemDoc, key: &str) -> Value {
    doc.metadata.get(key).cloned().unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::RuntimeSchema;
    use serde_json::json;

    fn doc(id: &str, parent: Option<&str>, status: &str) -> ItemDoc {
        let mut metadata = Map::new();
        metadata.insert("id".into(), json!(id));
        metadata.insert("title".into(), json!(format!("Title {id}")));
        metadata.insert("type".into(), json!("Task"));
        metadata.insert("status".into(), json!(status));
        metadata.insert("priority".into(), json!(2));
        if let Some(parent) = parent {
            metadata.insert("parent".into(), json!(parent));
        }
        ItemDoc {
            metadata,
            body: String::new(),
        }
    }

    #[test]
    fn container_types() {
        for t in ["Epic", "feature", " Milestone ", "Plan", "Spike", "Story"] {
            assert!(is_container_type(t), "{t}");
        }
        for t in [
            "Task", "Chore", "Issue", "Decision", "Event", "Reminder", "Meeting", "",
        ] {
            assert!(!is_container_type(t), "{t}");
        }
    }

    #[test]
    fn counts_statuses_and_samples_by_id() -> Result<(), Box<dyn std::error::Error>> {
        let schema = RuntimeSchema::builtin();
        let corpus = vec![
            doc("pm-c", Some("PM-P"), "closed"),
            doc("pm-a", Some("pm-p"), "open"),
            doc("pm-b", Some("pm-p"), "In_Progress"),
            doc("pm-x", Some("pm-q"), "open"),
            doc("pm-p", None, "open"),
        ];
        let rollup = children_rollup("pm-p", &corpus, &schema.statuses, 2);
        assert_eq!(rollup.count, 3);
        assert_eq!(rollup.active, 2);
        assert_eq!(
            serde_json::to_value(&rollup.by_status)?,
            json!({"closed": 1, "in_progress": 1, "open": 1})
        );
        let ids: Vec<&str> = rollup.sample.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["pm-a", "pm-b"]);
        assert_eq!(rollup.next_offset, Some(2));
        assert_eq!(
            rollup.continuation.as_deref(),
            Some("pm list --status all --parent pm-p --offset 2 --limit 20")
        );
        assert_eq!(rollup.scanned, 5);

        let counts_only = children_rollup("pm-p", &corpus, &schema.statuses, 0);
        assert!(counts_only.truncated && counts_only.sample.is_empty());
        assert_eq!(counts_only.next_offset, Some(0));

        let none = children_rollup("pm-a", &corpus, &schema.statuses, 0);
        assert_eq!(
            (none.count, none.truncated, none.next_offset),
            (0, false, None)
        );
        assert_eq!(none.continuation, None);
        Ok(())
    }

    #[test]
    fn has_parent_key_equals_comparing_parent_keys() {
        for raw in [
            "PM-A1",
            "  pm-a1\u{a0}",
            "pm-a2",
            "pm-\u{212a}1",
            "pm-k1",
            "ÄB",
            "äb",
            "",
        ] {
            for key in ["pm-a1", "pm-k1", "äb", "pm-a", ""] {
                assert_eq!(
                    has_parent_key(raw, key),
                    parent_key(raw) == key,
                    "{raw:?} vs {key:?}"
                );
            }
        }
    }
}
