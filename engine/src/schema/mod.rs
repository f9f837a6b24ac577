//! The runtime schema: statuses, item types, custom fields, workflows and the
//! unknown-field policy, built from settings plus the four `schema/*.json` files, and [`load`],
//! the one entry point that reads a tracker's settings and schema together (read-only).

mod fields;
mod files;
mod status;
pub mod token;
mod types;
mod workflow;

pub use fields::{
    FIELD_COMMANDS, FieldDefinition, FieldRegistry, FieldType, UnknownFieldPolicy, field_to_json,
    normalize_cli_token,
};
pub use files::{SchemaSection, SectionContent, read_section, section_path};
pub use status::{
    StatusDefinition, StatusRegistry, StatusRole, builtin_status_sources,
    canonical_status_without_registry, normalize_status_definitions,
};
pub use types::{
    BUILTIN_TYPES, CommandOptionPolicy, DEFAULT_REQUIRED_CREATE_FIELDS,
    DEFAULT_REQUIRED_CREATE_REPEATABLES, TypeDefinition, TypeOption, TypeRegistry, default_folder,
    normalize_folder,
};
pub use workflow::{
    TypeWorkflow, WORKFLOW_KEYS, Workflow, normalize_type_workflows, transition_allowed,
};

use crate::error::Result;
use crate::notice::Notice;
use crate::settings::{Settings, SettingsEnv};
use crate::tracker::Tracker;
use serde_json::{Map, Value};
use std::path::Path;

/// The resolved runtime schema of a tracker.
#[derive(Clone, Debug)]
pub struct RuntimeSchema {
    /// Statuses, aliases, roles and lifecycle statuses.
    pub statuses: StatusRegistry,
    /// Item types and their folders.
    pub types: TypeRegistry,
    /// Custom fields.
    pub fields: FieldRegistry,
    /// Per-type allowed transitions.
    pub type_workflows: Vec<TypeWorkflow>,
    /// How reads treat unknown item keys.
    pub unknown_field_policy: UnknownFieldPolicy,
}

impl RuntimeSchema {
    /// Returns the schema of a tracker with default settings and no schema files.
    pub fn builtin() -> RuntimeSchema {
        RuntimeSchema::from_parts(
            &Settings::defaults(),
            &SchemaFiles::default(),
            &mut Vec::new(),
        )
    }

    /// Builds the schema from settings and the schema files under `root`; see [`load`].
    ///
    /// # Errors
    /// `Error::Io` when a schema file exists but cannot be read.
    pub fn read(
        settings: &Settings,
        root: &Path,
        notices: &mut Vec<Notice>,
    ) -> Result<RuntimeSchema> {
        let mut files = SchemaFiles::default();
        for section in SchemaSection::ALL {
            let path = section_path(root, settings.schema_file(section), section);
            let content = read_section(&path, section, notices)?;
            match section {
                SchemaSection::Types => files.types = content,
                SchemaSection::Statuses => files.statuses = content,
                SchemaSection::Fields => files.fields = content,
                SchemaSection::Workflows => files.workflows = content,
            }
        }
        Ok(RuntimeSchema::from_parts(settings, &files, notices))
    }

    fn from_parts(
        settings: &Settings,
        files: &SchemaFiles,
        notices: &mut Vec<Notice>,
    ) -> RuntimeSchema {
        let empty = Map::new();
        let block = settings.schema_block().unwrap_or(&empty);
        let array = |key: &str| {
            block
                .get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };

        // Settings statuses (or the built-ins) are normalized first, so their `order` is their
        // index there; file entries follow and fall back to their index in the combined list.
        let settings_statuses = match block.get("statuses") {
            Some(Value::Array(items)) if !items.is_empty() => items.clone(),
            _ => builtin_status_sources(),
        };
        let mut status_sources: Vec<Value> = normalize_status_definitions(&settings_statuses)
            .iter()
            .map(StatusDefinition::to_json)
            .collect();
        status_sources.extend(files.statuses.entries.iter().cloned());

        // A settings `schema` block without `workflow` leaves every workflow key unset (pm spreads
        // the normalized, all-undefined block over its defaults); the file block overlays it.
        let mut workflow = match block.get("workflow") {
            Some(Value::Object(wf)) => Workflow::from_settings_block(wf),
            _ => Workflow::default(),
        };
        if let Some(file_block) = &files.workflows.workflow {
            workflow.overlay(file_block);
        }

        let mut field_sources = array("fields");
        field_sources.extend(files.fields.entries.iter().cloned());
        let mut type_workflow_sources = array("type_workflows");
        type_workflow_sources.extend(files.workflows.type_workflows.iter().cloned());

        RuntimeSchema {
            statuses: StatusRegistry::new(normalize_status_definitions(&status_sources), workflow),
            types: TypeRegistry::from_sources(
                settings.item_type_definitions(),
                &files.types.entries,
                notices,
            ),
            fields: FieldRegistry::from_sources(&field_sources),
            type_workflows: normalize_type_workflows(&type_workflow_sources),
            unknown_field_policy: block
                .get("unknown_field_policy")
                .and_then(Value::as_str)
                .map_or(UnknownFieldPolicy::Allow, UnknownFieldPolicy::parse),
        }
    }
}

