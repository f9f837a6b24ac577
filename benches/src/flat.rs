//! The "flat" bench tracker: n open tasks with valid create history, for the mutation benches.

use std::io::Write;
use std::path::Path;

use pm_engine::hash::{EMPTY_DOC_HASH, HashEpoch, item_hash};
use pm_engine::history::{HistoryEntry, item_patch};
use pm_engine::init::{InitOptions, init_tracker};
use pm_engine::item::canon::{CanonSchema, canonicalize_owned};
use pm_engine::item::codec::serialize_item;
use pm_engine::item::{ItemDoc, ItemFormat};
use serde_json::json;

/// Returns the id of generated item `i` (`pm-g00042`).
pub fn generated_id(i: usize) -> String {
    format!("pm-g{i:05}")
}

/// Initializes a tracker at `root` (a `…/.agents/pm` path) holding `n` generated open tasks
/// ("flat" shape), each with its one-line `create` history, written directly (no locks, no
/// fsync) so that 10k items take seconds.
///
/// # Panics
/// When the directory cannot be written (a bench cannot run without its fixture).
pub fn generate_tracker(root: &Path, n: usize) {
    init_tracker(root, &InitOptions::default()).expect("init the bench tracker");
    let ts = "2026-09-01T00:00:00.000Z";
    for i in 0..n {
        let id = generated_id(i);
        let metadata = json!({
            "id": id, "title": format!("Generated task {i}"), "description": "Bench fixture",
            "type": "Task", "status": "open", "priority": (i % 5), "tags": [format!("area-{}", i % 17)],
            "created_at": ts, "updated_at": ts, "author": "bench",
        });
        let doc = ItemDoc {
            metadata: metadata.as_object().cloned().expect("object literal"),
            body: String::new(),
        };
        let doc = canonicalize_owned(doc, &CanonSchema::NONE);
        let bytes = serialize_item(&doc, ItemFormat::Toon).expect("serialize fixture");
        write_file(&root.join("tasks").join(format!("{id}.toon")), &bytes);
        let mut entry = HistoryEntry::new(
            ts,
            "bench",
            "create",
            item_patch(&ItemDoc::empty(), &doc),
            EMPTY_DOC_HASH,
            item_hash(&doc, HashEpoch::V2),
        );
        entry.message = Some(String::new());
        let line = format!("{}\n", entry.to_line());
        write_file(
            &root.join("history").join(format!("{id}.jsonl")),
            line.as_bytes(),
        );
    }
}

fn write_file(path: &Path, bytes: &[u8]) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create fixture dir");
    }
    let mut file = std::fs::File::create(path).expect("create fixture file");
    file.write_all(bytes).expect("write fixture file");
}
