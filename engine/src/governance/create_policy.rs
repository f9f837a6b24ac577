//! The create-mode policy (`governance.create_mode_default`, `create --create-mode`): which
//! create options each item type requires (pm's option-key table, the type's
//! `required_create_fields`/`required_create_repeatables` under strict mode, and its
//! `command_option_policies`), and the refusal naming the missing flags. Decides only.

use super::create_options::{
    EXPLICIT_EMPTY, SCHEDULE_PRESET_TYPES, canonical_option, explicit_empty, flag_label,
};
use crate::collate::locale_compare;
use crate::error::{Error, Result};
use crate::schema::TypeDefinition;

/// How strictly `create` demands options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreateMode {
    /// Title and type (plus the type's own option policies).
    Progressive,
    /// Every option the type lists as required at create.
    Strict,
}

impl CreateMode {
    /// Reads the settings token (`strict`; anything else is progressive).
    pub fn from_setting(token: &str) -> CreateMode {
        if token == "strict" {
            CreateMode::Strict
        } else {
            CreateMode::Progressive
        }
    }

    /// Resolves `--create-mode` (trimmed, case-insensitive; absent or blank keeps `default`).
    ///
    /// # Errors
    /// `invalid_argument_value` for any other value.
    pub fn resolve(flag: Option<&str>, default: CreateMode) -> Result<CreateMode> {
        let Some(raw) = flag else {
            return Ok(default);
        };
        match crate::item::canon::js::trim(raw).to_lowercase().as_str() {
            "" => Ok(default),
            "strict" => Ok(CreateMode::Strict),
            "progressive" => Ok(CreateMode::Progressive),
            _ => Err(Error::InvalidArgument {
                field: "--create-mode".into(),
                value: raw.into(),
                reason: format!(
                    "Invalid --create-mode value \"{raw}\". Allowed: strict, progressive"
                ),
                allowed: vec!["strict".into(), "progressive".into()],
            }),
        }
    }

    /// Returns the token.
    pub fn as_str(self) -> &'static str {
        match self {
            CreateMode::Progressive => "progressive",
            CreateMode::Strict => "strict",
        }
    }
}

/// Resolves the effective create mode: `--create-mode` (or `default`), except that
/// `--schedule-preset lightweight` (also `lite`, `schedule-lite`) on a Reminder, Meeting or
/// Event creates progressively.
///
/// # Errors
/// `invalid_argument_value` for a bad `--create-mode` or `--schedule-preset`, a preset on
/// another type, or a preset together with an explicit `--create-mode strict`.
pub fn effective_mode(
    flag: Option<&str>,
    schedule_preset: Option<&str>,
    default: CreateMode,
    type_name: &str,
) -> Result<CreateMode> {
    let mode = CreateMode::resolve(flag, default)?;
    let Some(raw) = schedule_preset else {
        return Ok(mode);
    };
    let invalid = |reason: String| Error::InvalidArgument {
        field: "--schedule-preset".into(),
        value: raw.into(),
        reason,
        allowed: vec!["lightweight".into()],
    };
    match crate::item::canon::js::trim(raw).to_lowercase().as_str() {
        "" => return Err(invalid("--schedule-preset must not be empty".into())),
        "lightweight" | "lite" | "schedule-lite" => {}
        _ => {
            return Err(invalid(format!(
                "Invalid --schedule-preset value \"{raw}\". Allowed: lightweight"
            )));
        }
    }
    if !SCHEDULE_PRESET_TYPES.contains(&type_name) {
        return Err(invalid(
            "--schedule-preset lightweight is only supported for Reminder, Meeting, or Event types"
                .into(),
        ));
    }
    let explicit = flag.is_some_and(|f| !crate::item::canon::js::trim(f).is_empty());
    if explicit && mode == CreateMode::Strict {
        return Err(invalid(
            "--schedule-preset lightweight cannot be combined with --create-mode strict. Use --create-mode progressive or omit --create-mode."
                .into(),
        ));
    }
    Ok(CreateMode::Progressive)
}

/// The options a create was given, by any spelling (`--estimate`, `estimated_minutes`, …).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GivenOptions {
    /// Options given with a value (an empty string counts; an empty list does not).
    pub given: Vec<String>,
    /// Options given as an explicit empty (`--clear-<collection>`, `--unset <field>`).
    pub cleared: Vec<String>,
}

