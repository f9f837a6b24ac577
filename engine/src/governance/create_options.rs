//! pm's create option table: every option key `create` knows, the flag label pm prints for it,
//! the spellings that name it (aliases, metadata keys) and the collections an explicit empty
//! (`--clear-<collection>`) satisfies.

/// pm's create option keys with their flag labels, in pm's order.
const CREATE_OPTIONS: &[(&str, &str)] = &[
    ("title", "--title"),
    ("description", "--description"),
    ("type", "--type"),
    ("status", "--status"),
    ("priority", "--priority"),
    ("tags", "--tags"),
    ("body", "--body"),
    ("deadline", "--deadline"),
    ("estimatedMinutes", "--estimate/--estimated-minutes"),
    ("acceptanceCriteria", "--acceptance-criteria/--ac"),
    ("definitionOfReady", "--definition-of-ready"),
    ("order", "--order/--rank"),
    ("goal", "--goal"),
    ("objective", "--objective"),
    ("value", "--value"),
    ("impact", "--impact"),
    ("outcome", "--outcome"),
    ("whyNow", "--why-now"),
    ("assignee", "--assignee"),
    ("parent", "--parent"),
    ("reviewer", "--reviewer"),
    ("risk", "--risk"),
    ("confidence", "--confidence"),
    ("sprint", "--sprint"),
    ("release", "--release"),
    ("blockedBy", "--blocked-by"),
    ("blockedReason", "--blocked-reason"),
    ("unblockNote", "--unblock-note"),
    ("reporter", "--reporter"),
    ("severity", "--severity"),
    ("environment", "--environment"),
    ("reproSteps", "--repro-steps"),
    ("resolution", "--resolution"),
    ("expectedResult", "--expected-result"),
    ("actualResult", "--actual-result"),
    ("affectedVersion", "--affected-version"),
    ("fixedVersion", "--fixed-version"),
    ("component", "--component"),
    ("regression", "--regression"),
    ("customerImpact", "--customer-impact"),
    ("author", "--author"),
    ("message", "--message"),
    ("dep", "--dep"),
    ("comment", "--comment"),
    ("note", "--note"),
    ("learning", "--learning"),
    ("file", "--file"),
    ("test", "--test"),
    ("doc", "--doc"),
    ("reminder", "--reminder"),
    ("event", "--event"),
    ("typeOption", "--type-option"),
    ("field", "--field"),
];

/// Spellings that name an option key: pm's aliases, plus the metadata keys of the collections
/// (what `--clear-<collection>` clears).
const ALIASES: &[(&str, &str)] = &[
    ("close-reason", "closeReason"),
    ("close_reason", "closeReason"),
    ("estimated-minutes", "estimatedMinutes"),
    ("estimated_minutes", "estimatedMinutes"),
    ("estimate", "estimatedMinutes"),
    ("acceptance-criteria", "acceptanceCriteria"),
    ("acceptance_criteria", "acceptanceCriteria"),
    ("ac", "acceptanceCriteria"),
    ("definition-of-ready", "definitionOfReady"),
    ("definition_of_ready", "definitionOfReady"),
    ("rank", "order"),
    ("why-now", "whyNow"),
    ("why_now", "whyNow"),
    ("blocked-by", "blockedBy"),
    ("blocked_by", "blockedBy"),
    ("blocked-reason", "blockedReason"),
    ("blocked_reason", "blockedReason"),
    ("unblock-note", "unblockNote"),
    ("unblock_note", "unblockNote"),
    ("repro-steps", "reproSteps"),
    ("repro_steps", "reproSteps"),
    ("expected-result", "expectedResult"),
    ("expected_result", "expectedResult"),
    ("actual-result", "actualResult"),
    ("actual_result", "actualResult"),
    ("affected-version", "affectedVersion"),
    ("affected_version", "affectedVersion"),
    ("fixed-version", "fixedVersion"),
    ("fixed_version", "fixedVersion"),
    ("customer-impact", "customerImpact"),
    ("customer_impact", "customerImpact"),
    ("type-option", "typeOption"),
    ("type_option", "typeOption"),
    ("type_options", "typeOption"),
    ("dependencies", "dep"),
    ("comments", "comment"),
    ("notes", "note"),
    ("learnings", "learning"),
    ("files", "file"),
    ("tests", "test"),
    ("docs", "doc"),
    ("reminders", "reminder"),
    ("events", "event"),
];

/// Repeatable options an explicit empty set satisfies, with the flag that gives it.
pub(crate) const EXPLICIT_EMPTY: &[(&str, &str)] = &[
    ("comment", "--clear-comments"),
    ("dep", "--clear-deps"),
    ("doc", "--clear-docs"),
    ("event", "--clear-events"),
    ("file", "--clear-files"),
    ("learning", "--clear-learnings"),
    ("note", "--clear-notes"),
    ("reminder", "--clear-reminders"),
    ("test", "--clear-tests"),
    ("typeOption", "--clear-type-options"),
];

/// Types `--schedule-preset lightweight` applies to.
pub(crate) const SCHEDULE_PRESET_TYPES: &[&str] = &["Reminder", "Meeting", "Event"];

/// Returns whether an explicit empty satisfies the option.
pub(crate) fn explicit_empty(key: &str) -> bool {
    EXPLICIT_EMPTY.iter().any(|(k, _)| *k == key)
}

/// Returns the option key a flag name, alias or metadata key names (pm's
/// `canonicalizeCommandOptionKey` for `create`): leading dashes dropped, case-insensitive.
pub fn canonical_option(raw: &str) -> Option<&'static str> {
    let token = crate::item::canon::js::trim(raw)
        .trim_start_matches('-')
        .to_lowercase();
    if token.is_empty() {
        return None;
    }
    if let Some((_, key)) = ALIASES.iter().find(|(alias, _)| *alias == token) {
        return Some(key);
    }
    CREATE_OPTIONS
        .iter()
        .find(|(key, _)| key.to_lowercase() == token)
        .map(|(key, _)| *key)
}

/// Returns the flag label pm prints for an option key (`--estimate/--estimated-minutes`).
pub fn flag_label(key: &str) -> String {
    if let Some((_, label)) = CREATE_OPTIONS.iter().find(|(k, _)| *k == key) {
        return (*label).to_string();
    }
    let mut out = String::from("--");
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}
