//! List query semantics: every filter of `pm list` (shared with `search`, `context` and `next`) and
//! [`Query::matches`], the reference the index's SQL must reproduce exactly. No SQL, no clock:
//! relative times are parsed by [`when`] against the caller's clock; aliases are resolved by
//! the caller.

mod counts;
mod page;
mod relations;
mod sort;
pub mod when;

pub use counts::{
    STATUS_COLUMNS, StatusCount, TypeTally, count_by_type_status, tally_by_status, tally_by_type,
};
pub use page::{
    AutoLimit, Completeness, CompletenessStatus, Listing, Page, PageSlice, PageStart, Source,
    paginate,
};
pub use relations::{CHILD_KINDS, PARENT_KINDS, Relations};
pub use sort::{KeyPart, Sort, SortAnchor, SortField, SortKey};
pub use when::parse_when;

use crate::item::canon::js;
use crate::summary::{ItemSummary, StatusClass, field_match_values};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which statuses a list includes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatusFilter {
    /// Plain `pm list`: every non-terminal status.
    #[default]
    NonTerminal,
    /// `--all` / `--status all`.
    All,
    /// Explicit status ids (already resolved through the registry by the caller).
    Set(Vec<String>),
    /// `--status blocked` / `list-blocked`: a status with the `blocked` role, or a non-terminal
    /// item with at least one unresolved blocker (see [`Relations`]).
    EdgeAwareBlocked,
}

/// `--assignee-filter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Assignment {
    /// An assignee is set.
    Assigned,
    /// No assignee.
    Unassigned,
}

/// A half-open time window `[after, before)` in epoch milliseconds; an item without the
/// timestamp never matches a window that has a bound.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeWindow {
    /// Inclusive lower bound.
    pub after: Option<i64>,
    /// Exclusive upper bound.
    pub before: Option<i64>,
}

impl TimeWindow {
    /// Returns true when the window has no bound.
    pub fn is_open(&self) -> bool {
        self.after.is_none() && self.before.is_none()
    }

    /// Returns true when `ms` lies in the window.
    pub fn contains(&self, ms: Option<i64>) -> bool {
        if self.is_open() {
            return true;
        }
        let Some(ms) = ms else { return false };
        self.after.is_none_or(|a| ms >= a) && self.before.is_none_or(|b| ms < b)
    }
}

/// Content whose presence `--has-X` / `--no-X` test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Content {
    /// `comments[]` non-empty.
    Comments,
    /// `notes[]` non-empty.
    Notes,
    /// `learnings[]` non-empty.
    Learnings,
    /// `files[]` non-empty.
    Files,
    /// `docs[]` non-empty.
    Docs,
    /// `tests[]` non-empty.
    Tests,
    /// `dependencies[]` non-empty.
    Deps,
    /// The body is non-empty (`--has-body` / `--empty-body`).
    Body,
    /// A linked test with a command (`--has-linked-command` / `--no-linked-command`).
    LinkedCommand,
}

/// One `--has-X` (present) or `--no-X` (absent) filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContentFilter {
    /// What is tested.
    pub content: Content,
    /// True for `--has-X`, false for `--no-X`.
    pub present: bool,
}

/// A `--filter-*-missing` governance filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Missing {
    /// No non-blank `acceptance_criteria`.
    AcceptanceCriteria,
    /// No numeric `estimated_minutes`.
    Estimates,
    /// A terminal item without `resolution`.
    Resolution,
    /// The union of the three above.
    Metadata,
    /// No `reviewer`.
    Reviewer,
    /// No `risk`.
    Risk,
    /// No `confidence`.
    Confidence,
    /// No `sprint`.
    Sprint,
    /// No `release`.
    Release,
}

/// A custom-field equality filter: the item's value (or an element of an array value) equals
/// `value` (compared as compact JSON text).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldFilter {
    /// The field's metadata key.
    pub key: String,
    /// The wanted value, typed by the caller from the field definition.
    pub value: Value,
}

/// Every filter of a list read. Empty sets mean "no filter"; sets are OR within, AND across.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Query {
    /// Status scope.
    pub status: StatusFilter,
    /// `--type`: exact type names.
    pub types: Vec<String>,
    /// `--tag`: match ANY, case-insensitively.
    pub tags: Vec<String>,
    /// `--priority`.
    pub priorities: Vec<i64>,
    /// `--ids`.
    pub ids: Vec<String>,
    /// `--assignee`: exact assignee values.
    pub assignees: Vec<String>,
    /// `--assignee-filter`.
    pub assignment: Option<Assignment>,
    /// `--parent`: the scalar parent or a hierarchy edge (see [`Relations`]).
    pub parent: Option<String>,
    /// `--sprint`.
    pub sprints: Vec<String>,
    /// `--release`.
    pub releases: Vec<String>,
    /// `--deadline-after/before`.
    pub deadline: TimeWindow,
    /// `--updated-after/before`.
    pub updated: TimeWindow,
    /// `--created-after/before`.
    pub created: TimeWindow,
    /// `--has-X` / `--no-X`.
    pub content: Vec<ContentFilter>,
    /// `--filter-*-missing` (all must hold).
    pub missing: Vec<Missing>,
    /// Custom-field equality filters (all must hold).
    pub fields: Vec<FieldFilter>,
}

impl Query {
    /// Returns the query of plain `pm list` (non-terminal items, no other filter).
    pub fn new() -> Query {
        Query::default()
    }