/// The contents of the four schema files.
#[derive(Clone, Debug, Default)]
struct SchemaFiles {
    types: SectionContent,
    statuses: SectionContent,
    fields: SectionContent,
    workflows: SectionContent,
}

/// A tracker's settings and runtime schema, with every notice produced while reading them.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The settings.
    pub settings: Settings,
    /// The runtime schema.
    pub schema: RuntimeSchema,
    /// Warnings in the order they arose (settings first, then schema files).
    pub notices: Vec<Notice>,
}

/// Reads a tracker's settings.json and schema files (pm's settings read, minus its writes): a
/// missing schema file contributes nothing instead of being re-seeded, broken ones are ignored
/// with `runtime_schema_<section>_invalid_json`/`_invalid_shape` notices.
///
/// # Errors
/// `Error::Io` when settings.json or a schema file exists but cannot be read.
pub fn load(tracker: &Tracker, env: &SettingsEnv) -> Result<Loaded> {
    let (settings, mut notices) = Settings::read(tracker.root(), env)?;
    let schema = RuntimeSchema::read(&settings, tracker.root(), &mut notices)?;
    Ok(Loaded {
        settings,
        schema,
        notices,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builtin_schema_resolves_defaults() {
        let schema = RuntimeSchema::builtin();
        assert_eq!(schema.statuses.definitions().len(), 6);
        assert_eq!(schema.statuses.open_status(), "open");
        assert_eq!(schema.types.definitions().len(), 11);
        assert!(schema.fields.definitions().is_empty());
        assert_eq!(schema.unknown_field_policy, UnknownFieldPolicy::Allow);
    }

    #[test]
    fn schema_files_merge_with_settings() -> std::result::Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let root = dir.path();
        let write = |rel: &str, v: Value| {
            crate::atomic::write(&root.join(rel), crate::json::to_pretty(&v).as_bytes())
        };
        write(
            "schema/statuses.json",
            json!({"statuses": [{"id": "review", "roles": ["active"]}, {"id": "open", "aliases": ["new"]}]}),
        )?;
        write(
            "schema/types.json",
            json!([{"name": "Story", "folder": "stories"}]),
        )?;
        write("schema/fields.json", json!({"fields": [{"key": "risk"}]}))?;
        write(
            "schema/workflows.json",
            json!({"workflow": {"close_status": "done"}, "type_workflows": [{"type": "Task", "allowed_transitions": []}]}),
        )?;
        let doc = json!({
            "version": 1, "id_prefix": "pm-", "author_default": "",
            "locks": {"ttl_seconds": 1800}, "output": {"default_format": "toon"},
            "extensions": {"enabled": [], "disabled": []},
            "search": {"score_threshold": 0, "max_results": 50, "embedding_model": "", "embedding_batch_size": 32, "scanner_max_batch_retries": 3},
            "providers": {"openai": {"base_url": "", "api_key": "", "model": ""}, "ollama": {"base_url": "", "model": ""}},
            "vector_store": {"qdrant": {"url": "", "api_key": ""}, "lancedb": {"path": ""}},
            "schema": {"fields": [{"key": "effort", "type": "number"}], "unknown_field_policy": "warn"}
        });
        write("settings.json", doc)?;
        let loaded = load(&Tracker::at(root), &SettingsEnv::default())?;
        assert!(loaded.notices.is_empty(), "{:?}", loaded.notices);
        let schema = &loaded.schema;
        let ids: Vec<_> = schema
            .statuses
            .definitions()
            .iter()
            .map(|d| d.id.as_str())
            .collect();
        assert_eq!(
            ids,
            [
                "draft",
                "in_progress",
                "blocked",
                "closed",
                "canceled",
                "review",
                "open"
            ]
        );
        assert_eq!(schema.statuses.resolve("new"), Some("open"));
        // The settings block has no workflow, so only the file's close_status is configured.
        assert_eq!(schema.statuses.workflow().open_status, None);
        assert_eq!(schema.statuses.open_status(), "open");
        assert_eq!(schema.statuses.close_status(), "done");
        assert_eq!(
            schema.types.resolve("story").map(|d| d.folder.as_str()),
            Some("stories")
        );
        let keys: Vec<_> = schema
            .fields
            .definitions()
            .iter()
            .map(|d| d.key.as_str())
            .collect();
        assert_eq!(keys, ["effort", "risk"]);
        assert_eq!(schema.type_workflows.len(), 1);
        assert_eq!(schema.unknown_field_policy, UnknownFieldPolicy::Warn);
        Ok(())
    }

    #[test]
    fn broken_schema_files_are_ignored_with_notices()
    -> std::result::Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        crate::atomic::write(&dir.path().join("schema/statuses.json"), b"{")?;
        crate::atomic::write(&dir.path().join("schema/types.json"), b"\"x\"")?;
        let loaded = load(&Tracker::at(dir.path()), &SettingsEnv::default())?;
        let codes: Vec<_> = loaded.notices.iter().map(|n| n.code.as_str()).collect();
        assert_eq!(
            codes,
            [
                "runtime_schema_types_invalid_shape",
                "runtime_schema_statuses_invalid_json"
            ]
        );
        assert_eq!(loaded.schema.statuses.definitions().len(), 6);
        assert!(
            !dir.path().join("schema/fields.json").exists(),
            "reads never seed files"
        );
        Ok(())
    }
}
