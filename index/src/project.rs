//! Reading one source file into what the projection stores: stat first (so a concurrent write
//! is caught by the next freshness check), then read, hash and parse with the engine's parser
//! and `ItemSummary::from_item`. Used by the full build and by incremental applies alike.

use crate::events::{self, StreamProjection};
use crate::folder_handles::FolderHandles;
use crate::fresh::digest::content_id;
use crate::fresh::source::{Sig, SourceFile, SourceKind};
use pm_engine::item::ItemDoc;
use pm_engine::item::canon::CanonSchema;
use pm_engine::item::codec::parse_item;
use pm_engine::json::{is_array_index, to_compact, write_string};
use pm_engine::query::tag_key;
use pm_engine::rank::item::{light_has_schedule, light_order};
use pm_engine::rank::search::SearchText;
use pm_engine::scan::{UnreadableFile, unreadable};
use pm_engine::schema::RuntimeSchema;
use pm_engine::summary::{ItemSummary, SplitItem, field_match_values};
use pm_engine::{Error, IoResultExt};
use serde_json::{Map, Value};

/// A linked file or doc (`files[]`, `docs[]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkRow {
    /// `path`.
    pub path: String,
    /// `scope`.
    pub scope: String,
    /// `note`.
    pub note: Option<String>,
}

/// Everything stored for one readable item file.
#[derive(Clone, Debug)]
pub struct ItemRecord {
    /// The summary's typed columns. Its `light` map is left empty: `light_json` holds it, and
    /// freeing it where it was built spares the single writer thread.
    pub summary: ItemSummary,
    /// The body.
    pub body: String,
    /// The heavy collections as compact JSON, when any is present.
    pub heavy: Option<String>,
    /// `files[]`.
    pub files: Vec<LinkRow>,
    /// `docs[]`.
    pub docs: Vec<LinkRow>,
    /// The summary's light metadata as compact JSON (`items.light_json`), serialized by the
    /// parallel parsers rather than the single writer.
    pub light_json: String,
    /// `order` of the light metadata (`items.rank_order`, [`light_order`]).
    pub rank_order: Option<f64>,
    /// The light metadata has a schedule array (`items.has_schedule`, [`light_has_schedule`]).
    pub has_schedule: bool,
    /// The searchable text of `pm search`, encoded as `item_text` stores it.
    pub search: Vec<u8>,
    /// The lowercased tag keys (`item_tags`), one per tag.
    pub tag_keys: Vec<String>,
    /// The compact JSON match values of each custom field (`item_fields`), by key.
    pub field_values: Vec<(String, Vec<String>)>,
}

/// What a source file projects to.
#[derive(Clone, Debug)]
pub enum Projection {
    /// A readable item.
    Item(Box<ItemRecord>),
    /// An item file that cannot be read or parsed.
    Unreadable(UnreadableFile),
    /// A history stream.
    History(StreamProjection),
    /// The file disappeared before it could be read.
    Vanished,
}

/// A source file, its signature and content hash at read time, and its projection.
#[derive(Clone, Debug)]
pub struct Projected {
    /// The file.
    pub file: SourceFile,
    /// The signature stat'ed before reading.
    pub sig: Sig,
    /// Hash of the bytes read.
    pub content_hash: u64,
    /// The file changed too recently for its signature to be trusted alone (see docs/index.md,
    /// "racily clean"): reads re-hash it until a later write clears the flag.
    pub racy: bool,
    /// What it holds.
    pub projection: Projection,
}

/// What projecting needs besides the file.
pub struct ProjectContext<'a> {
    /// The runtime schema.
    pub schema: &'a RuntimeSchema,
    /// The canonicalization schema derived from it.
    pub canon: CanonSchema<'a>,
    /// Files whose ctime is at or after this (file-system clock, ns) are racy.
    pub racy_from_ns: i64,
    /// Handles of the source folders, when the caller opened them.
    pub folders: FolderHandles,
}

impl<'a> ProjectContext<'a> {
    /// Returns the context for `schema`, treating files changed at or after `racy_from_ns` as
    /// racily clean.
    pub fn new(schema: &'a RuntimeSchema, racy_from_ns: i64) -> ProjectContext<'a> {
        ProjectContext {
            schema,
            canon: CanonSchema::from_runtime(schema),
            racy_from_ns,
            folders: FolderHandles::default(),
        }
    }

    /// Opens files through `folders` (a full build reads every file of a few folders).
    #[must_use]
    pub fn with_folders(self, folders: FolderHandles) -> ProjectContext<'a> {
        ProjectContext { folders, ..self }
    }
}

