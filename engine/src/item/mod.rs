//! The item document model: metadata (every key kept losslessly, in order) plus a body.
//! Parsing, canonicalization and serialization live in the submodules.

pub mod canon;
pub mod checks;
pub mod codec;
pub mod front_matter;
pub mod keys;

use serde_json::{Map, Value};

/// An item document as pm stores it: `{metadata, body}`.
///
/// Metadata keeps every key (known, custom or unknown) with its JSON value, in the order the
/// document was parsed or canonicalized; the body is the Markdown text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ItemDoc {
    /// The front-matter fields (`id`, `title`, …, and any unknown keys).
    pub metadata: Map<String, Value>,
    /// The Markdown body.
    pub body: String,
}

impl ItemDoc {
    /// Returns the empty document `{metadata: {}, body: ""}` (before create, after delete).
    pub fn empty() -> ItemDoc {
        ItemDoc::default()
    }

    /// Returns the string value of a metadata field, if it is a string.
    pub fn str_field(&self, key: &str) -> Option<&str> {
        self.metadata.get(key).and_then(Value::as_str)
    }

    /// Returns the item id (`metadata.id`) when present.
    pub fn id(&self) -> Option<&str> {
        self.str_field("id")
    }

    /// Returns true for the empty document (no metadata), the state before create and after
    /// delete.
    pub fn is_empty(&self) -> bool {
        self.metadata.is_empty()
    }

    /// Returns the document as the JSON value `{metadata, body}` (the root of history patches).
    pub fn to_value(&self) -> Value {
        let mut root = Map::new();
        root.insert("metadata".into(), Value::Object(self.metadata.clone()));
        root.insert("body".into(), Value::String(self.body.clone()));
        Value::Object(root)
    }

    /// Builds a document from a `{metadata, body}` value; `None` unless `metadata` is an object
    /// and `body` a string.
    pub fn from_value(value: &Value) -> Option<ItemDoc> {
        let root = value.as_object()?;
        Some(ItemDoc {
            metadata: root.get("metadata")?.as_object()?.clone(),
            body: root.get("body")?.as_str()?.to_string(),
        })
    }
}

/// On-disk encodings of an item file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ItemFormat {
    /// `<id>.toon`, pm's current format.
    Toon,
    /// `<id>.md`: JSON front matter followed by a Markdown body.
    Markdown,
}

impl ItemFormat {
    /// Returns the file extension without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            ItemFormat::Toon => "toon",
            ItemFormat::Markdown => "md",
        }
    }

    /// Returns the format of an item file name by its extension (`.toon` or `.md`, any case).
    pub fn from_path(path: &std::path::Path) -> Option<ItemFormat> {
        let ext = path.extension()?.to_str()?;
        if ext.eq_ignore_ascii_case("toon") {
            Some(ItemFormat::Toon)
        } else if ext.eq_ignore_ascii_case("md") {
            Some(ItemFormat::Markdown)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    #[test]
    fn formats_from_paths() {
        assert_eq!(
            ItemFormat::from_path(Path::new("tasks/pm-1.TOON")),
            Some(ItemFormat::Toon)
        );
        assert_eq!(
            ItemFormat::from_path(Path::new("tasks/pm-1.md")),
            Some(ItemFormat::Markdown)
        );
        assert_eq!(ItemFormat::from_path(Path::new("tasks/pm-1.json")), None);
    }

    #[test]
    fn value_round_trip() {
        let doc = ItemDoc {
            metadata: json!({"id": "pm-1"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            body: "b".into(),
        };
        assert_eq!(ItemDoc::from_value(&doc.to_value()), Some(doc.clone()));
        assert!(ItemDoc::from_value(&json!({"metadata": [], "body": ""})).is_none());
        assert!(ItemDoc::empty().is_empty() && !doc.is_empty());
    }
}
