//! The item document model: metadata (every key kept losslessly, in order) plus a body.
//! Parsing, canonicalization and serialization live in the submodules.

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
}
