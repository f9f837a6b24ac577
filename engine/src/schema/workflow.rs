//! Lifecycle workflow: the six role → status mappings and per-type allowed
//! transitions from `settings.schema` and `schema/workflows.json`.

use super::token::{locale_compare, normalize_status_token};
use serde_json::{Map, Value, json};

/// The six keys of a workflow block, in pm's serialization order.
pub const WORKFLOW_KEYS: [&str; 6] = [
    "draft_status",
    "open_status",
    "in_progress_status",
    "blocked_status",
    "close_status",
    "canceled_status",
];

/// Which status plays each lifecycle role; `None` when not configured.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Workflow {
    /// Status for drafts.
    pub draft_status: Option<String>,
    /// Status for new items.
    pub open_status: Option<String>,
    /// Status for work under way.
    pub in_progress_status: Option<String>,
    /// Status for blocked work.
    pub blocked_status: Option<String>,
    /// Status `close` sets.
    pub close_status: Option<String>,
    /// Status a cancel sets.
    pub canceled_status: Option<String>,
}

impl Workflow {
    /// Returns pm's default workflow (draft, open, in_progress, blocked, closed, canceled).
    pub fn builtin() -> Workflow {
        Workflow {
            draft_status: Some("draft".into()),
            open_status: Some("open".into()),
            in_progress_status: Some("in_progress".into()),
            blocked_status: Some("blocked".into()),
            close_status: Some("closed".into()),
            canceled_status: Some("canceled".into()),
        }
    }

    /// Returns the default block as JSON (the `schema/workflows.json` seed content).
    pub fn builtin_json() -> Value {
        json!({
            "draft_status": "draft",
            "open_status": "open",
            "in_progress_status": "in_progress",
            "blocked_status": "blocked",
            "close_status": "closed",
            "canceled_status": "canceled"
        })
    }

    /// Overlays the keys present in `block` (a JSON object): each present key replaces the
    /// current value with its normalized status token, or `None` when it is not a non-empty
    /// string. This mirrors pm's object spread of the file block over the settings block.
    pub fn overlay(&mut self, block: &Map<String, Value>) {
        for key in WORKFLOW_KEYS {
            if let Some(raw) = block.get(key) {
                let value = raw
                    .as_str()
                    .map(normalize_status_token)
                    .filter(|s| !s.is_empty());
                *self.slot(key) = value;
            }
        }
    }

    /// Returns a workflow read from a settings `schema.workflow` block: keys the block lacks
    /// are unset (pm spreads the normalized block, `undefined` included, over the defaults).
    pub fn from_settings_block(block: &Map<String, Value>) -> Workflow {
        let mut workflow = Workflow::default();
        workflow.overlay(block);
        workflow
    }

    /// Returns the block as JSON with unset keys omitted, in pm's key order.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        for key in WORKFLOW_KEYS {
            if let Some(v) = self.get(key) {
                map.insert(key.to_string(), Value::String(v.to_string()));
            }
        }
        Value::Object(map)
    }

    /// Returns the status configured for `key` (one of [`WORKFLOW_KEYS`]).
    pub fn get(&self, key: &str) -> Option<&str> {
        match key {
            "draft_status" => self.draft_status.as_deref(),
            "open_status" => self.open_status.as_deref(),
            "in_progress_status" => self.in_progress_status.as_deref(),
            "blocked_status" => self.blocked_status.as_deref(),
            "close_status" => self.close_status.as_deref(),
            "canceled_status" => self.canceled_status.as_deref(),
            _ => None,
        }
    }

    fn slot(&mut self, key: &str) -> &mut Option<String> {
        match key {
            "draft_status" => &mut self.draft_status,
            "open_status" => &mut self.open_status,
            "in_progress_status" => &mut self.in_progress_status,
            "blocked_status" => &mut self.blocked_status,
            "close_status" => &mut self.close_status,
            _ => &mut self.canceled_status,
        }
    }
}

/// Allowed status transitions for one item type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeWorkflow {
    /// The type name as written (trimmed); matched case-insensitively.
    pub type_name: String,
    /// Allowed `(from, to)` pairs as normalized status tokens. Empty means deny every change.
    pub allowed_transitions: Vec<(String, String)>,
}

