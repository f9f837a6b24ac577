//! The item-type registry: eleven built-ins overridden and extended by
//! `settings.item_types.definitions` and `schema/types.json`; names, aliases and type folders.

use super::token::{js_trim, json_strings, locale_compare, normalize_string_list};
use crate::notice::Notice;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// pm's built-in types and their folders, in declaration order.
pub const BUILTIN_TYPES: [(&str, &str); 11] = [
    ("Epic", "epics"),
    ("Feature", "features"),
    ("Task", "tasks"),
    ("Chore", "chores"),
    ("Issue", "issues"),
    ("Decision", "decisions"),
    ("Event", "events"),
    ("Reminder", "reminders"),
    ("Milestone", "milestones"),
    ("Meeting", "meetings"),
    ("Plan", "plans"),
];

/// Create options a built-in type requires the CLI to consider (pm's
/// `DEFAULT_REQUIRED_CREATE_FIELDS`).
pub const DEFAULT_REQUIRED_CREATE_FIELDS: [&str; 12] = [
    "title",
    "description",
    "status",
    "priority",
    "tags",
    "body",
    "deadline",
    "estimatedMinutes",
    "acceptanceCriteria",
    "author",
    "message",
    "assignee",
];

/// Repeatable create options of built-in types (pm's `DEFAULT_REQUIRED_CREATE_REPEATABLES`).
pub const DEFAULT_REQUIRED_CREATE_REPEATABLES: [&str; 7] =
    ["dep", "comment", "note", "learning", "file", "test", "doc"];

/// A configurable per-type option (`--type-option key=value`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeOption {
    /// Option key.
    pub key: String,
    /// Allowed values (empty: any non-empty value).
    pub values: Vec<String>,
    /// Whether create requires it.
    pub required: bool,
    /// Alternative keys.
    pub aliases: Vec<String>,
    /// Human description.
    pub description: Option<String>,
}

/// A per-type override of a create/update option's policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandOptionPolicy {
    /// `create` or `update`.
    pub command: String,
    /// The option name as written.
    pub option: String,
    /// Required override.
    pub required: Option<bool>,
    /// Visibility override.
    pub visible: Option<bool>,
    /// Enablement override.
    pub enabled: Option<bool>,
}

/// One resolved item type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeDefinition {
    /// Canonical name as stored in items (`Task`, `Story`).
    pub name: String,
    /// Folder relative to the tracker root (`tasks`, `research/records`).
    pub folder: String,
    /// Alternative names (matched case-insensitively).
    pub aliases: Vec<String>,
    /// Human description.
    pub description: Option<String>,
    /// Status applied at create time when none is given.
    pub default_status: Option<String>,
    /// Create options this type requires.
    pub required_create_fields: Vec<String>,
    /// Repeatable create options this type requires.
    pub required_create_repeatables: Vec<String>,
    /// Type options.
    pub options: Vec<TypeOption>,
    /// Option policies.
    pub command_option_policies: Vec<CommandOptionPolicy>,
}

/// A definition as written in settings or `schema/types.json`, after pm's per-entry
/// normalization; `None` fields were absent.
#[derive(Clone, Debug, PartialEq)]
struct RawDefinition {
    name: String,
    description: Option<String>,
    default_status: Option<String>,
    folder: Option<String>,
    aliases: Vec<String>,
    required_create_fields: Option<Vec<String>>,
    required_create_repeatables: Option<Vec<String>>,
    options: Option<Vec<TypeOption>>,
    command_option_policies: Option<Vec<CommandOptionPolicy>>,
}

/// The resolved type registry, sorted by name with `localeCompare` ("registry order").
#[derive(Clone, Debug)]
pub struct TypeRegistry {
    definitions: Vec<TypeDefinition>,
    alias_to_index: BTreeMap<String, usize>,
}

impl TypeRegistry {
    /// Returns the registry of the eleven built-in types.
    pub fn builtin() -> TypeRegistry {
        TypeRegistry::from_sources(&[], &[], &mut Vec::new())
    }

