//! `pm aggregate`: items grouped by one or more fields with a count, and
//! optionally completion, a sum and an average of a numeric field. Pure over
//! [`AggregateRow`]s (what grouping reads of an item, from a summary or from index columns);
//! filtering and rendering belong to callers.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde_json::Value;

use crate::collate::locale_compare;
use crate::summary::ItemSummary;

/// A field items can be grouped by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum GroupField {
    /// `parent` (items without one are skipped unless `include_unparented`).
    Parent,
    /// `type`.
    Type,
    /// `priority`.
    Priority,
    /// `status`.
    Status,
    /// `assignee`.
    Assignee,
    /// `tags`: an item counts once in the group of each of its tags.
    Tags,
    /// `sprint`.
    Sprint,
    /// `release`.
    Release,
}

impl GroupField {
    /// Every field, in pm's documented order.
    pub const ALL: [GroupField; 8] = [
        GroupField::Parent,
        GroupField::Type,
        GroupField::Priority,
        GroupField::Status,
        GroupField::Assignee,
        GroupField::Tags,
        GroupField::Sprint,
        GroupField::Release,
    ];

    /// The flag spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            GroupField::Parent => "parent",
            GroupField::Type => "type",
            GroupField::Priority => "priority",
            GroupField::Status => "status",
            GroupField::Assignee => "assignee",
            GroupField::Tags => "tags",
            GroupField::Sprint => "sprint",
            GroupField::Release => "release",
        }
    }

    /// Parses a flag spelling (case-insensitive; `tag` is accepted for `tags`).
    pub fn parse(raw: &str) -> Option<GroupField> {
        let lower = raw.trim().to_ascii_lowercase();
        if lower == "tag" {
            return Some(GroupField::Tags);
        }
        GroupField::ALL.into_iter().find(|f| f.as_str() == lower)
    }

    /// The label of an absent or blank value.
    pub fn blank_label(self) -> &'static str {
        match self {
            GroupField::Parent => "(unparented)",
            GroupField::Assignee => "(unassigned)",
            GroupField::Tags => "(untagged)",
            _ => "(none)",
        }
    }

    /// The values `item` has for this field: one, or one per tag; `None` is the blank value.
    fn values(self, item: &AggregateRow) -> Vec<Option<GroupValue>> {
        let text = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| GroupValue::Text(s.to_owned()))
        };
        match self {
            GroupField::Parent => vec![text(&item.parent)],
            GroupField::Type => vec![Some(GroupValue::Text(item.item_type.clone()))],
            GroupField::Priority => vec![Some(GroupValue::Number(item.priority))],
            GroupField::Status => vec![Some(GroupValue::Text(item.status.clone()))],
            GroupField::Assignee => vec![text(&item.assignee)],
            GroupField::Sprint => vec![text(&item.sprint)],
            GroupField::Release => vec![text(&item.release)],
            GroupField::Tags if item.tags.is_empty() => vec![None],
            GroupField::Tags => item
                .tags
                .iter()
                .map(|t| Some(GroupValue::Text(t.clone())))
                .collect(),
        }
    }
}

/// What grouping reads of one item. Tags and numeric fields other than `priority` come only
/// from a summary ([`AggregateRow::of`]); the other fields are plain columns, so an index can
/// produce rows for specs that do not need them ([`AggregateSpec::needs_summaries`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AggregateRow {
    /// `parent`, as stored.
    pub parent: Option<String>,
    /// `type`.
    pub item_type: String,
    /// `priority`.
    pub priority: i64,
    /// `status`.
    pub status: String,
    /// `assignee`, as stored.
    pub assignee: Option<String>,
    /// `sprint`, as stored.
    pub sprint: Option<String>,
    /// `release`, as stored.
    pub release: Option<String>,
    /// `tags` (empty unless the spec groups by tags).
    pub tags: Vec<String>,
    /// The status is terminal.
    pub terminal: bool,
    /// The spec's `sum` field's finite numeric value.
    pub sum: Option<f64>,
    /// The spec's `avg` field's finite numeric value.
    pub avg: Option<f64>,
    /// How many items the row stands for: 1 for an item's row, more for a row that stands
    /// for every matching item with these values (in the position of the first of them).
    pub weight: usize,
}

