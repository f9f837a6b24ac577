//! The status registry: six built-ins merged with `settings.schema.statuses`
//! and `schema/statuses.json`, token normalization, the alias map, roles and lifecycle lookups.

use super::token::{json_strings, locale_compare, normalize_status_token, normalize_string_list};
use super::workflow::Workflow;
use crate::json::number_from_f64;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// A role a status can play in the lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StatusRole {
    /// A draft, not yet open.
    Draft,
    /// Work is open or under way.
    Active,
    /// Work is blocked.
    Blocked,
    /// A terminal state.
    Terminal,
    /// Terminal because the work is done.
    TerminalDone,
    /// Terminal because the work was dropped.
    TerminalCanceled,
    /// The status new items get.
    DefaultOpen,
    /// The status `close` sets.
    DefaultClose,
    /// The status a cancel sets.
    DefaultCancel,
}

impl StatusRole {
    /// Every role, in pm's declaration order.
    pub const ALL: [StatusRole; 9] = [
        StatusRole::Draft,
        StatusRole::Active,
        StatusRole::Blocked,
        StatusRole::Terminal,
        StatusRole::TerminalDone,
        StatusRole::TerminalCanceled,
        StatusRole::DefaultOpen,
        StatusRole::DefaultClose,
        StatusRole::DefaultCancel,
    ];

    /// Returns the role token used in schema files.
    pub fn as_str(self) -> &'static str {
        match self {
            StatusRole::Draft => "draft",
            StatusRole::Active => "active",
            StatusRole::Blocked => "blocked",
            StatusRole::Terminal => "terminal",
            StatusRole::TerminalDone => "terminal_done",
            StatusRole::TerminalCanceled => "terminal_canceled",
            StatusRole::DefaultOpen => "default_open",
            StatusRole::DefaultClose => "default_close",
            StatusRole::DefaultCancel => "default_cancel",
        }
    }

    /// Parses an exact role token; unknown roles give `None` (and are dropped by the registry).
    pub fn parse(token: &str) -> Option<StatusRole> {
        StatusRole::ALL.into_iter().find(|r| r.as_str() == token)
    }
}

/// One normalized status definition.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusDefinition {
    /// Normalized id (`in_progress`).
    pub id: String,
    /// Normalized, de-duplicated, sorted aliases.
    pub aliases: Vec<String>,
    /// Known roles, sorted by token.
    pub roles: Vec<StatusRole>,
    /// Trimmed description, when non-empty.
    pub description: Option<String>,
    /// Sort key; defaults to the entry's index in the merged source list.
    pub order: f64,
}

impl StatusDefinition {
    /// Returns true when the definition has `role`.
    pub fn has_role(&self, role: StatusRole) -> bool {
        self.roles.contains(&role)
    }

    /// Returns the definition as pm serializes it into settings.json (`id, aliases?, roles?,
    /// description?, order`).
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("id".into(), json!(self.id));
        if !self.aliases.is_empty() {
            map.insert("aliases".into(), json!(self.aliases));
        }
        if !self.roles.is_empty() {
            let roles: Vec<&str> = self.roles.iter().map(|r| r.as_str()).collect();
            map.insert("roles".into(), json!(roles));
        }
        if let Some(description) = &self.description {
            map.insert("description".into(), json!(description));
        }
        let order = number_from_f64(self.order).map_or(Value::Null, Value::Number);
        map.insert("order".into(), order);
        Value::Object(map)
    }
}

/// Returns pm's six built-in status definitions as raw JSON (the `schema/statuses.json` seed).
pub fn builtin_status_sources() -> Vec<Value> {
    vec![
        json!({"id": "draft", "roles": ["draft"]}),
        json!({"id": "open", "roles": ["active", "default_open"]}),
        json!({"id": "in_progress", "aliases": ["in-progress"], "roles": ["active"]}),
        json!({"id": "blocked", "roles": ["blocked"]}),
        json!({"id": "closed", "roles": ["terminal", "terminal_done", "default_close"]}),
        json!({"id": "canceled", "aliases": ["cancelled"], "roles": ["terminal", "terminal_canceled", "default_cancel"]}),
    ]
}

