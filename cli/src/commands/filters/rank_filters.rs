//! One parser per filter value kind, shared by every command that filters items (`list`,
//! `search`, `context`, `next`, `aggregate`): comma lists, tags with `\,` escapes, item ids,
//! types, priorities, assignees, statuses and time bounds. The clap groups and the `Query` they
//! build are in `list_filters.rs`; what a filter means is `pm_engine::query`.

use pm_engine::clock::EpochMs;
use pm_engine::query::{Assignment, parse_when};
use pm_engine::schema::RuntimeSchema;
use pm_engine::{Error, Result};

/// Splits repeated, comma-separated values into trimmed non-empty tokens.
pub fn split_values(raw: &[String]) -> Vec<String> {
    raw.iter()
        .flat_map(|r| r.split(','))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Splits tag values on unescaped commas; `\,` is a literal comma and `\\` a backslash.
pub fn split_tags(raw: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for value in raw {
        let mut current = String::new();
        let mut chars = value.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some(next @ (',' | '\\')) => current.push(next),
                    Some(next) => {
                        current.push('\\');
                        current.push(next);
                    }
                    None => current.push('\\'),
                },
                ',' => out.push(std::mem::take(&mut current)),
                _ => current.push(c),
            }
        }
        out.push(current);
    }
    out.into_iter()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Returns an item id as ids are stored: trimmed and lowercased, `None` when blank.
pub fn item_id(raw: &str) -> Option<String> {
    Some(raw.trim())
        .filter(|id| !id.is_empty())
        .map(str::to_lowercase)
}

/// Returns the ids of repeated, comma-separated `--ids` values, lowercased.
pub fn item_ids(raw: &[String]) -> Vec<String> {
    split_values(raw)
        .iter()
        .filter_map(|id| item_id(id))
        .collect()
}

/// Resolves `--type` values to registered type names (aliases and case folded), without
/// duplicates.
///
/// # Errors
/// `invalid_argument_value` for a type the schema does not know.
pub fn types(raw: &[String], schema: &RuntimeSchema) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for token in split_values(raw) {
        let Some(def) = schema.types.resolve(&token) else {
            let allowed: Vec<String> = (schema.types.definitions().iter())
                .map(|d| d.name.clone())
                .collect();
            let reason = format!(
                "Invalid --type value \"{token}\". Use one of {} or a configured type.",
                allowed.join("|")
            );
            return Err(Error::invalid_argument("--type", &token, reason, allowed));
        };
        if !out.contains(&def.name) {
            out.push(def.name.clone());
        }
    }
    Ok(out)
}

