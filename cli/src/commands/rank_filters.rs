//! The item filters of `search`, `context` and `next` (list parity): clap flags translated into
//! the engine's `Query`, which alone defines what a filter means, plus pm's filter echo.

use pm_engine::Error;
use pm_engine::query::{Assignment, ContentFilter, Query, StatusFilter, TimeWindow, parse_when};
use pm_engine::schema::RuntimeSchema;
use serde_json::{Map, Value};

use super::list_switches::ContentArgs;
use crate::failure::Result;

/// Filters shared by `search`, `context` and `next`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ItemFilterArgs {
    /// Keep items of these types (comma-separated or repeated)
    #[arg(long = "type", value_name = "TYPE")]
    pub item_type: Vec<String>,

    /// Keep items with any of these tags (comma-separated or repeated)
    #[arg(long, value_name = "TAG")]
    pub tag: Vec<String>,

    /// Keep items with these priorities, 0-4 (comma-separated or repeated)
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub priority: Vec<String>,

    /// Keep items assigned to these assignees (comma-separated or repeated)
    #[arg(long, value_name = "NAME")]
    pub assignee: Vec<String>,

    /// Keep only assigned or only unassigned items
    #[arg(long, value_name = "assigned|unassigned")]
    pub assignee_filter: Option<String>,

    /// Keep items in these sprints (comma-separated or repeated)
    #[arg(long, value_name = "SPRINT")]
    pub sprint: Vec<String>,

    /// Keep items in these releases (comma-separated or repeated)
    #[arg(long, value_name = "RELEASE")]
    pub release: Vec<String>,

    /// Keep children of this item (scalar parent or hierarchy edge)
    #[arg(long, value_name = "ID")]
    pub parent: Option<String>,
}

/// Splits repeated, comma-separated flag values into trimmed non-empty tokens.
pub fn csv_values(values: &[String]) -> Vec<String> {
    values
        .iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Returns the flag value as typed (repeated values joined with commas), or `None`.
pub fn raw(values: &[String]) -> Option<String> {
    (!values.is_empty()).then(|| values.join(","))
}

impl ItemFilterArgs {
    /// Adds these filters to `query`.
    ///
    /// # Errors
    /// `invalid_argument_value` for an unknown type, a priority outside 0–4, an assignee of
    /// `none`/`null`, or an unknown `--assignee-filter`.
    pub fn apply(&self, schema: &RuntimeSchema, query: &mut Query) -> Result<()> {
        for raw in csv_values(&self.item_type) {
            let def = schema.types.resolve(&raw).ok_or_else(|| {
                let allowed = schema
                    .types
                    .definitions()
                    .iter()
                    .map(|d| d.name.clone())
                    .collect();
                Error::invalid_argument("--type", &raw, "unknown item type", allowed)
            })?;
            query.types.push(def.name.clone());
        }
        query.tags = csv_values(&self.tag);
        for raw in csv_values(&self.priority) {
            let p = raw
                .parse::<i64>()
                .ok()
                .filter(|p| (0..=4).contains(p))
                .ok_or_else(|| {
                    let allowed = (0..=4).map(|p: i64| p.to_string()).collect();
                    Error::invalid_argument("--priority", &raw, "priority must be 0..4", allowed)
                })?;
            query.priorities.push(p);
        }
        query.assignees = csv_values(&self.assignee);
        if let Some(bad) = query
            .assignees
            .iter()
            .find(|a| matches!(a.to_ascii_lowercase().as_str(), "none" | "null"))
        {
            return Err(Error::invalid_argument(
                "--assignee",
                bad,
                "--assignee no longer accepts \"none\" or \"null\".",
                Vec::new(),
            )
            .into());
        }
        if let Some(raw) = &self.assignee_filter {
            query.assignment = Some(match raw.trim().to_ascii_lowercase().as_str() {
                "assigned" => Assignment::Assigned,
                "unassigned" => Assignment::Unassigned,
                _ => {
                    return Err(Error::invalid_argument(
                        "--assignee-filter",
                        raw,
                        "must be assigned or unassigned",
                        vec!["assigned".into(), "unassigned".into()],
                    )
                    .into());
                }
            });
        }
        query.sprints = csv_values(&self.sprint);
        query.releases = csv_values(&self.release);
        query.parent = self
            .parent
            .as_deref()
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_owned);
        Ok(())
    }

    /// Returns pm's `filters` echo of `context` and `next`: every key, `null` when unset.
    pub fn echo(&self) -> Map<String, Value> {
        let mut m = Map::new();
        let v = |o: Option<String>| o.map_or(Value::Null, Value::String);
        m.insert("type".into(), v(raw(&self.item_type)));
        m.insert("tag".into(), v(raw(&self.tag)));
        m.insert("priority".into(), v(raw(&self.priority)));
        m.insert("assignee".into(), v(raw(&self.assignee)));
        m.insert("assignee_filter".into(), v(self.assignee_filter.clone()));
        m.insert("sprint".into(), v(raw(&self.sprint)));
        m.insert("release".into(), v(raw(&self.release)));
        m
    }
}