/// Normalizes raw `type_workflows` entries: entries merge by lower-cased type; malformed pairs
/// are dropped; an explicit empty list is a deny-all rule, but a non-empty list whose pairs are
/// all malformed is dropped as a typo. Sorted by type with `localeCompare`.
pub fn normalize_type_workflows(entries: &[Value]) -> Vec<TypeWorkflow> {
    struct Acc {
        key: String,
        record: TypeWorkflow,
        deny_all: bool,
    }
    let mut accs: Vec<Acc> = Vec::new();
    for entry in entries {
        let Some(obj) = entry.as_object() else {
            continue;
        };
        let Some(type_name) = obj.get("type").and_then(Value::as_str) else {
            continue;
        };
        let type_name = super::token::js_trim(type_name);
        let Some(pairs) = obj.get("allowed_transitions").and_then(Value::as_array) else {
            continue;
        };
        if type_name.is_empty() {
            continue;
        }
        let key = type_name.to_lowercase();
        let idx = match accs.iter().position(|a| a.key == key) {
            Some(i) => i,
            None => {
                accs.push(Acc {
                    key,
                    record: TypeWorkflow {
                        type_name: type_name.to_string(),
                        allowed_transitions: Vec::new(),
                    },
                    deny_all: false,
                });
                accs.len() - 1
            }
        };
        let acc = &mut accs[idx];
        acc.deny_all |= pairs.is_empty();
        for pair in pairs {
            let Some([from, to]) = pair
                .as_array()
                .map(Vec::as_slice)
                .and_then(|p| <&[Value; 2]>::try_from(p).ok())
            else {
                continue;
            };
            let (Some(from), Some(to)) = (from.as_str(), to.as_str()) else {
                continue;
            };
            let pair = (normalize_status_token(from), normalize_status_token(to));
            if pair.0.is_empty()
                || pair.1.is_empty()
                || acc.record.allowed_transitions.contains(&pair)
            {
                continue;
            }
            acc.record.allowed_transitions.push(pair);
        }
    }
    let mut out: Vec<TypeWorkflow> = accs
        .into_iter()
        .filter(|a| a.deny_all || !a.record.allowed_transitions.is_empty())
        .map(|a| a.record)
        .collect();
    out.sort_by(|a, b| locale_compare(&a.type_name, &b.type_name));
    out
}

/// Returns whether moving an item of `type_name` from `from` to `to` is allowed: a same-status
/// transition always is; a type without rules allows everything. Statuses must be resolved ids.
pub fn transition_allowed(rules: &[TypeWorkflow], type_name: &str, from: &str, to: &str) -> bool {
    if from == to {
        return true;
    }
    let key = super::token::js_trim(type_name).to_lowercase();
    match rules.iter().find(|r| r.type_name.to_lowercase() == key) {
        None => true,
        Some(rule) => rule
            .allowed_transitions
            .iter()
            .any(|(f, t)| f == from && t == to),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlay_replaces_present_keys_only() {
        let mut wf = Workflow::builtin();
        let block = json!({"close_status": "Done", "open_status": 3});
        wf.overlay(block.as_object().expect("object"));
        assert_eq!(wf.close_status.as_deref(), Some("done"));
        assert_eq!(wf.open_status, None);
        assert_eq!(wf.draft_status.as_deref(), Some("draft"));
        assert_eq!(
            crate::json::to_compact(&Workflow::from_settings_block(&Map::new()).to_json()),
            "{}"
        );
    }

    #[test]
    fn type_workflows_merge_and_enforce() {
        let rules = normalize_type_workflows(&[
            json!({"type": "Task", "allowed_transitions": [["open", "in-progress"], ["x"], ["open", "in progress"]]}),
            json!({"type": "task", "allowed_transitions": [["in_progress", "closed"]]}),
            json!({"type": "Epic", "allowed_transitions": []}),
            json!({"type": "Chore", "allowed_transitions": [["a", "b", "c"]]}),
        ]);
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[0].type_name, "Epic");
        assert_eq!(rules[1].allowed_transitions.len(), 2);
        assert!(transition_allowed(&rules, "TASK", "open", "in_progress"));
        assert!(!transition_allowed(&rules, "Task", "open", "closed"));
        assert!(transition_allowed(&rules, "Task", "open", "open"));
        assert!(!transition_allowed(&rules, "Epic", "open", "closed"));
        assert!(transition_allowed(&rules, "Chore", "open", "closed"));
    }
}