impl AggregateRow {
    /// Returns what `spec` reads of `item`.
    pub fn of(item: &ItemSummary, spec: &AggregateSpec) -> AggregateRow {
        AggregateRow {
            parent: item.parent.clone(),
            item_type: item.item_type.clone(),
            priority: item.priority,
            status: item.status.clone(),
            assignee: item.assignee.clone(),
            sprint: item.sprint.clone(),
            release: item.release.clone(),
            tags: if spec.group_by.contains(&GroupField::Tags) {
                item.tags.clone()
            } else {
                Vec::new()
            },
            terminal: item.is_terminal(),
            sum: spec.sum.as_deref().and_then(|f| numeric(item, f)),
            avg: spec.avg.as_deref().and_then(|f| numeric(item, f)),
            weight: 1,
        }
    }
}

/// One group-by value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupValue {
    /// A string value.
    Text(String),
    /// `priority`.
    Number(i64),
}

impl GroupValue {
    /// The JSON value.
    pub fn to_json(&self) -> Value {
        match self {
            GroupValue::Text(s) => Value::String(s.clone()),
            GroupValue::Number(n) => Value::from(*n),
        }
    }

    fn label(&self) -> String {
        match self {
            GroupValue::Text(s) => s.clone(),
            GroupValue::Number(n) => n.to_string(),
        }
    }
}

/// Orders values: numbers ascending, strings by locale collation, blanks last.
fn compare_values(a: &Option<GroupValue>, b: &Option<GroupValue>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(GroupValue::Number(x)), Some(GroupValue::Number(y))) => x.cmp(y),
        (Some(x), Some(y)) => locale_compare(&x.label(), &y.label()),
    }
}

/// What to compute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AggregateSpec {
    /// The group-by fields, in order (at least one).
    pub group_by: Vec<GroupField>,
    /// Report the terminal share of each group.
    pub completion: bool,
    /// Sum this numeric metadata field per group.
    pub sum: Option<String>,
    /// Average this numeric metadata field per group.
    pub avg: Option<String>,
    /// Keep items without a parent (as the `(unparented)` group) when grouping by parent.
    pub include_unparented: bool,
}

impl AggregateSpec {
    /// Returns true when rows need a summary: grouping by tags (stored case) or a numeric
    /// field other than `priority` (any metadata or custom field).
    pub fn needs_summaries(&self) -> bool {
        self.group_by.contains(&GroupField::Tags)
            || [&self.sum, &self.avg]
                .into_iter()
                .flatten()
                .any(|f| f != "priority")
    }
}

/// A numeric field's total over the items of a group that have a finite numeric value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NumericTotal {
    /// The sum.
    pub sum: f64,
    /// Items that had a value.
    pub counted: usize,
}

/// One group.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// `(field, value)` per group-by field; `None` is the blank value.
    pub key: Vec<(GroupField, Option<GroupValue>)>,
    /// Items in the group.
    pub count: usize,
    /// Items in the group whose status is terminal.
    pub done: usize,
    /// The `sum` field's total.
    pub sum: NumericTotal,
    /// The `avg` field's total.
    pub avg: NumericTotal,
}

impl Group {
    /// `type=Task | status=open`, with blank values labelled per field.
    pub fn label(&self) -> String {
        self.key
            .iter()
            .map(|(field, value)| {
                let shown = value
                    .as_ref()
                    .map_or_else(|| field.blank_label().to_owned(), GroupValue::label);
                format!("{}={shown}", field.as_str())
            })
            .collect::<Vec<_>>()
            .join(" | ")
    }
}

/// The groups and what was left out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Aggregation {
    /// The groups, ordered by each group-by value in turn.
    pub groups: Vec<Group>,
    /// Items passed in.
    pub items_considered: usize,
    /// Items counted in at least one group.
    pub items_grouped: usize,
    /// Items left out for having no parent.
    pub items_skipped_unparented: usize,
}

