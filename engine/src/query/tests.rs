//! Hand-checked cases for `Query::matches`, `Sort` and pagination.

use super::*;
use crate::item::ItemFormat;
use crate::schema::RuntimeSchema;
use crate::summary::{ItemFacts, ItemSummary};
use serde_json::{Value, json};

fn item(id: &str, extra: Value) -> ItemSummary {
    let mut light = json!({
        "id": id, "title": format!("Title {id}"), "description": "", "type": "Task",
        "status": "open", "priority": 2, "tags": [],
        "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z"
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

fn ids(items: &[ItemSummary]) -> Vec<&str> {
    items.iter().map(|s| s.id.as_str()).collect()
}

fn select<'a>(items: &'a [ItemSummary], q: &Query, sort: &Sort) -> Vec<&'a str> {
    let rel = Relations::from_summaries(items);
    let mut matched: Vec<&ItemSummary> = items.iter().filter(|s| q.matches(s, &rel)).collect();
    sort.sort(&mut matched);
    matched.into_iter().map(|s| s.id.as_str()).collect()
}

#[test]
fn default_order_is_non_terminal_priority_updated_desc_id() {
    let items = vec![
        item("pm-b", json!({"priority": 1})),
        item("pm-a", json!({"priority": 1})),
        item("pm-c", json!({"status": "closed", "priority": 0})),
        item(
            "pm-d",
            json!({"priority": 1, "updated_at": "2026-02-01T00:00:00.000Z"}),
        ),
        item("pm-E", json!({"priority": 1})),
        item("pm-e", json!({"priority": 1})),
        item("pm-f", json!({"priority": 0, "status": "blocked"})),
    ];
    let order = select(&items, &Query::all(), &Sort::default());
    assert_eq!(
        order,
        ["pm-f", "pm-d", "pm-a", "pm-b", "pm-e", "pm-E", "pm-c"]
    );
    let plain = select(&items, &Query::new(), &Sort::default());
    assert!(!plain.contains(&"pm-c"));
}

#[test]
fn field_sorts_put_nulls_last_and_desc_negates_everything() {
    let items = vec![
        item("pm-a", json!({})),
        item("pm-b", json!({"deadline": "2026-03-01T00:00:00.000Z"})),
        item("pm-c", json!({"deadline": "2026-02-01T00:00:00.000Z"})),
    ];
    let asc = Sort {
        field: Some(SortField::Deadline),
        descending: false,
    };
    assert_eq!(
        select(&items, &Query::all(), &asc),
        ["pm-c", "pm-b", "pm-a"]
    );
    let desc = Sort {
        field: Some(SortField::Deadline),
        descending: true,
    };
    assert_eq!(
        select(&items, &Query::all(), &desc),
        ["pm-a", "pm-b", "pm-c"]
    );
    let title = Sort {
        field: Some(SortField::Title),
        descending: false,
    };
    let titled = vec![
        item("pm-1", json!({"title": "beta"})),
        item("pm-2", json!({"title": "Alpha"})),
        item("pm-3", json!({"title": "alpha"})),
    ];
    assert_eq!(
        select(&titled, &Query::all(), &title),
        ["pm-3", "pm-2", "pm-1"]
    );
}

#[test]
fn set_filters_combine_or_within_and_across() {
    let items = vec![
        item(
            "pm-a",
            json!({"tags": ["api", "ui"], "assignee": "ann", "sprint": "s1"}),
        ),
        item(
            "pm-b",
            json!({"tags": ["db"], "type": "Bug", "priority": 0}),
        ),
        item("pm-c", json!({"tags": [], "release": "r1"})),
    ];
    let q = Query {
        tags: vec!["API".into(), "db".into()],
        ..Query::all()
    };
    assert_eq!(select(&items, &q, &Sort::default()), ["pm-b", "pm-a"]);
    let q = Query {
        tags: vec!["db".into()],
        types: vec!["Task".into()],
        ..Query::all()
    };
    assert!(select(&items, &q, &Sort::default()).is_empty());
    let q = Query {
        assignment: Some(Assignment::Unassigned),
        ..Query::all()
    };
    assert_eq!(select(&items, &q, &Sort::default()), ["pm-b", "pm-c"]);
    let q = Query {
        assignees: vec!["ann".into()],
        sprints: vec!["s1".into()],
        ..Query::all()
    };
    assert_eq!(select(&items, &q, &Sort::default()), ["pm-a"]);
    let q = Query {
        priorities: vec![0, 4],
        ..Query::all()
    };
    assert_eq!(select(&items, &q, &Sort::default()), ["pm-b"]);
    let q = Query {
        ids: vec!["pm-c".into()],
        releases: vec!["r1".into()],
        ..Query::all()
    };
    assert_eq!(select(&items, &q, &Sort::default()), ["pm-c"]);
}

#[test]
fn time_windows_are_half_open() {
    let items = vec![
        item("pm-a", json!({"updated_at": "2026-01-01T00:00:00.000Z"})),
        item("pm-b", json!({"updated_at": "2026-01-02T00:00:00.000Z"})),
        item("pm-c", json!({"deadline": "2026-01-02T00:00:00.000Z"})),
    ];
    let day2 = crate::timestamp::parse_timestamp("2026-01-02").unwrap_or_default();
    let q = Query {
        updated: TimeWindow {
            after: Some(day2),
            before: None,
        },
        ..Query::all()
    };
    assert_eq!(select(&items, &q, &Sort::default()), ["pm-b"]);
    let q = Query {
        updated: TimeWindow {
            after: None,
            before: Some(day2),
        },
        ..Query::all()
    };
    assert_eq!(select(&items, &q, &Sort::default()), ["pm-a", "pm-c"]);
    let q = Query {
        deadline: TimeWindow {
            after: None,
            before: Some(day2 + 1),
        },
        ..Query::all()
    };
    assert_eq!(select(&items, &q, &Sort::default()), ["pm-c"]);
}

#[test]
fn content_missing_and_field_filters() {
    let mut with_notes = item(
        "pm-a",
        json!({"acceptance_criteria": "done", "estimated_minutes": 30, "area": ["x", "y"]}),
    );
    with_notes.facts.counts.notes = 2;
    with_notes.facts.has_body = true;
    let mut schema = RuntimeSchema::builtin();
    schema.fields =
        crate::schema::FieldRegistry::from_sources(&[json!({"key": "area", "type": "string"})]);
    let with_field = ItemSummary::from_parts(
        with_notes.light.clone(),
        with_notes.facts,
        with_notes.path.clone(),
        with_notes.format,
        &schema,
    );
    let closed = item("pm-b", json!({"status": "closed"}));
    let items = vec![with_field, closed];
    let q = Query {
        content: vec![ContentFilter {
            content: Content::Notes,
            present: true,
        }],
        ..Query::all()
    };
    assert_eq!(select(&items, &q, &Sort::default()), ["pm-a"]);
    let q = Query {
        content: vec![ContentFilter {
            content: Content::Body,
            present: false,
        }],
        ..Query::all()
    };
    assert_eq!(select(&items, &q, &Sort::default()), ["pm-b"]);
    for (missing, expected) in [
        (Missing::AcceptanceCriteria, vec!["pm-b"]),
        (Missing::Resolution, vec!["pm-b"]),
        (Missing::Metadata, vec!["pm-b"]),
        (Missing::Reviewer, vec!["pm-a", "pm-b"]),
    ] {
        let q = Query {
            missing: vec![missing],
            ..Query::all()
        };
        assert_eq!(
            select(&items, &q, &Sort::default()),
            expected,
            "{missing:?}"
        );
    }
    let q = Query {
        fields: vec![FieldFilter {
            key: "area".into(),
            value: json!("y"),
        }],
        ..Query::all()
    };
    assert_eq!(select(&items, &q, &Sort::default()), ["pm-a"]);
}

#[test]
fn edge_aware_blocked_and_logical_parent() {
    let items = vec![
        item("pm-done", json!({"status": "closed"})),
        item("pm-a", json!({"blocked_by": "pm-done"})),
        item("pm-b", json!({"blocked_by": "pm-unknown"})),
        item(
            "pm-c",
            json!({"dependencies": [{"id": "pm-a", "kind": "blocked_by"}]}),
        ),
        item(
            "pm-d",
            json!({"dependencies": [{"id": "pm-e", "kind": "blocks"}, {"id": "pm-p", "kind": "child_of"}]}),
        ),
        item("pm-e", json!({})),
        item("pm-f", json!({"status": "blocked", "parent": "pm-p"})),
        item("pm-no", json!({"blocked_by": "no-active-blocker"})),
        item(
            "pm-p",
            json!({"dependencies": [{"id": "pm-e", "kind": "child"}]}),
        ),
    ];
    let q = Query {
        status: StatusFilter::EdgeAwareBlocked,
        ..Query::default()
    };
    assert_eq!(
        select(&items, &q, &Sort::default()),
        ["pm-b", "pm-c", "pm-e", "pm-f"]
    );
    let q = Query {
        parent: Some("pm-p".into()),
        ..Query::all()
    };
    assert_eq!(
        select(&items, &q, &Sort::default()),
        ["pm-d", "pm-e", "pm-f"]
    );
    // `Query::filter` builds the corpus relations itself (edge-declared children included).
    let filtered: Vec<&str> = q.filter(&items).iter().map(|s| s.id.as_str()).collect();
    assert_eq!(filtered, ["pm-d", "pm-e", "pm-f"]);
}

#[test]
fn keyset_continuation_equals_the_full_order() {
    let items: Vec<ItemSummary> = (0..23)
        .map(|i| item(&format!("pm-{i:02}"), json!({"priority": i % 3})))
        .collect();
    let sort = Sort::default();
    let all = ScanLike(&items).page(&Page::all());
    let mut walked = Vec::new();
    let mut page = Page::first(5);
    loop {
        let slice = ScanLike(&items).page(&page);
        walked.extend(slice.items.iter().map(|s| s.id.clone()));
        let Some(next) = slice.next else { break };
        page.start = PageStart::After(Box::new(next));
    }
    assert_eq!(walked, ids(&all.items));
    let offset = ScanLike(&items).page(&Page {
        limit: Some(3),
        start: PageStart::Offset(21),
        auto_limit: None,
    });
    assert_eq!((offset.items.len(), offset.has_more), (2, false));
    let auto = ScanLike(&items).page(&Page {
        limit: None,
        start: PageStart::First,
        auto_limit: Some(AutoLimit {
            threshold: 20,
            limit: 4,
        }),
    });
    assert_eq!(
        (auto.items.len(), auto.total, auto.applied_limit),
        (4, 23, Some(4))
    );
    assert!(sort.keys().len() >= 6);
}

struct ScanLike<'a>(&'a [ItemSummary]);

impl ScanLike<'_> {
    fn page(&self, page: &Page) -> PageSlice {
        let sort = Sort::default();
        let mut matched: Vec<&ItemSummary> = self.0.iter().collect();
        sort.sort(&mut matched);
        paginate(matched.into_iter().cloned().collect(), &sort, page)
    }
}
