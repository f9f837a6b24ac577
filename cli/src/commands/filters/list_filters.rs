//! The one filter front-end of the item reads (`list`, `search`, `context`, `next`,
//! `aggregate`): the clap groups of the filter flags, the [`Filters`] a command assembles from
//! the groups it offers, the engine `Query` they build and the echo of what was given. Values
//! are parsed in `rank_filters.rs` (one parser per kind); what a filter means is
//! `pm_engine::query`.

use pm_engine::clock::EpochMs;
use pm_engine::query::{ContentFilter, Query, StatusFilter, TimeWindow, parse_when};
use pm_engine::schema::RuntimeSchema;
use pm_engine::{Error, Result};
use serde_json::{Map, Value, json};

pub use super::rank_filters::{StatusScope, status_scope};
use super::rank_filters::{
    assignees, assignment, item_id, item_ids, priorities, split_tags, split_values, time_bound,
    types,
};
pub use crate::commands::listing::list_switches::{ContentArgs, MissingArgs};

/// `--status`: `list`, `search` and `aggregate`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct StatusArgs {
    /// Keep items with these statuses, or all (repeatable or comma-separated)
    #[arg(long = "status", value_name = "STATUS")]
    pub statuses: Vec<String>,
}

/// The selectors every item read offers.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct SelectArgs {
    /// Keep items of these types (repeatable or comma-separated)
    #[arg(long = "type", value_name = "TYPE")]
    pub types: Vec<String>,

    /// Keep items with any of these tags, case-insensitive (repeatable or comma-separated; \, escapes a comma)
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,

    /// Keep items with these priorities, 0 (highest) to 4 (repeatable or comma-separated)
    #[arg(long = "priority", value_name = "0-4", allow_negative_numbers = true)]
    pub priorities: Vec<String>,

    /// Keep items assigned to these assignees (repeatable or comma-separated)
    #[arg(long = "assignee", value_name = "NAME")]
    pub assignees: Vec<String>,

    /// Keep only assigned or only unassigned items
    #[arg(long, value_name = "assigned|unassigned")]
    pub assignee_filter: Option<String>,

    /// Keep items of these sprints (repeatable or comma-separated)
    #[arg(long = "sprint", value_name = "SPRINT")]
    pub sprints: Vec<String>,

    /// Keep items of these releases (repeatable or comma-separated)
    #[arg(long = "release", value_name = "RELEASE")]
    pub releases: Vec<String>,

    /// Keep children of this item, case-insensitive (scalar parent or a hierarchy dependency edge; context and next: its subtree)
    #[arg(long, value_name = "ID")]
    pub parent: Option<String>,
}

/// Date windows: `list` and `search`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct WindowArgs {
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
}

/// `--today` and `--recent`: `list`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct RecencyArgs {
    /// Keep items updated since midnight (UTC)
    #[arg(long)]
    pub today: bool,

    /// Keep items updated in the last 7 days (same as --updated-after -7d)
    #[arg(long)]
    pub recent: bool,
}

/// Every filter of `pm list`: status scope, selectors, ids, date windows, content presence and
/// governance gaps.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ListFilterArgs {
    /// The status scope.
    #[command(flatten)]
    pub status: StatusArgs,

    /// The shared selectors.
    #[command(flatten)]
    pub select: SelectArgs,

    /// Keep only these item ids (repeatable or comma-separated)
    #[arg(long = "ids", value_name = "IDS")]
    pub ids: Vec<String>,

    /// Date windows.
    #[command(flatten)]
    pub windows: WindowArgs,

    /// `--today` / `--recent`.
    #[command(flatten)]
    pub recency: RecencyArgs,

    /// Content presence filters (--has-X / --no-X).
    #[command(flatten)]
    pub content: ContentArgs,

    /// Governance gap filters (--filter-X-missing).
    #[command(flatten)]
    pub missing: MissingArgs,
}

impl ListFilterArgs {
    /// Returns every group of list's filters.
    pub fn filters(&self) -> Filters<'_> {
        Filters::new(&self.select)
            .with_ids(&self.ids)
            .with_windows(&self.windows)
            .with_recency(&self.recency)
            .with_content(&self.content)
            .with_missing(&self.missing)
    }

    /// Resolves `--status` (see [`status_scope`]).
    ///
    /// # Errors
    /// As [`status_scope`].
    pub fn status_scope(&self, schema: &RuntimeSchema) -> Result<StatusScope> {
        status_scope(&self.status.statuses, schema)
    }

    /// Builds the query of list's filters under `status`; relative times are measured from
    /// `now`.
    ///
    /// # Errors
    /// As [`Filters::to_query`].
    pub fn to_query(
        &self,
        status: StatusFilter,
        schema: &RuntimeSchema,
        now: EpochMs,
    ) -> Result<Query> {
        self.filters().to_query(status, schema, &|| now)
    }
}

