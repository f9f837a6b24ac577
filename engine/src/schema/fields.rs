//! Runtime custom fields (`schema/fields.json`): definition normalization,
//! lookups, and the read-side coercion of field values stored as top-level item keys.

use super::token::{
    js_trim, json_strings, locale_compare, normalize_status_token, normalize_string_list,
};
use serde_json::{Map, Value};

/// The value type of a custom field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// Free text (default).
    String,
    /// A JSON number.
    Number,
    /// A boolean.
    Boolean,
    /// A list of strings.
    StringArray,
    /// Any JSON array.
    Array,
    /// Any JSON object.
    Object,
}

impl FieldType {
    /// Parses a type token (trimmed, case-insensitive); unknown tokens give `String`.
    pub fn parse(token: &str) -> FieldType {
        match js_trim(token).to_lowercase().as_str() {
            "number" => FieldType::Number,
            "boolean" => FieldType::Boolean,
            "string_array" => FieldType::StringArray,
            "array" => FieldType::Array,
            "object" => FieldType::Object,
            _ => FieldType::String,
        }
    }

    /// Returns the type token.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldType::String => "string",
            FieldType::Number => "number",
            FieldType::Boolean => "boolean",
            FieldType::StringArray => "string_array",
            FieldType::Array => "array",
            FieldType::Object => "object",
        }
    }
}

/// Commands a custom field is exposed on.
pub const FIELD_COMMANDS: [&str; 7] = [
    "create",
    "update",
    "update_many",
    "list",
    "search",
    "calendar",
    "context",
];

/// One normalized custom-field definition.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldDefinition {
    /// Normalized key (status-token rules).
    pub key: String,
    /// Item key the value is stored under (defaults to `key`).
    pub metadata_key: String,
    /// CLI flag without `--` (defaults to `key` with `_` → `-`).
    pub cli_flag: String,
    /// Extra CLI flags.
    pub cli_aliases: Vec<String>,
    /// Human description.
    pub description: Option<String>,
    /// Value type.
    pub field_type: FieldType,
    /// Commands exposing the field (sorted tokens from [`FIELD_COMMANDS`]).
    pub commands: Vec<String>,
    /// Whether the flag may repeat (always for `string_array`).
    pub repeatable: bool,
    /// Whether reads require the field.
    pub required: bool,
    /// Whether create requires the field.
    pub required_on_create: bool,
    /// Types the requirement is narrowed to (empty: all types).
    pub required_types: Vec<String>,
    /// Whether `--unset` may remove it.
    pub allow_unset: bool,
    /// The recursive value schema, kept verbatim.
    pub value_schema: Option<Value>,
}

impl FieldDefinition {
    /// Returns true when a read of an item of `type_name` requires this field.
    pub fn required_for(&self, type_name: &str) -> bool {
        self.required
            && (self.required_types.is_empty()
                || self
                    .required_types
                    .iter()
                    .any(|t| t.to_lowercase() == js_trim(type_name).to_lowercase()))
    }
}

/// The custom fields of a tracker, sorted by key.
#[derive(Clone, Debug, Default)]
pub struct FieldRegistry {
    definitions: Vec<FieldDefinition>,
}

impl FieldRegistry {
    /// Builds the registry from raw entries (settings `schema.fields` then the file's `fields`);
    /// entries without a usable key or flag are dropped, later duplicates win.
    pub fn from_sources(sources: &[Value]) -> FieldRegistry {
        let mut definitions: Vec<FieldDefinition> = Vec::new();
        for def in sources.iter().filter_map(normalize_field_definition) {
            match definitions.iter_mut().find(|d| d.key == def.key) {
                Some(slot) => *slot = def,
                None => definitions.push(def),
            }
        }
        definitions.sort_by(|a, b| locale_compare(&a.key, &b.key));
        FieldRegistry { definitions }
    }

    /// Returns the definitions sorted by key.
    pub fn definitions(&self) -> &[FieldDefinition] {
        &self.definitions
    }

    /// Returns the definition with this normalized key.
    pub fn get(&self, key: &str) -> Option<&FieldDefinition> {
        self.definitions.iter().find(|d| d.key == key)
    }

