//! The four runtime schema files (`schema/{types,statuses,fields,workflows}.json`): where they
//! live, their seed bytes, and reading them in every accepted shape. Reads never write.

use super::status::builtin_status_sources;
use super::workflow::Workflow;
use crate::error::{IoResultExt, Result};
use crate::json::to_pretty;
use crate::notice::Notice;
use serde_json::{Map, Value, json};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// One of the four schema files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SchemaSection {
    /// `schema/types.json`.
    Types,
    /// `schema/statuses.json`.
    Statuses,
    /// `schema/fields.json`.
    Fields,
    /// `schema/workflows.json`.
    Workflows,
}

impl SchemaSection {
    /// The sections in pm's order (the order `pm init` seeds them).
    pub const ALL: [SchemaSection; 4] = [
        SchemaSection::Types,
        SchemaSection::Statuses,
        SchemaSection::Fields,
        SchemaSection::Workflows,
    ];

    /// Returns the section name (`types`, …), which is also its `settings.schema.files` key.
    pub fn as_str(self) -> &'static str {
        match self {
            SchemaSection::Types => "types",
            SchemaSection::Statuses => "statuses",
            SchemaSection::Fields => "fields",
            SchemaSection::Workflows => "workflows",
        }
    }

    /// Returns the default tracker-relative path (`schema/types.json`, …).
    pub fn default_path(self) -> &'static str {
        match self {
            SchemaSection::Types => "schema/types.json",
            SchemaSection::Statuses => "schema/statuses.json",
            SchemaSection::Fields => "schema/fields.json",
            SchemaSection::Workflows => "schema/workflows.json",
        }
    }

    /// Returns the seed document pm writes for a missing file.
    pub fn seed(self) -> Value {
        match self {
            SchemaSection::Types => json!({"definitions": []}),
            SchemaSection::Statuses => json!({"statuses": builtin_status_sources()}),
            SchemaSection::Fields => json!({"fields": []}),
            SchemaSection::Workflows => json!({"workflow": Workflow::builtin_json()}),
        }
    }

    /// Returns the exact seed file bytes (pretty JSON plus `\n`).
    pub fn seed_text(self) -> String {
        let mut text = to_pretty(&self.seed());
        text.push('\n');
        text
    }
}

/// Returns the file of `section`: the configured `settings.schema.files.<section>` path
/// (tracker-relative or absolute), or the default when it is unset or blank.
pub fn section_path(root: &Path, configured: Option<&str>, section: SchemaSection) -> PathBuf {
    let configured = configured
        .map(super::token::js_trim)
        .filter(|s| !s.is_empty());
    let relative = configured.unwrap_or(section.default_path());
    let path = Path::new(relative);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        root.join(path)
    }
}

/// What one schema file contributed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SectionContent {
    /// The entries (types, statuses or fields) in file order; empty when absent or broken.
    pub entries: Vec<Value>,
    /// For `workflows.json`: the lifecycle block, when the file has one.
    pub workflow: Option<Map<String, Value>>,
    /// For `workflows.json`: the raw `type_workflows` entries.
    pub type_workflows: Vec<Value>,
    /// Whether the file exists.
    pub present: bool,
}

/// Reads one schema file. A missing file contributes nothing (pm would re-seed it; we never
/// write on reads). Invalid JSON and unknown shapes contribute nothing and add the notice
/// `runtime_schema_<section>_invalid_json` or `…_invalid_shape`.
///
/// # Errors
/// `Error::Io` when the file exists but cannot be read.
pub fn read_section(
    path: &Path,
    section: SchemaSection,
    notices: &mut Vec<Notice>,
) -> Result<SectionContent> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(SectionContent::default()),
        Err(err) => return Err(err).at(path),
    };
    let mut content = SectionContent {
        present: true,
        ..SectionContent::default()
    };
    let parsed: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(err) => {
            notices.push(Notice::new(
                format!("runtime_schema_{}_invalid_json", section.as_str()),
                format!("{} is not valid JSON ({err}); ignored", path.display()),
            ));
            return Ok(content);
        }
    };
    let shape_ok = match section {
        SchemaSection::Workflows => match parsed.as_object() {
            Some(obj) => {
                content.workflow = Some(workflow_block(obj));
                if let Some(Value::Array(items)) = obj.get("type_workflows") {
                    content.type_workflows = items.clone();
                }
                true
            }
            None => false,
        },
        _ => match entries_of(&parsed, section) {
            Some(entries) => {
                content.entries = entries;
                true
            }
            None => false,
        },
    };
    if !shape_ok {
        notices.push(Notice::new(
            format!("runtime_schema_{}_invalid_shape", section.as_str()),
            format!(
                "{} does not have a known {} shape; ignored",
                path.display(),
                section.as_str()
            ),
        ));
    }
    Ok(content)
}

