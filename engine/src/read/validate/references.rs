//! The `dependency_references` check (dependency rows, scalar parents and blockers naming ids
//! that do not exist) and the `command_references` check (linked test commands that run `pm`
//! on an item id that does not exist).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::items::{CheckItem, capped, sorted_unique};
use super::{CheckName, Outcome, Scope};

/// `blocked_by` values that say "nothing blocks this" rather than naming an item.
fn is_no_blocker_sentinel(value: &str) -> bool {
    let v = value.trim().to_lowercase().replace(['_', ' '], "-");
    v == "no-active-blocker" || v == "none-active"
}

/// One reference to a missing item.
struct Dangling {
    holder: String,
    target: String,
    kind: String,
    source: &'static str,
    holder_status: String,
    legacy: bool,
}

/// The `dependency_references` check.
pub(crate) fn dependency_references(scope: &Scope<'_>) -> Outcome {
    let known: BTreeSet<String> = scope.items.iter().map(|i| i.id.to_lowercase()).collect();
    let exists = |id: &str| known.contains(&id.trim().to_lowercase());
    let mut dangling = Vec::new();
    let mut sentinels = 0usize;
    let mut push = |item: &CheckItem, target: &str, kind: &str, source: &'static str| {
        dangling.push(Dangling {
            holder: item.id.clone(),
            target: target.to_string(),
            kind: kind.to_string(),
            source,
            holder_status: item.status.clone(),
            legacy: item.terminal,
        });
    };
    for item in scope.items {
        for (target, kind) in item.dependencies() {
            if !exists(target) {
                push(item, target, kind, "dependency");
            }
        }
        if let Some(parent) = item.meaningful("parent")
            && !exists(parent)
        {
            push(item, parent, "parent", "parent");
        }
        if let Some(blocker) = item.meaningful("blocked_by") {
            if is_no_blocker_sentinel(blocker) {
                sentinels += 1;
            } else if !exists(blocker) {
                push(item, blocker, "blocked_by", "blocked_by");
            }
        }
    }
    let active: Vec<&Dangling> = dangling.iter().filter(|d| !d.legacy).collect();
    let legacy: Vec<&Dangling> = dangling.iter().filter(|d| d.legacy).collect();
    let active_rows: Vec<String> = active
        .iter()
        .map(|d| format!("{}:{}:{}", d.holder, d.target, d.kind))
        .collect();
    let legacy_rows: Vec<String> = legacy
        .iter()
        .map(|d| format!("{}:{}:{}:{}", d.holder, d.target, d.kind, d.holder_status))
        .collect();
    let hints: Vec<String> = active
        .iter()
        .map(|d| match d.source {
            "parent" => format!("pm update {} --unset parent", d.holder),
            "blocked_by" => format!("pm update {} --unset blocked_by", d.holder),
            _ => format!(
                "pm update {} --replace-deps '<correct dependency edges>'",
                d.holder
            ),
        })
        .collect();
    let closed_legacy = legacy
        .iter()
        .filter(|d| d.holder_status == "closed")
        .count();
    let warnings = if active_rows.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "validate_dangling_dependency_references:{}",
            active_rows.len()
        )]
    };
    let (n_active, n_legacy) = (active_rows.len(), legacy_rows.len());
    let rows = capped(active_rows, scope.limit);
    let legacy_list = capped(legacy_rows, scope.limit);
    let hints = capped(hints, scope.limit);
    let details = json!({
        "checked_items": scope.items.len(),
        "dangling_reference_count": n_active + n_legacy,
        "active_dangling_reference_count": n_active,
        "dangling_reference_rows": rows.values,
        "dangling_reference_rows_truncated": rows.truncated,
        "legacy_terminal_dangling_reference_count": n_legacy,
        "legacy_closed_dangling_reference_count": closed_legacy,
        "legacy_terminal_dangling_reference_rows": legacy_list.values,
        "legacy_terminal_dangling_reference_rows_truncated": legacy_list.truncated,
        "no_active_blocker_sentinel_count": sentinels,
        "remediation_hints": hints.values,
        "remediation_hints_truncated": hints.truncated,
    });
    Outcome::new(CheckName::DependencyReferences, false, details, warnings)
}

/// `pm` subcommands whose first positional is an item id.
const ITEM_SUBCOMMANDS: [&str; 16] = [
    "get",
    "history",
    "restore",
    "update",
    "close",
    "delete",
    "append",
    "claim",
    "release",
    "comments",
    "notes",
    "learnings",
    "files",
    "docs",
    "deps",
    "test",
];
/// Global flags that take a value.
const GLOBAL_VALUE_FLAGS: [&str; 3] = ["--pm-path", "--path", "--author"];

