//! Close validation (`governance.close_validation_default`, `close --validate-close [mode]`):
//! the closure fields a close must carry (`resolution`, `expected_result`, `actual_result`),
//! the warning under `warn` and the refusal under `strict`. Decides only.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::item::canon::js;

/// The closure fields, in pm's order, with the flag that sets each.
pub const CLOSE_FIELDS: [(&str, &str); 3] = [
    ("resolution", "--resolution"),
    ("expected_result", "--expected-result"),
    ("actual_result", "--actual-result"),
];

/// How a close treats missing closure fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseValidation {
    /// Not checked.
    Off,
    /// Closes, with a `close_validation_missing_fields:` warning.
    Warn,
    /// Refuses (`close_validation_missing_fields`, exit 2).
    Strict,
}

impl CloseValidation {
    /// Reads the settings token (`warn`, `strict`; anything else is off).
    pub fn from_setting(token: &str) -> CloseValidation {
        match token {
            "warn" => CloseValidation::Warn,
            "strict" => CloseValidation::Strict,
            _ => CloseValidation::Off,
        }
    }

    /// Resolves `--validate-close [mode]`: absent keeps `default`; a bare flag (empty value) or
    /// `warn` is warn; `off`, `none`, `disabled` are off; `strict` is strict (trimmed,
    /// case-insensitive).
    ///
    /// # Errors
    /// `invalid_argument_value` for any other value.
    pub fn resolve(flag: Option<&str>, default: CloseValidation) -> Result<CloseValidation> {
        let Some(raw) = flag else {
            return Ok(default);
        };
        match js::trim(raw).to_lowercase().as_str() {
            "" | "warn" => Ok(CloseValidation::Warn),
            "off" | "none" | "disabled" => Ok(CloseValidation::Off),
            "strict" => Ok(CloseValidation::Strict),
            _ => Err(Error::InvalidArgument {
                field: "--validate-close".into(),
                value: raw.into(),
                reason: format!(
                    "Invalid --validate-close mode \"{raw}\" (expected \"off\", \"warn\", or \"strict\")"
                ),
                allowed: vec!["off".into(), "warn".into(), "strict".into()],
            }),
        }
    }
}

/// Returns the closure fields `metadata` lacks (absent, not a string, or blank).
pub fn missing_close_fields(metadata: &Map<String, Value>) -> Vec<&'static str> {
    CLOSE_FIELDS
        .iter()
        .filter(|(key, _)| {
            metadata
                .get(*key)
                .and_then(Value::as_str)
                .is_none_or(|v| js::trim(v).is_empty())
        })
        .map(|(key, _)| *key)
        .collect()
}

/// Checks the closure fields of item `id` (after the close's inline fields were applied):
/// the warnings to report, or the strict refusal.
///
/// # Errors
/// `close_validation_missing_fields` (exit 2) under strict mode when a field is missing.
pub fn check_close(
    id: &str,
    metadata: &Map<String, Value>,
    mode: CloseValidation,
) -> Result<Vec<String>> {
    if mode == CloseValidation::Off {
        return Ok(Vec::new());
    }
    let missing = missing_close_fields(metadata);
    if missing.is_empty() {
        return Ok(Vec::new());
    }
    if mode == CloseValidation::Strict {
        return Err(Error::CloseValidation {
            id: id.to_string(),
            missing: missing.iter().map(|k| k.to_string()).collect(),
        });
    }
    let labels: Vec<String> = missing.iter().map(|k| label(k)).collect();
    Ok(vec![format!(
        "close_validation_missing_fields:{id}:{}",
        labels.join(",")
    )])
}

/// Returns the flag that sets a closure field (`--expected-result`).
pub fn close_field_flag(key: &str) -> String {
    format!("--{}", key.replace('_', "-"))
}

/// `resolution (--resolution)`.
fn label(key: &str) -> String {
    format!("{key} ({})", close_field_flag(key))
}

/// The message of a strict refusal.
pub(crate) fn refusal_message(id: &str, missing: &[String]) -> String {
    let labels: Vec<String> = missing.iter().map(|k| label(k)).collect();
    format!(
        "Cannot close item {id}: missing {}. Populate fields or use --validate-close warn.",
        labels.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn modes_resolve_like_pm() -> Result<()> {
        let d = CloseValidation::Strict;
        assert_eq!(CloseValidation::resolve(None, d)?, CloseValidation::Strict);
        assert_eq!(
            CloseValidation::resolve(Some(""), d)?,
            CloseValidation::Warn
        );
        assert_eq!(
            CloseValidation::resolve(Some(" NONE "), d)?,
            CloseValidation::Off
        );
        assert_eq!(
            CloseValidation::resolve(Some("disabled"), d)?,
            CloseValidation::Off
        );
        assert!(CloseValidation::resolve(Some("loud"), d).is_err());
        assert_eq!(CloseValidation::from_setting("warn"), CloseValidation::Warn);
        Ok(())
    }

    #[test]
    fn warn_names_the_missing_fields_and_strict_refuses() -> Result<()> {
        let m = meta(json!({"resolution": "Implemented", "expected_result": "  "}));
        assert_eq!(
            check_close("pm-b002", &m, CloseValidation::Warn)?,
            [
                "close_validation_missing_fields:pm-b002:expected_result (--expected-result),actual_result (--actual-result)"
            ]
        );
        assert!(check_close("pm-b002", &m, CloseValidation::Off)?.is_empty());
        let err = check_close("pm-b002", &m, CloseValidation::Strict).map_err(|e| e.to_string());
        assert_eq!(
            err,
            Err("Cannot close item pm-b002: missing expected_result (--expected-result), actual_result (--actual-result). Populate fields or use --validate-close warn.".to_string())
        );
        let full = meta(json!({"resolution": "a", "expected_result": "b", "actual_result": "c"}));
        assert!(check_close("pm-b002", &full, CloseValidation::Strict)?.is_empty());
        Ok(())
    }
}
