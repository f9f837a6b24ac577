//! The item filters `list`, `search`, `context` and `next` share (list parity):
//! clap arguments, their translation into an engine `Query`, and pm's echo.
//! Filter semantics live in `pm_engine::query`; this file only parses and validates values.

use pm_engine::Error;
use pm_engine::clock::EpochMs;
use pm_engine::query::{Assignment, ContentFilter, Query, StatusFilter, TimeWindow};
use pm_engine::schema::RuntimeSchema;
use serde_json::{Map, Value, json};

pub use super::list_switches::{ContentArgs, MissingArgs};
use crate::failure::Result;
use pm_engine::query::parse_when;

/// The selectors every item read accepts (`context` and `next` use only these).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct FilterArgs {
    /// Keep items of these types (repeatable or comma-separated)
    #[arg(long = "type", value_name = "TYPE")]
    pub types: Vec<String>,

    /// Keep items with any of these tags, case-insensitive (repeatable or comma-separated; \, escapes a comma)
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,

    /// Keep items with these priorities, 0 (highest) to 4 (repeatable or comma-separated)
    #[arg(long = "priority", value_name = "0-4")]
    pub priorities: Vec<String>,

    /// Keep items assigned to these assignees (repeatable or comma-separated)
    #[arg(long = "assignee", value_name = "NAME")]
    pub assignees: Vec<String>,

    /// Keep only assigned or only unassigned items
    #[arg(long, value_name = "assigned|unassigned")]
    pub assignee_filter: Option<String>,

    /// Keep children of this item (scalar parent or a hierarchy dependency edge)
    #[arg(long, value_name = "ID")]
    pub parent: Option<String>,

    /// Keep items of these sprints (repeatable or comma-separated)
    #[arg(long = "sprint", value_name = "SPRINT")]
    pub sprints: Vec<String>,

    /// Keep items of these releases (repeatable or comma-separated)
    #[arg(long = "release", value_name = "RELEASE")]
    pub releases: Vec<String>,
}

/// Every filter of `pm list` (and `pm search`): status scope, selectors, ids, date windows,
/// content presence and governance gaps.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ListFilterArgs {
    /// Keep items with these statuses, or all (repeatable or comma-separated)
    #[arg(long = "status", value_name = "STATUS")]
    pub statuses: Vec<String>,

    /// The shared selectors.
    #[command(flatten)]
    pub select: FilterArgs,

    /// Keep only these item ids (repeatable or comma-separated)
    #[arg(long = "ids", value_name = "IDS")]
    pub ids: Vec<String>,

    /// Keep items due before this time (ISO or relative: -7d, +2w, 12h, 3m)
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub deadline_before: Option<String>,

    /// Keep items due at or after this time (ISO or relative)
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub deadline_after: Option<String>,

    /// Keep items updated at or after this time (ISO or relative)
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub updated_after: Option<String>,

    /// Keep items updated before this time (ISO or relative)
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub updated_before: Option<String>,

    /// Keep items created at or after this time (ISO or relative)
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub created_after: Option<String>,

    /// Keep items created before this time (ISO or relative)
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub created_before: Option<String>,

    /// Keep items updated since midnight (UTC)
    #[arg(long)]
    pub today: bool,

    /// Keep items updated in the last 7 days (same as --updated-after -7d)
    #[arg(long)]
    pub recent: bool,

    /// Content presence filters (--has-X / --no-X).
    #[command(flatten)]
    pub content: ContentArgs,

    /// Governance gap filters (--filter-X-missing).
    #[command(flatten)]
    pub missing: MissingArgs,
}

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

/// pm's echo of a raw option: the string when given once, the list when repeated.
fn raw_echo(values: &[String]) -> Option<Value> {
    match values {
        [] => None,
        [one] => Some(json!(one)),
        many => Some(json!(many)),
    }
}

