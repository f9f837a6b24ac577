//! A tracker opened for reading: its settings and runtime schema, id lookup, schema-aware item
//! parsing, and the parallel scan of every item file. Owns no state beyond what it read.

use std::path::Path;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::history::{StreamRead, read_stream};
use crate::ids::{is_valid_id, normalize_id_input};
use crate::item::ItemDoc;
use crate::item::canon::CanonSchema;
use crate::item::codec::parse_item;
use crate::notice::Notice;
use crate::schema::{self, Loaded, RuntimeSchema};
use crate::settings::{Settings, SettingsEnv};
use crate::tracker::{ItemFileRef, ItemFiles, Tracker};

/// Where the children rollup of `pm get` finds a container's direct children: by default a
/// scan of every item file; a reader with a projection supplies a cheaper source.
pub trait ChildSource: Send + Sync + std::fmt::Debug {
    /// Returns every readable item whose trimmed, lowercased `parent` equals `parent_key`
    /// (metadata is enough: `id`, `title`, `type`, `status`, `priority`, `parent`), and the
    /// number of readable items inspected.
    ///
    /// # Errors
    /// Read failures.
    fn children(&self, parent_key: &str) -> Result<(Vec<ItemDoc>, usize)>;
}

/// An initialized tracker with its settings and runtime schema loaded.
#[derive(Clone, Debug)]
pub struct TrackerView {
    tracker: Tracker,
    loaded: Loaded,
    children: Option<std::sync::Arc<dyn ChildSource>>,
}

/// One item file of a scan and the result of parsing it.
#[derive(Debug)]
pub struct ScannedItem {
    /// The file.
    pub file: ItemFileRef,
    /// The parsed, schema-canonicalized document, or why it could not be read.
    pub doc: Result<ItemDoc>,
}

impl TrackerView {
    /// Loads the settings and runtime schema of `tracker`.
    ///
    /// # Errors
    /// `io_error` when settings.json or a schema file exists but cannot be read.
    pub fn open(tracker: Tracker, env: &SettingsEnv) -> Result<TrackerView> {
        let loaded = schema::load(&tracker, env)?;
        Ok(TrackerView {
            tracker,
            loaded,
            children: None,
        })
    }

    /// Uses `source` for children rollups instead of scanning every item file.
    pub fn with_child_source(mut self, source: std::sync::Arc<dyn ChildSource>) -> TrackerView {
        self.children = Some(source);
        self
    }

    /// Returns the children source, if one was set.
    pub fn child_source(&self) -> Option<&dyn ChildSource> {
        self.children.as_deref()
    }

    /// Returns the tracker.
    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// Returns the settings.
    pub fn settings(&self) -> &Settings {
        &self.loaded.settings
    }

    /// Returns the runtime schema.
    pub fn schema(&self) -> &RuntimeSchema {
        &self.loaded.schema
    }

    /// Returns the notices raised while reading settings and schema files.
    pub fn notices(&self) -> &[Notice] {
        &self.loaded.notices
    }