/// The filter groups one command offers, borrowed from its arguments: the one way from filter
/// flags to a `Query` and to the echo of the given filters. A group a command does not offer
/// is `None` (its keys are never echoed).
#[derive(Clone, Copy, Debug)]
pub struct Filters<'a> {
    select: &'a SelectArgs,
    ids: Option<&'a [String]>,
    windows: Option<&'a WindowArgs>,
    recency: Option<&'a RecencyArgs>,
    content: Option<&'a ContentArgs>,
    missing: Option<&'a MissingArgs>,
}

/// How an echo prints the value filters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EchoStyle {
    /// Only the given filters; a flag given once as its raw string, given several times as
    /// the list of its raw strings (`list`).
    Given,
    /// Only the given filters; repeated values joined with commas (`search`'s compact echo).
    GivenJoined,
    /// Every value filter the command offers, `null` when not given, repeated values joined
    /// with commas (`context`, `next`, `aggregate`, `search`'s verbose echo).
    Every,
}

/// A value filter as given on the command line.
enum Raw<'a> {
    Repeated(&'a [String]),
    Single(Option<&'a str>),
}

impl Raw<'_> {
    fn echo(&self, style: EchoStyle) -> Option<Value> {
        let given = match self {
            Raw::Repeated([]) | Raw::Single(None) => None,
            Raw::Repeated([one]) => Some(json!(one)),
            Raw::Repeated(many) if style == EchoStyle::Given => Some(json!(many)),
            Raw::Repeated(many) => Some(json!(many.join(","))),
            Raw::Single(Some(one)) => Some(json!(one)),
        };
        match style {
            EchoStyle::Every => Some(given.unwrap_or(Value::Null)),
            EchoStyle::Given | EchoStyle::GivenJoined => given,
        }
    }
}

