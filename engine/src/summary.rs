//! `ItemSummary`, the one projection of an item that every read uses: typed fields for every
//! filter and sort key plus pm's "light" metadata. The index stores exactly this (light JSON plus
//! [`ItemFacts`]) and rebuilds it with [`ItemSummary::from_parts`]; nothing else derives it.

use crate::item::{ItemDoc, ItemFormat};
use crate::schema::{RuntimeSchema, StatusRole};
use crate::timestamp::parse_timestamp;
use crate::tracker::ItemFileRef;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// pm's heavy metadata collections: absent from the light tier, only counted in a summary.
pub const HEAVY_KEYS: [&str; 7] = [
    "comments",
    "notes",
    "learnings",
    "files",
    "tests",
    "test_runs",
    "docs",
];

/// The scalar `blocked_by` value that means "nothing blocks this item".
pub const NO_ACTIVE_BLOCKER: &str = "no-active-blocker";

/// The lifecycle class of a status, from its registry roles (terminal beats blocked beats draft
/// beats active); `Other` for statuses with none of those roles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StatusClass {
    /// Work is open or under way.
    Active,
    /// Work is blocked.
    Blocked,
    /// A draft.
    Draft,
    /// Closed, canceled or another terminal status.
    Terminal,
    /// A status without a lifecycle role.
    Other,
}

impl StatusClass {
    /// Returns the class of `status` under the registry of `schema`.
    pub fn of(status: &str, schema: &RuntimeSchema) -> StatusClass {
        let registry = &schema.statuses;
        if registry.is_terminal(status) {
            StatusClass::Terminal
        } else if registry.has_role(status, StatusRole::Blocked) {
            StatusClass::Blocked
        } else if registry.has_role(status, StatusRole::Draft) {
            StatusClass::Draft
        } else if registry.has_role(status, StatusRole::Active) {
            StatusClass::Active
        } else {
            StatusClass::Other
        }
    }

    /// Returns the snake_case name (stored in the index).
    pub fn as_str(self) -> &'static str {
        match self {
            StatusClass::Active => "active",
            StatusClass::Blocked => "blocked",
            StatusClass::Draft => "draft",
            StatusClass::Terminal => "terminal",
            StatusClass::Other => "other",
        }
    }
}

/// One dependency edge of an item (`dependencies[]`), as far as reads need it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct DependencyRef {
    /// The target item id (canonical: trimmed, lowercased).
    pub id: String,
    /// The edge kind (`blocks`, `related`, `parent`, …; not validated on read).
    pub kind: String,
}

/// Entry counts of the heavy collections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CollectionCounts {
    /// `comments[]`.
    pub comments: u32,
    /// `notes[]`.
    pub notes: u32,
    /// `learnings[]`.
    pub learnings: u32,
    /// `files[]`.
    pub files: u32,
    /// `docs[]`.
    pub docs: u32,
    /// `tests[]`.
    pub tests: u32,
    /// `test_runs[]`.
    pub test_runs: u32,
}

/// What a summary needs from the parts of an item that the light metadata leaves out (the heavy
/// collections and the body). Together with the light metadata it determines the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ItemFacts {
    /// Entry counts of the heavy collections.
    pub counts: CollectionCounts,
    /// The (normalized) body is non-empty.
    pub has_body: bool,
    /// Some linked test has a non-empty `command`.
    pub has_linked_command: bool,
}

impl ItemFacts {
    /// Returns the facts of a document.
    pub fn of(doc: &ItemDoc) -> ItemFacts {
        let len = |key: &str| {
            doc.metadata
                .get(key)
                .and_then(Value::as_array)
                .map_or(0, |a| u32::try_from(a.len()).unwrap_or(u32::MAX))
        };
        let has_linked_command = doc
            .metadata
            .get("tests")
            .and_then(Value::as_array)
            .is_some_and(|tests| {
                tests.iter().any(|t| {
                    t.get("command")
                        .and_then(Value::as_str)
                        .is_some_and(|c| !c.trim().is_empty())
                })
            });
        ItemFacts {
            counts: CollectionCounts {
                comments: len("comments"),
                notes: len("notes"),
                learnings: len("learnings"),
                files: len("files"),
                docs: len("docs"),
                tests: len("tests"),
                test_runs: len("test_runs"),
            },
            has_body: !doc.body.is_empty(),
            has_linked_command,
        }
    }
}

