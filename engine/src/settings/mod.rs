//! `settings.json`: the read algorithm (defaults, key-by-key validation,
//! merge, legacy coercions, governance presets), typed accessors, the write gate, and the full
//! and sparse writers. Reads never write; the caller passes environment overrides in.

mod check;
mod defaults;
mod governance;
mod merge;
mod validate;
mod write;

pub use check::{SettingIssue, Validated, validate_settings};
pub use defaults::defaults_tree;
pub use governance::{Governance, GovernancePreset, OwnershipEnforcement, WorkflowEnforcement};
pub use validate::DUPLICATE_DETECTION_MODES;
pub use write::{TOP_LEVEL_ORDER, order_document, order_keys, render};

use crate::error::{Error, IoResultExt, Result};
use crate::ids::{clamp_token_length, normalize_prefix};
use crate::item::ItemFormat;
use crate::json::to_compact;
use crate::notice::Notice;
use crate::schema::SchemaSection;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::Path;

/// File name of the settings document inside the tracker root.
pub const SETTINGS_FILE: &str = "settings.json";

/// Environment-derived overrides the caller (the CLI) read; the library never reads the env.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SettingsEnv {
    /// `PM_LOCK_WAIT_MS`, already parsed with [`parse_lock_wait_ms`]; replaces `locks.wait_ms`.
    pub lock_wait_ms: Option<u64>,
    /// `PM_LOCK_WAIT_MS` as given when it is not a whole number within [`LOCK_WAIT_MS_MAX`];
    /// mutations refuse it (`settings_invalid`), reads ignore it.
    pub lock_wait_ms_invalid: Option<String>,
}

/// The last settings text this process parsed, with its env and result. One command reads
/// settings.json more than once (the output format before dispatch, then the schema), and the
/// parse is a pure function of the text and the env, so an equal text is answered from here.
type ParsedSettings = (String, SettingsEnv, (Settings, Vec<Notice>));
static LAST_PARSED: std::sync::Mutex<Option<ParsedSettings>> = std::sync::Mutex::new(None);

/// The legal `locks.ttl_seconds`: 1 s to 30 days.
pub const LOCK_TTL_SECONDS_RANGE: std::ops::RangeInclusive<u64> = 1..=2_592_000;
/// The longest lock wait (`locks.wait_ms`, `PM_LOCK_WAIT_MS`): 10 minutes.
pub const LOCK_WAIT_MS_MAX: u64 = 600_000;
/// The default largest item file (`limits.item_max_bytes`): 8 MiB.
pub const ITEM_MAX_BYTES_DEFAULT: u64 = 8 * 1024 * 1024;
/// The legal `limits.item_max_bytes`: 4 KiB to 1 GiB.
pub const ITEM_MAX_BYTES_RANGE: std::ops::RangeInclusive<u64> = 4096..=1_073_741_824;

/// Parses `PM_LOCK_WAIT_MS` as pm does: trimmed, all ASCII digits, a safe integer.
pub fn parse_lock_wait_ms(raw: &str) -> Option<u64> {
    let trimmed = crate::schema::token::js_trim(raw);
    if trimmed.is_empty() || !trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    trimmed
        .parse::<u64>()
        .ok()
        .filter(|v| *v <= 9_007_199_254_740_991)
}

/// The default output encoding of commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// TOON (pm's default).
    Toon,
    /// JSON.
    Json,
}

/// What a mutation does when an item has no history stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissingStreamPolicy {
    /// Create the stream (default).
    AutoCreate,
    /// Fail the mutation.
    StrictError,
}

/// `context` defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextDefaults {
    /// `brief`, `standard` or `deep`.
    pub default_depth: String,
    /// Activity entries to show.
    pub activity_limit: u64,
    /// Days after which open work counts as stale.
    pub stale_threshold_days: u64,
    /// Section toggles by name.
    pub sections: BTreeMap<String, bool>,
}

/// A tracker's settings: the effective (merged) tree, the user's own document for sparse
/// rewrites, and typed accessors.
#[derive(Clone, Debug)]
pub struct Settings {
    effective: Map<String, Value>,
    source: Option<Map<String, Value>>,
    governance: Governance,
    lock_wait_override: Option<u64>,
    lock_wait_invalid: Option<String>,
    issues: Vec<SettingIssue>,
}

