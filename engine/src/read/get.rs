//! `pm get <id>`: one item at a depth, with its linked artifacts, claim
//! state, schedule and children rollup, the omission receipt, and its item hash.

use serde::Serialize;
use serde_json::{Map, Value};

use super::children::{
    CHILD_PAGE_LIMIT, ChildRollup, children_rollup, is_container_type, parent_key,
};
use super::facets::{
    COLLECTIONS, ClaimState, Linked, Schedule, assignee, claim_state, collection_len, linked,
    schedule,
};
use super::receipt::{FieldGroup, OmissionReceipt};
use super::record_order::in_memory_order;
use super::view::TrackerView;
use crate::error::Result;
use crate::hash::{HashEpoch, item_hash};
use crate::history::HistoryEntry;
use crate::history::replay::epoch_of;
use crate::item::ItemDoc;

/// How much of an item `get` returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GetDepth {
    /// Metadata and counts only: no body, linked artifacts, claim state, schedule or children.
    Brief,
    /// Metadata, counts and body, plus the facets; children counts only.
    Standard,
    /// Standard plus the eight collection arrays and a children sample (`full` is an alias).
    Deep,
}

impl GetDepth {
    /// The accepted `--depth` values.
    pub const VALUES: [&'static str; 4] = ["brief", "standard", "deep", "full"];

    /// Parses a `--depth` value (trimmed, case-insensitive; blank means standard).
    pub fn parse(raw: &str) -> Option<GetDepth> {
        match raw.trim().to_lowercase().as_str() {
            "" | "standard" => Some(GetDepth::Standard),
            "brief" => Some(GetDepth::Brief),
            "deep" | "full" => Some(GetDepth::Deep),
            _ => None,
        }
    }
}

/// What a `get` computes: a depth, widened by the sections a `--fields` selection names (a
/// named section is computed even when the depth would leave it out).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GetScope {
    /// The requested depth (brief is raised to standard when a standard section is named).
    pub depth: GetDepth,
    /// Build the children rollup even for a type that is not a container.
    pub children: bool,
    /// Include the eight collection arrays whatever the depth.
    pub collections: bool,
}

impl GetScope {
    /// The plain depth, no named sections.
    pub fn at(depth: GetDepth) -> GetScope {
        GetScope {
            depth,
            children: false,
            collections: false,
        }
    }

    /// The depth widened by `selectors` (`--fields` / `--output-include` tokens): `children`
    /// forces the rollup, a collection name (or `item.<collection>`) adds the collection
    /// arrays, and `body`, `linked`, `claim_state` or `schedule` (or a sub-key of them) raise
    /// brief to standard.
    pub fn requesting(depth: GetDepth, selectors: &[String]) -> GetScope {
        let mut scope = GetScope::at(depth);
        for selector in selectors {
            let name = selector.strip_prefix("item.").unwrap_or(selector);
            let head = name.split('.').next().unwrap_or_default();
            if COLLECTIONS.contains(&head) {
                scope.collections = true;
            } else if head == "children" {
                scope.children = true;
            } else if matches!(head, "body" | "linked" | "claim_state" | "schedule")
                && scope.depth == GetDepth::Brief
            {
                scope.depth = GetDepth::Standard;
            }
        }
        scope
    }
}

/// The `get` envelope: `item, item_hash, linked, claim_state, schedule, children,
/// omission_receipt` (absent facets are skipped).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ItemView {
    /// The projected metadata, counts and (above brief) the body.
    pub item: Map<String, Value>,
    /// SHA-256 of the canonical document at the stream's hash epoch: equals the last
    /// `after_hash` of the item's history when file and stream agree.
    pub item_hash: String,
    /// Linked files, tests and docs (standard and deep).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linked: Option<Linked>,
    /// Claim state from the assignee and history (standard and deep).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim_state: Option<ClaimState>,
    /// Scheduling data, when the item has any (standard and deep).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
    /// Direct children of a container item (standard: counts, deep: a sample).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub children: Option<ChildRollup>,
    /// The point in history a `--at` read reconstructed.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub as_of: Option<AsOf>,
    /// Which material field groups this depth left out.
    pub omission_receipt: OmissionReceipt,
}

