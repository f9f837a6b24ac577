//! The parsed items every validate check reads (id, document, resolved status), the field
//! readers pm's checks share (non-empty and "meaningful" strings) and diagnostic-list capping.

use serde_json::{Map, Value};

use crate::collate::locale_compare;
use crate::item::ItemDoc;
use crate::schema::RuntimeSchema;

/// One parsed item as the checks see it.
#[derive(Clone, Debug)]
pub struct CheckItem {
    /// The item id (`metadata.id`, else the file stem).
    pub id: String,
    /// The parsed, schema-canonicalized document.
    pub doc: ItemDoc,
    /// The status as written.
    pub status: String,
    /// The status resolved through the registry (aliases applied), else as written.
    pub canonical_status: String,
    /// Whether the status is terminal.
    pub terminal: bool,
}

impl CheckItem {
    /// Returns the check view of a parsed document (`stem` when it has no id).
    pub fn new(doc: ItemDoc, stem: &str, schema: &RuntimeSchema) -> CheckItem {
        let id = doc.id().unwrap_or(stem).to_string();
        let status = doc.str_field("status").unwrap_or("").to_string();
        let canonical_status = schema
            .statuses
            .resolve(&status)
            .unwrap_or(&status)
            .to_string();
        let terminal = schema.statuses.is_terminal(&status);
        CheckItem {
            id,
            doc,
            status,
            canonical_status,
            terminal,
        }
    }

    /// Returns a string field trimmed, when it is a non-empty string (pm's
    /// `toNonEmptyStringOrUndefined`).
    pub fn text(&self, key: &str) -> Option<&str> {
        self.doc
            .str_field(key)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }

    /// Returns [`CheckItem::text`] unless it is a placeholder (`none`, `null`, `n/a`, `na`).
    pub fn meaningful(&self, key: &str) -> Option<&str> {
        self.text(key)
            .filter(|s| !matches!(s.to_lowercase().as_str(), "none" | "null" | "n/a" | "na"))
    }

    /// Returns the item type (empty when absent).
    pub fn type_name(&self) -> &str {
        self.doc.str_field("type").unwrap_or("")
    }

    /// Returns the title (empty when absent).
    pub fn title(&self) -> &str {
        self.doc.str_field("title").unwrap_or("")
    }

    /// Returns the object rows of an array field (`dependencies`, `files`, `docs`, `tests`).
    pub fn rows(&self, key: &str) -> impl Iterator<Item = &Map<String, Value>> {
        self.doc
            .metadata
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_object)
    }

    /// Returns `(id, kind)` of every dependency row with a string id and kind.
    pub fn dependencies(&self) -> impl Iterator<Item = (&str, &str)> {
        self.rows("dependencies").filter_map(|row| {
            let id = row.get("id")?.as_str()?.trim();
            let kind = row.get("kind")?.as_str()?.trim();
            (!id.is_empty()).then_some((id, kind))
        })
    }
}

/// A diagnostic list cut to `limit` entries (`None` keeps every entry).
pub struct Capped {
    /// The kept entries.
    pub values: Value,
    /// Whether entries were cut.
    pub truncated: bool,
}

/// Cuts `values` to `limit` entries (pm's `summarizeList`).
pub fn capped<T: Into<Value>>(values: Vec<T>, limit: Option<usize>) -> Capped {
    let truncated = limit.is_some_and(|l| values.len() > l);
    let kept: Vec<Value> = values
        .into_iter()
        .take(limit.unwrap_or(usize::MAX))
        .map(Into::into)
        .collect();
    Capped {
        values: Value::Array(kept),
        truncated,
    }
}

/// Sorts strings with JavaScript `localeCompare` and removes duplicates.
pub fn sorted_unique(mut values: Vec<String>) -> Vec<String> {
    values.sort_by(|a, b| locale_compare(a, b));
    values.dedup();
    values
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn capping_and_meaningful_strings() {
        let c = capped(vec!["a", "b", "c"], Some(2));
        assert_eq!((c.values, c.truncated), (json!(["a", "b"]), true));
        let c = capped(vec!["a"], None);
        assert_eq!((c.values, c.truncated), (json!(["a"]), false));
        let mut doc = ItemDoc::empty();
        doc.metadata.insert("id".into(), json!("pm-a"));
        doc.metadata.insert("parent".into(), json!(" N/A "));
        doc.metadata.insert("status".into(), json!("in-progress"));
        let item = CheckItem::new(doc, "pm-a", &RuntimeSchema::builtin());
        assert_eq!(item.text("parent"), Some("N/A"));
        assert_eq!(item.meaningful("parent"), None);
        assert_eq!(item.canonical_status, "in_progress");
        assert!(!item.terminal);
        assert_eq!(
            sorted_unique(vec!["b".into(), "a".into(), "b".into()]),
            ["a", "b"]
        );
    }
}