impl Settings {
    /// Returns pm's defaults, as used when settings.json is missing or invalid (governance preset
    /// `minimal`, the preset of pm's defaults table).
    pub fn defaults() -> Settings {
        Settings::from_effective(defaults_tree(GovernancePreset::Minimal), None, None)
    }

    /// Returns the settings `pm init --defaults` writes: the full defaults with the given
    /// prefix (normalized), default author and governance preset.
    pub fn for_init(id_prefix: &str, author_default: &str, preset: GovernancePreset) -> Settings {
        let mut tree = defaults_tree(preset);
        tree.insert(
            "id_prefix".into(),
            Value::String(normalize_prefix(id_prefix)),
        );
        tree.insert(
            "author_default".into(),
            Value::String(author_default.to_string()),
        );
        Settings::from_effective(tree, None, None)
    }

    /// Reads `<root>/settings.json` with pm's algorithm; see [`Settings::from_text`].
    ///
    /// # Errors
    /// `Error::Io` when the file exists but cannot be read.
    pub fn read(root: &Path, env: &SettingsEnv) -> Result<(Settings, Vec<Notice>)> {
        let path = root.join(SETTINGS_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Settings::from_text(&text, env)),
            Err(err) if err.kind() == ErrorKind::NotFound => {
                Ok((Settings::defaults().with_env(env), Vec::new()))
            }
            Err(err) => Err(err).at(path),
        }
    }

    /// Parses settings.json text. Every key is read on its own: a value outside its domain
    /// (see [`validate_settings`]) is dropped with a `settings_invalid` notice naming it, and only
    /// that key falls back to its default; the rest is merged over the defaults (two levels
    /// deep; `schema` and `item_types` replace), a missing `governance` means preset `default`,
    /// `item_format: "json_markdown"` selects Markdown item files. Text that is not JSON gives
    /// the defaults plus `settings_read_invalid_json`. Either way the issues stay on the
    /// settings ([`Settings::issues`]) and every write refuses them ([`Settings::check_writable`]).
    pub fn from_text(text: &str, env: &SettingsEnv) -> (Settings, Vec<Notice>) {
        let mut last = LAST_PARSED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((seen, seen_env, parsed)) = last.as_ref()
            && seen == text
            && seen_env == env
        {
            return parsed.clone();
        }
        let parsed = Settings::parse_text(text, env);
        *last = Some((text.to_string(), env.clone(), parsed.clone()));
        parsed
    }

    fn parse_text(text: &str, env: &SettingsEnv) -> (Settings, Vec<Notice>) {
        match serde_json::from_str::<Value>(text) {
            Ok(parsed) => Settings::from_document(&parsed, env),
            Err(err) => {
                let issue = check::syntax_issue(&err);
                let notice = Notice::new(
                    "settings_read_invalid_json",
                    format!(
                        "settings.json is not valid JSON ({err}); reads use the defaults, writes refuse until it is fixed"
                    ),
                );
                let mut settings = Settings::defaults().with_env(env);
                settings.issues.push(issue);
                (settings, vec![notice])
            }
        }
    }

    /// Builds settings from a parsed document, key by key; the notices name every value that
    /// was outside its domain (and was replaced by its default).
    pub fn from_document(doc: &Value, env: &SettingsEnv) -> (Settings, Vec<Notice>) {
        let Validated { document, issues } = validate_settings(doc);
        let notices = issues
            .iter()
            .map(|issue| Notice::new("settings_invalid", issue.message()))
            .collect();
        let (effective, governance) = merge::merge(&document);
        let mut settings =
            Settings::from_effective(effective, doc.as_object().cloned(), Some(governance));
        settings.issues = issues;
        (settings.with_env(env), notices)
    }

    /// Returns the values of settings.json that are outside their legal domain (empty for a
    /// valid or missing file).
    pub fn issues(&self) -> &[SettingIssue] {
        &self.issues
    }

    /// Refuses a write while any setting is invalid: the first value of settings.json outside
    /// its domain, or an unparseable `PM_LOCK_WAIT_MS`.
    ///
    /// # Errors
    /// `settings_invalid` naming the key, the value, the legal domain and where it was found.
    pub fn check_writable(&self) -> Result<()> {
        if let Some(issue) = self.issues.first() {
            return Err(issue.to_error());
        }
        self.checked_lock_wait_ms().map(|_| ())
    }

    fn from_effective(
        effective: Map<String, Value>,
        source: Option<Map<String, Value>>,
        governance: Option<Governance>,
    ) -> Settings {
        let governance = governance.unwrap_or_else(|| {
            Governance::resolve(effective.get("governance").and_then(Value::as_object))
        });
        Settings {
            effective,
            source,
            governance,
            lock_wait_override: None,
            lock_wait_invalid: None,
            issues: Vec::new(),
        }
    }

    fn with_env(mut self, env: &SettingsEnv) -> Settings {
        self.lock_wait_override = env.lock_wait_ms;
        self.lock_wait_invalid = env.lock_wait_ms_invalid.clone();
        if let (Some(ms), Some(Value::Object(locks))) =
            (env.lock_wait_ms, self.effective.get_mut("locks"))
        {
            locks.insert("wait_ms".into(), Value::from(ms));
        }
        self
    }

    /// Returns the effective settings tree (defaults merged with the file, governance expanded).
    pub fn effective(&self) -> &Map<String, Value> {
        &self.effective
    }

    /// Returns the user's document as parsed (unknown keys kept), when settings.json held a
    /// JSON object.
    pub fn source(&self) -> Option<&Map<String, Value>> {
        self.source.as_ref()
    }

    fn get(&self, path: &[&str]) -> Option<&Value> {
        let (first, rest) = path.split_first()?;
        let mut current = self.effective.get(*first)?;
        for key in rest {
            current = current.as_object()?.get(*key)?;
        }
        Some(current)
    }

    fn u64_at(&self, path: &[&str], default: u64) -> u64 {
        self.get(path)
            .and_then(Value::as_f64)
            .filter(|f| f.is_finite())
            .map_or(default, |f| f.max(0.0) as u64)
    }

    /// Returns `id_prefix` as written.
    pub fn id_prefix_raw(&self) -> &str {
        self.get(&["id_prefix"])
            .and_then(Value::as_str)
            .unwrap_or("pm-")
    }

    /// Returns the canonical id prefix (`normalize_prefix(id_prefix)`).
    pub fn id_prefix(&self) -> String {
        normalize_prefix(self.id_prefix_raw())
    }

    /// Returns `ids.token_length` clamped to 4..=12.
    pub fn token_length(&self) -> usize {
        clamp_token_length(self.get(&["ids", "token_length"]).and_then(Value::as_f64))
    }

    /// Returns `author_default`.
    pub fn author_default(&self) -> &str {
        self.get(&["author_default"])
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// Returns `locks.ttl_seconds` (negative values count as 0).
    pub fn lock_ttl_seconds(&self) -> u64 {
        self.u64_at(&["locks", "ttl_seconds"], 1800)
    }

    /// Returns the lock wait budget: `PM_LOCK_WAIT_MS` when given, else `locks.wait_ms`.
    pub fn lock_wait_ms(&self) -> u64 {
        self.lock_wait_override
            .unwrap_or_else(|| self.u64_at(&["locks", "wait_ms"], 3000))
    }

    /// Returns `locks.ttl_seconds`, refusing a value outside [`LOCK_TTL_SECONDS_RANGE`] (a ttl of
    /// 0 or less would make every held lock look stale).
    ///
    /// # Errors
    /// `settings_invalid` naming the key, the value and the legal domain.
    pub fn checked_lock_ttl_seconds(&self) -> Result<u64> {
        self.checked_int(&["locks", "ttl_seconds"], 1800)
    }

    /// Returns the lock wait budget (`PM_LOCK_WAIT_MS`, else `locks.wait_ms`), refusing a value
    /// above [`LOCK_WAIT_MS_MAX`] or an unparseable `PM_LOCK_WAIT_MS`.
    ///
    /// # Errors
    /// `settings_invalid` naming the key or variable, the value and the legal domain.
    pub fn checked_lock_wait_ms(&self) -> Result<u64> {
        let domain = format!("a whole number of milliseconds from 0 to {LOCK_WAIT_MS_MAX}");
        if let Some(raw) = &self.lock_wait_invalid {
            return Err(Error::SettingsInvalid {
                key: "PM_LOCK_WAIT_MS".into(),
                value: crate::json::to_compact(&Value::from(raw.clone())),
                domain,
                origin: "the environment".into(),
            });
        }
        if let Some(ms) = self.lock_wait_override {
            return Ok(ms);
        }
        self.checked_int(&["locks", "wait_ms"], 3000)
    }

    /// Returns `limits.item_max_bytes` (default [`ITEM_MAX_BYTES_DEFAULT`]), refusing a value
    /// outside [`ITEM_MAX_BYTES_RANGE`].
    ///
    /// # Errors
    /// `settings_invalid` naming the key, the value and the legal domain.
    pub fn checked_item_max_bytes(&self) -> Result<u64> {
        self.checked_int(&["limits", "item_max_bytes"], ITEM_MAX_BYTES_DEFAULT)
    }

    /// Returns an integer key that a write needs: its issue when it is outside its domain
    /// (the domain is the key's shape in `validate.rs`), else the value or `default`.
    fn checked_int(&self, path: &[&str], default: u64) -> Result<u64> {
        let key = path.join(".");
        if let Some(issue) = self.issues.iter().find(|i| i.key == key) {
            return Err(issue.to_error());
        }
        Ok(self.u64_at(path, default))
    }

    /// Returns `limits.item_max_bytes` for reading (its default when it is invalid; reads
    /// warn instead of refusing).
    pub fn item_max_bytes(&self) -> u64 {
        self.u64_at(&["limits", "item_max_bytes"], ITEM_MAX_BYTES_DEFAULT)
    }

    /// Returns `output.default_format`.
    pub fn output_format(&self) -> OutputFormat {
        match self
            .get(&["output", "default_format"])
            .and_then(Value::as_str)
        {
            Some("json") => OutputFormat::Json,
            _ => OutputFormat::Toon,
        }
    }

    /// Returns `history.missing_stream`.
    pub fn missing_stream(&self) -> MissingStreamPolicy {
        match self
            .get(&["history", "missing_stream"])
            .and_then(Value::as_str)
        {
            Some("strict_error") => MissingStreamPolicy::StrictError,
            _ => MissingStreamPolicy::AutoCreate,
        }
    }

    /// Returns the resolved governance knobs.
    pub fn governance(&self) -> &Governance {
        &self.governance
    }

    /// Returns the format items are written in: `toon`, or `json_markdown` (the opt-in for
    /// JSON-front-matter `.md` files, the only other value pm's validator accepts; pm itself
    /// coerces it to `toon`, see `docs/compatibility.md`).
    pub fn item_format(&self) -> ItemFormat {
        match self.get(&["item_format"]).and_then(Value::as_str) {
            Some("json_markdown") => ItemFormat::Markdown,
            _ => ItemFormat::Toon,
        }
    }

    /// Returns true when settings.json names an `item_format` itself.
    pub fn has_explicit_item_format(&self) -> bool {
        self.source
            .as_ref()
            .and_then(|s| s.get("item_format"))
            .and_then(Value::as_str)
            .is_some_and(|f| matches!(f, "toon" | "json_markdown"))
    }

    /// Returns `search.score_threshold`.
    pub fn search_score_threshold(&self) -> f64 {
        self.get(&["search", "score_threshold"])
            .and_then(Value::as_f64)
            .unwrap_or(0.0)
    }

    /// Returns `search.max_results`.
    pub fn search_max_results(&self) -> u64 {
        self.u64_at(&["search", "max_results"], 50)
    }

    /// Returns the `context` defaults.
    pub fn context(&self) -> ContextDefaults {
        let sections = self
            .get(&["context", "sections"])
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_bool().map(|b| (k.clone(), b)))
                    .collect()
            })
            .unwrap_or_default();
        ContextDefaults {
            default_depth: self
                .get(&["context", "default_depth"])
                .and_then(Value::as_str)
                .unwrap_or("brief")
                .to_string(),
            activity_limit: self.u64_at(&["context", "activity_limit"], 10),
            stale_threshold_days: self.u64_at(&["context", "stale_threshold_days"], 7),
            sections,
        }
    }

    /// Returns `mutation_guard.secret_guard` (default `advise`; a value outside the domain
    /// reads as the default and is reported as a settings issue).
    pub fn secret_guard(&self) -> crate::guard::SecretGuardMode {
        self.get(&["mutation_guard", "secret_guard"])
            .and_then(Value::as_str)
            .and_then(crate::guard::SecretGuardMode::parse)
            .unwrap_or_default()
    }

    /// Returns `testing.record_results_to_items`.
    pub fn record_test_results(&self) -> bool {
        self.get(&["testing", "record_results_to_items"])
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// Returns `workflow.definition_of_done`.
    pub fn definition_of_done(&self) -> Vec<&str> {
        crate::schema::token::json_strings(self.get(&["workflow", "definition_of_done"]))
    }

    /// Returns the configured path of a schema file (`schema.files.<section>`), if any.
    pub fn schema_file(&self, section: SchemaSection) -> Option<&str> {
        self.get(&["schema", "files", section.as_str()])
            .and_then(Value::as_str)
    }

    /// Returns the `schema` block the runtime schema starts from (the file's own block when it
    /// has one, else the defaults).
    pub fn schema_block(&self) -> Option<&Map<String, Value>> {
        self.get(&["schema"]).and_then(Value::as_object)
    }

    /// Returns `item_types.definitions` as written.
    pub fn item_type_definitions(&self) -> &[Value] {
        self.get(&["item_types", "definitions"])
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// Sets one leaf (e.g. `["output", "default_format"]`) in the user's document (or in the
    /// full tree when the file was missing or invalid) and recomputes the effective settings.
    ///
    /// # Errors
    /// `Error::InvalidArgument` when the path crosses a non-object, `settings_invalid` when the
    /// result would hold a value outside its domain; nothing changes then.
    pub fn set(&mut self, path: &[&str], value: Value) -> Result<()> {
        let field = path.join(".");
        let invalid = |reason: &str| Error::InvalidArgument {
            field: field.clone(),
            value: to_compact(&value),
            reason: reason.to_string(),
            allowed: Vec::new(),
        };
        let Some((last, parents)) = path.split_last() else {
            return Err(invalid("empty settings path"));
        };
        let mut doc = match &self.source {
            Some(source) => source.clone(),
            None => write::full_tree(&self.effective_without_env(), &self.governance),
        };
        let mut cursor = &mut doc;
        for key in parents {
            let slot = cursor
                .entry((*key).to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            cursor = slot
                .as_object_mut()
                .ok_or_else(|| invalid("path crosses a non-object"))?;
        }
        cursor.insert((*last).to_string(), value.clone());
        let env = SettingsEnv {
            lock_wait_ms: self.lock_wait_override,
            lock_wait_ms_invalid: self.lock_wait_invalid.clone(),
        };
        let (updated, _) = Settings::from_document(&Value::Object(doc), &env);
        if let Some(issue) = updated.issues.first() {
            return Err(issue.to_error());
        }
        *self = updated;
        Ok(())
    }

    fn effective_without_env(&self) -> Map<String, Value> {
        let mut tree = self.effective.clone();
        if self.lock_wait_override.is_some()
            && let Some(Value::Object(locks)) = tree.get_mut("locks")
        {
            let original = self
                .source
                .as_ref()
                .and_then(|s| s.get("locks"))
                .and_then(|l| l.get("wait_ms"))
                .cloned()
                .unwrap_or(Value::from(3000));
            locks.insert("wait_ms".into(), original);
        }
        tree
    }

    /// Returns the full settings.json text (what `pm init` writes): every key, pm's orders,
    /// normalized `schema`, governance in persisted form.
    pub fn to_full_json(&self) -> String {
        render(&write::full_tree(
            &self.effective_without_env(),
            &self.governance,
        ))
    }

    /// Returns the sparse settings.json text: the user's document with the leaves changed by
    /// [`Settings::set`], keys in pm's orders, nothing added; the full text when there was no
    /// valid document.
    pub fn to_sparse_json(&self) -> String {
        match &self.source {
            Some(source) => render(&order_document(source.clone())),
            None => self.to_full_json(),
        }
    }
}

#[cfg(test)]
mod tests;