    /// Builds the registry: built-ins, then the settings definitions followed by the
    /// `schema/types.json` definitions. Definitions are de-duplicated by lower-cased name (the
    /// last one wins) and applied over the built-ins; a later definition sets the folder and adds
    /// aliases. Invalid folders are ignored with a `runtime_schema_type_folder_invalid` notice.
    pub fn from_sources(
        settings_definitions: &[Value],
        file_definitions: &[Value],
        notices: &mut Vec<Notice>,
    ) -> TypeRegistry {
        let mut by_lower: Vec<(String, TypeDefinition)> = BUILTIN_TYPES
            .iter()
            .map(|(name, folder)| {
                (
                    name.to_lowercase(),
                    TypeDefinition {
                        name: (*name).to_string(),
                        folder: (*folder).to_string(),
                        aliases: Vec::new(),
                        description: None,
                        default_status: None,
                        required_create_fields: to_strings(&DEFAULT_REQUIRED_CREATE_FIELDS),
                        required_create_repeatables: to_strings(
                            &DEFAULT_REQUIRED_CREATE_REPEATABLES,
                        ),
                        options: Vec::new(),
                        command_option_policies: Vec::new(),
                    },
                )
            })
            .collect();
        let raw = dedupe_definitions(
            settings_definitions
                .iter()
                .chain(file_definitions)
                .filter_map(|v| parse_definition(v, notices)),
        );
        for def in raw {
            let lower = def.name.to_lowercase();
            match by_lower.iter_mut().find(|(k, _)| *k == lower) {
                Some((_, existing)) => *existing = resolve(def, Some(existing)),
                None => by_lower.push((lower, resolve(def, None))),
            }
        }
        let mut definitions: Vec<TypeDefinition> = by_lower.into_iter().map(|(_, d)| d).collect();
        definitions.sort_by(|a, b| locale_compare(&a.name, &b.name));
        let mut alias_to_index = BTreeMap::new();
        for (index, def) in definitions.iter().enumerate() {
            alias_to_index.insert(def.name.to_lowercase(), index);
            for alias in &def.aliases {
                alias_to_index.insert(alias.to_lowercase(), index);
            }
        }
        TypeRegistry {
            definitions,
            alias_to_index,
        }
    }

    /// Returns the definitions in registry order.
    pub fn definitions(&self) -> &[TypeDefinition] {
        &self.definitions
    }

    /// Resolves a type name or alias, case-insensitively.
    pub fn resolve(&self, raw: &str) -> Option<&TypeDefinition> {
        self.alias_to_index
            .get(&js_trim(raw).to_lowercase())
            .map(|&i| &self.definitions[i])
    }

    /// Returns the folder items of `type_name` live in: the registered folder, or pm's default
    /// slug folder for an unregistered name (items may carry any non-empty type).
    pub fn folder_for(&self, type_name: &str) -> String {
        match self.resolve(type_name) {
            Some(def) => def.folder.clone(),
            None => default_folder(type_name),
        }
    }

    /// Returns each distinct folder once, with the first type (registry order) that uses it.
    pub fn folders(&self) -> Vec<(&str, &str)> {
        let mut out: Vec<(&str, &str)> = Vec::new();
        for def in &self.definitions {
            if !out.iter().any(|(folder, _)| *folder == def.folder) {
                out.push((def.folder.as_str(), def.name.as_str()));
            }
        }
        out
    }
}

/// Returns pm's default folder for a type name: the lowercase ASCII `[a-z0-9]` runs joined by
/// `-`, plus `s` unless it already ends in `s`; `items` when nothing is left.
pub fn default_folder(name: &str) -> String {
    let lowered = js_trim(name).to_lowercase();
    let mut slug = String::new();
    let mut pending_dash = false;
    for c in lowered.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            if pending_dash && !slug.is_empty() {
                slug.push('-');
            }
            slug.push(c);
            pending_dash = false;
        } else if !slug.is_empty() {
            pending_dash = true;
        }
    }
    if slug.is_empty() {
        return "items".to_string();
    }
    if !slug.ends_with('s') {
        slug.push('s');
    }
    slug
}

/// Normalizes a configured type folder: `\` becomes `/`, leading `/` are stripped, `.` and empty
/// segments are dropped and `..` is resolved. Refuses NUL, a drive prefix (`C:`), an empty
/// result and any path that would leave the tracker root.
pub fn normalize_folder(raw: &str) -> Result<String, &'static str> {
    if raw.contains('\0') {
        return Err("contains NUL");
    }
    let bytes = raw.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err("has a drive prefix");
    }
    let slashed = raw.replace('\\', "/");
    let mut segments: Vec<&str> = Vec::new();
    for segment in slashed.trim_start_matches('/').split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if segments.pop().is_none() {
                    return Err("escapes the tracker root");
                }
            }
            other => segments.push(other),
        }
    }
    if segments.is_empty() {
        return Err("is empty");
    }
    Ok(segments.join("/"))
}