/// Parses `--priority` values (0 to 4), without duplicates.
///
/// # Errors
/// `invalid_argument_value` for anything but an integer from 0 to 4.
pub fn priorities(raw: &[String]) -> Result<Vec<i64>> {
    let mut out = Vec::new();
    for token in split_values(raw) {
        let Some(p) = token.parse::<i64>().ok().filter(|p| (0..=4).contains(p)) else {
            let allowed = (0..=4).map(|p| p.to_string()).collect();
            let reason = format!("Invalid --priority value \"{token}\". Use 0|1|2|3|4.");
            return Err(Error::invalid_argument(
                "--priority",
                &token,
                reason,
                allowed,
            ));
        };
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

/// Parses `--assignee` values.
///
/// # Errors
/// `invalid_argument_value` for `none` or `null` (that is `--assignee-filter unassigned`).
pub fn assignees(raw: &[String]) -> Result<Vec<String>> {
    let tokens = split_values(raw);
    if let Some(bad) =
        (tokens.iter()).find(|a| matches!(a.to_lowercase().as_str(), "none" | "null"))
    {
        let reason = format!(
            "Invalid --assignee value \"{bad}\". Use --assignee-filter unassigned to select items without an assignee."
        );
        return Err(Error::invalid_argument(
            "--assignee",
            bad,
            reason,
            Vec::new(),
        ));
    }
    Ok(tokens)
}

/// Parses `--assignee-filter`: assigned or unassigned (case-insensitive).
///
/// # Errors
/// `invalid_argument_value` for any other value.
pub fn assignment(raw: Option<&str>) -> Result<Option<Assignment>> {
    let Some(raw) = raw else { return Ok(None) };
    match raw.trim().to_lowercase().as_str() {
        "assigned" => Ok(Some(Assignment::Assigned)),
        "unassigned" => Ok(Some(Assignment::Unassigned)),
        _ => {
            let allowed = vec!["assigned".to_owned(), "unassigned".to_owned()];
            let reason =
                format!("Invalid --assignee-filter value \"{raw}\". Use assigned|unassigned.");
            Err(Error::invalid_argument(
                "--assignee-filter",
                raw,
                reason,
                allowed,
            ))
        }
    }
}

/// Parses a time bound: an ISO instant or a relative offset from `now`, read only when a
/// relative value needs it (the one grammar is `pm_engine::query::parse_when`).
///
/// # Errors
/// `invalid_argument_value` naming `flag` for anything else, a blank value included.
pub fn time_bound(
    flag: &str,
    raw: Option<&str>,
    now: &mut dyn FnMut() -> EpochMs,
) -> Result<Option<EpochMs>> {
    raw.map(|r| parse_when(flag, r, now())).transpose()
}

/// How `--status` resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StatusScope {
    /// No `--status`: the caller's default scope.
    Default,
    /// `--status all`.
    All,
    /// Exactly one known status (`list` reroutes to its `list-<status>` spelling).
    Single(String),
    /// Several statuses.
    Many(Vec<String>),
}

/// Resolves `--status` values through the status registry (ids, aliases, `all` alone).
///
/// # Errors
/// `invalid_argument_value` for an unknown status or `all` combined with statuses.
pub fn status_scope(raw: &[String], schema: &RuntimeSchema) -> Result<StatusScope> {
    let tokens = split_values(raw);
    let allowed = || -> Vec<String> {
        let mut ids: Vec<String> = (schema.statuses.definitions().iter())
            .map(|d| d.id.clone())
            .collect();
        ids.push("all".into());
        ids
    };
    if tokens.iter().any(|t| t.eq_ignore_ascii_case("all")) {
        if tokens.len() == 1 {
            return Ok(StatusScope::All);
        }
        let reason = "Invalid --status value: \"all\" must be used alone.".to_owned();
        return Err(Error::invalid_argument(
            "--status",
            &tokens.join(","),
            reason,
            allowed(),
        ));
    }
    let mut ids: Vec<String> = Vec::new();
    for token in &tokens {
        let Some(id) = schema.statuses.resolve(token) else {
            let reason = format!(
                "Invalid --status value \"{token}\". Use open|closed|canceled or a configured status id."
            );
            return Err(Error::invalid_argument(
                "--status",
                token,
                reason,
                allowed(),
            ));
        };
        if !ids.iter().any(|i| i == id) {
            ids.push(id.to_owned());
        }
    }
    Ok(match ids.len() {
        0 => StatusScope::Default,
        1 => StatusScope::Single(ids.remove(0)),
        _ => StatusScope::Many(ids),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_split_and_trim() {
        let v = vec!["a, b".to_owned(), "".to_owned(), "c".to_owned()];
        assert_eq!(split_values(&v), ["a", "b", "c"]);
    }

    #[test]
    fn tags_split_on_unescaped_commas() {
        let raw = vec![r"a,b\,c".to_owned(), r" d\\ ,,e".to_owned()];
        assert_eq!(split_tags(&raw), ["a", "b,c", r"d\", "e"]);
    }

    #[test]
    fn ids_are_trimmed_and_lowercased() {
        assert_eq!(item_id(" PM-A1 ").as_deref(), Some("pm-a1"));
        assert_eq!(item_id("  "), None);
        let raw = vec!["PM-A1, pm-b2".to_owned()];
        assert_eq!(item_ids(&raw), ["pm-a1", "pm-b2"]);
    }

    #[test]
    fn status_scope_resolves_aliases_and_refuses_unknown_values() -> Result<()> {
        let schema = RuntimeSchema::builtin();
        let scope = |s: &[&str]| {
            let raw: Vec<String> = s.iter().map(|v| (*v).to_owned()).collect();
            status_scope(&raw, &schema)
        };
        assert_eq!(scope(&[])?, StatusScope::Default);
        assert_eq!(scope(&["ALL"])?, StatusScope::All);
        assert_eq!(
            scope(&["in-progress"])?,
            StatusScope::Single("in_progress".into())
        );
        assert_eq!(
            scope(&["open,cancelled", "open"])?,
            StatusScope::Many(vec!["open".into(), "canceled".into()])
        );
        let err = scope(&["nope"]).err();
        assert!(err.map(|e| e.to_string()).unwrap_or_default().ends_with(
            "Invalid --status value \"nope\". Use open|closed|canceled or a configured status id."
        ),);
        assert!(scope(&["all,open"]).is_err());
        Ok(())
    }

    #[test]
    fn scalar_values_validate() {
        assert_eq!(
            priorities(&["0".into(), "1,0".into()]).ok(),
            Some(vec![0, 1])
        );
        assert!(priorities(&["5".into()]).is_err());
        assert!(priorities(&["-1".into()]).is_err());
        assert!(assignees(&["alice,NONE".into()]).is_err());
        assert_eq!(
            assignment(Some(" Unassigned ")).ok(),
            Some(Some(Assignment::Unassigned))
        );
        assert!(assignment(Some("nobody")).is_err());
        let mut reads = 0;
        let mut now = || {
            reads += 1;
            0
        };
        assert_eq!(time_bound("--x", None, &mut now).ok(), Some(None));
        assert!(time_bound("--x", Some(""), &mut now).is_err());
        assert_eq!(reads, 1);
    }
}