/// Groups `items` (in default list order) by `spec`.
pub fn aggregate(items: &[AggregateRow], spec: &AggregateSpec) -> Aggregation {
    let mut out = Aggregation {
        items_considered: items.iter().map(|item| item.weight).sum(),
        ..Aggregation::default()
    };
    let by_parent = spec.group_by.contains(&GroupField::Parent);
    let mut groups: Vec<Group> = Vec::new();
    let mut slots: BTreeMap<String, usize> = BTreeMap::new();
    for item in items {
        let has_parent = item.parent.as_deref().is_some_and(|p| !p.trim().is_empty());
        let weight = item.weight;
        if by_parent && !has_parent && !spec.include_unparented {
            out.items_skipped_unparented += weight;
            continue;
        }
        out.items_grouped += weight;
        let (sum, avg) = (item.sum, item.avg);
        for key in keys(item, &spec.group_by) {
            let slot_key = format!("{key:?}");
            let index = *slots.entry(slot_key).or_insert_with(|| {
                groups.push(Group {
                    key: key.clone(),
                    count: 0,
                    done: 0,
                    sum: NumericTotal::default(),
                    avg: NumericTotal::default(),
                });
                groups.len() - 1
            });
            let group = &mut groups[index];
            group.count += weight;
            group.done += usize::from(item.terminal) * weight;
            for (total, value) in [(&mut group.sum, sum), (&mut group.avg, avg)] {
                if let Some(v) = value {
                    // Exact for the integer values a weighted row carries (`priority`).
                    total.sum += v * weight as f64;
                    total.counted += weight;
                }
            }
        }
    }
    groups.sort_by(|a, b| {
        a.key
            .iter()
            .zip(&b.key)
            .map(|((_, x), (_, y))| compare_values(x, y))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    });
    out.groups = groups;
    out
}

/// Every combination of the item's values for the group-by fields (tags multiply).
fn keys(item: &AggregateRow, fields: &[GroupField]) -> Vec<Vec<(GroupField, Option<GroupValue>)>> {
    let mut combos: Vec<Vec<(GroupField, Option<GroupValue>)>> = vec![Vec::new()];
    for field in fields {
        let values = field.values(item);
        combos = combos
            .into_iter()
            .flat_map(|prefix| {
                values.iter().map(move |v| {
                    let mut next = prefix.clone();
                    next.push((*field, v.clone()));
                    next
                })
            })
            .collect();
    }
    combos
}