/// The history point of a reconstructed `get --at` view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AsOf {
    /// Always true: the item was rebuilt by replaying its history.
    pub reconstructed: bool,
    /// How many history entries were applied.
    pub as_of_version: usize,
    /// The timestamp of the last applied entry.
    pub as_of_timestamp: Option<String>,
}

/// Reads one item at `depth`.
///
/// # Errors
/// `item_not_found`, `invalid_item_id` or `duplicate_item_id` from the lookup; the read and
/// parse errors of the item file and its history stream.
pub fn get_item(view: &TrackerView, raw_id: &str, scope: GetScope) -> Result<ItemView> {
    let file = view.locate(raw_id)?;
    let doc = view.load(&file)?;
    let stream = view.stream(&file.stem)?;
    build_view(view, &file.stem, &doc, &stream.entries, scope)
}

/// Builds the `get` view of `doc` (the item `stem`) from its history `entries`.
///
/// # Errors
/// Scan failures while collecting a container's children.
pub fn build_view(
    view: &TrackerView,
    stem: &str,
    doc: &ItemDoc,
    entries: &[HistoryEntry],
    scope: GetScope,
) -> Result<ItemView> {
    let depth = scope.depth;
    let above_brief = depth != GetDepth::Brief;
    let item_type = doc.str_field("type").unwrap_or_default();
    let children = if scope.children || (above_brief && is_container_type(item_type)) {
        let sample_limit = match depth {
            GetDepth::Deep => CHILD_PAGE_LIMIT,
            _ => 0,
        };
        let statuses = &view.schema().statuses;
        Some(match view.child_source() {
            Some(source) => {
                let (children, inspected) = source.children(&parent_key(stem))?;
                let mut rollup = children_rollup(stem, &children, statuses, sample_limit);
                rollup.scanned = inspected;
                rollup
            }
            None => {
                let corpus: Vec<ItemDoc> = view
                    .scan()?
                    .into_iter()
                    .filter_map(|scanned| scanned.doc.ok())
                    .collect();
                children_rollup(stem, &corpus, statuses, sample_limit)
            }
        })
    } else {
        None
    };
    let runtime_fields: Vec<&str> = view
        .schema()
        .fields
        .definitions()
        .iter()
        .map(|field| field.metadata_key.as_str())
        .collect();
    let mut result = ItemView {
        item: project_item(doc, depth, scope.collections, &runtime_fields),
        item_hash: current_item_hash(doc, entries),
        linked: above_brief.then(|| linked(doc)),
        claim_state: above_brief.then(|| claim_state(doc, entries)),
        schedule: if above_brief { schedule(doc) } else { None },
        children,
        as_of: None,
        omission_receipt: OmissionReceipt::complete(),
    };
    result.omission_receipt = omission_receipt(doc, &result);
    Ok(result)
}

/// Returns the item hash of `doc` at the epoch of its stream: the last explicit
/// `item_hash_version`; for an unversioned stream the epoch whose hash equals the last
/// `after_hash` (v1 when neither does); the current epoch for an empty stream.
pub fn current_item_hash(doc: &ItemDoc, entries: &[HistoryEntry]) -> String {
    let explicit = entries
        .iter()
        .rev()
        .find_map(|e| e.item_hash_version)
        .map(epoch_of);
    match (explicit, entries.last()) {
        (Some(epoch), _) => item_hash(doc, epoch),
        (None, None) => item_hash(doc, HashEpoch::V2),
        (None, Some(last)) => {
            let v1 = item_hash(doc, HashEpoch::V1);
            if v1 == last.after_hash {
                return v1;
            }
            let v2 = item_hash(doc, HashEpoch::V2);
            if v2 == last.after_hash { v2 } else { v1 }
        }
    }
}

