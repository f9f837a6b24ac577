//! Checking a parsed settings.json document against the key domains of `validate.rs`, one key
//! at a time: a value outside its domain is reported as a [`SettingIssue`] and dropped (so only
//! that key falls back to its default), every other key is kept whatever its neighbours hold.

use super::validate::{MAX_SAFE_INTEGER, Shape, settings_shape};
use crate::error::Error;
use crate::json::to_compact;
use serde_json::{Map, Value};
use std::sync::OnceLock;

/// One settings value outside its legal domain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingIssue {
    /// The dotted key (`ids.token_length`, `item_types.definitions[2].name`), or
    /// `settings.json` when the document itself is unusable.
    pub key: String,
    /// The value found, as compact JSON (`missing` for an absent required key, the parser's
    /// message for a syntax error).
    pub value: String,
    /// The legal domain (`an integer from 4 to 12`).
    pub domain: String,
}

impl SettingIssue {
    /// Returns the issue as the `settings_invalid` error writes refuse with.
    pub fn to_error(&self) -> Error {
        Error::SettingsInvalid {
            key: self.key.clone(),
            value: self.value.clone(),
            domain: self.domain.clone(),
            origin: super::SETTINGS_FILE.into(),
        }
    }

    /// Returns the warning token reads report (`settings_invalid:<key>`).
    pub fn token(&self) -> String {
        format!("settings_invalid:{}", self.key)
    }

    /// Returns the human sentence of a read warning: key, value, domain and what applies.
    pub fn message(&self) -> String {
        format!(
            "settings.json {} = {} is invalid (expected {}); reads use the default for this key, writes refuse until it is fixed",
            self.key, self.value, self.domain
        )
    }
}

/// A document after checking: the keys that passed (unknown keys stripped, order kept) and the
/// issues of the rest.
#[derive(Clone, Debug, Default)]
pub struct Validated {
    /// The keys with legal values.
    pub document: Map<String, Value>,
    /// The values outside their domain, in document order.
    pub issues: Vec<SettingIssue>,
}