/// The finite numeric value of metadata field `field` (`priority`, `estimated_minutes`, a
/// custom field, …); numeric strings do not count.
fn numeric(item: &ItemSummary, field: &str) -> Option<f64> {
    if field == "priority" {
        return Some(item.priority as f64);
    }
    item.light
        .get(field)
        .or_else(|| item.fields.get(field))
        .and_then(Value::as_f64)
        .filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::ItemFormat;
    use crate::schema::RuntimeSchema;
    use crate::summary::ItemFacts;
    use serde_json::json;

    fn item(id: &str, extra: Value) -> ItemSummary {
        let mut light = json!({
            "id": id, "title": id, "description": "", "type": "Task", "status": "open",
            "priority": 2, "tags": [], "created_at": "2026-01-01T00:00:00.000Z",
            "updated_at": "2026-01-01T00:00:00.000Z"
        });
        if let (Some(base), Some(extra)) = (light.as_object_mut(), extra.as_object()) {
            for (k, v) in extra {
                base.insert(k.clone(), v.clone());
            }
        }
        ItemSummary::from_parts(
            light.as_object().cloned().unwrap_or_default(),
            ItemFacts::default(),
            format!("tasks/{id}.toon"),
            ItemFormat::Toon,
            &RuntimeSchema::builtin(),
        )
    }

    fn corpus() -> Vec<ItemSummary> {
        vec![
            item(
                "pm-a",
                json!({"status": "closed", "tags": ["x", "y"], "estimated_minutes": 30, "parent": "pm-e"}),
            ),
            item(
                "pm-b",
                json!({"tags": ["y"], "estimated_minutes": 10, "assignee": "ann"}),
            ),
            item(
                "pm-c",
                json!({"type": "Bug", "priority": 0, "parent": "pm-e"}),
            ),
            item(
                "pm-d",
                json!({"status": "closed", "type": "Bug", "assignee": " "}),
            ),
        ]
    }

    fn spec(group_by: &[GroupField]) -> AggregateSpec {
        AggregateSpec {
            group_by: group_by.to_vec(),
            completion: true,
            sum: Some("estimated_minutes".into()),
            avg: Some("estimated_minutes".into()),
            include_unparented: false,
        }
    }

    fn rows(items: &[ItemSummary], spec: &AggregateSpec) -> Vec<AggregateRow> {
        items.iter().map(|i| AggregateRow::of(i, spec)).collect()
    }

    #[test]
    fn only_tags_and_non_priority_numbers_need_summaries() {
        let mut sp = spec(&[GroupField::Type]);
        assert!(
            sp.needs_summaries(),
            "estimated_minutes is a metadata field"
        );
        sp.sum = Some("priority".into());
        sp.avg = None;
        assert!(!sp.needs_summaries());
        sp.group_by.push(GroupField::Tags);
        assert!(sp.needs_summaries());
    }

    #[test]
    fn groups_are_ordered_labelled_and_counted() {
        let items = corpus();
        let sp = spec(&[GroupField::Type, GroupField::Status]);
        let agg = aggregate(&rows(&items, &sp), &sp);
        let labels: Vec<String> = agg.groups.iter().map(Group::label).collect();
        assert_eq!(
            labels,
            [
                "type=Bug | status=closed",
                "type=Bug | status=open",
                "type=Task | status=closed",
                "type=Task | status=open"
            ]
        );
        assert_eq!(agg.groups[2].done, 1);
        assert_eq!(
            agg.groups[2].sum,
            NumericTotal {
                sum: 30.0,
                counted: 1
            }
        );
        assert_eq!((agg.items_considered, agg.items_grouped), (4, 4));
    }

    #[test]
    fn a_weighted_row_counts_as_that_many_items() {
        let items = corpus();
        let mut sp = spec(&[GroupField::Parent, GroupField::Status]);
        sp.sum = Some("priority".into());
        sp.avg = Some("priority".into());
        let each = rows(&items, &sp);
        // Each row stands for three items: the same groups, three times the counts and sums.
        let tripled: Vec<AggregateRow> = each
            .iter()
            .cloned()
            .map(|row| AggregateRow { weight: 3, ..row })
            .collect();
        let thrice: Vec<AggregateRow> = each
            .iter()
            .flat_map(|row| std::iter::repeat_n(row.clone(), 3))
            .collect();
        let (a, b) = (aggregate(&tripled, &sp), aggregate(&thrice, &sp));
        assert_eq!(a, b);
        assert_eq!(
            (
                a.items_considered,
                a.items_grouped,
                a.items_skipped_unparented
            ),
            (12, 6, 6)
        );
        assert_eq!(a.groups[0].count, 3);
    }

    #[test]
    fn tags_multiply_and_blanks_come_last() {
        let items = corpus();
        let sp = spec(&[GroupField::Tags]);
        let agg = aggregate(&rows(&items, &sp), &sp);
        let counts: Vec<(String, usize)> =
            agg.groups.iter().map(|g| (g.label(), g.count)).collect();
        assert_eq!(
            counts,
            [
                ("tags=x".to_string(), 1),
                ("tags=y".to_string(), 2),
                ("tags=(untagged)".to_string(), 2)
            ]
        );
        assert_eq!(agg.items_grouped, 4);
        let sp = spec(&[GroupField::Assignee]);
        let by_assignee = aggregate(&rows(&items, &sp), &sp);
        let labels: Vec<String> = by_assignee.groups.iter().map(Group::label).collect();
        assert_eq!(labels, ["assignee=ann", "assignee=(unassigned)"]);
    }

    #[test]
    fn unparented_items_are_skipped_unless_asked_for() {
        let items = corpus();
        let sp = spec(&[GroupField::Parent]);
        let skipped = aggregate(&rows(&items, &sp), &sp);
        assert_eq!(skipped.groups.len(), 1);
        assert_eq!(
            (skipped.items_grouped, skipped.items_skipped_unparented),
            (2, 2)
        );
        let mut with = spec(&[GroupField::Parent]);
        with.include_unparented = true;
        let kept = aggregate(&rows(&items, &with), &with);
        let labels: Vec<String> = kept.groups.iter().map(Group::label).collect();
        assert_eq!(labels, ["parent=pm-e", "parent=(unparented)"]);
        assert_eq!(kept.items_skipped_unparented, 0);
    }

    #[test]
    fn priority_groups_are_numeric_and_parse_accepts_tag() {
        let items = corpus();
        let sp = spec(&[GroupField::Priority]);
        let agg = aggregate(&rows(&items, &sp), &sp);
        assert_eq!(agg.groups[0].key[0].1, Some(GroupValue::Number(0)));
        assert_eq!(GroupField::parse(" Tag "), Some(GroupField::Tags));
        assert_eq!(GroupField::parse("owner"), None);
    }
}
