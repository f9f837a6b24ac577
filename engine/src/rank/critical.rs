//! The critical-work order shared by `context` and `next`: status
//! rank, priority, explicit order, earliest deadline, most recently updated, id.

use std::cmp::Ordering;

use crate::collate::locale_compare;
use crate::rank::item::RankItem;
use crate::schema::RuntimeSchema;
use crate::schema::StatusRole;
use crate::timestamp::compare_timestamp_strings;

/// Returns the status rank: in progress 0, open 1, blocked 2, draft 3, another active status 4,
/// another blocked status 5, any other status 6, terminal 7.
pub fn status_rank(status: &str, schema: &RuntimeSchema) -> u8 {
    let reg = &schema.statuses;
    let id = reg.resolve(status).unwrap_or(status);
    if reg.is_terminal(id) {
        return 7;
    }
    if Some(id) == reg.in_progress_status() {
        return 0;
    }
    if id == reg.open_status() {
        return 1;
    }
    if Some(id) == reg.blocked_status() {
        return 2;
    }
    if Some(id) == reg.draft_status() {
        return 3;
    }
    if reg.has_role(id, StatusRole::Active) {
        return 4;
    }
    if reg.has_role(id, StatusRole::Blocked) {
        return 5;
    }
    6
}

/// Returns true when `status` is the in-progress status.
pub fn is_in_progress(status: &str, schema: &RuntimeSchema) -> bool {
    let reg = &schema.statuses;
    let id = reg.resolve(status).unwrap_or(status);
    Some(id) == reg.in_progress_status()
}

fn optional<T>(a: Option<T>, b: Option<T>, cmp: impl Fn(T, T) -> Ordering) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(x), Some(y)) => cmp(x, y),
    }
}

/// The first and last instants whose canonical text has a four-digit year (0000–9999).
const FOUR_DIGIT_YEARS: std::ops::RangeInclusive<i64> = -62_167_219_200_000..=253_402_300_799_999;

/// Compares two `updated_ms` values as pm compares their canonical ISO texts with
/// `compareTimestampStrings` (a missing value is the empty text), most recent first.
///
/// Both texts parse back to their instants when the years have four digits, so the integers
/// decide; other pairs are formatted and compared as texts.
pub fn compare_updated_desc(a: Option<i64>, b: Option<i64>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (Some(x), Some(y)) if FOUR_DIGIT_YEARS.contains(&x) && FOUR_DIGIT_YEARS.contains(&y) => {
            y.cmp(&x)
        }
        _ => compare_timestamp_strings(&sortable(b), &sortable(a)),
    }
}

/// Canonical ISO text of a timestamp for ordering (empty when it does not parse).
fn sortable(ms: Option<i64>) -> String {
    ms.map(crate::clock::format_iso_ms).unwrap_or_default()
}

/// The status rank and in-progress flag of each distinct status of a ranking, computed once
/// per status instead of once per comparison.
#[derive(Clone, Debug, Default)]
pub struct StatusFacts<'a> {
    known: Vec<(&'a str, u8, bool)>,
}

impl<'a> StatusFacts<'a> {
    /// Returns `(status_rank, is_in_progress)` of `status`.
    pub fn of(&mut self, status: &'a str, schema: &RuntimeSchema) -> (u8, bool) {
        if let Some((_, rank, active)) = self.known.iter().find(|(s, _, _)| *s == status) {
            return (*rank, *active);
        }
        let facts = (status_rank(status, schema), is_in_progress(status, schema));
        self.known.push((status, facts.0, facts.1));
        facts
    }
}

/// The fields of an item that the critical order compares, extracted once.
#[derive(Clone, Debug)]
pub struct CriticalKey<'a> {
    status_rank: u8,
    priority: i64,
    order: Option<f64>,
    /// The deadline text and its instant when it parses.
    deadline: Option<(&'a str, Option<i64>)>,
    updated_ms: Option<i64>,
    id: &'a str,
}

impl<'a> CriticalKey<'a> {
    /// Returns the key of `item`.
    pub fn of(item: &'a RankItem, facts: &mut StatusFacts<'a>, schema: &RuntimeSchema) -> Self {
        let deadline = item.deadline();
        CriticalKey {
            status_rank: facts.of(&item.status, schema).0,
            priority: item.priority,
            order: item.order(),
            deadline: deadline.map(|d| (d, crate::timestamp::parse_timestamp(d))),
            updated_ms: item.updated_ms,
            id: &item.id,
        }
    }

    /// Compares by criticality: equal to [`compare_critical`] of the two items.
    pub fn compare(&self, other: &CriticalKey<'_>) -> Ordering {
        self.status_rank
            .cmp(&other.status_rank)
            .then(self.priority.cmp(&other.priority))
            .then_with(|| {
                optional(self.order, other.order, |x, y| {
                    x.partial_cmp(&y).unwrap_or(Ordering::Equal)
                })
            })
            .then_with(|| {
                optional(self.deadline, other.deadline, |(x, xm), (y, ym)| {
                    // `compare_timestamp_strings` with both instants parsed once.
                    match (xm, ym) {
                        (Some(a), Some(b)) if a != b => a.cmp(&b),
                        _ => locale_compare(x, y),
                    }
                })
            })
            .then_with(|| {
                let updated = compare_updated_desc(self.updated_ms, other.updated_ms);
                if updated == Ordering::Equal {
                    locale_compare(self.id, other.id)
                } else {
                    updated
                }
            })
    }
}