/// Checks a parsed settings.json document key by key. A document that is not an object gives
/// one issue for `settings.json` and nothing else.
pub fn validate_settings(raw: &Value) -> Validated {
    static SHAPE: OnceLock<Shape> = OnceLock::new();
    let mut issues = Vec::new();
    let document = match check(
        SHAPE.get_or_init(settings_shape),
        raw,
        "",
        false,
        &mut issues,
    ) {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    if raw.is_object() {
        Validated { document, issues }
    } else {
        Validated {
            document,
            issues: vec![SettingIssue {
                key: super::SETTINGS_FILE.into(),
                value: truncated(raw),
                domain: "a JSON object".into(),
            }],
        }
    }
}

/// Returns the issue of settings.json text that does not parse.
pub fn syntax_issue(err: &serde_json::Error) -> SettingIssue {
    SettingIssue {
        key: super::SETTINGS_FILE.into(),
        value: format!("unparseable JSON ({err})"),
        domain: "a JSON object".into(),
    }
}

/// Returns the value as compact JSON, cut at 200 characters.
fn truncated(value: &Value) -> String {
    let text = to_compact(value);
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Returns the value when it fits `shape`, recording an issue (and `None`) when it does not.
/// Objects keep their legal keys; arrays and records keep their legal elements. A required key
/// is only enforced inside an array element (`element`), which has no default to fall back on.
fn check(
    shape: &Shape,
    value: &Value,
    path: &str,
    element: bool,
    issues: &mut Vec<SettingIssue>,
) -> Option<Value> {
    let mut reject = || {
        issues.push(SettingIssue {
            key: path.to_string(),
            value: truncated(value),
            domain: describe(shape),
        });
        None
    };
    let ok = match shape {
        Shape::Str => value.is_string(),
        Shape::Bool => value.is_boolean(),
        Shape::Num => value.as_f64().is_some_and(f64::is_finite),
        Shape::Int { positive, range } => value.as_f64().is_some_and(|f| {
            f.is_finite()
                && f.fract() == 0.0
                && f.abs() <= MAX_SAFE_INTEGER
                && (!positive || f > 0.0)
                && range.is_none_or(|(lo, hi)| f >= lo && f <= hi)
        }),
        Shape::Lit(allowed) => value.as_str().is_some_and(|s| allowed.contains(&s)),
        Shape::Any => true,
        Shape::Arr(item) => {
            let Some(items) = value.as_array() else {
                return reject();
            };
            let kept = items
                .iter()
                .enumerate()
                .filter_map(|(i, v)| check(item, v, &format!("{path}[{i}]"), true, issues))
                .collect();
            return Some(Value::Array(kept));
        }
        Shape::Record(item) => {
            let Some(map) = value.as_object() else {
                return reject();
            };
            let mut out = Map::new();
            for (k, v) in map {
                if let Some(v) = check(item, v, &join(path, k), false, issues) {
                    out.insert(k.clone(), v);
                }
            }
            return Some(Value::Object(out));
        }
        Shape::Obj(fields) => {
            let Some(map) = value.as_object() else {
                return reject();
            };
            let mut out = Map::new();
            // Keep the document's key order so a re-emitted file matches what the user wrote.
            for (key, v) in map {
                if let Some((_, _, field)) = fields.iter().find(|(k, _, _)| k == key)
                    && let Some(v) = check(field, v, &join(path, key), false, issues)
                {
                    out.insert(key.clone(), v);
                }
            }
            if element {
                for (key, required, field) in fields {
                    if *required && !map.contains_key(*key) {
                        issues.push(SettingIssue {
                            key: join(path, key),
                            value: "missing".into(),
                            domain: format!("{} (required)", describe(field)),
                        });
                    }
                }
                // An element without a legal value for a required key is dropped whole.
                if fields
                    .iter()
                    .any(|(k, required, _)| *required && !out.contains_key(*k))
                {
                    return None;
                }
            }
            return Some(Value::Object(out));
        }
        Shape::LitOrObj(allowed, object) => match value.as_str() {
            Some(s) => allowed.contains(&s),
            None if value.is_object() => return check(object, value, path, element, issues),
            None => false,
        },
    };
    if ok { Some(value.clone()) } else { reject() }
}

/// Returns the legal domain of a shape in words.
fn describe(shape: &Shape) -> String {
    match shape {
        Shape::Str => "a string".into(),
        Shape::Bool => "true or false".into(),
        Shape::Num => "a finite number".into(),
        Shape::Int {
            range: Some((lo, hi)),
            ..
        } => format!("an integer from {lo} to {hi}"),
        Shape::Int { positive: true, .. } => "an integer greater than 0".into(),
        Shape::Int { .. } => "an integer".into(),
        Shape::Lit(allowed) => format!("one of: {}", allowed.join(", ")),
        Shape::Arr(item) => format!("an array of {}", plural(item)),
        Shape::Obj(_) => "an object".into(),
        Shape::Record(item) => format!("an object whose values are {}", plural(item)),
        Shape::Any => "any JSON value".into(),
        Shape::LitOrObj(allowed, _) => format!("one of: {}, or an object", allowed.join(", ")),
    }
}

fn plural(shape: &Shape) -> String {
    match shape {
        Shape::Str => "strings".into(),
        Shape::Obj(_) => "objects".into(),
        Shape::Arr(_) => "arrays".into(),
        other => format!("values that are {}", describe(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn minimal() -> Value {
        json!({
            "version": 1, "id_prefix": "pm-", "author_default": "",
            "locks": {"ttl_seconds": 1800}, "output": {"default_format": "toon"},
            "extensions": {"enabled": [], "disabled": []},
            "search": {"score_threshold": 0, "max_results": 50, "embedding_model": "", "embedding_batch_size": 32, "scanner_max_batch_retries": 3},
            "providers": {"openai": {"base_url": "", "api_key": "", "model": ""}, "ollama": {"base_url": "", "model": ""}},
            "vector_store": {"qdrant": {"url": "", "api_key": ""}, "lancedb": {"path": ""}}
        })
    }

    #[test]
    fn accepts_required_keys_and_strips_unknown() {
        let mut doc = minimal();
        doc["mystery"] = json!(true);
        doc["locks"]["extra"] = json!(1);
        let out = validate_settings(&doc);
        assert!(out.issues.is_empty(), "{:?}", out.issues);
        assert!(!out.document.contains_key("mystery"));
        assert_eq!(out.document["locks"], json!({"ttl_seconds": 1800}));
    }

    #[test]
    fn a_bad_value_is_dropped_alone_and_named() {
        for (path, bad, key, domain) in [
            ("version", json!(1.5), "version", "an integer"),
            ("id_prefix", json!(null), "id_prefix", "a string"),
            (
                "ids",
                json!({"token_length": 13}),
                "ids.token_length",
                "an integer from 4 to 12",
            ),
            (
                "item_format",
                json!("yaml"),
                "item_format",
                "one of: toon, json_markdown",
            ),
            (
                "locks",
                json!({"ttl_seconds": "1800"}),
                "locks.ttl_seconds",
                "an integer from 1 to 2592000",
            ),
            ("history", json!(7), "history", "an object"),
        ] {
            let mut doc = minimal();
            doc[path] = bad.clone();
            doc["author_default"] = json!("kept");
            let out = validate_settings(&doc);
            assert_eq!(out.issues.len(), 1, "{path} = {bad}: {:?}", out.issues);
            assert_eq!(out.issues[0].key, key);
            assert_eq!(out.issues[0].domain, domain);
            assert_eq!(out.document["author_default"], json!("kept"));
        }
    }

    #[test]
    fn missing_required_keys_fall_back_outside_arrays_only() {
        let out = validate_settings(&json!({"id_prefix": "zq-", "ids": {}, "history": {}}));
        assert!(out.issues.is_empty(), "{:?}", out.issues);
        assert_eq!(out.document["id_prefix"], json!("zq-"));
        let out = validate_settings(&json!({"item_types": {"definitions": [
            {"name": "Story"}, {"folder": "x"}, {"name": 3}
        ]}}));
        let keys: Vec<_> = out.issues.iter().map(|i| i.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "item_types.definitions[1].name",
                "item_types.definitions[2].name"
            ]
        );
        assert_eq!(
            out.document["item_types"]["definitions"],
            json!([{"name": "Story"}])
        );
    }

    #[test]
    fn duplicate_detection_modes_are_pm_values() {
        for (mode, legal) in [
            ("off", true),
            ("advisory", true),
            ("strict", true),
            ("warn", false),
        ] {
            let mut doc = minimal();
            doc["governance"] = json!({"duplicate_detection_mode": mode});
            assert_eq!(validate_settings(&doc).issues.is_empty(), legal, "{mode}");
        }
    }

    #[test]
    fn a_non_object_document_is_one_issue() {
        let out = validate_settings(&json!([1]));
        assert_eq!(out.issues.len(), 1);
        assert_eq!(out.issues[0].key, "settings.json");
        assert!(out.document.is_empty());
    }
}