/// The read projection of one item file.
///
/// Every filter and sort key has a typed field here; `light` keeps the metadata without the
/// heavy collections (pm's light tier) for row projections.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ItemSummary {
    /// `id` (empty when absent).
    pub id: String,
    /// `title`.
    pub title: String,
    /// `type`.
    #[serde(rename = "type")]
    pub item_type: String,
    /// `status` (a registry id once canonicalized).
    pub status: String,
    /// The lifecycle class of the status.
    pub status_class: StatusClass,
    /// `priority` (0 highest … 4).
    pub priority: i64,
    /// `tags` (canonical: lowercased, sorted).
    pub tags: Vec<String>,
    /// `parent`.
    pub parent: Option<String>,
    /// `assignee`.
    pub assignee: Option<String>,
    /// `sprint`.
    pub sprint: Option<String>,
    /// `release`.
    pub release: Option<String>,
    /// `created_at` as stored.
    pub created_at: String,
    /// `created_at` in epoch ms (`Date.parse`).
    pub created_ms: Option<i64>,
    /// `updated_at` as stored.
    pub updated_at: String,
    /// `updated_at` in epoch ms.
    pub updated_ms: Option<i64>,
    /// `deadline` as stored.
    pub deadline: Option<String>,
    /// `deadline` in epoch ms.
    pub deadline_ms: Option<i64>,
    /// `closed_at` as stored.
    pub closed_at: Option<String>,
    /// `closed_at` in epoch ms.
    pub closed_ms: Option<i64>,
    /// `order` (explicit rank).
    pub order: Option<f64>,
    /// `risk`.
    pub risk: Option<String>,
    /// `confidence` (a number or `low|medium|high`).
    pub confidence: Option<Value>,
    /// `estimated_minutes`.
    pub estimated_minutes: Option<f64>,
    /// `acceptance_criteria` is a non-blank string.
    pub has_acceptance_criteria: bool,
    /// `resolution` is present.
    pub has_resolution: bool,
    /// `reviewer` is present.
    pub has_reviewer: bool,
    /// Scalar `blocked_by`.
    pub blocked_by: Option<String>,
    /// `dependencies[]` edges, in file order.
    pub dependencies: Vec<DependencyRef>,
    /// Counts and presence facts of the heavy parts.
    pub facts: ItemFacts,
    /// Values of the custom fields the runtime schema defines (by metadata key).
    pub fields: BTreeMap<String, Value>,
    /// The file path relative to the tracker root, with `/` separators.
    pub path: String,
    /// The file format.
    pub format: ItemFormat,
    /// The metadata without the heavy collections, in canonical key order.
    pub light: Map<String, Value>,
}

impl ItemSummary {
    /// Returns the summary of a parsed item file.
    pub fn from_item(doc: &ItemDoc, file: &ItemFileRef, schema: &RuntimeSchema) -> ItemSummary {
        ItemSummary::from_parts(
            light_metadata(&doc.metadata),
            ItemFacts::of(doc),
            relative_path(file),
            file.format,
            schema,
        )
    }

    /// Takes a parsed item file apart without copying its metadata: the summary (exactly
    /// [`ItemSummary::from_item`]), the heavy collections ([`heavy_metadata`]) and the body.
    pub fn split_item(doc: ItemDoc, file: &ItemFileRef, schema: &RuntimeSchema) -> SplitItem {
        let facts = ItemFacts::of(&doc);
        let ItemDoc { metadata, body } = doc;
        let (light, heavy) = split_metadata(metadata);
        SplitItem {
            summary: ItemSummary::from_parts(
                light,
                facts,
                relative_path(file),
                file.format,
                schema,
            ),
            heavy,
            body,
        }
    }