    /// Returns the definition whose values live under item key `metadata_key`.
    pub fn by_metadata_key(&self, metadata_key: &str) -> Option<&FieldDefinition> {
        self.definitions
            .iter()
            .find(|d| d.metadata_key == metadata_key)
    }

    /// Returns the definition a CLI flag (with or without `--`) or alias names.
    pub fn by_cli_token(&self, token: &str) -> Option<&FieldDefinition> {
        let token = normalize_cli_token(token);
        self.definitions
            .iter()
            .rev()
            .find(|d| d.cli_flag == token || d.cli_aliases.contains(&token))
    }

    /// Returns the fields exposed on `command` (`create`, `list`, …), sorted by key.
    pub fn for_command<'a>(
        &'a self,
        command: &'a str,
    ) -> impl Iterator<Item = &'a FieldDefinition> {
        self.definitions
            .iter()
            .filter(move |d| d.commands.iter().any(|c| c == command))
    }

    /// Coerces stored custom-field values in place (read side, never fails): numbers and
    /// booleans are parsed from strings, `string_array` (and repeatable) fields split a string on
    /// `,`, newline or `|`, and `array`/`object` fields parse JSON text. Values that cannot be
    /// coerced are left as they are for validation to report.
    pub fn coerce(&self, metadata: &mut Map<String, Value>) {
        for def in &self.definitions {
            if let Some(value) = metadata.get_mut(&def.metadata_key) {
                coerce_value(def, value);
            }
        }
    }

    /// Returns the required fields an item of `type_name` lacks.
    pub fn missing_required<'a>(
        &'a self,
        metadata: &'a Map<String, Value>,
        type_name: &'a str,
    ) -> impl Iterator<Item = &'a FieldDefinition> {
        self.definitions
            .iter()
            .filter(move |d| d.required_for(type_name) && !metadata.contains_key(&d.metadata_key))
    }
}

/// Returns a definition in pm's serialized form (settings.json `schema.fields`): defaults are
/// omitted (`metadata_key` equal to `key`, the default flag, `allow_unset: true`, …).
pub fn field_to_json(def: &FieldDefinition) -> Value {
    let mut map = Map::new();
    map.insert("key".into(), Value::String(def.key.clone()));
    if def.metadata_key != def.key {
        map.insert(
            "metadata_key".into(),
            Value::String(def.metadata_key.clone()),
        );
    }
    if def.cli_flag != def.key.replace('_', "-") {
        map.insert("cli_flag".into(), Value::String(def.cli_flag.clone()));
    }
    if !def.cli_aliases.is_empty() {
        map.insert("cli_aliases".into(), Value::from(def.cli_aliases.clone()));
    }
    if let Some(d) = &def.description {
        map.insert("description".into(), Value::String(d.clone()));
    }
    map.insert("type".into(), Value::String(def.field_type.as_str().into()));
    map.insert("commands".into(), Value::from(def.commands.clone()));
    for (key, set) in [
        ("repeatable", def.repeatable),
        ("required", def.required),
        ("required_on_create", def.required_on_create),
    ] {
        if set {
            map.insert(key.into(), Value::Bool(true));
        }
    }
    if !def.required_types.is_empty() {
        map.insert(
            "required_types".into(),
            Value::from(def.required_types.clone()),
        );
    }
    if !def.allow_unset {
        map.insert("allow_unset".into(), Value::Bool(false));
    }
    if let Some(schema) = &def.value_schema {
        map.insert("value_schema".into(), schema.clone());
    }
    Value::Object(map)
}

/// How a read treats item keys that are neither core fields nor custom fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnknownFieldPolicy {
    /// Keep them silently (default).
    #[default]
    Allow,
    /// Keep them and warn `item_unknown_schema_fields:a,b`.
    Warn,
    /// Fail the read.
    Reject,
}

impl UnknownFieldPolicy {
    /// Parses the policy (trimmed, case-insensitive); anything else is `Allow`.
    pub fn parse(token: &str) -> UnknownFieldPolicy {
        match js_trim(token).to_lowercase().as_str() {
            "warn" => UnknownFieldPolicy::Warn,
            "reject" => UnknownFieldPolicy::Reject,
            _ => UnknownFieldPolicy::Allow,
        }
    }

