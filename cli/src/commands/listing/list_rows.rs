//! The row projections of `pm list`: brief, compact, custom fields and full
//! rows, field validation, and `--tree` ordering. Rows are built from summaries, or from full
//! documents when the projection needs heavy collections or the body.

use std::collections::{BTreeMap, BTreeSet};

use crate::failure::{CliError, ReadOutputRefusal, Result};
use pm_engine::item::ItemDoc;
use pm_engine::read::record_order::IN_MEMORY_KEY_ORDER;
use pm_engine::schema::RuntimeSchema;
use pm_engine::summary::{HEAVY_KEYS, ItemSummary};
use serde_json::{Map, Value, json};

/// The brief projection.
pub const BRIEF_FIELDS: [&str; 4] = ["id", "status", "type", "title"];
/// The compact projection.
pub const COMPACT_FIELDS: [&str; 7] = [
    "id",
    "title",
    "status",
    "type",
    "priority",
    "parent",
    "updated_at",
];
/// The fields `--tree` adds to every row.
pub const TREE_FIELDS: [&str; 4] = ["tree_depth", "tree_parent", "tree_children", "tree_title"];

/// How list rows are projected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Projection {
    /// `id,status,type,title`.
    Brief,
    /// `id,title,status,type,priority,parent,updated_at`, nulls kept.
    Compact,
    /// Custom fields in the order given; missing values are `null`.
    Fields(Vec<String>),
    /// The whole stored metadata record (plus `body` with `--include-body`).
    Full {
        /// `--include-body`.
        body: bool,
    },
}

impl Projection {
    /// Returns the `projection.mode` name.
    pub fn mode(&self) -> &'static str {
        match self {
            Projection::Brief => "brief",
            Projection::Compact => "compact",
            Projection::Fields(_) => "fields",
            Projection::Full { .. } => "full",
        }
    }

    /// Returns the projected field names (`None` for full rows).
    pub fn fields(&self) -> Option<Vec<String>> {
        let owned = |f: &[&str]| f.iter().map(|s| (*s).to_owned()).collect();
        match self {
            Projection::Brief => Some(owned(&BRIEF_FIELDS)),
            Projection::Compact => Some(owned(&COMPACT_FIELDS)),
            Projection::Fields(fields) => Some(fields.clone()),
            Projection::Full { .. } => None,
        }
    }

    /// Returns the `projection` echo `{mode, fields}`.
    pub fn echo(&self) -> Value {
        json!({"mode": self.mode(), "fields": self.fields()})
    }

    /// Returns true when rows need the full documents (heavy collections or the body).
    pub fn needs_documents(&self) -> bool {
        match self {
            Projection::Full { .. } => true,
            Projection::Fields(fields) => fields
                .iter()
                .any(|f| f == "body" || HEAVY_KEYS.contains(&f.as_str())),
            Projection::Brief | Projection::Compact => false,
        }
    }
}

/// Returns the field names `--fields` accepts: the item metadata keys, the runtime schema
/// fields, `body` and the tree fields.
pub fn allowed_fields(schema: &RuntimeSchema) -> Vec<String> {
    let mut out: Vec<String> = IN_MEMORY_KEY_ORDER
        .iter()
        .map(|k| (*k).to_owned())
        .collect();
    for def in schema.fields.definitions() {
        if !out.contains(&def.metadata_key) {
            out.push(def.metadata_key.clone());
        }
    }
    out.push("body".into());
    out.extend(TREE_FIELDS.iter().map(|f| (*f).to_owned()));
    out
}

/// Parses `--fields a,item.b` (the `item.` prefix is dropped; duplicates keep the first).
///
/// # Errors
/// `unknown_field_projection` naming the unknown fields, with the accepted names.
pub fn parse_fields(raw: &str, schema: &RuntimeSchema) -> Result<Vec<String>> {
    let allowed = allowed_fields(schema);
    let mut fields: Vec<String> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    for token in raw.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let name = token.strip_prefix("item.").unwrap_or(token);
        if !allowed.iter().any(|a| a == name) {
            unknown.push(token.to_owned());
        } else if !fields.iter().any(|f| f == name) {
            fields.push(name.to_owned());
        }
    }
    if unknown.is_empty() && !fields.is_empty() {
        return Ok(fields);
    }
    let message = if unknown.is_empty() {
        "--fields requires at least one field name.".to_owned()
    } else {
        format!(
            "Unknown --fields value(s): {}. Use item metadata keys, body, or tree fields.",
            unknown.join(", ")
        )
    };
    Err(CliError::ReadOutput {
        kind: ReadOutputRefusal::UnknownField,
        message,
        flag: "--fields",
        value: Some(unknown.first().cloned().unwrap_or_else(|| raw.to_owned())),
        allowed: allowed.into_boxed_slice(),
        suggestion: None,
    })
}