/// Resolves a `--status` value: `all`, or registry statuses and aliases.
///
/// # Errors
/// `invalid_argument_value` for an unknown status or `all` mixed with others.
pub fn status_filter(schema: &RuntimeSchema, raw: &[String]) -> Result<StatusFilter> {
    let tokens = csv_values(raw);
    if tokens.is_empty() {
        return Ok(StatusFilter::All);
    }
    let allowed = || {
        let mut v: Vec<String> = schema
            .statuses
            .definitions()
            .iter()
            .map(|d| d.id.clone())
            .collect();
        v.push("all".into());
        v
    };
    if tokens.iter().any(|t| t.eq_ignore_ascii_case("all")) {
        if tokens.len() == 1 {
            return Ok(StatusFilter::All);
        }
        return Err(Error::invalid_argument(
            "--status",
            &tokens.join(","),
            "all must appear alone",
            allowed(),
        )
        .into());
    }
    let mut set = Vec::new();
    for t in tokens {
        let id = schema
            .statuses
            .resolve(&t)
            .ok_or_else(|| Error::invalid_argument("--status", &t, "unknown status", allowed()))?;
        if !set.iter().any(|s| s == id) {
            set.push(id.to_owned());
        }
    }
    Ok(StatusFilter::Set(set))
}

/// Date windows and content filters of `search` (list parity).
#[derive(Debug, Default, clap::Args)]
pub struct WindowArgs {
    /// Keep items with a deadline before this time (ISO or relative like +7d)
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub deadline_before: Option<String>,
    /// Keep items with a deadline after this time (ISO or relative like -7d)
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub deadline_after: Option<String>,
    /// Keep items updated after this time (ISO or relative like -7d)
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub updated_after: Option<String>,
    /// Keep items updated before this time (ISO or relative)
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub updated_before: Option<String>,
    /// Keep items created after this time (ISO or relative)
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub created_after: Option<String>,
    /// Keep items created before this time (ISO or relative)
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub created_before: Option<String>,
    /// `--has-X` / `--no-X` content switches (list parity: one definition in list_switches).
    #[command(flatten)]
    pub content: ContentArgs,
}

impl WindowArgs {
    /// Adds the windows and content filters to `query`.
    ///
    /// # Errors
    /// `invalid_argument_value` for a malformed time.
    pub fn apply(&self, now_ms: i64, query: &mut Query) -> Result<()> {
        let bound = |flag: &str, raw: &Option<String>| -> Result<Option<i64>> {
            Ok(raw
                .as_deref()
                .filter(|r| !r.trim().is_empty())
                .map(|r| parse_when(flag, r, now_ms))
                .transpose()?)
        };
        query.deadline = TimeWindow {
            after: bound("--deadline-after", &self.deadline_after)?,
            before: bound("--deadline-before", &self.deadline_before)?,
        };
        query.updated = TimeWindow {
            after: bound("--updated-after", &self.updated_after)?,
            before: bound("--updated-before", &self.updated_before)?,
        };
        query.created = TimeWindow {
            after: bound("--created-after", &self.created_after)?,
            before: bound("--created-before", &self.created_before)?,
        };
        for (_, given, content, present) in self.content.pairs() {
            if given {
                query.content.push(ContentFilter { content, present });
            }
        }
        Ok(())
    }

    /// Adds the windows given on the command line to pm's compact filter echo.
    pub fn echo_into(&self, m: &mut Map<String, Value>) {
        for (key, value) in [
            ("deadline_before", &self.deadline_before),
            ("deadline_after", &self.deadline_after),
            ("updated_after", &self.updated_after),
            ("updated_before", &self.updated_before),
            ("created_after", &self.created_after),
            ("created_before", &self.created_before),
        ] {
            if let Some(v) = value {
                m.insert(key.into(), Value::String(v.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_values_split_and_trim() {
        let v = vec!["a, b".to_owned(), "".to_owned(), "c".to_owned()];
        assert_eq!(csv_values(&v), ["a", "b", "c"]);
        assert_eq!(raw(&v).as_deref(), Some("a, b,,c"));
    }
}