/// Returns the `item` object: metadata in pm's in-memory order (deep, or `collections`: with
/// every collection array, `[]` when absent), `notes_count`, `tests_count`,
/// `collection_counts`, then `body` above brief.
pub fn project_item(
    doc: &ItemDoc,
    depth: GetDepth,
    collections: bool,
    runtime_fields: &[&str],
) -> Map<String, Value> {
    let mut item = in_memory_order(&doc.metadata, runtime_fields);
    if collections || depth == GetDepth::Deep {
        for key in COLLECTIONS {
            item.entry(key).or_insert_with(|| Value::Array(Vec::new()));
        }
    } else {
        for key in COLLECTIONS {
            item.shift_remove(key);
        }
    }
    let counts: Map<String, Value> = COLLECTIONS
        .iter()
        .map(|key| (key.to_string(), Value::from(collection_len(doc, key))))
        .collect();
    item.insert(
        "notes_count".into(),
        Value::from(collection_len(doc, "notes")),
    );
    item.insert(
        "tests_count".into(),
        Value::from(collection_len(doc, "tests")),
    );
    item.insert("collection_counts".into(), Value::Object(counts));
    if depth != GetDepth::Brief {
        item.insert("body".into(), Value::String(doc.body.clone()));
    }
    item
}

/// The field groups `get`'s omission receipt may declare, in declaration order; `true` marks
/// item-level groups. Each can be requested by name (`--fields <name>`) whatever the depth.
pub const FIELD_GROUPS: [(&str, bool); 13] = [
    ("body", true),
    ("comments", true),
    ("notes", true),
    ("learnings", true),
    ("files", true),
    ("tests", true),
    ("docs", true),
    ("reminders", true),
    ("events", true),
    ("children", false),
    ("claim_state", false),
    ("linked", false),
    ("schedule", false),
];

/// A group is declared when it is material for this item or present in the result, and
/// omitted when declared but absent (item-level groups are looked up in `item`).
fn omission_receipt(doc: &ItemDoc, result: &ItemView) -> OmissionReceipt {
    let omitted = FIELD_GROUPS
        .iter()
        .filter(|(name, item_level)| {
            let present = if *item_level {
                result.item.contains_key(*name)
            } else {
                match *name {
                    "children" => result.children.is_some(),
                    "claim_state" => result.claim_state.is_some(),
                    "linked" => result.linked.is_some(),
                    _ => result.schedule.is_some(),
                }
            };
            !present && is_material(doc, name)
        })
        .map(|(name, _)| FieldGroup::new(*name, format!("--fields {name}")))
        .collect();
    OmissionReceipt::omitted(omitted)
}