/// The `--tree` position of a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreePosition {
    /// Depth below its root (roots are 0).
    pub depth: usize,
    /// The parent id, when the parent is in the result.
    pub parent: Option<String>,
    /// How many children the row has in the result.
    pub children: usize,
}

/// Reorders `items` (already in list order) into parent/child depth-first order: roots (items
/// whose parent is not in the result) in list order, each followed by its children in list
/// order. Rows deeper than `max_depth` are dropped.
pub fn tree_order(
    items: Vec<ItemSummary>,
    max_depth: Option<usize>,
) -> Vec<(ItemSummary, TreePosition)> {
    let ids: BTreeSet<&str> = items.iter().map(|i| i.id.as_str()).collect();
    let parent_of = |item: &ItemSummary| -> Option<String> {
        item.parent
            .as_deref()
            .filter(|p| *p != item.id && ids.contains(p))
            .map(str::to_owned)
    };
    let mut children: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut roots = Vec::new();
    let parents: Vec<Option<String>> = items.iter().map(parent_of).collect();
    for (i, parent) in parents.iter().enumerate() {
        match parent {
            Some(p) => children.entry(p.clone()).or_default().push(i),
            None => roots.push(i),
        }
    }
    let mut order: Vec<(usize, usize)> = Vec::with_capacity(items.len());
    let mut visited = vec![false; items.len()];
    let mut stack: Vec<(usize, usize)> = roots.iter().rev().map(|&i| (i, 0)).collect();
    loop {
        while let Some((i, depth)) = stack.pop() {
            if std::mem::replace(&mut visited[i], true) {
                continue;
            }
            order.push((i, depth));
            if let Some(kids) = children.get(&items[i].id) {
                stack.extend(kids.iter().rev().map(|&k| (k, depth + 1)));
            }
        }
        // Parent cycles leave rows unvisited: start again from the first of them.
        match visited.iter().position(|v| !v) {
            Some(i) => stack.push((i, 0)),
            None => break,
        }
    }
    let mut slots: Vec<Option<ItemSummary>> = items.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter(|(_, depth)| max_depth.is_none_or(|m| *depth <= m))
        .filter_map(|(i, depth)| {
            let item = slots[i].take()?;
            let position = TreePosition {
                depth,
                parent: parents[i].clone(),
                children: children.get(&item.id).map_or(0, Vec::len),
            };
            Some((item, position))
        })
        .collect()
}

/// The inputs of one row, owned: what the row shows moves into it instead of being copied.
pub struct RowSource<'a> {
    /// The summary (light metadata).
    pub summary: ItemSummary,
    /// The full document, when the projection needs it.
    pub document: Option<ItemDoc>,
    /// The tree position under `--tree`.
    pub tree: Option<&'a TreePosition>,
}

fn tree_value(field: &str, tree: &TreePosition, title: &str) -> Value {
    match field {
        "tree_depth" => json!(tree.depth),
        "tree_parent" => json!(tree.parent),
        "tree_children" => json!(tree.children),
        _ => json!(format!("{}{title}", "  ".repeat(tree.depth))),
    }
}

/// Builds one projected row.
pub fn project_row(projection: &Projection, row: RowSource<'_>, runtime: &[&str]) -> Value {
    let RowSource {
        summary,
        document,
        tree,
    } = row;
    let mut out = match projection {
        Projection::Full { body } => full_row(summary.light, document, *body, runtime),
        _ => {
            let lookup = |field: &str| -> Value {
                if let Some(tree) = tree.filter(|_| TREE_FIELDS.contains(&field)) {
                    return tree_value(field, tree, &summary.title);
                }
                match &document {
                    Some(doc) if field == "body" => json!(doc.body),
                    None if field == "body" => Value::Null,
                    Some(doc) => doc.metadata.get(field).cloned().unwrap_or(Value::Null),
                    None => summary.light.get(field).cloned().unwrap_or(Value::Null),
                }
            };
            projection
                .fields()
                .unwrap_or_default()
                .into_iter()
                .map(|f| {
                    let value = lookup(&f);
                    (f, value)
                })
                .collect()
        }
    };
    if let (Some(tree), Projection::Brief | Projection::Compact | Projection::Full { .. }) =
        (tree, projection)
    {
        for field in TREE_FIELDS {
            out.insert(field.into(), tree_value(field, tree, &summary.title));
        }
    }
    Value::Object(out)
}

