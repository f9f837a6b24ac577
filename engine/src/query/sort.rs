//! List ordering: pm's default order (non-terminal first, priority asc, `updated_at` desc, id
//! asc by `localeCompare`), `--sort <field>` with nulls-last rules, `--order desc` negating the
//! whole comparison, and the anchors that keyset pagination continues after.
//!
//! An ordering is a list of [`SortKey`]s; the index turns the same list into `ORDER BY` and the
//! keyset predicate, so both paths order rows identically. The relative path is the last key,
//! which makes the order total (two files can hold the same id).

use crate::collate::locale_compare;
use crate::summary::ItemSummary;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// A `--sort` field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SortField {
    /// `priority` ascending.
    Priority,
    /// `deadline`, items without one last.
    Deadline,
    /// `updated_at` ascending.
    UpdatedAt,
    /// `created_at` ascending.
    CreatedAt,
    /// `title` by `localeCompare`.
    Title,
    /// `parent` by `localeCompare`, items without one last.
    Parent,
}

/// The order of a list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sort {
    /// `--sort`; `None` is the default order.
    pub field: Option<SortField>,
    /// `--order desc`: negate the whole comparison, tie-breaks included.
    pub descending: bool,
}

/// One component of an ordering, compared ascending unless `descending`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortKey {
    /// What is compared.
    pub part: KeyPart,
    /// Compare in reverse.
    pub descending: bool,
}

/// A comparable value of a row. Absent values (`None`) sort before present ones, as SQL NULLs
/// do; "nulls last" rules are expressed with the explicit `*Missing` flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyPart {
    /// Terminal status (false before true).
    Terminal,
    /// `priority`.
    Priority,
    /// `updated_at` in ms.
    UpdatedMs,
    /// `updated_at` text (`localeCompare`), for equal ms.
    UpdatedText,
    /// `created_at` in ms.
    CreatedMs,
    /// `created_at` text.
    CreatedText,
    /// `deadline` is absent (false before true: nulls last).
    DeadlineMissing,
    /// `deadline` in ms.
    DeadlineMs,
    /// `deadline` text.
    DeadlineText,
    /// `title` (`localeCompare`).
    Title,
    /// `parent` is absent (nulls last).
    ParentMissing,
    /// `parent` (`localeCompare`).
    ParentText,
    /// `id` (`localeCompare`).
    Id,
    /// The relative path (byte order), the final tie-break.
    Path,
}

/// The sort-relevant values of one row: what keyset pagination continues after.
///
/// Only the values the [`Sort`] uses are filled in, so cursors stay small.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SortAnchor {
    /// Terminal status.
    pub terminal: bool,
    /// `priority`.
    pub priority: i64,
    /// `updated_at` in ms.
    pub updated_ms: Option<i64>,
    /// `updated_at`.
    pub updated_at: String,
    /// `id`.
    pub id: String,
    /// Relative path.
    pub path: String,
    /// `created_at` in ms (created sort only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_ms: Option<i64>,
    /// `created_at` (created sort only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// `deadline` in ms (deadline sort only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<i64>,
    /// `deadline` (deadline sort only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<String>,
    /// `title` (title sort only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `parent` (parent sort only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

impl SortAnchor {
    /// Returns the anchor of `item` under `sort`.
    pub fn of(item: &ItemSummary, sort: &Sort) -> SortAnchor {
        let mut anchor = SortAnchor {
            terminal: item.is_terminal(),
            priority: item.priority,
            updated_ms: item.updated_ms,
            updated_at: item.updated_at.clone(),
            id: item.id.clone(),
            path: item.path.clone(),
            ..SortAnchor::default()
        };
        match sort.field {
            Some(SortField::CreatedAt) => {
                anchor.created_ms = item.created_ms;
                anchor.created_at = Some(item.created_at.clone());
            }
            Some(SortField::Deadline) => {
                anchor.deadline_ms = item.deadline_ms;
                anchor.deadline.clone_from(&item.deadline);
            }
            Some(SortField::Title) => anchor.title = Some(item.title.clone()),
            Some(SortField::Parent) => anchor.parent.clone_from(&item.parent),
            Some(SortField::Priority | SortField::UpdatedAt) | None => {}
        }
        anchor
    }
}