fn to_strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| (*s).to_string()).collect()
}

fn optional_text(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key)
        .and_then(Value::as_str)
        .map(|s| js_trim(s).to_string())
        .filter(|s| !s.is_empty())
}

fn optional_list(obj: &Map<String, Value>, key: &str) -> Option<Vec<String>> {
    obj.get(key)
        .filter(|v| v.is_array())
        .map(|v| normalize_string_list(json_strings(Some(v))))
}

fn parse_definition(raw: &Value, notices: &mut Vec<Notice>) -> Option<RawDefinition> {
    let obj = raw.as_object()?;
    let name = js_trim(obj.get("name")?.as_str()?).to_string();
    if name.is_empty() {
        return None;
    }
    let folder = match optional_text(obj, "folder") {
        None => None,
        Some(folder) => match normalize_folder(&folder) {
            Ok(normalized) => Some(normalized),
            Err(reason) => {
                notices.push(Notice::new(
                    "runtime_schema_type_folder_invalid",
                    format!("type {name}: folder {folder:?} {reason}; using the default folder"),
                ));
                None
            }
        },
    };
    let options = obj.get("options").and_then(Value::as_array).map(|items| {
        let mut options: Vec<TypeOption> = items.iter().filter_map(parse_option).collect();
        options.sort_by(|a, b| locale_compare(&a.key, &b.key));
        options
    });
    let command_option_policies = obj
        .get("command_option_policies")
        .and_then(Value::as_array)
        .map(|items| parse_policies(items));
    Some(RawDefinition {
        name,
        description: optional_text(obj, "description"),
        default_status: optional_text(obj, "default_status"),
        folder,
        aliases: normalize_string_list(json_strings(obj.get("aliases"))),
        required_create_fields: optional_list(obj, "required_create_fields"),
        required_create_repeatables: optional_list(obj, "required_create_repeatables"),
        options,
        command_option_policies,
    })
}

fn parse_option(raw: &Value) -> Option<TypeOption> {
    let obj = raw.as_object()?;
    let key = js_trim(obj.get("key")?.as_str()?).to_string();
    if key.is_empty() {
        return None;
    }
    Some(TypeOption {
        key,
        values: normalize_string_list(json_strings(obj.get("values"))),
        required: obj.get("required").is_some_and(truthy),
        aliases: normalize_string_list(json_strings(obj.get("aliases"))),
        description: optional_text(obj, "description"),
    })
}

fn parse_policies(items: &[Value]) -> Vec<CommandOptionPolicy> {
    let mut out: Vec<CommandOptionPolicy> = Vec::new();
    for raw in items {
        let Some(obj) = raw.as_object() else { continue };
        let (Some(command), Some(option)) = (
            obj.get("command").and_then(Value::as_str),
            obj.get("option").and_then(Value::as_str),
        ) else {
            continue;
        };
        let command = js_trim(command).to_lowercase();
        let option = js_trim(option).to_string();
        if (command != "create" && command != "update") || option.is_empty() {
            continue;
        }
        let flag = |k: &str| obj.get(k).filter(|v| !v.is_null()).map(truthy);
        let policy = CommandOptionPolicy {
            required: flag("required"),
            visible: flag("visible"),
            enabled: flag("enabled"),
            command,
            option,
        };
        let key = |p: &CommandOptionPolicy| format!("{}:{}", p.command, p.option.to_lowercase());
        match out.iter_mut().find(|p| key(p) == key(&policy)) {
            Some(slot) => *slot = policy,
            None => out.push(policy),
        }
    }
    out.sort_by(|a, b| {
        locale_compare(&a.command, &b.command).then_with(|| locale_compare(&a.option, &b.option))
    });
    out
}

/// JavaScript truthiness of a JSON value (`Boolean(x)`).
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

fn dedupe_definitions(defs: impl Iterator<Item = RawDefinition>) -> Vec<RawDefinition> {
    let mut out: Vec<RawDefinition> = Vec::new();
    for def in defs {
        let lower = def.name.to_lowercase();
        match out.iter_mut().find(|d| d.name.to_lowercase() == lower) {
            Some(slot) => *slot = def,
            None => out.push(def),
        }
    }
    out.sort_by(|a, b| locale_compare(&a.name, &b.name));
    out
}