/// A full row: the light record in pm's in-memory key order, then the heavy collections of
/// `document` (pm merges them onto the light record, so they come last), then with `body` the
/// document's body (`null` without a document).
pub fn full_row(
    light: Map<String, Value>,
    document: Option<ItemDoc>,
    body: bool,
    runtime: &[&str],
) -> Map<String, Value> {
    let mut out = in_memory_order_owned(light, runtime);
    let (mut metadata, text) = document.map(|d| (d.metadata, d.body)).unzip();
    if let Some(metadata) = metadata.as_mut() {
        for key in HEAVY_KEYS {
            if let Some(value) = metadata.swap_remove(key) {
                out.insert(key.into(), value);
            }
        }
    }
    if body {
        out.insert("body".into(), text.map_or(Value::Null, Value::String));
    }
    out
}

/// [`pm_engine::read::record_order::in_memory_order`] of a record the caller gives up: the values move instead of being
/// copied (the known keys, then the runtime fields, then the rest in their current order).
fn in_memory_order_owned(mut metadata: Map<String, Value>, runtime: &[&str]) -> Map<String, Value> {
    let mut out = Map::with_capacity(metadata.len());
    for key in IN_MEMORY_KEY_ORDER.iter().chain(runtime) {
        if let Some(value) = metadata.shift_remove(*key) {
            out.insert((*key).to_owned(), value);
        }
    }
    out.extend(metadata);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pm_engine::item::ItemFormat;
    use pm_engine::read::record_order::in_memory_order;
    use pm_engine::summary::ItemFacts;

    fn summary(id: &str, parent: Option<&str>) -> ItemSummary {
        let mut light = Map::new();
        light.insert("id".into(), json!(id));
        light.insert("title".into(), json!(format!("T {id}")));
        light.insert("type".into(), json!("Task"));
        light.insert("status".into(), json!("open"));
        light.insert("priority".into(), json!(1));
        if let Some(p) = parent {
            light.insert("parent".into(), json!(p));
        }
        ItemSummary::from_parts(
            light,
            ItemFacts::default(),
            format!("tasks/{id}.toon"),
            ItemFormat::Toon,
            &RuntimeSchema::builtin(),
        )
    }

    #[test]
    fn projections_pick_fields_and_keep_nulls() {
        let s = summary("pm-a", None);
        let row = || RowSource {
            summary: s.clone(),
            document: None,
            tree: None,
        };
        assert_eq!(
            project_row(&Projection::Compact, row(), &[]),
            json!({"id": "pm-a", "title": "T pm-a", "status": "open", "type": "Task",
                   "priority": 1, "parent": null, "updated_at": null})
        );
        assert_eq!(
            project_row(
                &Projection::Fields(vec!["title".into(), "risk".into()]),
                row(),
                &[]
            ),
            json!({"title": "T pm-a", "risk": null})
        );
    }

    #[test]
    fn owned_in_memory_order_equals_the_engine_order() {
        let metadata: Map<String, Value> = [
            ("zeta", json!(1)),
            ("closed_at", json!("t")),
            ("estimate", json!(3)),
            ("title", json!("T")),
            ("alpha", json!([1])),
            ("id", json!("pm-a")),
            ("status", json!("open")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        for runtime in [&[][..], &["estimate", "title", "nope"][..]] {
            let owned = in_memory_order_owned(metadata.clone(), runtime);
            let engine = in_memory_order(&metadata, runtime);
            assert_eq!(
                owned.iter().collect::<Vec<_>>(),
                engine.iter().collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn fields_are_validated() -> Result<()> {
        let schema = RuntimeSchema::builtin();
        assert_eq!(
            parse_fields("id, item.title,id,body", &schema)?,
            ["id", "title", "body"]
        );
        let err = parse_fields("id,nope", &schema).err();
        assert_eq!(
            err.map(|e| e.code().as_str()),
            Some("unknown_field_projection")
        );
        Ok(())
    }

    #[test]
    fn tree_order_is_depth_first_under_parents() {
        let items = vec![
            summary("pm-c", Some("pm-a")),
            summary("pm-a", None),
            summary("pm-d", Some("pm-c")),
            summary("pm-b", None),
            summary("pm-e", Some("pm-zz")),
        ];
        let ordered = tree_order(items.clone(), None);
        let ids: Vec<(&str, usize)> = ordered
            .iter()
            .map(|(s, p)| (s.id.as_str(), p.depth))
            .collect();
        assert_eq!(
            ids,
            [
                ("pm-a", 0),
                ("pm-c", 1),
                ("pm-d", 2),
                ("pm-b", 0),
                ("pm-e", 0)
            ]
        );
        assert_eq!(ordered[0].1.children, 1);
        let shallow = tree_order(items, Some(1));
        assert_eq!(shallow.len(), 4);
    }
}