    /// Returns the schema input of item parsing (the runtime schema, no extension fields).
    pub fn canon_schema(&self) -> CanonSchema<'_> {
        CanonSchema::from_runtime(&self.loaded.schema)
    }

    /// Finds the item file of an id argument (prefix added when missing).
    ///
    /// # Errors
    /// `invalid_item_id`, `duplicate_item_id` or `item_not_found` (see
    /// [`Tracker::locate_item`]).
    pub fn locate(&self, raw_id: &str) -> Result<ItemFileRef> {
        self.tracker.locate_item(
            raw_id,
            &self.loaded.settings.id_prefix(),
            &self.loaded.schema.types,
        )
    }

    /// Returns the id of an existing history stream for an id argument whose item file is gone
    /// (a deleted item), trying the same candidates as [`TrackerView::locate`].
    pub fn stream_id_without_file(&self, raw_id: &str) -> Option<String> {
        normalize_id_input(raw_id, &self.loaded.settings.id_prefix())
            .into_iter()
            .filter(|id| is_valid_id(id))
            .find(|id| self.tracker.history_path(id).is_file())
    }

    /// Reads and parses an item file with the runtime schema (pm's `readLocatedItem`).
    ///
    /// # Errors
    /// `io_error` when the file cannot be read; the parse errors of [`parse_item`].
    pub fn load(&self, file: &ItemFileRef) -> Result<ItemDoc> {
        let bytes = crate::confine::leaf::read_existing(&file.path)?;
        parse_item(&bytes, file.format, &file.path, &self.canon_schema())
    }

    /// Reads the history stream of `id` (absent file: empty stream).
    ///
    /// # Errors
    /// As [`read_stream`]: unreadable file, conflict markers, or an invalid line before the last.
    pub fn stream(&self, id: &str) -> Result<StreamRead> {
        read_stream(&self.tracker.history_path(id), id)
    }

    /// Lists every item file of the registered type folders.
    ///
    /// # Errors
    /// `io_error` when an entry of a readable folder cannot be inspected.
    pub fn item_files(&self) -> Result<ItemFiles> {
        self.tracker.item_files(&self.loaded.schema.types)
    }

    /// Reads and parses every item file in parallel, in listing order. Files that fail to parse
    /// are returned with their error; the scan itself only fails when listing fails.
    ///
    /// # Errors
    /// As [`TrackerView::item_files`].
    pub fn scan(&self) -> Result<Vec<ScannedItem>> {
        let files = self.item_files()?.files;
        Ok(files
            .into_par_iter()
            .map(|file| {
                let doc = self.load(&file);
                ScannedItem { file, doc }
            })
            .collect())
    }

    /// Returns `path` relative to the tracker root, with `/` separators (for reports).
    pub fn relative(&self, path: &Path) -> String {
        let rel = path.strip_prefix(self.tracker.root()).unwrap_or(path);
        rel.components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Returns the `item_not_found` error of an id argument.
    pub fn not_found(&self, raw_id: &str) -> Error {
        let id = normalize_id_input(raw_id, &self.loaded.settings.id_prefix())
            .into_iter()
            .next()
            .unwrap_or_else(|| raw_id.to_string());
        Error::ItemNotFound { id }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::SettingsEnv;

    #[test]
    fn locates_loads_and_scans_a_fresh_tracker()
    -> std::result::Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().join(".agents/pm");
        crate::init::init_tracker(&root, &crate::init::InitOptions::default())?;
        let item = "id: pm-a1\ntitle: One\ndescription: \"\"\ntype: Task\nstatus: open\npriority: 2\ntags[0]:\n\
                    created_at: \"2026-01-01T00:00:00.000Z\"\n\
                    updated_at: \"2026-01-01T00:00:00.000Z\"\nbody: \"\"\n";
        crate::atomic::write(&root.join("tasks/pm-a1.toon"), item.as_bytes())?;
        crate::atomic::write(&root.join("tasks/pm-bad.toon"), b"not: [toon\n")?;
        let view = TrackerView::open(Tracker::at(&root), &SettingsEnv::default())?;
        let file = view.locate("a1")?;
        assert_eq!(file.stem, "pm-a1");
        assert_eq!(view.load(&file)?.str_field("title"), Some("One"));
        assert_eq!(view.relative(&file.path), "tasks/pm-a1.toon");
        assert!(matches!(
            view.locate("pm-zz"),
            Err(Error::ItemNotFound { .. })
        ));
        let scan = view.scan()?;
        assert_eq!(scan.len(), 2);
        assert_eq!(scan.iter().filter(|s| s.doc.is_ok()).count(), 1);
        assert_eq!(view.stream_id_without_file("pm-a1"), None);
        crate::atomic::write(&root.join("history/pm-gone.jsonl"), b"")?;
        assert_eq!(
            view.stream_id_without_file("gone").as_deref(),
            Some("pm-gone")
        );
        Ok(())
    }
}