    /// Returns the policy token.
    pub fn as_str(self) -> &'static str {
        match self {
            UnknownFieldPolicy::Allow => "allow",
            UnknownFieldPolicy::Warn => "warn",
            UnknownFieldPolicy::Reject => "reject",
        }
    }
}

/// Returns a CLI token trimmed, lowercased, with `_`/whitespace runs as `-` and no leading `--`.
pub fn normalize_cli_token(value: &str) -> String {
    let lowered = js_trim(value).to_lowercase();
    let mut out = String::with_capacity(lowered.len());
    let mut in_run = false;
    for c in lowered.chars() {
        if c == '_' || super::token::is_js_whitespace(c) {
            if !in_run {
                out.push('-');
                in_run = true;
            }
        } else {
            out.push(c);
            in_run = false;
        }
    }
    match out.strip_prefix("--") {
        Some(rest) => rest.to_string(),
        None => out,
    }
}

fn normalize_field_definition(raw: &Value) -> Option<FieldDefinition> {
    let obj = raw.as_object()?;
    let key = normalize_status_token(obj.get("key").and_then(Value::as_str).unwrap_or(""));
    if key.is_empty() {
        return None;
    }
    let metadata_source = ["metadata_key", "front_matter_key"]
        .iter()
        .find_map(|k| obj.get(*k).filter(|v| !v.is_null()))
        .map_or_else(|| key.clone(), |v| v.as_str().unwrap_or("").to_string());
    let metadata_key = normalize_status_token(&metadata_source);
    let cli_flag = normalize_cli_token(
        &obj.get("cli_flag")
            .and_then(Value::as_str)
            .map_or_else(|| key.replace('_', "-"), str::to_string),
    );
    if cli_flag.is_empty() {
        return None;
    }
    let cli_aliases = normalize_string_list(json_strings(obj.get("cli_aliases")))
        .iter()
        .map(|a| normalize_cli_token(a))
        .filter(|a| !a.is_empty() && *a != cli_flag)
        .collect();
    let field_type = obj
        .get("type")
        .and_then(Value::as_str)
        .map_or(FieldType::String, FieldType::parse);
    let mut commands: Vec<String> = normalize_string_list(json_strings(obj.get("commands")))
        .into_iter()
        .filter(|c| FIELD_COMMANDS.contains(&c.as_str()))
        .collect();
    if commands.is_empty() {
        commands = vec!["create".into(), "update".into()];
    }
    let flag = |k: &str| obj.get(k) == Some(&Value::Bool(true));
    Some(FieldDefinition {
        metadata_key,
        cli_flag,
        cli_aliases,
        description: obj
            .get("description")
            .and_then(Value::as_str)
            .map(|d| js_trim(d).to_string())
            .filter(|d| !d.is_empty()),
        field_type,
        commands,
        repeatable: flag("repeatable") || field_type == FieldType::StringArray,
        required: flag("required"),
        required_on_create: flag("required_on_create"),
        required_types: normalize_string_list(json_strings(obj.get("required_types"))),
        allow_unset: obj.get("allow_unset") != Some(&Value::Bool(false)),
        value_schema: obj.get("value_schema").cloned(),
        key,
    })
}

fn coerce_value(def: &FieldDefinition, value: &mut Value) {
    match def.field_type {
        FieldType::Array | FieldType::Object => {
            if let Value::String(text) = value
                && let Ok(parsed) = serde_json::from_str::<Value>(text)
                && ((def.field_type == FieldType::Array && parsed.is_array())
                    || (def.field_type == FieldType::Object && parsed.is_object()))
            {
                *value = parsed;
            }
        }
        _ if def.repeatable => {
            if let Value::String(text) = value {
                let parts: Vec<Value> = text
                    .split([',', '\n', '|'])
                    .map(js_trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| scalar(def.field_type, s))
                    .collect();
                *value = Value::Array(parts);
            } else if let Value::Array(items) = value {
                for item in items.iter_mut() {
                    if let Value::String(s) = item {
                        *item = scalar(def.field_type, js_trim(s));
                    }
                }
            }
        }
        FieldType::Number | FieldType::Boolean => {
            if let Value::String(text) = value {
                *value = scalar(def.field_type, js_trim(text));
            } else if def.field_type == FieldType::Boolean
                && let Some(n) = value.as_f64()
                && (n == 0.0 || n == 1.0)
            {
                *value = Value::Bool(n == 1.0);
            }
        }
        _ => {}
    }
}