    /// Returns a query over every status and no other filter.
    pub fn all() -> Query {
        Query {
            status: StatusFilter::All,
            ..Query::default()
        }
    }

    /// Returns true when matching needs cross-item [`Relations`] (edge-aware blocked or parent).
    pub fn needs_relations(&self) -> bool {
        self.status == StatusFilter::EdgeAwareBlocked || self.parent.is_some()
    }

    /// Returns the tag filter lowercased as tags are stored (JavaScript `toLowerCase`).
    pub fn tags_lowercase(&self) -> Vec<String> {
        self.tags.iter().map(|t| tag_key(t.trim())).collect()
    }

    /// Returns the items of `corpus` (the whole tracker) that satisfy every filter, in corpus
    /// order: one read of the corpus serves both the corpus and the matches.
    pub fn filter<'a>(&self, corpus: &'a [ItemSummary]) -> Vec<&'a ItemSummary> {
        let relations = if self.needs_relations() {
            Relations::from_summaries(corpus)
        } else {
            Relations::default()
        };
        corpus
            .iter()
            .filter(|s| self.matches(s, &relations))
            .collect()
    }

    /// Returns true when `item` satisfies every filter; `relations` must describe the whole
    /// corpus when [`Query::needs_relations`] (otherwise [`Relations::default`] will do).
    pub fn matches(&self, item: &ItemSummary, relations: &Relations) -> bool {
        self.matches_status(item, relations)
            && (self.types.is_empty() || self.types.contains(&item.item_type))
            && self.matches_tags(item)
            && (self.priorities.is_empty() || self.priorities.contains(&item.priority))
            && (self.ids.is_empty() || self.ids.contains(&item.id))
            && in_set(&self.assignees, item.assignee.as_deref())
            && self.assignment.is_none_or(|a| match a {
                Assignment::Assigned => item.assignee.is_some(),
                Assignment::Unassigned => item.assignee.is_none(),
            })
            && self
                .parent
                .as_deref()
                .is_none_or(|p| relations.has_parent(item, p))
            && in_set(&self.sprints, item.sprint.as_deref())
            && in_set(&self.releases, item.release.as_deref())
            && self.deadline.contains(item.deadline_ms)
            && self.updated.contains(item.updated_ms)
            && self.created.contains(item.created_ms)
            && self
                .content
                .iter()
                .all(|f| content_present(item, f.content) == f.present)
            && self.missing.iter().all(|m| is_missing(item, *m))
            && self.fields.iter().all(|f| field_matches(item, f))
    }

    fn matches_status(&self, item: &ItemSummary, relations: &Relations) -> bool {
        match &self.status {
            StatusFilter::NonTerminal => !item.is_terminal(),
            StatusFilter::All => true,
            StatusFilter::Set(set) => set.contains(&item.status),
            StatusFilter::EdgeAwareBlocked => {
                item.status_class == StatusClass::Blocked
                    || (!item.is_terminal() && relations.has_open_blocker(item))
            }
        }
    }

    fn matches_tags(&self, item: &ItemSummary) -> bool {
        if self.tags.is_empty() {
            return true;
        }
        let wanted = self.tags_lowercase();
        item.tags.iter().any(|t| wanted.contains(&tag_key(t)))
    }
}

/// Returns the form a tag is compared in (JavaScript `toLowerCase`), for item and query tags.
pub fn tag_key(tag: &str) -> String {
    js::lowercase(tag)
}

fn in_set(set: &[String], value: Option<&str>) -> bool {
    set.is_empty() || value.is_some_and(|v| set.iter().any(|s| s == v))
}

/// Returns whether `item` has `content` (the predicate behind `--has-X` / `--no-X`).
pub fn content_present(item: &ItemSummary, content: Content) -> bool {
    let c = &item.facts.counts;
    match content {
        Content::Comments => c.comments > 0,
        Content::Notes => c.notes > 0,
        Content::Learnings => c.learnings > 0,
        Content::Files => c.files > 0,
        Content::Docs => c.docs > 0,
        Content::Tests => c.tests > 0,
        Content::Deps => !item.dependencies.is_empty(),
        Content::Body => item.facts.has_body,
        Content::LinkedCommand => item.facts.has_linked_command,
    }
}

/// Returns whether `item` is selected by the governance filter `missing`.
pub fn is_missing(item: &ItemSummary, missing: Missing) -> bool {
    match missing {
        Missing::AcceptanceCriteria => !item.has_acceptance_criteria,
        Missing::Estimates => item.estimated_minutes.is_none(),
        Missing::Resolution => item.is_terminal() && !item.has_resolution,
        Missing::Metadata => [
            Missing::AcceptanceCriteria,
            Missing::Estimates,
            Missing::Resolution,
        ]
        .into_iter()
        .any(|m| is_missing(item, m)),
        Missing::Reviewer => !item.has_reviewer,
        Missing::Risk => item.risk.is_none(),
        Missing::Confidence => item.confidence.is_none(),
        Missing::Sprint => item.sprint.is_none(),
        Missing::Release => item.release.is_none(),
    }
}

fn field_matches(item: &ItemSummary, filter: &FieldFilter) -> bool {
    let Some(value) = item.fields.get(&filter.key) else {
        return false;
    };
    let wanted = crate::json::to_compact(&filter.value);
    field_match_values(value).contains(&wanted)
}

#[cfg(test)]
mod tests;
