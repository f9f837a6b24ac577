//! The schema input of canonicalization and read checks: status registry, runtime field
//! registry, unknown-field policy and extension field names, bundled in one borrowed struct.

use super::js;
use crate::item::keys::{BUILTIN_STATUS_ALIASES, BUILTIN_STATUSES};
use crate::schema::{FieldRegistry, RuntimeSchema, StatusRegistry};
use serde_json::{Map, Value};

pub use crate::schema::UnknownFieldPolicy;

/// The runtime schema as canonicalization and the read checks see it. [`CanonSchema::NONE`] is
/// pm's "no schema" mode: built-in statuses only, no field coercion, unknown keys allowed.
#[derive(Clone, Copy, Debug, Default)]
pub struct CanonSchema<'a> {
    /// The status registry; `None` resolves built-in statuses only.
    pub statuses: Option<&'a StatusRegistry>,
    /// The custom-field registry; `None` means no coercion and no required custom fields.
    pub fields: Option<&'a FieldRegistry>,
    /// Unknown-field policy (`schema.unknown_field_policy`).
    pub unknown_field_policy: UnknownFieldPolicy,
    /// Field names registered by extensions; they count as known keys.
    pub extension_fields: &'a [String],
}

impl<'a> CanonSchema<'a> {
    /// No schema: built-in statuses, no coercion, unknown keys allowed.
    pub const NONE: CanonSchema<'static> = CanonSchema {
        statuses: None,
        fields: None,
        unknown_field_policy: UnknownFieldPolicy::Allow,
        extension_fields: &[],
    };

    /// Returns the schema input for a tracker's loaded runtime schema (no extension fields).
    pub fn from_runtime(schema: &'a RuntimeSchema) -> CanonSchema<'a> {
        CanonSchema {
            statuses: Some(&schema.statuses),
            fields: Some(&schema.fields),
            unknown_field_policy: schema.unknown_field_policy,
            extension_fields: &[],
        }
    }

    /// Returns the canonical status id for `raw`, or `None` when it does not resolve: the
    /// registry first, then pm's built-in statuses and aliases (as pm's `normalizeStatusInput`).
    pub fn resolve_status(&self, raw: &str) -> Option<String> {
        self.statuses
            .and_then(|registry| registry.resolve(raw))
            .or_else(|| builtin_status(raw))
            .map(str::to_string)
    }

    /// Returns the status ids a read accepts, for error messages.
    pub fn status_domain(&self) -> Vec<String> {
        match self.statuses {
            Some(registry) => registry
                .definitions()
                .iter()
                .map(|d| d.id.clone())
                .collect(),
            None => BUILTIN_STATUSES.iter().map(|s| (*s).to_string()).collect(),
        }
    }

    /// Returns true if `key` is defined by the schema (a custom field's metadata key or an
    /// extension field).
    pub fn defines_field(&self, key: &str) -> bool {
        self.fields
            .is_some_and(|f| f.by_metadata_key(key).is_some())
            || self.extension_fields.iter().any(|k| k == key)
    }

    /// Applies runtime-field coercion in place to the fields present in `metadata`.
    pub(crate) fn coerce_fields(&self, metadata: &mut Map<String, Value>) {
        if let Some(fields) = self.fields {
            fields.coerce(metadata);
        }
    }

    /// Checks runtime fields for a read: a required field (for this item type)
    /// must be present; present fields are coerced in place.
    ///
    /// # Errors
    /// `missing required schema field: <key>` for the first missing field, by key order.
    pub(crate) fn check_fields(
        &self,
        metadata: &mut Map<String, Value>,
        item_type: &str,
    ) -> Result<(), FieldCheckError> {
        let Some(fields) = self.fields else {
            return Ok(());
        };
        if let Some(missing) = fields.missing_required(metadata, item_type).next() {
            return Err(FieldCheckError {
                missing: true,
                detail: format!("missing required schema field: {}", missing.metadata_key),
            });
        }
        fields.coerce(metadata);
        Ok(())
    }
}

/// A failed runtime-field read check.
#[derive(Debug)]
pub(crate) struct FieldCheckError {
    /// True when the field is required and absent.
    pub missing: bool,
    /// What went wrong.
    pub detail: String,
}

/// Resolves a status without a registry: trim, lowercase, built-in aliases, built-in ids.
fn builtin_status(raw: &str) -> Option<&'static str> {
    let token = js::lowercase(js::trim(raw));
    let token = BUILTIN_STATUS_ALIASES
        .iter()
        .find(|(alias, _)| *alias == token)
        .map_or(token.as_str(), |(_, id)| id);
    BUILTIN_STATUSES.iter().copied().find(|id| *id == token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{StatusDefinition, Workflow, normalize_status_definitions};
    use serde_json::json;

    #[test]
    fn builtin_statuses_resolve_with_aliases() {
        assert_eq!(builtin_status(" Open "), Some("open"));
        assert_eq!(builtin_status("in-progress"), Some("in_progress"));
        assert_eq!(builtin_status("Cancelled"), Some("canceled"));
        assert_eq!(builtin_status("review"), None);
        assert_eq!(builtin_status(""), None);
    }

    #[test]
    fn registry_statuses_resolve_before_builtins() {
        let defs: Vec<StatusDefinition> = normalize_status_definitions(&[
            json!({"id": "review", "aliases": ["in-review"]}),
            json!({"id": "open"}),
        ]);
        let registry = StatusRegistry::new(defs, Workflow::default());
        let schema = CanonSchema {
            statuses: Some(&registry),
            ..CanonSchema::NONE
        };
        assert_eq!(
            schema.resolve_status("In Review").as_deref(),
            Some("review")
        );
        assert_eq!(schema.resolve_status("closed").as_deref(), Some("closed"));
        assert_eq!(schema.resolve_status("later"), None);
        assert_eq!(schema.status_domain(), ["review", "open"]);
    }

    #[test]
    fn required_custom_fields_are_checked_and_coerced() {
        let fields = FieldRegistry::from_sources(&[
            json!({"key": "points", "type": "number", "required": true, "required_types": ["Task"]}),
        ]);
        let schema = CanonSchema {
            fields: Some(&fields),
            ..CanonSchema::NONE
        };
        let mut m = Map::new();
        let err = schema
            .check_fields(&mut m, "Task")
            .err()
            .map(|e| (e.missing, e.detail));
        assert_eq!(
            err,
            Some((true, "missing required schema field: points".to_string()))
        );
        assert!(schema.check_fields(&mut m, "Bug").is_ok());
        m.insert("points".into(), json!(" 3 "));
        assert!(schema.check_fields(&mut m, "Task").is_ok());
        assert_eq!(m["points"], json!(3));
        assert!(schema.defines_field("points") && !schema.defines_field("other"));
    }
}