impl GivenOptions {
    fn has(&self, key: &str) -> bool {
        self.given.iter().any(|g| canonical_option(g) == Some(key))
    }

    fn cleared(&self, key: &str) -> bool {
        self.cleared
            .iter()
            .any(|g| canonical_option(g) == Some(key))
    }
}

/// The required and disabled create options of a type under a mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreatePolicy {
    /// Required option keys (`title` and `type` first).
    pub required: Vec<&'static str>,
    /// Option keys the type's policies disable.
    pub disabled: Vec<&'static str>,
}

/// Resolves the create policy of `def` under `mode`: title and type always; under strict mode
/// also the type's `required_create_fields` and `required_create_repeatables`; then the type's
/// `command_option_policies` for `create` (`required`, `enabled`).
///
/// # Errors
/// `invalid_argument_value` when the type names an option pm does not know or makes one both
/// required and disabled.
pub fn create_policy(def: &TypeDefinition, mode: CreateMode) -> Result<CreatePolicy> {
    let policy_error = |value: &str, reason: String| Error::InvalidArgument {
        field: format!("item type {} create policy", def.name),
        value: value.to_string(),
        reason,
        allowed: Vec::new(),
    };
    let mut required: Vec<&'static str> = vec!["title", "type"];
    if mode == CreateMode::Strict {
        let listed = [
            ("required_create_fields", &def.required_create_fields),
            (
                "required_create_repeatables",
                &def.required_create_repeatables,
            ),
        ];
        for (source, entries) in listed {
            for raw in entries.iter() {
                let key = canonical_option(raw).ok_or_else(|| {
                    policy_error(
                        raw,
                        format!(
                            "Unsupported {source} entry \"{raw}\" for type \"{}\"",
                            def.name
                        ),
                    )
                })?;
                push_unique(&mut required, key);
            }
        }
    }
    let mut disabled: Vec<&'static str> = Vec::new();
    for policy in def
        .command_option_policies
        .iter()
        .filter(|p| p.command == "create")
    {
        let key = canonical_option(&policy.option).ok_or_else(|| {
            policy_error(
                &policy.option,
                format!(
                    "Unsupported command_option_policies option \"{}\" for command \"create\" on type \"{}\"",
                    policy.option, def.name
                ),
            )
        })?;
        match policy.required {
            Some(true) => push_unique(&mut required, key),
            Some(false) => required.retain(|k| *k != key),
            None => {}
        }
        match policy.enabled {
            Some(false) => push_unique(&mut disabled, key),
            Some(true) => disabled.retain(|k| *k != key),
            None => {}
        }
    }
    if let Some(key) = required.iter().find(|k| disabled.contains(k)) {
        return Err(policy_error(
            key,
            format!(
                "Option \"{key}\" cannot be both required and disabled for command \"create\" on type \"{}\"",
                def.name
            ),
        ));
    }
    Ok(CreatePolicy { required, disabled })
}

/// Checks a create against the policy of its type: no collection is both given and cleared,
/// no disabled option is used, strict mode is not satisfied by clearing a required scalar, and
/// every required option is given. `status` counts as given when the type has a
/// `default_status`; a cleared collection counts as given.
///
/// # Errors
/// `conflicting_arguments` for a given-and-cleared collection; `invalid_argument_value` for a
/// disabled option or a cleared required scalar under strict mode; `missing_required_option`
/// naming every missing flag (sorted with `localeCompare`).
pub fn check_create(def: &TypeDefinition, mode: CreateMode, options: &GivenOptions) -> Result<()> {
    if let Some((key, clear)) = EXPLICIT_EMPTY
        .iter()
        .find(|(key, _)| options.has(key) && options.cleared(key))
    {
        return Err(Error::ConflictingOptions {
            flag: (*clear).to_string(),
            other: flag_label(key),
        });
    }
    let policy = create_policy(def, mode)?;
    if let Some(key) = policy
        .disabled
        .iter()
        .find(|k| options.has(k) || options.cleared(k))
    {
        return Err(Error::InvalidArgument {
            field: flag_label(key),
            value: String::new(),
            reason: format!(
                "Option {} is disabled for type \"{}\" by command_option_policies",
                flag_label(key),
                def.name
            ),
            allowed: Vec::new(),
        });
    }
    if mode == CreateMode::Strict {
        let cleared = sorted_labels(
            policy
                .required
                .iter()
                .filter(|k| options.cleared(k) && !explicit_empty(k)),
        );
        if !cleared.is_empty() {
            return Err(Error::InvalidArgument {
                field: "--unset".into(),
                value: cleared.join(", "),
                reason: format!(
                    "Strict create mode requires concrete values for {}; --unset/--clear-* directives cannot satisfy required options",
                    cleared.join(", ")
                ),
                allowed: Vec::new(),
            });
        }
    }
    let satisfied = |key: &&str| {
        (*key == "status" && def.default_status.is_some())
            || (options.cleared(key) && explicit_empty(key))
            || options.has(key)
    };
    let missing = sorted_labels(policy.required.iter().filter(|k| !satisfied(k)));
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::MissingCreateOptions {
        type_name: def.name.clone(),
        flags: missing,
        strict: mode == CreateMode::Strict,
    })
}