impl KeyPart {
    /// Compares this part of two anchors (ascending).
    pub fn compare(self, a: &SortAnchor, b: &SortAnchor) -> Ordering {
        let text = |x: &Option<String>, y: &Option<String>| match (x, y) {
            (Some(x), Some(y)) => locale_compare(x, y),
            _ => x.is_some().cmp(&y.is_some()),
        };
        match self {
            KeyPart::Terminal => a.terminal.cmp(&b.terminal),
            KeyPart::Priority => a.priority.cmp(&b.priority),
            KeyPart::UpdatedMs => a.updated_ms.cmp(&b.updated_ms),
            KeyPart::UpdatedText => locale_compare(&a.updated_at, &b.updated_at),
            KeyPart::CreatedMs => a.created_ms.cmp(&b.created_ms),
            KeyPart::CreatedText => text(&a.created_at, &b.created_at),
            KeyPart::DeadlineMissing => a.deadline.is_none().cmp(&b.deadline.is_none()),
            KeyPart::DeadlineMs => a.deadline_ms.cmp(&b.deadline_ms),
            KeyPart::DeadlineText => text(&a.deadline, &b.deadline),
            KeyPart::Title => text(&a.title, &b.title),
            KeyPart::ParentMissing => a.parent.is_none().cmp(&b.parent.is_none()),
            KeyPart::ParentText => text(&a.parent, &b.parent),
            KeyPart::Id => locale_compare(&a.id, &b.id),
            KeyPart::Path => a.path.cmp(&b.path),
        }
    }
}

impl Sort {
    /// Returns the default list order.
    pub fn default_order() -> Sort {
        Sort::default()
    }

    /// Returns the keys of this ordering, most significant first.
    pub fn keys(&self) -> Vec<SortKey> {
        let field: &[KeyPart] = match self.field {
            None => &[],
            Some(SortField::Priority) => &[KeyPart::Priority],
            Some(SortField::Deadline) => &[
                KeyPart::DeadlineMissing,
                KeyPart::DeadlineMs,
                KeyPart::DeadlineText,
            ],
            Some(SortField::UpdatedAt) => &[KeyPart::UpdatedMs, KeyPart::UpdatedText],
            Some(SortField::CreatedAt) => &[KeyPart::CreatedMs, KeyPart::CreatedText],
            Some(SortField::Title) => &[KeyPart::Title],
            Some(SortField::Parent) => &[KeyPart::ParentMissing, KeyPart::ParentText],
        };
        let default = [
            (KeyPart::Terminal, false),
            (KeyPart::Priority, false),
            (KeyPart::UpdatedMs, true),
            (KeyPart::UpdatedText, true),
            (KeyPart::Id, false),
            (KeyPart::Path, false),
        ];
        field
            .iter()
            .map(|p| (*p, false))
            .chain(default)
            .map(|(part, desc)| SortKey {
                part,
                descending: desc != self.descending,
            })
            .collect()
    }

    /// Compares two anchors under this ordering.
    pub fn compare_anchors(&self, a: &SortAnchor, b: &SortAnchor) -> Ordering {
        for key in self.keys() {
            let ord = key.part.compare(a, b);
            let ord = if key.descending { ord.reverse() } else { ord };
            if ord != Ordering::Equal {
                return ord;
            }
        }
        Ordering::Equal
    }

    /// Compares two items under this ordering (a total order: the path breaks every tie).
    pub fn compare(&self, a: &ItemSummary, b: &ItemSummary) -> Ordering {
        self.compare_anchors(&SortAnchor::of(a, self), &SortAnchor::of(b, self))
    }

    /// Sorts `items` in place.
    pub fn sort(&self, items: &mut [&ItemSummary]) {
        let mut keyed: Vec<(SortAnchor, usize)> = items
            .iter()
            .enumerate()
            .map(|(i, item)| (SortAnchor::of(item, self), i))
            .collect();
        keyed.sort_by(|a, b| self.compare_anchors(&a.0, &b.0));
        let snapshot: Vec<&ItemSummary> = items.to_vec();
        for (slot, (_, i)) in items.iter_mut().zip(keyed) {
            *slot = snapshot[i];
        }
    }
}
