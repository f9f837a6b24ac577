//! Governance presets: the knob table of `minimal`/`default`/`strict`,
//! `custom` overrides, the knobs every preset preserves, and the persisted form.

use crate::schema::token::js_trim;
use serde_json::{Map, Value, json};

/// A governance preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GovernancePreset {
    /// Nothing blocks.
    Minimal,
    /// Warnings; the preset of a settings file without `governance`.
    Default,
    /// Everything blocks.
    Strict,
    /// `default` as baseline plus explicit knobs.
    Custom,
}

impl GovernancePreset {
    /// Parses a preset token exactly (`minimal`, `default`, `strict`, `custom`).
    pub fn parse(token: &str) -> Option<GovernancePreset> {
        match token {
            "minimal" => Some(GovernancePreset::Minimal),
            "default" => Some(GovernancePreset::Default),
            "strict" => Some(GovernancePreset::Strict),
            "custom" => Some(GovernancePreset::Custom),
            _ => None,
        }
    }

    /// Returns the preset token.
    pub fn as_str(self) -> &'static str {
        match self {
            GovernancePreset::Minimal => "minimal",
            GovernancePreset::Default => "default",
            GovernancePreset::Strict => "strict",
            GovernancePreset::Custom => "custom",
        }
    }
}

/// How ownership conflicts (mutating an item claimed by someone else) are handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OwnershipEnforcement {
    /// Ignore.
    None,
    /// Warn and continue.
    Warn,
    /// Refuse (exit 4).
    Strict,
}

impl OwnershipEnforcement {
    fn parse(token: &str) -> Option<OwnershipEnforcement> {
        match token {
            "none" => Some(OwnershipEnforcement::None),
            "warn" => Some(OwnershipEnforcement::Warn),
            "strict" => Some(OwnershipEnforcement::Strict),
            _ => None,
        }
    }

    /// Returns the token.
    pub fn as_str(self) -> &'static str {
        match self {
            OwnershipEnforcement::None => "none",
            OwnershipEnforcement::Warn => "warn",
            OwnershipEnforcement::Strict => "strict",
        }
    }
}

/// How workflow transition rules are enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkflowEnforcement {
    /// Not enforced.
    Off,
    /// Warn on a disallowed transition.
    Warn,
    /// Refuse a disallowed transition.
    Strict,
}

impl WorkflowEnforcement {
    fn parse(token: &str) -> Option<WorkflowEnforcement> {
        match token {
            "off" => Some(WorkflowEnforcement::Off),
            "warn" => Some(WorkflowEnforcement::Warn),
            "strict" => Some(WorkflowEnforcement::Strict),
            _ => None,
        }
    }

    /// Returns the token.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkflowEnforcement::Off => "off",
            WorkflowEnforcement::Warn => "warn",
            WorkflowEnforcement::Strict => "strict",
        }
    }
}

/// The resolved governance knobs.
#[derive(Clone, Debug, PartialEq)]
pub struct Governance {
    /// The preset.
    pub preset: GovernancePreset,
    /// Ownership conflict handling.
    pub ownership_enforcement: OwnershipEnforcement,
    /// `progressive` or `strict`.
    pub create_mode_default: String,
    /// `off`, `warn` or `strict`.
    pub close_validation_default: String,
    /// Whether `close` needs a reason (true in every preset unless explicitly false).
    pub require_close_reason: bool,
    /// `warn` or `strict_error`.
    pub parent_reference: String,
    /// `core`, `strict` or `custom`.
    pub metadata_profile: String,
    /// Whether removing a stale lock needs `--force`.
    pub force_required_for_stale_lock: bool,
    /// `off`, `warn` or `strict`.
    pub duplicate_detection_mode: String,
    /// Similarity threshold for duplicate detection.
    pub duplicate_detection_threshold: f64,
    /// How many duplicate candidates to report.
    pub duplicate_detection_limit: u64,
    /// Type `create` uses when `--type` is omitted.
    pub create_default_type: Option<String>,
    /// Workflow transition enforcement, when configured.
    pub workflow_enforcement: Option<WorkflowEnforcement>,
}