fn resolve(def: RawDefinition, existing: Option<&TypeDefinition>) -> TypeDefinition {
    let name = existing.map_or_else(|| def.name.clone(), |e| e.name.clone());
    let folder = def
        .folder
        .or_else(|| existing.map(|e| e.folder.clone()))
        .unwrap_or_else(|| default_folder(&name));
    let mut aliases: Vec<&str> =
        existing.map_or_else(Vec::new, |e| e.aliases.iter().map(String::as_str).collect());
    aliases.extend(def.aliases.iter().map(String::as_str));
    TypeDefinition {
        aliases: normalize_string_list(aliases),
        description: def
            .description
            .or_else(|| existing.and_then(|e| e.description.clone())),
        default_status: def
            .default_status
            .or_else(|| existing.and_then(|e| e.default_status.clone())),
        required_create_fields: def.required_create_fields.unwrap_or_else(|| {
            existing.map_or_else(Vec::new, |e| e.required_create_fields.clone())
        }),
        required_create_repeatables: def.required_create_repeatables.unwrap_or_else(|| {
            existing.map_or_else(Vec::new, |e| e.required_create_repeatables.clone())
        }),
        options: def
            .options
            .unwrap_or_else(|| existing.map_or_else(Vec::new, |e| e.options.clone())),
        command_option_policies: def.command_option_policies.unwrap_or_else(|| {
            existing.map_or_else(Vec::new, |e| e.command_option_policies.clone())
        }),
        name,
        folder,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builtins_in_registry_order() {
        let reg = TypeRegistry::builtin();
        let names: Vec<_> = reg.definitions().iter().map(|d| d.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "Chore",
                "Decision",
                "Epic",
                "Event",
                "Feature",
                "Issue",
                "Meeting",
                "Milestone",
                "Plan",
                "Reminder",
                "Task"
            ]
        );
        assert_eq!(
            reg.resolve(" task ").map(|d| d.folder.as_str()),
            Some("tasks")
        );
        assert_eq!(reg.folder_for("Review"), "reviews");
    }

    #[test]
    fn custom_types_merge_over_settings_and_builtins() {
        let mut notices = Vec::new();
        let settings_defs = [
            json!({"name": "story", "folder": "wrong"}),
            json!({"name": "task", "aliases": ["todo"]}),
        ];
        let file_defs = [
            json!({"name": "Story", "folder": "stories", "aliases": ["user-story", "agent-story", "story"], "default_status": "open"}),
            json!({"name": "Bad", "folder": "../x"}),
            json!({"name": "  "}),
            json!(42),
        ];
        let reg = TypeRegistry::from_sources(&settings_defs, &file_defs, &mut notices);
        let story = reg.resolve("USER-STORY").expect("story resolves");
        assert_eq!(story.name, "Story");
        assert_eq!(story.folder, "stories");
        assert_eq!(story.aliases, ["agent-story", "story", "user-story"]);
        assert_eq!(story.default_status.as_deref(), Some("open"));
        assert!(story.required_create_fields.is_empty());
        assert_eq!(reg.resolve("todo").map(|d| d.name.as_str()), Some("Task"));
        assert_eq!(reg.resolve("bad").map(|d| d.folder.as_str()), Some("bads"));
        assert_eq!(notices.len(), 1);
        assert_eq!(notices[0].code, "runtime_schema_type_folder_invalid");
    }

    #[test]
    fn default_folders_slug_the_name() {
        assert_eq!(default_folder("Review"), "reviews");
        assert_eq!(default_folder("Story"), "storys");
        assert_eq!(default_folder("Bug Reports"), "bug-reports");
        assert_eq!(default_folder("Status"), "status");
        assert_eq!(default_folder("!!"), "items");
    }

    #[test]
    fn folders_normalize_and_refuse_escapes() {
        assert_eq!(
            normalize_folder("research\\records/"),
            Ok("research/records".into())
        );
        assert_eq!(normalize_folder("/a/./b/../c"), Ok("a/c".into()));
        for bad in ["", ".", "..", "a/../..", "C:/x", "a\0b", "/"] {
            assert!(normalize_folder(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn shared_folders_are_listed_once() {
        let reg = TypeRegistry::from_sources(
            &[json!({"name": "Bug", "folder": "issues"})],
            &[],
            &mut Vec::new(),
        );
        let folders = reg.folders();
        assert_eq!(folders.iter().filter(|(f, _)| *f == "issues").count(), 1);
        assert_eq!(
            folders
                .iter()
                .find(|(f, _)| *f == "issues")
                .map(|(_, t)| *t),
            Some("Bug")
        );
    }
}