impl FilterArgs {
    /// Adds these selectors to `query`, validating types, priorities and assignees.
    ///
    /// # Errors
    /// `invalid_argument_value` for an unknown type, a priority outside 0–4, an assignee of
    /// `none`/`null`, or an `--assignee-filter` other than assigned|unassigned.
    pub fn apply(&self, query: &mut Query, schema: &RuntimeSchema) -> Result<()> {
        for raw in split_values(&self.types) {
            let Some(def) = schema.types.resolve(&raw) else {
                let allowed: Vec<String> = schema
                    .types
                    .definitions()
                    .iter()
                    .map(|d| d.name.clone())
                    .collect();
                let reason = format!(
                    "Invalid --type value \"{raw}\". Use one of {} or a configured type.",
                    allowed.join("|")
                );
                return Err(Error::invalid_argument("--type", &raw, reason, allowed).into());
            };
            if !query.types.contains(&def.name) {
                query.types.push(def.name.clone());
            }
        }
        query.tags.extend(split_tags(&self.tags));
        for raw in split_values(&self.priorities) {
            let priority = raw.parse::<i64>().ok().filter(|p| (0..=4).contains(p));
            let Some(p) = priority else {
                let allowed = (0..=4).map(|p| p.to_string()).collect();
                let reason = format!("Invalid --priority value \"{raw}\". Use 0|1|2|3|4.");
                return Err(Error::invalid_argument("--priority", &raw, reason, allowed).into());
            };
            if !query.priorities.contains(&p) {
                query.priorities.push(p);
            }
        }
        for raw in split_values(&self.assignees) {
            if matches!(raw.to_lowercase().as_str(), "none" | "null") {
                let reason = format!(
                    "Invalid --assignee value \"{raw}\". Use --assignee-filter unassigned to select items without an assignee."
                );
                return Err(Error::invalid_argument("--assignee", &raw, reason, Vec::new()).into());
            }
            query.assignees.push(raw);
        }
        if let Some(raw) = &self.assignee_filter {
            query.assignment = Some(match raw.trim().to_lowercase().as_str() {
                "assigned" => Assignment::Assigned,
                "unassigned" => Assignment::Unassigned,
                _ => {
                    let allowed = vec!["assigned".to_owned(), "unassigned".to_owned()];
                    let reason = format!(
                        "Invalid --assignee-filter value \"{raw}\". Use assigned|unassigned."
                    );
                    return Err(
                        Error::invalid_argument("--assignee-filter", raw, reason, allowed).into(),
                    );
                }
            });
        }
        query.parent = self
            .parent
            .as_deref()
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_lowercase);
        query.sprints.extend(split_values(&self.sprints));
        query.releases.extend(split_values(&self.releases));
        Ok(())
    }

    /// Appends pm's echo of the given type, tag and priority options (raw values).
    pub fn echo_kinds(&self, out: &mut Map<String, Value>) {
        for (key, values) in [
            ("type", &self.types),
            ("tag", &self.tags),
            ("priority", &self.priorities),
        ] {
            if let Some(v) = raw_echo(values) {
                out.insert(key.into(), v);
            }
        }
    }

    /// Appends pm's echo of the given assignee, parent, sprint and release options.
    pub fn echo_people(&self, out: &mut Map<String, Value>) {
        if let Some(v) = raw_echo(&self.assignees) {
            out.insert("assignee".into(), v);
        }
        if let Some(v) = &self.assignee_filter {
            out.insert("assignee_filter".into(), json!(v));
        }
        if let Some(v) = &self.parent {
            out.insert("parent".into(), json!(v));
        }
        for (key, values) in [("sprint", &self.sprints), ("release", &self.releases)] {
            if let Some(v) = raw_echo(values) {
                out.insert(key.into(), v);
            }
        }
    }
}

/// How `--status` resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StatusScope {
    /// No `--status`: the caller's default scope.
    Default,
    /// `--status all`.
    All,
    /// Exactly one known status (pm reroutes to `list-<status>`).
    Single(String),
    /// Several statuses.
    Many(Vec<String>),
}