/// Projects one source file from scratch.
pub fn project(file: SourceFile, ctx: &ProjectContext<'_>) -> Projected {
    let vanished = |file: SourceFile| Projected {
        file,
        sig: Sig {
            size: 0,
            mtime_ns: 0,
            ctime_ns: 0,
            inode: 0,
        },
        content_hash: 0,
        racy: false,
        projection: Projection::Vanished,
    };
    // One open, then the signature from the open file and a read sized by it: the signature
    // still precedes the read, so a concurrent write is caught by the next freshness check.
    let mut handle = match ctx.folders.open_file(&file) {
        Ok(handle) => handle,
        // A symlinked item file is listed by the scan as unreadable (`path_unsafe`): so here.
        Err(err @ Error::PathUnsafe { .. }) if file.item.is_some() => {
            let Ok(meta) = std::fs::symlink_metadata(&file.abs) else {
                return vanished(file);
            };
            // Keyed by the link's own status, as the sweep keys it.
            let sig = Sig::of(&meta);
            let projection = file.item.as_ref().map_or(Projection::Vanished, |item| {
                Projection::Unreadable(unreadable(item, &err))
            });
            return Projected {
                racy: sig.ctime_ns >= ctx.racy_from_ns,
                content_hash: crate::fresh::digest::content_hash(&file.abs).unwrap_or(0),
                file,
                sig,
                projection,
            };
        }
        Err(_) => return vanished(file),
    };
    let Ok(meta) = handle.metadata() else {
        return vanished(file);
    };
    if !meta.is_file() {
        return vanished(file);
    }
    let sig = Sig::of(&meta);
    let bytes = read_sized(&mut handle, sig.size).at(&file.abs);
    drop(handle);
    let mut content_hash = None;
    let projection = match (file.kind, &file.item, bytes) {
        (SourceKind::Item, Some(item), Ok(bytes)) => {
            content_hash = Some(content_id(&bytes));
            match parse_item(&bytes, item.format, &item.path, &ctx.canon) {
                Ok(doc) => Projection::Item(Box::new(item_record(doc, item, ctx.schema))),
                Err(err) => Projection::Unreadable(unreadable(item, &err)),
            }
        }
        (SourceKind::Item, Some(item), Err(err)) => {
            if matches!(&err, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
            {
                return vanished(file);
            }
            Projection::Unreadable(unreadable(item, &err))
        }
        (SourceKind::History, _, Ok(bytes)) => {
            let stream = events::project_stream(&file, &bytes, 0, 0);
            // A stream projected whole already hashed exactly these bytes.
            content_hash = Some(if stream.projected_len == bytes.len() as u64 {
                stream.prefix_hash
            } else {
                content_id(&bytes)
            });
            Projection::History(stream)
        }
        (SourceKind::History, _, Err(_)) | (SourceKind::Item, None, _) => {
            return vanished(file);
        }
    };
    Projected {
        racy: sig.ctime_ns >= ctx.racy_from_ns,
        file,
        sig,
        content_hash: content_hash.unwrap_or(0),
        projection,
    }
}

/// Reads the first `size` bytes of an open file (fewer if it is shorter now): the bytes the
/// signature stat'ed before describes. One `read` call for a file of that size, where
/// `read_to_end` would stat the file again, ask for its position and make a last `read` to see
/// the end; a file that grew since is re-projected when the next freshness check sees its new
/// signature.
fn read_sized(file: &mut std::fs::File, size: u64) -> std::io::Result<Vec<u8>> {
    let mut buffer = vec![0; usize::try_from(size).unwrap_or(0)];
    let mut filled = 0;
    while filled < buffer.len() {
        match std::io::Read::read(file, &mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buffer.truncate(filled);
    Ok(buffer)
}

/// Builds the stored record of a parsed item (taking the document apart instead of copying it).
pub fn item_record(
    doc: ItemDoc,
    item: &pm_engine::tracker::ItemFileRef,
    schema: &RuntimeSchema,
) -> ItemRecord {
    let links = |key: &str| -> Vec<LinkRow> {
        doc.metadata
            .get(key)
            .and_then(Value::as_array)
            .map(|entries| {
                entries
                    .iter()
                    .map(|e| LinkRow {
                        path: text(e, "path"),
                        scope: text(e, "scope"),
                        note: e.get("note").and_then(Value::as_str).map(str::to_string),
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let files = links("files");
    let docs = links("docs");
    let search = crate::search::encode(&SearchText::of(&doc));
    let SplitItem {
        summary,
        heavy,
        body,
    } = ItemSummary::split_item(doc, item, schema);
    let mut summary = summary;
    let light = std::mem::take(&mut summary.light);
    ItemRecord {
        light_json: compact_object(&light),
        rank_order: light_order(&light),
        has_schedule: light_has_schedule(&light),
        tag_keys: summary.tags.iter().map(|t| tag_key(t)).collect(),
        field_values: summary
            .fields
            .iter()
            .map(|(k, v)| (k.clone(), field_match_values(v)))
            .collect(),
        summary,
        body,
        heavy: (!heavy.is_empty()).then(|| to_compact(&Value::Object(heavy))),
        files,
        docs,
        search,
    }
}

/// Returns `pm_engine::json::to_compact` of an object without copying it into a `Value` first.
/// JavaScript enumerates array-index keys before the others; without such keys the output
/// order is the insertion order, which is written directly.
fn compact_object(map: &Map<String, Value>) -> String {
    if map.keys().any(|k| is_array_index(k)) {
        return to_compact(&Value::Object(map.clone()));
    }
    let mut out = String::with_capacity(1024);
    out.push('{');
    for (i, (key, value)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(&mut out, key);
        out.push(':');
        match value {
            Value::String(text) => write_string(&mut out, text),
            other => out.push_str(&to_compact(other)),
        }
    }
    out.push('}');
    out
}

fn text(entry: &Value, key: &str) -> String {
    entry
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn compact_object_is_to_compact() {
        let cases = [
            json!({}),
            json!({"id": "pm-1", "title": "Quote \" and \\ and \u{1} and é", "priority": 2,
                   "estimate": 1.5, "big": 1e21, "none": null, "done": false,
                   "tags": ["a", "b"], "dependencies": [{"id": "pm-2", "kind": "blocks"}]}),
            // JavaScript enumerates array-index keys first, in ascending order.
            json!({"title": "x", "10": 1, "2": "two", "id": "pm-3"}),
        ];
        for case in cases {
            let map = object(case.clone());
            assert_eq!(compact_object(&map), to_compact(&case), "{case}");
        }
    }
}