impl Governance {
    /// Returns the knobs of a built-in preset (`Custom` gives the `default` baseline).
    pub fn for_preset(preset: GovernancePreset) -> Governance {
        let (ownership, create, close, profile, force, duplicates) = match preset {
            GovernancePreset::Minimal => (
                OwnershipEnforcement::None,
                "progressive",
                "off",
                "core",
                false,
                "off",
            ),
            GovernancePreset::Default | GovernancePreset::Custom => (
                OwnershipEnforcement::Warn,
                "progressive",
                "warn",
                "core",
                true,
                "strict",
            ),
            GovernancePreset::Strict => (
                OwnershipEnforcement::Strict,
                "strict",
                "strict",
                "strict",
                true,
                "strict",
            ),
        };
        Governance {
            preset,
            ownership_enforcement: ownership,
            create_mode_default: create.into(),
            close_validation_default: close.into(),
            require_close_reason: true,
            parent_reference: "strict_error".into(),
            metadata_profile: profile.into(),
            force_required_for_stale_lock: force,
            duplicate_detection_mode: duplicates.into(),
            duplicate_detection_threshold: 0.8,
            duplicate_detection_limit: 3,
            create_default_type: None,
            workflow_enforcement: None,
        }
    }

    /// Resolves the `governance` block of a validated settings file; `None` (no block) means
    /// preset `default`, a block without a known preset means `minimal` (pm's defaults-table
    /// preset). Non-custom presets take the table knobs; `custom` overlays explicit knobs on the
    /// `default` baseline. `create_default_type`, `workflow_enforcement`, `require_close_reason`
    /// and the duplicate-detection knobs are honoured under every preset.
    pub fn resolve(raw: Option<&Map<String, Value>>) -> Governance {
        let Some(raw) = raw else {
            return Governance::for_preset(GovernancePreset::Default);
        };
        let text = |k: &str| raw.get(k).and_then(Value::as_str);
        let preset = text("preset")
            .and_then(GovernancePreset::parse)
            .unwrap_or(GovernancePreset::Minimal);
        let mut g = Governance::for_preset(preset);
        if preset == GovernancePreset::Custom {
            if let Some(v) = text("ownership_enforcement").and_then(OwnershipEnforcement::parse) {
                g.ownership_enforcement = v;
            }
            for (key, slot) in [
                ("create_mode_default", &mut g.create_mode_default),
                ("close_validation_default", &mut g.close_validation_default),
                ("parent_reference", &mut g.parent_reference),
                ("metadata_profile", &mut g.metadata_profile),
            ] {
                if let Some(v) = text(key) {
                    *slot = v.to_string();
                }
            }
            if let Some(v) = raw
                .get("force_required_for_stale_lock")
                .and_then(Value::as_bool)
            {
                g.force_required_for_stale_lock = v;
            }
        }
        g.create_default_type = text("create_default_type")
            .map(|s| js_trim(s).to_string())
            .filter(|s| !s.is_empty());
        g.workflow_enforcement = text("workflow_enforcement").and_then(WorkflowEnforcement::parse);
        if let Some(v) = raw.get("require_close_reason").and_then(Value::as_bool) {
            g.require_close_reason = v;
        }
        if let Some(v) = text("duplicate_detection_mode") {
            g.duplicate_detection_mode = v.to_string();
        }
        if let Some(v) = raw
            .get("duplicate_detection_threshold")
            .and_then(Value::as_f64)
        {
            g.duplicate_detection_threshold = v;
        }
        if let Some(v) = raw.get("duplicate_detection_limit").and_then(Value::as_u64) {
            g.duplicate_detection_limit = v;
        }
        g
    }