/// Stable-sorts `list` by `leaf` (when given, `false` first) and then by the criticality of
/// `item(entry)`, computing each entry's key once.
pub fn sort_critical<T>(
    list: &mut Vec<T>,
    item: impl Fn(&T) -> &RankItem,
    leaf: Option<&dyn Fn(&RankItem) -> bool>,
    schema: &RuntimeSchema,
) {
    let mut facts = StatusFacts::default();
    let mut keys: Vec<(bool, CriticalKey<'_>, usize)> = list
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let it = item(e);
            let has = leaf.is_some_and(|f| f(it));
            (has, CriticalKey::of(it, &mut facts, schema), i)
        })
        .collect();
    keys.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.compare(&b.1)));
    let order: Vec<usize> = keys.into_iter().map(|(_, _, i)| i).collect();
    let mut slots: Vec<Option<T>> = list.drain(..).map(Some).collect();
    list.extend(
        order
            .into_iter()
            .filter_map(|i| slots.get_mut(i).and_then(Option::take)),
    );
}

/// Compares two items by criticality (pm's `compareCriticalItems`).
pub fn compare_critical(a: &RankItem, b: &RankItem, schema: &RuntimeSchema) -> Ordering {
    status_rank(&a.status, schema)
        .cmp(&status_rank(&b.status, schema))
        .then(a.priority.cmp(&b.priority))
        .then_with(|| {
            optional(a.order(), b.order(), |x, y| {
                x.partial_cmp(&y).unwrap_or(Ordering::Equal)
            })
        })
        .then_with(|| {
            optional(a.deadline(), b.deadline(), |x, y| {
                compare_timestamp_strings(x, y)
            })
        })
        .then_with(|| {
            let updated =
                compare_timestamp_strings(&sortable(b.updated_ms), &sortable(a.updated_ms));
            if updated == Ordering::Equal {
                locale_compare(&a.id, &b.id)
            } else {
                updated
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rank::item::RankExtra;
    use crate::summary::StatusClass;
    use proptest::prelude::*;
    use std::sync::Arc;

    const STATUSES: [&str; 5] = ["open", "in_progress", "blocked", "draft", "closed"];
    const DEADLINES: [&str; 5] = [
        "2026-01-01",
        "2026-01-01T00:00:00.000Z",
        "2025-12-31T23:00:00-02:00",
        "soon",
        "",
    ];
    const IDS: [&str; 5] = ["pm-a", "pm-B", "pm-b", "pm-e\u{301}", "pm-é"];

    fn row(
        (status, priority, order, deadline, updated, id): (
            usize,
            i64,
            Option<i8>,
            Option<usize>,
            Option<i64>,
            usize,
        ),
    ) -> RankItem {
        let deadline = deadline.map(|d| DEADLINES[d]);
        RankItem {
            key: 0,
            id: IDS[id].into(),
            title: Box::default(),
            item_type: Arc::from("Task"),
            status: Arc::from(STATUSES[status]),
            status_class: StatusClass::Active,
            priority,
            parent: None,
            assignee: None,
            updated_ms: updated,
            extra: RankExtra {
                deadline: deadline.map(Into::into),
                deadline_ms: deadline.and_then(crate::timestamp::parse_timestamp),
                order: order.map(|o| f64::from(o) / 2.0),
                ..RankExtra::default()
            }
            .boxed(),
            knowledge: 0,
            light_len: 0,
            has_schedule: false,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        #[test]
        fn keyed_sort_equals_compare_critical(
            rows in proptest::collection::vec(
                (
                    0..5usize,
                    0..3i64,
                    proptest::option::of(-2i8..3),
                    proptest::option::of(0..5usize),
                    proptest::option::of(prop_oneof![
                        Just(*FOUR_DIGIT_YEARS.end() + 5),
                        0i64..4,
                        1_767_225_600_000i64..1_767_225_600_003,
                    ]),
                    0..5usize,
                ),
                0..24,
            ),
        ) {
            let schema = crate::schema::RuntimeSchema::builtin();
            let items: Vec<RankItem> = rows.into_iter().map(row).collect();
            let mut plain: Vec<&RankItem> = items.iter().collect();
            plain.sort_by(|a, b| compare_critical(a, b, &schema));
            let mut keyed: Vec<&RankItem> = items.iter().collect();
            sort_critical(&mut keyed, |s| s, None, &schema);
            prop_assert!(plain.iter().zip(&keyed).all(|(a, b)| std::ptr::eq(*a, *b)));
        }
    }

    #[test]
    fn updated_order_equals_text_order() {
        let values = [
            None,
            Some(0),
            Some(1),
            Some(-1),
            Some(1_767_225_600_000),
            Some(*FOUR_DIGIT_YEARS.start()),
            Some(*FOUR_DIGIT_YEARS.start() - 1),
            Some(*FOUR_DIGIT_YEARS.end()),
            Some(*FOUR_DIGIT_YEARS.end() + 1),
            Some(-8_640_000_000_000_000),
        ];
        for a in values {
            for b in values {
                assert_eq!(
                    compare_updated_desc(a, b),
                    compare_timestamp_strings(&sortable(b), &sortable(a)),
                    "{a:?} {b:?}"
                );
            }
        }
    }
}