/// Returns the item ids a linked test command passes to `pm` (one per `pm <subcommand> <id>`
/// invocation in `&&`/`||`/`|`/`;` separated segments).
pub(crate) fn referenced_ids(command: &str, prefix: &str) -> Vec<String> {
    let prefix = prefix.trim().to_lowercase();
    let prefix = prefix.trim_end_matches('-');
    if prefix.is_empty() {
        return Vec::new();
    }
    let normalized = command
        .trim()
        .replace('\\', "/")
        .replace(['"', '\''], "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    let mut ids = Vec::new();
    for segment in normalized.split(['&', '|', ';']) {
        let mut tokens: Vec<&str> = segment.split(' ').filter(|t| !t.is_empty()).collect();
        if tokens.first() == Some(&"env") {
            tokens.remove(0);
        }
        while tokens
            .first()
            .is_some_and(|t| t.contains('=') && !t.starts_with('-'))
        {
            tokens.remove(0);
        }
        let Some(args) = pm_args(&tokens) else {
            continue;
        };
        let Some((subcommand, rest)) = first_positional(args) else {
            continue;
        };
        if !ITEM_SUBCOMMANDS.contains(&subcommand) {
            continue;
        }
        if let Some((candidate, _)) = first_positional(rest)
            && candidate.starts_with(&format!("{prefix}-"))
            && candidate.len() > prefix.len() + 1
        {
            ids.push(candidate.to_string());
        }
    }
    sorted_unique(ids)
}

/// Returns the arguments of a `pm` invocation (`pm`, `…/pm`, `npx pm-cli`), or `None`.
/// `node dist/cli.js` is not an invocation: pm 2026.8.22 does not count it either.
fn pm_args<'a>(tokens: &'a [&'a str]) -> Option<&'a [&'a str]> {
    let is_pm = |t: &str| t == "pm" || t.ends_with("/pm");
    let (first, rest) = tokens.split_first()?;
    if is_pm(first) {
        return Some(rest);
    }
    if matches!(*first, "npx" | "bunx") {
        let at = rest.iter().position(|t| !t.starts_with('-'))?;
        let package = rest[at].split('@').next().unwrap_or("");
        if package == "pm-cli" || package.ends_with("/pm-cli") || is_pm(rest[at]) {
            return Some(&rest[at + 1..]);
        }
    }
    None
}

/// Returns the first positional token and what follows it (skipping flags and the values of
/// global value flags).
fn first_positional<'a>(tokens: &'a [&'a str]) -> Option<(&'a str, &'a [&'a str])> {
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i];
        if token == "--" {
            i += 1;
            continue;
        }
        if token.starts_with('-') {
            i += if GLOBAL_VALUE_FLAGS.contains(&token) {
                2
            } else {
                1
            };
            continue;
        }
        return Some((token, &tokens[i + 1..]));
    }
    None
}

/// The `command_references` check.
pub(crate) fn command_references(scope: &Scope<'_>) -> Outcome {
    let prefix = scope.view.settings().id_prefix();
    let known: BTreeSet<String> = scope.items.iter().map(|i| i.id.to_lowercase()).collect();
    let mut scanned = 0usize;
    let mut referenced = 0usize;
    let mut unique = Vec::new();
    let mut stale_rows = Vec::new();
    for item in scope.items {
        for test in item.rows("tests") {
            let Some(command) = test.get("command").and_then(Value::as_str) else {
                continue;
            };
            if command.trim().is_empty() {
                continue;
            }
            scanned += 1;
            let ids = referenced_ids(command, &prefix);
            referenced += ids.len();
            for id in ids {
                if !known.contains(&id) {
                    let preview = command.split_whitespace().collect::<Vec<_>>().join(" ");
                    let preview = if preview.chars().count() > 120 {
                        format!("{}...", preview.chars().take(117).collect::<String>())
                    } else {
                        preview
                    };
                    stale_rows.push(format!("{}:{id}:{preview}", item.id));
                }
                unique.push(id);
            }
        }
    }
    let unique = sorted_unique(unique);
    let stale_rows = sorted_unique(stale_rows);
    let stale_ids = sorted_unique(
        stale_rows
            .iter()
            .filter_map(|r| r.split(':').nth(1).map(String::from))
            .collect(),
    );
    let warnings = if stale_rows.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "validate_command_references_stale_pm_ids:{}",
            stale_rows.len()
        )]
    };
    let (n_unique, n_rows, n_ids) = (unique.len(), stale_rows.len(), stale_ids.len());
    let unique = capped(unique, scope.limit);
    let stale_ids = capped(stale_ids, scope.limit);
    let stale_rows = capped(stale_rows, scope.limit);
    let details = json!({
        "checked_items": scope.items.len(),
        "linked_commands_scanned": scanned,
        "referenced_pm_ids_count": referenced,
        "unique_referenced_pm_ids_count": n_unique,
        "unique_referenced_pm_ids": unique.values,
        "unique_referenced_pm_ids_truncated": unique.truncated,
        "stale_pm_id_references_count": n_rows,
        "stale_pm_ids_count": n_ids,
        "stale_pm_ids": stale_ids.values,
        "stale_pm_ids_truncated": stale_ids.truncated,
        "stale_pm_id_reference_rows": stale_rows.values,
        "stale_pm_id_reference_rows_truncated": stale_rows.truncated,
    });
    Outcome::new(CheckName::CommandReferences, false, details, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_name_item_ids() {
        assert_eq!(
            referenced_ids(
                "pm get pm-ab12 --json && ./bin/pm history PM-CD34; node dist/cli.js get pm-x",
                "pm-"
            ),
            ["pm-ab12", "pm-cd34"]
        );
        assert_eq!(
            referenced_ids("PM_PATH=x pm --pm-path /t update pm-x1 --status open", "pm"),
            ["pm-x1"]
        );
        assert!(referenced_ids("cargo test pm-ab12; pm list pm-zz", "pm").is_empty());
        assert!(referenced_ids("npx pm-cli get", "pm").is_empty());
    }
}