impl ListFilterArgs {
    /// Resolves `--status` through the status registry (ids, aliases, `all` alone).
    ///
    /// # Errors
    /// `invalid_argument_value` for an unknown status or `all` combined with statuses.
    pub fn status_scope(&self, schema: &RuntimeSchema) -> Result<StatusScope> {
        let tokens = split_values(&self.statuses);
        let allowed = || -> Vec<String> {
            let mut ids: Vec<String> = schema
                .statuses
                .definitions()
                .iter()
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
            return Err(
                Error::invalid_argument("--status", &tokens.join(","), reason, allowed()).into(),
            );
        }
        let mut ids: Vec<String> = Vec::new();
        for token in &tokens {
            let Some(id) = schema.statuses.resolve(token) else {
                let reason = format!(
                    "Invalid --status value \"{token}\". Use open|closed|canceled or a configured status id."
                );
                return Err(Error::invalid_argument("--status", token, reason, allowed()).into());
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

    /// Builds the engine query of these filters under `status` (the resolved scope).
    /// Relative and `--today`/`--recent` windows are measured from `now`.
    ///
    /// # Errors
    /// As [`FilterArgs::apply`]; `invalid_argument_value` for an unparsable time, or
    /// `--recent` combined with `--updated-after`.
    pub fn to_query(
        &self,
        status: StatusFilter,
        schema: &RuntimeSchema,
        now: EpochMs,
    ) -> Result<Query> {
        let mut query = Query {
            status,
            ..Query::default()
        };
        self.select.apply(&mut query, schema)?;
        query.ids = split_values(&self.ids)
            .into_iter()
            .map(|id| id.to_lowercase())
            .collect();
        let time = |flag: &str, raw: &Option<String>| -> Result<Option<EpochMs>> {
            Ok(raw
                .as_deref()
                .map(|r| parse_when(flag, r, now))
                .transpose()?)
        };
        query.deadline = TimeWindow {
            after: time("--deadline-after", &self.deadline_after)?,
            before: time("--deadline-before", &self.deadline_before)?,
        };
        let mut updated_after = time("--updated-after", &self.updated_after)?;
        if self.recent {
            if updated_after.is_some() {
                let reason = "--recent cannot be combined with --updated-after.".to_owned();
                return Err(Error::invalid_argument("--recent", "true", reason, Vec::new()).into());
            }
            updated_after = Some(parse_when("--recent", "-7d", now)?);
        }
        if self.today {
            let midnight = now.div_euclid(86_400_000) * 86_400_000;
            updated_after = Some(updated_after.map_or(midnight, |a| a.max(midnight)));
        }
        query.updated = TimeWindow {
            after: updated_after,
            before: time("--updated-before", &self.updated_before)?,
        };
        query.created = TimeWindow {
            after: time("--created-after", &self.created_after)?,
            before: time("--created-before", &self.created_before)?,
        };
        query.content = self
            .content
            .pairs()
            .into_iter()
            .filter(|(_, on, _, _)| *on)
            .map(|(_, _, content, present)| ContentFilter { content, present })
            .collect();
        query.missing = self
            .missing
            .flags()
            .into_iter()
            .filter_map(|(_, on, m)| on.then_some(m))
            .collect();
        Ok(query)
    }

    /// Appends pm's echo of the selector options, from `type` to `release` (the keys that
    /// precede the paging options in list's `filters`).
    pub fn echo_selectors(&self, out: &mut Map<String, Value>) {
        self.select.echo_kinds(out);
        for (key, value) in [
            ("deadline_before", &self.deadline_before),
            ("deadline_after", &self.deadline_after),
            ("updated_after", &self.updated_after),
            ("updated_before", &self.updated_before),
            ("created_after", &self.created_after),
            ("created_before", &self.created_before),
        ] {
            if let Some(v) = value {
                out.insert(key.into(), json!(v));
            }
        }
        if let Some(v) = raw_echo(&self.ids) {
            out.insert("ids".into(), v);
        }
        self.select.echo_people(out);
    }

    /// Appends pm's echo of the boolean filters: governance gaps, content presence, then
    /// `today`/`recent`.
    pub fn echo_switches(&self, out: &mut Map<String, Value>) {
        for (key, on, _) in self.missing.flags() {
            if on {
                out.insert(key.into(), Value::Bool(true));
            }
        }
        for (key, on, _, _) in self.content.pairs() {
            if on {
                out.insert(key.into(), Value::Bool(true));
            }
        }
        if self.today {
            out.insert("today".into(), Value::Bool(true));
        }
        if self.recent {
            out.insert("recent".into(), Value::Bool(true));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_split_on_unescaped_commas() {
        let raw = vec![r"a,b\,c".to_owned(), r" d\\ ,,e".to_owned()];
        assert_eq!(split_tags(&raw), ["a", "b,c", r"d\", "e"]);
    }

    #[test]
    fn status_scope_resolves_aliases_and_refuses_unknown_values() -> Result<()> {
        let schema = RuntimeSchema::builtin();
        let args = |s: &[&str]| ListFilterArgs {
            statuses: s.iter().map(|v| (*v).to_owned()).collect(),
            ..ListFilterArgs::default()
        };
        assert_eq!(args(&[]).status_scope(&schema)?, StatusScope::Default);
        assert_eq!(args(&["ALL"]).status_scope(&schema)?, StatusScope::All);
        assert_eq!(
            args(&["in-progress"]).status_scope(&schema)?,
            StatusScope::Single("in_progress".into())
        );
        assert_eq!(
            args(&["open,cancelled", "open"]).status_scope(&schema)?,
            StatusScope::Many(vec!["open".into(), "canceled".into()])
        );
        let err = args(&["nope"]).status_scope(&schema).err();
        assert!(err.map(|e| e.to_string()).unwrap_or_default().ends_with(
            "Invalid --status value \"nope\". Use open|closed|canceled or a configured status id."
        ),);
        assert!(args(&["all,open"]).status_scope(&schema).is_err());
        Ok(())
    }

    #[test]
    fn selectors_validate_and_build_the_query() -> Result<()> {
        let schema = RuntimeSchema::builtin();
        let mut args = ListFilterArgs::default();
        args.select.types = vec!["task,epic".into()];
        args.select.priorities = vec!["0".into(), "1,0".into()];
        args.recent = true;
        args.content.has_notes = true;
        args.missing.filter_risk_missing = true;
        let q = args.to_query(StatusFilter::All, &schema, 1_788_220_800_000)?;
        assert_eq!(q.types, ["Task", "Epic"]);
        assert_eq!(q.priorities, [0, 1]);
        assert_eq!(q.updated.after, Some(1_788_220_800_000 - 7 * 86_400_000));
        assert_eq!(q.missing, [pm_engine::query::Missing::Risk]);
        assert_eq!(q.content.len(), 1);
        args.select.priorities = vec!["5".into()];
        assert!(
            args.to_query(StatusFilter::All, &schema, 1_788_220_800_000)
                .is_err()
        );
        Ok(())
    }
}