/// Normalizes raw status entries: entries without a usable id are dropped, duplicates (by
/// normalized id) keep their first position but take the last definition, and the result is
/// sorted by `(order, id)`. An empty result falls back to the built-ins, as pm does.
pub fn normalize_status_definitions(sources: &[Value]) -> Vec<StatusDefinition> {
    let mut deduped: Vec<StatusDefinition> = Vec::new();
    for (index, raw) in sources.iter().enumerate() {
        let Some(def) = normalize_status_definition(raw, index) else {
            continue;
        };
        match deduped.iter_mut().find(|d| d.id == def.id) {
            Some(slot) => *slot = def,
            None => deduped.push(def),
        }
    }
    if deduped.is_empty() {
        return normalize_status_definitions(&builtin_status_sources());
    }
    sort_definitions(&mut deduped);
    deduped
}

fn normalize_status_definition(raw: &Value, fallback_order: usize) -> Option<StatusDefinition> {
    let obj = raw.as_object()?;
    let id = normalize_status_token(obj.get("id")?.as_str()?);
    if id.is_empty() {
        return None;
    }
    let mut aliases: Vec<String> = Vec::new();
    for alias in normalize_string_list(json_strings(obj.get("aliases"))) {
        let token = normalize_status_token(&alias);
        if !token.is_empty() && !aliases.contains(&token) {
            aliases.push(token);
        }
    }
    aliases.sort_by(|a, b| locale_compare(a, b));
    let roles = normalize_string_list(json_strings(obj.get("roles")))
        .iter()
        .filter_map(|r| StatusRole::parse(r))
        .collect();
    let description = obj
        .get("description")
        .and_then(Value::as_str)
        .map(|d| super::token::js_trim(d).to_string())
        .filter(|d| !d.is_empty());
    let order = obj
        .get("order")
        .and_then(Value::as_f64)
        .filter(|o| o.is_finite())
        .unwrap_or(fallback_order as f64);
    Some(StatusDefinition {
        id,
        aliases,
        roles,
        description,
        order,
    })
}

fn sort_definitions(defs: &mut [StatusDefinition]) {
    defs.sort_by(|a, b| {
        a.order
            .partial_cmp(&b.order)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| locale_compare(&a.id, &b.id))
    });
}

/// Maps a status written without a registry at hand (hash canonicalization): only
/// `in-progress` → `in_progress` and `cancelled` → `canceled`; everything else is verbatim.
pub fn canonical_status_without_registry(status: &str) -> &str {
    match status {
        "in-progress" => "in_progress",
        "cancelled" => "canceled",
        other => other,
    }
}

/// The resolved status registry of a tracker.
#[derive(Clone, Debug)]
pub struct StatusRegistry {
    definitions: Vec<StatusDefinition>,
    alias_to_id: BTreeMap<String, String>,
    workflow: Workflow,
    open: String,
    close: String,
    canceled: String,
}

impl StatusRegistry {
    /// Builds the registry from normalized definitions and the lifecycle workflow block.
    pub fn new(definitions: Vec<StatusDefinition>, workflow: Workflow) -> StatusRegistry {
        let mut alias_to_id = BTreeMap::new();
        for def in &definitions {
            for name in std::iter::once(&def.id).chain(def.aliases.iter()) {
                alias_to_id.insert(name.clone(), def.id.clone());
                alias_to_id.insert(name.replace('_', "-"), def.id.clone());
                alias_to_id.insert(name.replace('_', " "), def.id.clone());
            }
        }
        let pick = |configured: &Option<String>, role: StatusRole, fallbacks: &[&str]| {
            configured
                .clone()
                .or_else(|| preferred_for_role(&definitions, role, fallbacks))
                .unwrap_or_default()
        };
        let open = pick(
            &workflow.open_status,
            StatusRole::DefaultOpen,
            &["open", "in_progress", "draft"],
        );
        let close = pick(
            &workflow.close_status,
            StatusRole::DefaultClose,
            &["closed", "done", "complete"],
        );
        let canceled = pick(
            &workflow.canceled_status,
            StatusRole::DefaultCancel,
            &["canceled", "cancelled"],
        );
        StatusRegistry {
            definitions,
            alias_to_id,
            workflow,
            open,
            close,
            canceled,
        }
    }