/// The message of a missing-options refusal.
pub(crate) fn missing_message(type_name: &str, flags: &[String]) -> String {
    match flags {
        [one] => format!("Missing required option {one} for type \"{type_name}\""),
        _ => format!(
            "Missing required options {} for type \"{type_name}\"",
            flags.join(", ")
        ),
    }
}

fn sorted_labels<'k>(keys: impl Iterator<Item = &'k &'static str>) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for key in keys {
        let label = flag_label(key);
        if !labels.contains(&label) {
            labels.push(label);
        }
    }
    labels.sort_by(|a, b| locale_compare(a, b));
    labels
}

fn push_unique(list: &mut Vec<&'static str>, key: &'static str) {
    if !list.contains(&key) {
        list.push(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{
        CommandOptionPolicy, DEFAULT_REQUIRED_CREATE_FIELDS, DEFAULT_REQUIRED_CREATE_REPEATABLES,
    };

    fn builtin(name: &str) -> TypeDefinition {
        TypeDefinition {
            name: name.into(),
            folder: "tasks".into(),
            aliases: Vec::new(),
            description: None,
            default_status: None,
            required_create_fields: DEFAULT_REQUIRED_CREATE_FIELDS.map(String::from).to_vec(),
            required_create_repeatables: DEFAULT_REQUIRED_CREATE_REPEATABLES
                .map(String::from)
                .to_vec(),
            options: Vec::new(),
            command_option_policies: Vec::new(),
        }
    }

    fn given(names: &[&str]) -> GivenOptions {
        GivenOptions {
            given: names.iter().map(|s| s.to_string()).collect(),
            cleared: Vec::new(),
        }
    }

    /// pm's contract table (`x-create-required-options`) lists the same 20 flags for every
    /// built-in type under strict mode.
    const STRICT_FLAGS: [&str; 20] = [
        "--acceptance-criteria/--ac",
        "--assignee",
        "--author",
        "--body",
        "--comment",
        "--deadline",
        "--dep",
        "--description",
        "--doc",
        "--estimate/--estimated-minutes",
        "--file",
        "--learning",
        "--message",
        "--note",
        "--priority",
        "--status",
        "--tags",
        "--test",
        "--title",
        "--type",
    ];

    #[test]
    fn strict_requires_the_contract_table_and_progressive_title_and_type() -> Result<()> {
        let def = builtin("Task");
        let strict = create_policy(&def, CreateMode::Strict)?;
        let mut labels: Vec<String> = strict.required.iter().map(|k| flag_label(k)).collect();
        labels.sort_by(|a, b| locale_compare(a, b));
        assert_eq!(labels, STRICT_FLAGS);
        assert_eq!(
            create_policy(&def, CreateMode::Progressive)?.required,
            ["title", "type"]
        );
        Ok(())
    }

    #[test]
    fn bare_strict_create_names_every_missing_flag() {
        let def = builtin("Task");
        match check_create(&def, CreateMode::Strict, &given(&["title", "type"])) {
            Err(err @ Error::MissingCreateOptions { .. }) => {
                let text = err.to_string();
                assert!(text.starts_with("Missing required options --acceptance-criteria/--ac, --assignee, --author, --body, --comment,"), "{text}");
                assert!(text.ends_with("--tags, --test for type \"Task\""), "{text}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn spellings_clears_and_default_status_satisfy_strict() -> Result<()> {
        let mut def = builtin("Task");
        def.default_status = Some("open".into());
        let mut options = given(&[
            "title",
            "type",
            "description",
            "priority",
            "tags",
            "body",
            "deadline",
            "estimate",
            "acceptance_criteria",
            "author",
            "message",
            "assignee",
        ]);
        options.cleared = [
            "dependencies",
            "comments",
            "notes",
            "learnings",
            "files",
            "tests",
            "docs",
        ]
        .map(String::from)
        .to_vec();
        check_create(&def, CreateMode::Strict, &options)?;
        options.cleared.push("deadline".into());
        assert!(matches!(
            check_create(&def, CreateMode::Strict, &options),
            Err(Error::InvalidArgument { .. })
        ));
        match check_create(
            &def,
            CreateMode::Strict,
            &given(&["title", "type", "message"]),
        ) {
            Err(Error::MissingCreateOptions { flags, .. }) => {
                assert!(!flags.contains(&"--status".to_string()));
                assert!(!flags.contains(&"--message".to_string()));
            }
            other => panic!("{other:?}"),
        }
        Ok(())
    }

    #[test]
    fn option_policies_require_and_disable() -> Result<()> {
        let mut def = builtin("Issue");
        def.command_option_policies = vec![
            CommandOptionPolicy {
                command: "create".into(),
                option: "severity".into(),
                required: Some(true),
                visible: None,
                enabled: None,
            },
            CommandOptionPolicy {
                command: "create".into(),
                option: "--sprint".into(),
                required: None,
                visible: None,
                enabled: Some(false),
            },
        ];
        let err = check_create(&def, CreateMode::Progressive, &given(&["title", "type"]));
        assert_eq!(
            err.map_err(|e| e.to_string()),
            Err("Missing required option --severity for type \"Issue\"".to_string())
        );
        let err = check_create(
            &def,
            CreateMode::Progressive,
            &given(&["title", "type", "severity", "sprint"]),
        );
        assert!(matches!(err, Err(Error::InvalidArgument { .. })), "{err:?}");
        check_create(
            &def,
            CreateMode::Progressive,
            &given(&["title", "type", "severity"]),
        )?;
        Ok(())
    }

    #[test]
    fn schedule_preset_creates_progressively_on_schedule_types() -> Result<()> {
        let strict = CreateMode::Strict;
        assert_eq!(
            effective_mode(None, Some("lite"), strict, "Meeting")?,
            CreateMode::Progressive
        );
        assert_eq!(
            effective_mode(None, None, strict, "Meeting")?,
            CreateMode::Strict
        );
        for (flag, preset, ty) in [
            (Some("strict"), Some("lightweight"), "Event"),
            (None, Some("lightweight"), "Task"),
            (None, Some(" "), "Event"),
            (None, Some("heavy"), "Event"),
        ] {
            assert!(
                effective_mode(flag, preset, strict, ty).is_err(),
                "{flag:?} {preset:?} {ty}"
            );
        }
        Ok(())
    }

    #[test]
    fn a_collection_cannot_be_given_and_cleared() {
        let mut options = given(&["title", "type", "dep"]);
        options.cleared.push("dependencies".into());
        let err = check_create(&builtin("Task"), CreateMode::Progressive, &options);
        assert_eq!(
            err.map_err(|e| e.to_string()),
            Err("Cannot combine --clear-deps with --dep".to_string())
        );
    }

    #[test]
    fn modes_and_labels() -> Result<()> {
        assert_eq!(
            CreateMode::resolve(Some(" Strict "), CreateMode::Progressive)?,
            CreateMode::Strict
        );
        assert_eq!(
            CreateMode::resolve(Some(""), CreateMode::Strict)?,
            CreateMode::Strict
        );
        assert!(CreateMode::resolve(Some("lenient"), CreateMode::Strict).is_err());
        assert_eq!(flag_label("customerImpact"), "--customer-impact");
        assert_eq!(flag_label("closeReason"), "--close-reason");
        assert_eq!(
            canonical_option("--Estimated-Minutes"),
            Some("estimatedMinutes")
        );
        assert_eq!(canonical_option("bogus"), None);
        Ok(())
    }
}