/// Returns the entries of a types/statuses/fields document in any accepted shape: a bare array,
/// `{definitions}`, and per section `{item_types: {definitions}}`, `{statuses}`, `{fields}`.
fn entries_of(parsed: &Value, section: SchemaSection) -> Option<Vec<Value>> {
    if let Value::Array(items) = parsed {
        return Some(items.clone());
    }
    let obj = parsed.as_object()?;
    let array = |v: Option<&Value>| v.and_then(Value::as_array).cloned();
    match section {
        SchemaSection::Types => array(obj.get("definitions")).or_else(|| {
            array(
                obj.get("item_types")
                    .and_then(|t| t.as_object())
                    .and_then(|t| t.get("definitions")),
            )
        }),
        SchemaSection::Statuses => {
            array(obj.get("statuses")).or_else(|| array(obj.get("definitions")))
        }
        SchemaSection::Fields => array(obj.get("fields")).or_else(|| array(obj.get("definitions"))),
        SchemaSection::Workflows => None,
    }
}

/// Returns the lifecycle block of a workflows document: `workflow`, else `workflows`, else the
/// document itself.
fn workflow_block(obj: &Map<String, Value>) -> Map<String, Value> {
    for key in ["workflow", "workflows"] {
        if let Some(Value::Object(block)) = obj.get(key) {
            return block.clone();
        }
    }
    obj.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_match_pm_bytes() {
        assert_eq!(
            SchemaSection::Types.seed_text(),
            "{\n  \"definitions\": []\n}\n"
        );
        assert_eq!(
            SchemaSection::Fields.seed_text(),
            "{\n  \"fields\": []\n}\n"
        );
        assert!(
            SchemaSection::Statuses
                .seed_text()
                .contains("\"in-progress\"")
        );
    }

    #[test]
    fn configured_paths_resolve() {
        let root = Path::new("/t/.agents/pm");
        assert_eq!(
            section_path(root, None, SchemaSection::Fields),
            PathBuf::from("/t/.agents/pm/schema/fields.json")
        );
        assert_eq!(
            section_path(root, Some("  "), SchemaSection::Types),
            PathBuf::from("/t/.agents/pm/schema/types.json")
        );
        assert_eq!(
            section_path(root, Some("/abs/t.json"), SchemaSection::Types),
            PathBuf::from("/abs/t.json")
        );
        assert_eq!(
            section_path(root, Some("custom/s.json"), SchemaSection::Statuses),
            PathBuf::from("/t/.agents/pm/custom/s.json")
        );
    }

    #[test]
    fn shapes_and_broken_files() -> std::result::Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let mut notices = Vec::new();
        let write =
            |name: &str, text: &str| crate::atomic::write(&dir.path().join(name), text.as_bytes());
        write("a.json", "[{\"id\":\"x\"}]")?;
        write("b.json", "{\"definitions\":[{\"id\":\"y\"}]}")?;
        write("c.json", "{oops")?;
        write("d.json", "{\"nothing\":1}")?;
        write(
            "e.json",
            "{\"workflows\":{\"close_status\":\"done\"},\"type_workflows\":[1]}",
        )?;
        let read = |name: &str, s: SchemaSection, n: &mut Vec<Notice>| {
            read_section(&dir.path().join(name), s, n)
        };
        assert_eq!(
            read("a.json", SchemaSection::Statuses, &mut notices)?
                .entries
                .len(),
            1
        );
        assert_eq!(
            read("b.json", SchemaSection::Statuses, &mut notices)?
                .entries
                .len(),
            1
        );
        assert!(
            read("c.json", SchemaSection::Fields, &mut notices)?
                .entries
                .is_empty()
        );
        assert!(
            read("d.json", SchemaSection::Types, &mut notices)?
                .entries
                .is_empty()
        );
        let wf = read("e.json", SchemaSection::Workflows, &mut notices)?;
        assert_eq!(
            wf.workflow.and_then(|w| w.get("close_status").cloned()),
            Some(json!("done"))
        );
        assert_eq!(wf.type_workflows.len(), 1);
        assert!(!read("missing.json", SchemaSection::Types, &mut notices)?.present);
        let codes: Vec<_> = notices.iter().map(|n| n.code.as_str()).collect();
        assert_eq!(
            codes,
            [
                "runtime_schema_fields_invalid_json",
                "runtime_schema_types_invalid_shape"
            ]
        );
        Ok(())
    }
}