    /// Returns every knob, in pm's in-memory order (what `pm config`/`pm init --json` show).
    pub fn to_effective_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("preset".into(), json!(self.preset.as_str()));
        map.insert(
            "ownership_enforcement".into(),
            json!(self.ownership_enforcement.as_str()),
        );
        map.insert(
            "create_mode_default".into(),
            json!(self.create_mode_default),
        );
        map.insert(
            "close_validation_default".into(),
            json!(self.close_validation_default),
        );
        map.insert(
            "require_close_reason".into(),
            json!(self.require_close_reason),
        );
        map.insert("parent_reference".into(), json!(self.parent_reference));
        map.insert("metadata_profile".into(), json!(self.metadata_profile));
        map.insert(
            "force_required_for_stale_lock".into(),
            json!(self.force_required_for_stale_lock),
        );
        self.insert_duplicate_knobs(&mut map);
        self.insert_extras(&mut map);
        Value::Object(map)
    }

    /// Returns the block pm writes to settings.json: the preset, the custom knobs (custom only),
    /// the preserved extras, then the duplicate-detection knobs.
    pub fn to_persisted_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("preset".into(), json!(self.preset.as_str()));
        if self.preset == GovernancePreset::Custom {
            map.insert(
                "ownership_enforcement".into(),
                json!(self.ownership_enforcement.as_str()),
            );
            map.insert(
                "create_mode_default".into(),
                json!(self.create_mode_default),
            );
            map.insert(
                "close_validation_default".into(),
                json!(self.close_validation_default),
            );
        }
        if !self.require_close_reason {
            map.insert("require_close_reason".into(), json!(false));
        }
        if self.preset == GovernancePreset::Custom {
            map.insert("parent_reference".into(), json!(self.parent_reference));
            map.insert("metadata_profile".into(), json!(self.metadata_profile));
            map.insert(
                "force_required_for_stale_lock".into(),
                json!(self.force_required_for_stale_lock),
            );
        }
        self.insert_extras(&mut map);
        self.insert_duplicate_knobs(&mut map);
        Value::Object(map)
    }

    fn insert_duplicate_knobs(&self, map: &mut Map<String, Value>) {
        map.insert(
            "duplicate_detection_mode".into(),
            json!(self.duplicate_detection_mode),
        );
        let threshold = crate::json::number_from_f64(self.duplicate_detection_threshold)
            .map_or(Value::Null, Value::Number);
        map.insert("duplicate_detection_threshold".into(), threshold);
        map.insert(
            "duplicate_detection_limit".into(),
            json!(self.duplicate_detection_limit),
        );
    }

    fn insert_extras(&self, map: &mut Map<String, Value>) {
        if let Some(t) = &self.create_default_type {
            map.insert("create_default_type".into(), json!(t));
        }
        if let Some(w) = self.workflow_enforcement {
            map.insert("workflow_enforcement".into(), json!(w.as_str()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::to_compact;

    #[test]
    fn missing_block_means_default_and_bare_block_minimal() {
        assert_eq!(Governance::resolve(None).preset, GovernancePreset::Default);
        assert!(Governance::resolve(None).force_required_for_stale_lock);
        let bare = Map::new();
        assert_eq!(
            Governance::resolve(Some(&bare)).preset,
            GovernancePreset::Minimal
        );
    }

    #[test]
    fn custom_overlays_default_baseline() {
        let raw = json!({"preset": "custom", "ownership_enforcement": "strict", "require_close_reason": false,
            "workflow_enforcement": "warn", "create_default_type": " Task ", "duplicate_detection_limit": 5});
        let g = Governance::resolve(raw.as_object());
        assert_eq!(g.ownership_enforcement, OwnershipEnforcement::Strict);
        assert_eq!(g.close_validation_default, "warn");
        assert!(!g.require_close_reason);
        assert_eq!(g.workflow_enforcement, Some(WorkflowEnforcement::Warn));
        assert_eq!(g.create_default_type.as_deref(), Some("Task"));
        assert_eq!(
            to_compact(&g.to_persisted_json()),
            r#"{"preset":"custom","ownership_enforcement":"strict","create_mode_default":"progressive","close_validation_default":"warn","require_close_reason":false,"parent_reference":"strict_error","metadata_profile":"core","force_required_for_stale_lock":true,"create_default_type":"Task","workflow_enforcement":"warn","duplicate_detection_mode":"strict","duplicate_detection_threshold":0.8,"duplicate_detection_limit":5}"#
        );
    }

    #[test]
    fn presets_ignore_knobs_outside_custom() {
        let raw = json!({"preset": "strict", "ownership_enforcement": "none"});
        let g = Governance::resolve(raw.as_object());
        assert_eq!(g.ownership_enforcement, OwnershipEnforcement::Strict);
        assert_eq!(
            to_compact(&Governance::for_preset(GovernancePreset::Minimal).to_persisted_json()),
            r#"{"preset":"minimal","duplicate_detection_mode":"off","duplicate_detection_threshold":0.8,"duplicate_detection_limit":3}"#
        );
    }
}