/// Parses one trimmed string as the field's scalar type; unparseable text stays a string.
fn scalar(field_type: FieldType, text: &str) -> Value {
    match field_type {
        FieldType::Number => text
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite() && !text.is_empty())
            .and_then(crate::json::number_from_f64)
            .map_or_else(|| Value::String(text.to_string()), Value::Number),
        FieldType::Boolean => match text.to_lowercase().as_str() {
            "true" | "1" | "yes" => Value::Bool(true),
            "false" | "0" | "no" => Value::Bool(false),
            _ => Value::String(text.to_string()),
        },
        _ => Value::String(text.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn registry() -> FieldRegistry {
        FieldRegistry::from_sources(&[
            json!({"key": "Escape Class", "type": "string", "commands": ["list", "create", "bogus"]}),
            json!({"key": "effort", "type": "NUMBER", "cli_flag": "--Effort_Points", "cli_aliases": ["pts", "effort-points"]}),
            json!({"key": "flags", "type": "string_array", "required": true, "required_types": ["Task"]}),
            json!({"key": "gate", "type": "object", "front_matter_key": "gate_evidence", "allow_unset": false}),
            json!({"key": "ok", "type": "boolean"}),
            json!({"key": ""}),
        ])
    }

    #[test]
    fn definitions_normalize() {
        let reg = registry();
        let keys: Vec<_> = reg.definitions().iter().map(|d| d.key.as_str()).collect();
        assert_eq!(keys, ["effort", "escape_class", "flags", "gate", "ok"]);
        let escape = reg.get("escape_class").expect("escape_class");
        assert_eq!(escape.commands, ["create", "list"]);
        assert_eq!(escape.cli_flag, "escape-class");
        let effort = reg.get("effort").expect("effort");
        assert_eq!(effort.cli_flag, "effort-points");
        assert_eq!(effort.cli_aliases, ["pts"]);
        assert_eq!(effort.commands, ["create", "update"]);
        assert_eq!(
            reg.by_cli_token("--PTS").map(|d| d.key.as_str()),
            Some("effort")
        );
        let gate = reg.get("gate").expect("gate");
        assert_eq!(gate.metadata_key, "gate_evidence");
        assert!(!gate.allow_unset);
        assert!(reg.get("flags").is_some_and(|d| d.repeatable));
        assert_eq!(reg.for_command("list").count(), 1);
    }

    #[test]
    fn coercion_parses_text_values() {
        let reg = registry();
        let mut meta = json!({
            "effort": " 3.5 ",
            "flags": "a, b|c\n",
            "gate_evidence": "{\"owner\":\"x\"}",
            "ok": "Yes",
            "escape_class": 7,
            "other": "1"
        });
        let map = meta.as_object_mut().expect("object");
        reg.coerce(map);
        assert_eq!(
            Value::Object(map.clone()),
            json!({"effort": 3.5, "flags": ["a", "b", "c"], "gate_evidence": {"owner": "x"}, "ok": true, "escape_class": 7, "other": "1"})
        );
        let mut bad = json!({"effort": "lots", "ok": 1, "gate_evidence": "[1]"});
        let map = bad.as_object_mut().expect("object");
        reg.coerce(map);
        assert_eq!(
            Value::Object(map.clone()),
            json!({"effort": "lots", "ok": true, "gate_evidence": "[1]"})
        );
    }

    #[test]
    fn required_fields_respect_types() {
        let reg = registry();
        let meta = Map::new();
        assert_eq!(reg.missing_required(&meta, "task").count(), 1);
        assert_eq!(reg.missing_required(&meta, "Epic").count(), 0);
    }

    #[test]
    fn unknown_field_policy_parses() {
        assert_eq!(
            UnknownFieldPolicy::parse(" WARN "),
            UnknownFieldPolicy::Warn
        );
        assert_eq!(
            UnknownFieldPolicy::parse("reject"),
            UnknownFieldPolicy::Reject
        );
        assert_eq!(UnknownFieldPolicy::parse("nope"), UnknownFieldPolicy::Allow);
    }
}