fn is_material(doc: &ItemDoc, group: &str) -> bool {
    match group {
        "body" => !doc.body.is_empty(),
        "children" => true,
        "claim_state" => assignee(doc).is_some(),
        "linked" => ["files", "tests", "docs"]
            .iter()
            .any(|key| collection_len(doc, key) > 0),
        "schedule" => schedule(doc).is_some(),
        collection => collection_len(doc, collection) > 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::EMPTY_DOC_HASH;
    use crate::schema::RuntimeSchema;
    use serde_json::json;

    fn doc(fields: Value, body: &str) -> ItemDoc {
        ItemDoc {
            metadata: fields.as_object().cloned().unwrap_or_default(),
            body: body.into(),
        }
    }

    fn view_of(doc: &ItemDoc, depth: GetDepth, children: bool) -> ItemView {
        let above = depth != GetDepth::Brief;
        let mut v = ItemView {
            item: project_item(doc, depth, false, &[]),
            item_hash: String::new(),
            linked: above.then(|| linked(doc)),
            claim_state: above.then(|| claim_state(doc, &[])),
            schedule: if above { schedule(doc) } else { None },
            children: children.then(|| {
                let none: [ItemDoc; 0] = [];
                children_rollup("pm-a", &none, &RuntimeSchema::builtin().statuses, 0)
            }),
            as_of: None,
            omission_receipt: OmissionReceipt::complete(),
        };
        v.omission_receipt = omission_receipt(doc, &v);
        v
    }

    fn names(receipt: &OmissionReceipt) -> Vec<&str> {
        receipt
            .omitted_field_groups
            .iter()
            .map(|g| g.name.as_str())
            .collect()
    }

    #[test]
    fn depth_parsing() {
        assert_eq!(GetDepth::parse(" FULL "), Some(GetDepth::Deep));
        assert_eq!(GetDepth::parse(""), Some(GetDepth::Standard));
        assert_eq!(GetDepth::parse("brief"), Some(GetDepth::Brief));
        assert_eq!(GetDepth::parse("wide"), None);
    }

    #[test]
    fn standard_projection_and_receipt() {
        let d = doc(
            json!({"id": "pm-a", "type": "Task", "comments": [{"text": "c"}],
                   "files": [{"path": "x"}], "assignee": "bot"}),
            "",
        );
        let v = view_of(&d, GetDepth::Standard, false);
        let keys: Vec<&str> = v.item.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "id",
                "type",
                "assignee",
                "notes_count",
                "tests_count",
                "collection_counts",
                "body"
            ]
        );
        assert_eq!(v.item["collection_counts"]["comments"], json!(1));
        assert_eq!(
            names(&v.omission_receipt),
            ["comments", "files", "children"]
        );
    }

    #[test]
    fn brief_omits_facets_and_deep_fills_collections() {
        let d = doc(
            json!({"id": "pm-a", "type": "Epic", "deadline": "2026-01-01"}),
            "text",
        );
        let brief = view_of(&d, GetDepth::Brief, false);
        assert!(!brief.item.contains_key("body"));
        assert_eq!(
            names(&brief.omission_receipt),
            ["body", "children", "schedule"]
        );
        let deep = view_of(&d, GetDepth::Deep, true);
        let keys: Vec<&str> = deep.item.keys().map(String::as_str).collect();
        assert_eq!(&keys[..3], ["id", "type", "deadline"]);
        assert_eq!(keys[3..11], COLLECTIONS);
        assert_eq!(deep.item["events"], json!([]));
        assert!(!deep.omission_receipt.has_omissions);
    }

    #[test]
    fn named_sections_widen_the_scope() {
        let sel = |list: &[&str]| -> Vec<String> { list.iter().map(|s| s.to_string()).collect() };
        let plain = GetScope::requesting(GetDepth::Brief, &sel(&["title", "item.id"]));
        assert_eq!(plain, GetScope::at(GetDepth::Brief));
        let wide = GetScope::requesting(
            GetDepth::Brief,
            &sel(&["item.comments", "children", "linked.files"]),
        );
        assert_eq!(
            wide,
            GetScope {
                depth: GetDepth::Standard,
                children: true,
                collections: true,
            }
        );
        let d = doc(json!({"id": "pm-a", "type": "Task"}), "");
        let item = project_item(&d, GetDepth::Standard, true, &[]);
        assert_eq!(item["comments"], json!([]));
        assert_eq!(item["body"], json!(""));
    }

    #[test]
    fn item_hash_follows_the_stream_epoch() {
        let tests =
            json!([{"command": "b", "scope": "project"}, {"command": "a", "scope": "project"}]);
        let d = doc(
            json!({"id": "pm-a", "title": "T", "tags": [], "tests": tests}),
            "",
        );
        let v1 = item_hash(&d, HashEpoch::V1);
        let v2 = item_hash(&d, HashEpoch::V2);
        assert_ne!(v1, v2);
        let entry = |after: &str, version: Option<u32>| {
            let mut e = HistoryEntry::new("t", "a", "create", Vec::new(), EMPTY_DOC_HASH, after);
            e.item_hash_version = version;
            e
        };
        assert_eq!(current_item_hash(&d, &[]), v2);
        assert_eq!(current_item_hash(&d, &[entry(&v2, None)]), v2);
        assert_eq!(current_item_hash(&d, &[entry(&v1, None)]), v1);
        assert_eq!(current_item_hash(&d, &[entry("other", None)]), v1);
        assert_eq!(current_item_hash(&d, &[entry("other", Some(2))]), v2);
    }
}