    /// Returns the definitions sorted by `(order, id)`.
    pub fn definitions(&self) -> &[StatusDefinition] {
        &self.definitions
    }

    /// Returns the definition with this exact normalized id.
    pub fn get(&self, id: &str) -> Option<&StatusDefinition> {
        self.definitions.iter().find(|d| d.id == id)
    }

    /// Resolves user or file input (`In-Progress`, `cancelled`) to a status id.
    pub fn resolve(&self, input: &str) -> Option<&str> {
        let token = normalize_status_token(input);
        if token.is_empty() {
            return None;
        }
        self.alias_to_id.get(&token).map(String::as_str)
    }

    /// Returns every accepted spelling (ids, aliases and their `-`/space variants) with its id.
    pub fn aliases(&self) -> &BTreeMap<String, String> {
        &self.alias_to_id
    }

    /// Returns true when `status` resolves to a status with a terminal role.
    pub fn is_terminal(&self, status: &str) -> bool {
        self.resolve(status)
            .and_then(|id| self.get(id))
            .is_some_and(|d| {
                d.has_role(StatusRole::Terminal)
                    || d.has_role(StatusRole::TerminalDone)
                    || d.has_role(StatusRole::TerminalCanceled)
            })
    }

    /// Returns true when `status` resolves to a status with `role`.
    pub fn has_role(&self, status: &str, role: StatusRole) -> bool {
        self.resolve(status)
            .and_then(|id| self.get(id))
            .is_some_and(|d| d.has_role(role))
    }

    /// Returns the status new items get (workflow `open_status`, else role `default_open`,
    /// else `open`/`in_progress`/`draft`, else the first definition).
    pub fn open_status(&self) -> &str {
        &self.open
    }

    /// Returns the status `close` sets (workflow, else `default_close`, else
    /// `closed`/`done`/`complete`, else the first definition).
    pub fn close_status(&self) -> &str {
        &self.close
    }

    /// Returns the cancel status (workflow, else `default_cancel`, else
    /// `canceled`/`cancelled`, else the first definition).
    pub fn canceled_status(&self) -> &str {
        &self.canceled
    }

    /// Returns the in-progress status: workflow `in_progress_status`, else `in_progress` when
    /// defined, else the first `active` status that is not the open status.
    pub fn in_progress_status(&self) -> Option<&str> {
        self.workflow
            .in_progress_status
            .as_deref()
            .or_else(|| self.get("in_progress").map(|d| d.id.as_str()))
            .or_else(|| {
                self.definitions
                    .iter()
                    .find(|d| d.has_role(StatusRole::Active) && d.id != self.open)
                    .map(|d| d.id.as_str())
            })
    }

    /// Returns the blocked status: workflow `blocked_status`, else the first `blocked` status.
    pub fn blocked_status(&self) -> Option<&str> {
        self.workflow
            .blocked_status
            .as_deref()
            .or_else(|| self.first_with_role(StatusRole::Blocked))
    }

    /// Returns the draft status: workflow `draft_status`, else the first `draft` status.
    pub fn draft_status(&self) -> Option<&str> {
        self.workflow
            .draft_status
            .as_deref()
            .or_else(|| self.first_with_role(StatusRole::Draft))
    }

    /// Returns the lifecycle workflow block the registry was built with.
    pub fn workflow(&self) -> &Workflow {
        &self.workflow
    }

    fn first_with_role(&self, role: StatusRole) -> Option<&str> {
        self.definitions
            .iter()
            .find(|d| d.has_role(role))
            .map(|d| d.id.as_str())
    }
}