impl<'a> Filters<'a> {
    /// Returns the filters of a command that offers only the selectors.
    pub fn new(select: &'a SelectArgs) -> Filters<'a> {
        Filters {
            select,
            ids: None,
            windows: None,
            recency: None,
            content: None,
            missing: None,
        }
    }

    /// Adds `--ids`.
    pub fn with_ids(self, ids: &'a [String]) -> Filters<'a> {
        Filters {
            ids: Some(ids),
            ..self
        }
    }

    /// Adds the date windows.
    pub fn with_windows(self, windows: &'a WindowArgs) -> Filters<'a> {
        Filters {
            windows: Some(windows),
            ..self
        }
    }

    /// Adds `--today` / `--recent`.
    pub fn with_recency(self, recency: &'a RecencyArgs) -> Filters<'a> {
        Filters {
            recency: Some(recency),
            ..self
        }
    }

    /// Adds the content presence switches.
    pub fn with_content(self, content: &'a ContentArgs) -> Filters<'a> {
        Filters {
            content: Some(content),
            ..self
        }
    }

    /// Adds the governance gap switches.
    pub fn with_missing(self, missing: &'a MissingArgs) -> Filters<'a> {
        Filters {
            missing: Some(missing),
            ..self
        }
    }

    /// Builds the engine query of these filters under `status` (the resolved scope). `now`
    /// is read at most once, and only when a time filter is given.
    ///
    /// # Errors
    /// `invalid_argument_value` for an unknown type, a priority outside 0–4, an assignee of
    /// `none`/`null`, an `--assignee-filter` other than assigned|unassigned, an unparsable
    /// time, or `--recent` combined with `--updated-after`.
    pub fn to_query(
        self,
        status: StatusFilter,
        schema: &RuntimeSchema,
        now: &dyn Fn() -> EpochMs,
    ) -> Result<Query> {
        let s = self.select;
        let mut query = Query {
            status,
            types: types(&s.types, schema)?,
            tags: split_tags(&s.tags),
            priorities: priorities(&s.priorities)?,
            assignees: assignees(&s.assignees)?,
            assignment: assignment(s.assignee_filter.as_deref())?,
            parent: s.parent.as_deref().and_then(item_id),
            sprints: split_values(&s.sprints),
            releases: split_values(&s.releases),
            ids: item_ids(self.ids.unwrap_or_default()),
            ..Query::default()
        };
        let mut read = None;
        let mut now = || *read.get_or_insert_with(now);
        if let Some(w) = self.windows {
            let mut bound =
                |flag: &str, raw: &Option<String>| time_bound(flag, raw.as_deref(), &mut now);
            query.deadline = TimeWindow {
                after: bound("--deadline-after", &w.deadline_after)?,
                before: bound("--deadline-before", &w.deadline_before)?,
            };
            query.updated = TimeWindow {
                after: bound("--updated-after", &w.updated_after)?,
                before: bound("--updated-before", &w.updated_before)?,
            };
            query.created = TimeWindow {
                after: bound("--created-after", &w.created_after)?,
                before: bound("--created-before", &w.created_before)?,
            };
        }
        if let Some(r) = self.recency {
            query.updated.after = recency(r, query.updated.after, &mut now)?;
        }
        query.content = (self.content.map(ContentArgs::pairs).into_iter().flatten())
            .filter(|(_, on, _, _)| *on)
            .map(|(_, _, content, present)| ContentFilter { content, present })
            .collect();
        query.missing = (self.missing.map(MissingArgs::flags).into_iter().flatten())
            .filter_map(|(_, on, m)| on.then_some(m))
            .collect();
        Ok(query)
    }

    /// Returns the echo of the value filters, `type` to `parent`, in pm's order (list places
    /// `parent` before `sprint`, context after `limit`; see their echoes).
    pub fn echo_values(&self, style: EchoStyle) -> Map<String, Value> {
        let s = self.select;
        let w = |f: fn(&WindowArgs) -> &Option<String>| {
            self.windows.map(|w| Raw::Single(f(w).as_deref()))
        };
        let entries = [
            ("type", Some(Raw::Repeated(&s.types))),
            ("tag", Some(Raw::Repeated(&s.tags))),
            ("priority", Some(Raw::Repeated(&s.priorities))),
            ("deadline_before", w(|w| &w.deadline_before)),
            ("deadline_after", w(|w| &w.deadline_after)),
            ("updated_after", w(|w| &w.updated_after)),
            ("updated_before", w(|w| &w.updated_before)),
            ("created_after", w(|w| &w.created_after)),
            ("created_before", w(|w| &w.created_before)),
            ("ids", self.ids.map(Raw::Repeated)),
            ("assignee", Some(Raw::Repeated(&s.assignees))),
            (
                "assignee_filter",
                Some(Raw::Single(s.assignee_filter.as_deref())),
            ),
            ("sprint", Some(Raw::Repeated(&s.sprints))),
            ("release", Some(Raw::Repeated(&s.releases))),
            ("parent", Some(Raw::Single(s.parent.as_deref()))),
        ];
        entries
            .into_iter()
            .filter_map(|(key, raw)| Some((key.to_owned(), raw?.echo(style)?)))
            .collect()
    }

    /// Returns the echo of the switches that are on (`true`), in pm's order: governance gaps,
    /// content presence, then `today`/`recent`.
    pub fn echo_switches(&self) -> Map<String, Value> {
        let missing = (self.missing.map(MissingArgs::flags).into_iter().flatten())
            .map(|(key, on, _)| (key, on));
        let content = (self.content.map(ContentArgs::pairs).into_iter().flatten())
            .map(|(key, on, _, _)| (key, on));
        let recency =
            (self.recency.into_iter()).flat_map(|r| [("today", r.today), ("recent", r.recent)]);
        missing
            .chain(content)
            .chain(recency)
            .filter(|(_, on)| *on)
            .map(|(key, _)| (key.to_owned(), Value::Bool(true)))
            .collect()
    }
}

/// Applies `--recent` (the last 7 days) and `--today` (since UTC midnight) to the lower
/// `updated_at` bound.
fn recency(
    r: &RecencyArgs,
    after: Option<EpochMs>,
    now: &mut dyn FnMut() -> EpochMs,
) -> Result<Option<EpochMs>> {
    let mut after = after;
    if r.recent {
        if after.is_some() {
            let reason = "--recent cannot be combined with --updated-after.".to_owned();
            return Err(Error::invalid_argument(
                "--recent",
                "true",
                reason,
                Vec::new(),
            ));
        }
        after = Some(parse_when("--recent", "-7d", now())?);
    }
    if r.today {
        let midnight = now().div_euclid(86_400_000) * 86_400_000;
        after = Some(after.map_or(midnight, |a| a.max(midnight)));
    }
    Ok(after)
}

impl StatusArgs {
    /// Resolves the statuses as `search` and `aggregate` read them: every status unless some
    /// are named (`blocked` is the plain status here, not list's edge-aware spelling).
    ///
    /// # Errors
    /// As [`status_scope`].
    pub fn filter(&self, schema: &RuntimeSchema) -> Result<StatusFilter> {
        Ok(match status_scope(&self.statuses, schema)? {
            StatusScope::Default | StatusScope::All => StatusFilter::All,
            StatusScope::Single(id) => StatusFilter::Set(vec![id]),
            StatusScope::Many(ids) => StatusFilter::Set(ids),
        })
    }

    /// Returns the echo of the raw `--status` values (joined with commas; a lone `all` in any
    /// case as `all`), `None` when not given. `list` echoes its resolved scope instead.
    pub fn echo(&self) -> Option<Value> {
        if self.statuses.is_empty() {
            return None;
        }
        let raw = self.statuses.join(",");
        let all = split_values(&self.statuses).len() == 1 && raw.trim().eq_ignore_ascii_case("all");
        Some(json!(if all { "all".to_owned() } else { raw }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: EpochMs = 1_788_220_800_000;

    #[test]
    fn filters_validate_and_build_the_query() -> Result<()> {
        let schema = RuntimeSchema::builtin();
        let mut args = ListFilterArgs::default();
        args.select.types = vec!["task,epic".into()];
        args.select.priorities = vec!["0".into(), "1,0".into()];
        args.select.parent = Some(" PM-A1 ".into());
        args.recency.recent = true;
        args.content.has_notes = true;
        args.missing.filter_risk_missing = true;
        let q = args.to_query(StatusFilter::All, &schema, NOW)?;
        assert_eq!(q.types, ["Task", "Epic"]);
        assert_eq!(q.priorities, [0, 1]);
        assert_eq!(q.parent.as_deref(), Some("pm-a1"));
        assert_eq!(q.updated.after, Some(NOW - 7 * 86_400_000));
        assert_eq!(q.missing, [pm_engine::query::Missing::Risk]);
        assert_eq!(q.content.len(), 1);
        args.select.priorities = vec!["5".into()];
        let q = args.to_query(StatusFilter::All, &schema, NOW);
        assert!(q.is_err());
        Ok(())
    }

    #[test]
    fn the_clock_is_read_once_and_only_for_a_time_filter() -> Result<()> {
        let schema = RuntimeSchema::builtin();
        let reads = std::cell::Cell::new(0);
        let clock = || {
            reads.set(reads.get() + 1);
            NOW
        };
        let mut args = ListFilterArgs::default();
        args.filters()
            .to_query(StatusFilter::All, &schema, &clock)?;
        assert_eq!(reads.get(), 0);
        args.windows.updated_after = Some("-1d".into());
        args.windows.created_before = Some("2026-01-01".into());
        args.recency.today = true;
        args.filters()
            .to_query(StatusFilter::All, &schema, &clock)?;
        assert_eq!(reads.get(), 1);
        Ok(())
    }

    #[test]
    fn echo_styles_print_what_was_given() {
        let mut select = SelectArgs {
            tags: vec!["a".into(), r"b\,c".into()],
            priorities: vec!["1".into()],
            ..SelectArgs::default()
        };
        let windows = WindowArgs {
            updated_after: Some("-7d".into()),
            ..WindowArgs::default()
        };
        let f = Filters::new(&select).with_windows(&windows);
        let given = Value::Object(f.echo_values(EchoStyle::Given));
        assert_eq!(
            given,
            json!({"tag": ["a", r"b\,c"], "priority": "1", "updated_after": "-7d"})
        );
        let joined = Value::Object(f.echo_values(EchoStyle::GivenJoined));
        assert_eq!(joined["tag"], r"a,b\,c");
        select.parent = Some("PM-A1".into());
        let every = Filters::new(&select).echo_values(EchoStyle::Every);
        let keys: Vec<&str> = every.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "type",
                "tag",
                "priority",
                "assignee",
                "assignee_filter",
                "sprint",
                "release",
                "parent"
            ]
        );
        assert_eq!(every["type"], Value::Null);
        assert_eq!(every["parent"], "PM-A1");
    }

    #[test]
    fn switches_echo_in_order() {
        let select = SelectArgs::default();
        let content = ContentArgs {
            no_notes: true,
            ..ContentArgs::default()
        };
        let missing = MissingArgs {
            filter_ac_missing: true,
            ..MissingArgs::default()
        };
        let recency = RecencyArgs {
            today: true,
            recent: false,
        };
        let f = Filters::new(&select)
            .with_content(&content)
            .with_missing(&missing)
            .with_recency(&recency);
        let keys: Vec<String> = f.echo_switches().keys().cloned().collect();
        assert_eq!(keys, ["filter_ac_missing", "no_notes", "today"]);
    }
}