    /// Rebuilds a summary from what the index stores: the light metadata, the facts, the
    /// relative path and the format. `from_item` is exactly this applied to a parsed file.
    pub fn from_parts(
        light: Map<String, Value>,
        facts: ItemFacts,
        path: String,
        format: ItemFormat,
        schema: &RuntimeSchema,
    ) -> ItemSummary {
        let text = |key: &str| light.get(key).and_then(Value::as_str).unwrap_or_default();
        let opt = |key: &str| {
            light
                .get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let raw = |key: &str| light.get(key).and_then(Value::as_str).map(str::to_string);
        let number = |key: &str| light.get(key).and_then(Value::as_f64);
        let status = text("status").to_string();
        let created_at = text("created_at").to_string();
        let updated_at = text("updated_at").to_string();
        let deadline = raw("deadline");
        let closed_at = raw("closed_at");
        let tags = light
            .get("tags")
            .and_then(Value::as_array)
            .map(|tags| {
                tags.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let dependencies = light
            .get("dependencies")
            .and_then(Value::as_array)
            .map(|deps| deps.iter().filter_map(dependency_ref).collect())
            .unwrap_or_default();
        let fields = schema
            .fields
            .definitions()
            .iter()
            .filter_map(|def| {
                light
                    .get(&def.metadata_key)
                    .map(|v| (def.metadata_key.clone(), v.clone()))
            })
            .collect();
        ItemSummary {
            id: text("id").to_string(),
            title: text("title").to_string(),
            item_type: text("type").to_string(),
            status_class: StatusClass::of(&status, schema),
            status,
            priority: number("priority").map_or(0, |p| p as i64),
            tags,
            parent: opt("parent"),
            assignee: opt("assignee"),
            sprint: opt("sprint"),
            release: opt("release"),
            created_ms: parse_timestamp(&created_at),
            created_at,
            updated_ms: parse_timestamp(&updated_at),
            updated_at,
            deadline_ms: deadline.as_deref().and_then(parse_timestamp),
            deadline,
            closed_ms: closed_at.as_deref().and_then(parse_timestamp),
            closed_at,
            order: number("order"),
            risk: opt("risk"),
            confidence: light.get("confidence").filter(|v| !v.is_null()).cloned(),
            estimated_minutes: number("estimated_minutes"),
            has_acceptance_criteria: opt("acceptance_criteria").is_some(),
            has_resolution: opt("resolution").is_some(),
            has_reviewer: opt("reviewer").is_some(),
            blocked_by: opt("blocked_by"),
            dependencies,
            facts,
            fields,
            path,
            format,
            light,
        }
    }

    /// Returns true when the status is terminal (closed, canceled, …).
    pub fn is_terminal(&self) -> bool {
        self.status_class == StatusClass::Terminal
    }

    /// Returns the ids that block this item by its own data: the scalar `blocked_by` (unless it
    /// is `no-active-blocker`) and every `blocked_by` dependency edge. Reverse `blocks` edges
    /// from other items are added by `query::Relations`.
    pub fn own_blockers(&self) -> impl Iterator<Item = &str> {
        own_blockers_of(self.blocked_by.as_deref(), &self.dependencies)
    }
}

/// Returns the ids that block an item by its own data: the scalar `blocked_by` (unless it is
/// `no-active-blocker`) and the target of every `blocked_by` edge in `dependencies`.
pub fn own_blockers_of<'a>(
    blocked_by: Option<&'a str>,
    dependencies: &'a [DependencyRef],
) -> impl Iterator<Item = &'a str> {
    let scalar = blocked_by.filter(|b| *b != NO_ACTIVE_BLOCKER);
    scalar.into_iter().chain(
        dependencies
            .iter()
            .filter(|d| d.kind == "blocked_by")
            .map(|d| d.id.as_str()),
    )
}

/// A parsed item taken apart by [`ItemSummary::split_item`].
#[derive(Clone, Debug, PartialEq)]
pub struct SplitItem {
    /// The summary.
    pub summary: ItemSummary,
    /// The heavy collections that are present, in key order.
    pub heavy: Map<String, Value>,
    /// The body.
    pub body: String,
}

/// Returns `(light_metadata(&metadata), heavy_metadata(&metadata))`, moving the entries
/// instead of copying them; without heavy keys the map itself is the light part.
pub fn split_metadata(metadata: Map<String, Value>) -> (Map<String, Value>, Map<String, Value>) {
    let is_heavy = |k: &String| HEAVY_KEYS.contains(&k.as_str());
    if !metadata.keys().any(is_heavy) {
        return (metadata, Map::new());
    }
    let mut light = Map::with_capacity(metadata.len());
    let mut heavy = Map::new();
    for (k, v) in metadata {
        if is_heavy(&k) {
            heavy.insert(k, v);
        } else {
            light.insert(k, v);
        }
    }
    (light, heavy)
}

/// Returns `metadata` without the heavy collections (pm's light tier), keeping key order.
pub fn light_metadata(metadata: &Map<String, Value>) -> Map<String, Value> {
    metadata
        .iter()
        .filter(|(k, _)| !HEAVY_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Returns the heavy collections of `metadata` that are present, in key order.
pub fn heavy_metadata(metadata: &Map<String, Value>) -> Map<String, Value> {
    metadata
        .iter()
        .filter(|(k, _)| HEAVY_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Returns `<folder>/<file name>` for an item file (tracker-relative, `/` separators).
pub fn relative_path(file: &ItemFileRef) -> String {
    let name = file
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.format.file_name(&file.stem));
    format!("{}/{name}", file.folder)
}

fn dependency_ref(dep: &Value) -> Option<DependencyRef> {
    let obj = dep.as_object()?;
    Some(DependencyRef {
        id: obj.get("id")?.as_str()?.to_string(),
        kind: obj
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    })
}

/// Returns the comparable values a custom-field filter matches against: the compact JSON text
/// of a scalar or object value, or of each element of an array value.
pub fn field_match_values(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items.iter().map(crate::json::to_compact).collect(),
        other => vec![crate::json::to_compact(other)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::PathBuf;

    fn doc(meta: Value, body: &str) -> ItemDoc {
        ItemDoc {
            metadata: meta.as_object().cloned().unwrap_or_default(),
            body: body.into(),
        }
    }

    fn file() -> ItemFileRef {
        ItemFileRef {
            type_name: "Task".into(),
            folder: "tasks".into(),
            path: PathBuf::from("/t/tasks/pm-a.toon"),
            stem: "pm-a".into(),
            format: ItemFormat::Toon,
        }
    }

    #[test]
    fn summary_derives_typed_fields_and_light_metadata() {
        let schema = RuntimeSchema::builtin();
        let d = doc(
            json!({
                "id": "pm-a", "title": "T", "description": "", "type": "Task",
                "status": "closed", "priority": 2, "tags": ["a", "b"],
                "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-02T00:00:00.000Z",
                "parent": "pm-p", "blocked_by": "no-active-blocker", "acceptance_criteria": " ",
                "dependencies": [{"id": "pm-b", "kind": "blocked_by", "created_at": "x"}],
                "comments": [{"text": "c"}], "tests": [{"command": "cargo t", "scope": "project"}]
            }),
            "body",
        );
        let s = ItemSummary::from_item(&d, &file(), &schema);
        assert_eq!(s.status_class, StatusClass::Terminal);
        assert_eq!(s.priority, 2);
        assert_eq!(s.updated_ms, Some(1_767_312_000_000));
        assert_eq!(s.path, "tasks/pm-a.toon");
        assert!(!s.has_acceptance_criteria);
        assert_eq!(s.facts.counts.comments, 1);
        assert!(s.facts.has_body && s.facts.has_linked_command);
        assert!(!s.light.contains_key("comments") && s.light.contains_key("dependencies"));
        assert_eq!(s.own_blockers().collect::<Vec<_>>(), ["pm-b"]);
        let rebuilt =
            ItemSummary::from_parts(s.light.clone(), s.facts, s.path.clone(), s.format, &schema);
        assert_eq!(rebuilt, s);
        let split = ItemSummary::split_item(d.clone(), &file(), &schema);
        assert_eq!(split.summary, s);
        assert_eq!(split.heavy, heavy_metadata(&d.metadata));
        assert_eq!(split.body, d.body);
        let light_only = doc(json!({"id": "pm-a", "title": "T"}), "");
        let split = ItemSummary::split_item(light_only.clone(), &file(), &schema);
        assert_eq!(
            split.summary,
            ItemSummary::from_item(&light_only, &file(), &schema)
        );
        assert!(split.heavy.is_empty());
    }

    #[test]
    fn field_values_split_arrays() {
        assert_eq!(field_match_values(&json!("x")), ["\"x\""]);
        assert_eq!(field_match_values(&json!([1, "a"])), ["1", "\"a\""]);
        assert_eq!(field_match_values(&json!(2.0)), ["2"]);
    }
}