fn preferred_for_role(
    definitions: &[StatusDefinition],
    role: StatusRole,
    fallbacks: &[&str],
) -> Option<String> {
    if let Some(def) = definitions.iter().find(|d| d.has_role(role)) {
        return Some(def.id.clone());
    }
    fallbacks
        .iter()
        .map(|f| normalize_status_token(f))
        .find(|f| definitions.iter().any(|d| &d.id == f))
        .or_else(|| definitions.first().map(|d| d.id.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin_registry() -> StatusRegistry {
        StatusRegistry::new(
            normalize_status_definitions(&builtin_status_sources()),
            Workflow::builtin(),
        )
    }

    #[test]
    fn builtins_normalize_like_pm_settings() {
        let defs = normalize_status_definitions(&builtin_status_sources());
        let ids: Vec<_> = defs.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "draft",
                "open",
                "in_progress",
                "blocked",
                "closed",
                "canceled"
            ]
        );
        assert_eq!(
            crate::json::to_compact(&defs[2].to_json()),
            r#"{"id":"in_progress","aliases":["in_progress"],"roles":["active"],"order":2}"#
        );
        assert_eq!(
            crate::json::to_compact(&defs[4].to_json()),
            r#"{"id":"closed","roles":["default_close","terminal","terminal_done"],"order":4}"#
        );
    }

    #[test]
    fn aliases_and_roles_resolve() {
        let reg = builtin_registry();
        assert_eq!(reg.resolve("In-Progress"), Some("in_progress"));
        assert_eq!(reg.resolve("in progress"), Some("in_progress"));
        assert_eq!(reg.resolve("cancelled"), Some("canceled"));
        assert_eq!(reg.resolve("done"), None);
        assert!(reg.is_terminal("closed"));
        assert!(reg.is_terminal("Cancelled"));
        assert!(!reg.is_terminal("open"));
        assert_eq!(reg.open_status(), "open");
        assert_eq!(reg.close_status(), "closed");
        assert_eq!(reg.canceled_status(), "canceled");
        assert_eq!(reg.in_progress_status(), Some("in_progress"));
        assert_eq!(reg.blocked_status(), Some("blocked"));
        assert_eq!(reg.draft_status(), Some("draft"));
    }

    #[test]
    fn later_entries_override_and_order_sorts() {
        let mut sources = builtin_status_sources();
        sources.push(json!({"id": "Review", "roles": ["active", "bogus"], "order": 2.5}));
        sources.push(json!({"id": "open", "aliases": ["New", "new", " todo "]}));
        sources.push(json!({"id": "  "}));
        let defs = normalize_status_definitions(&sources);
        let ids: Vec<_> = defs.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "draft",
                "in_progress",
                "review",
                "blocked",
                "closed",
                "canceled",
                "open"
            ]
        );
        let open = defs
            .iter()
            .find(|d| d.id == "open")
            .map(|d| d.aliases.clone());
        assert_eq!(open, Some(vec!["new".to_string(), "todo".to_string()]));
        assert_eq!(defs[2].roles, vec![StatusRole::Active]);
    }

    #[test]
    fn role_fallbacks_apply_without_workflow() {
        let defs = normalize_status_definitions(&[
            json!({"id": "todo", "roles": ["default_open"]}),
            json!({"id": "done"}),
            json!({"id": "dropped", "roles": ["default_cancel", "terminal"]}),
        ]);
        let reg = StatusRegistry::new(defs, Workflow::default());
        assert_eq!(reg.open_status(), "todo");
        assert_eq!(reg.close_status(), "done");
        assert_eq!(reg.canceled_status(), "dropped");
        assert_eq!(reg.blocked_status(), None);
    }

    #[test]
    fn registry_free_mapping_is_minimal() {
        assert_eq!(
            canonical_status_without_registry("in-progress"),
            "in_progress"
        );
        assert_eq!(canonical_status_without_registry("cancelled"), "canceled");
        assert_eq!(
            canonical_status_without_registry("In-Progress"),
            "In-Progress"
        );
        assert_eq!(canonical_status_without_registry("done"), "done");
    }
}
