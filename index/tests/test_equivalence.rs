//! Index answers equal scan answers: a property test over random trackers (types, statuses,
//! priorities, tags, parents, dependencies, custom fields, unicode titles, duplicate ids,
//! unreadable files, history) and random queries (every filter, sort, limit, offset and cursor
//! continuation; counts; events filters), plus the real pm-cli corpus.

use crate::fixture::{Fixture, assert_same_listing, data_notices, item, schema};
use pm_engine::query::{
    Assignment, AutoLimit, Content, ContentFilter, FieldFilter, Missing, Page, PageStart, Query,
    Sort, SortField, Source, StatusFilter, TimeWindow,
};
use pm_engine::schema::RuntimeSchema;
use pm_engine::timestamp::parse_timestamp;
use pm_index::{EventQuery, EventSince, Index};
use proptest::prelude::*;
use proptest::sample::subsequence;
use serde_json::{Value, json};

const IDS: [&str; 9] = [
    "pm-a",
    "pm-B",
    "pm-b",
    "pm-a1",
    "pm-a-1",
    "pm-10",
    "pm-9",
    "pm-e\u{301}",
    "pm-z",
];
const FOLDERS: [(&str, &str); 3] = [("tasks", "Task"), ("epics", "Epic"), ("issues", "Issue")];
const STATUSES: [&str; 6] = [
    "draft",
    "open",
    "in_progress",
    "blocked",
    "closed",
    "canceled",
];
const TAGS: [&str; 5] = ["api", "DB", "ui", "\u{e9}-tag", "x y"];
const KINDS: [&str; 7] = [
    "blocks",
    "blocked_by",
    "parent",
    "child",
    "child_of",
    "parent_child",
    "related",
];
const TIMES: [&str; 4] = [
    "2026-01-01T00:00:00.000Z",
    "2026-01-01T00:00:00Z",
    "2026-02-01T12:00:00.000Z",
    "2025-12-31T23:59:59.999Z",
];
const TITLES: [&str; 7] = [
    "Alpha",
    "alpha",
    "beta",
    "\u{dc}n\u{ef}code",
    "_x",
    "a b",
    "Zeta",
];

#[derive(Clone, Debug)]
struct ItemGen {
    id: usize,
    folder: usize,
    status: usize,
    priority: i64,
    tags: Vec<&'static str>,
    parent: Option<usize>,
    deps: Vec<(usize, usize)>,
    blocked_by: Option<usize>,
    people: (Option<usize>, Option<usize>, Option<usize>),
    times: (usize, usize, Option<usize>),
    title: usize,
    content: (bool, usize, usize, Option<bool>),
    governance: (Option<usize>, Option<u8>, bool, bool, Option<usize>),
    area: Option<usize>,
    history: Vec<(usize, usize)>,
}

fn item_gen() -> impl Strategy<Value = ItemGen> {
    (
        (0..IDS.len(), 0..FOLDERS.len(), 0..STATUSES.len(), 0i64..5),
        (
            subsequence(TAGS.to_vec(), 0..3),
            proptest::option::of(0..IDS.len() + 1),
            proptest::collection::vec((0..IDS.len() + 1, 0..KINDS.len()), 0..3),
            proptest::option::of(0..IDS.len() + 2),
        ),
        (
            (
                proptest::option::of(0..2usize),
                proptest::option::of(0..2usize),
                proptest::option::of(0..2usize),
            ),
            (
                0..TIMES.len(),
                0..TIMES.len(),
                proptest::option::of(0..TIMES.len()),
            ),
            0..TITLES.len(),
        ),
        (
            (
                any::<bool>(),
                0..3usize,
                0..2usize,
                proptest::option::of(any::<bool>()),
            ),
            (
                proptest::option::of(0..2usize),
                proptest::option::of(0u8..120),
                any::<bool>(),
                any::<bool>(),
                proptest::option::of(0..2usize),
            ),
            proptest::option::of(0..4usize),
            proptest::collection::vec((0..TIMES.len(), 0..3usize), 0..3),
        ),
    )
        .prop_map(
            |(
                (id, folder, status, priority),
                (tags, parent, deps, blocked_by),
                (people, times, title),
                (content, governance, area, history),
            )| ItemGen {
                id,
                folder,
                status,
                priority,
                tags,
                parent,
                deps,
                blocked_by,
                people,
                times,
                title,
                content,
                governance,
                area,
                history,
            },
        )
}

fn target(i: usize) -> &'static str {
    IDS.get(i).copied().unwrap_or("pm-unknown")
}

fn metadata(g: &ItemGen) -> Value {
    let (folder_type, id) = (FOLDERS[g.folder].1, IDS[g.id]);
    let mut extra = json!({
        "type": folder_type,
        "title": TITLES[g.title],
        "status": STATUSES[g.status],
        "priority": g.priority,
        "tags": g.tags,
        "created_at": TIMES[g.times.0],
        "updated_at": TIMES[g.times.1],
    });
    let m = extra.as_object_mut().expect("object");
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    if let Some(p) = g.parent {
        put("parent", json!(target(p)));
    }
    if !g.deps.is_empty() {
        let deps: Vec<Value> = g
            .deps
            .iter()
            .map(|(t, k)| json!({"id": target(*t), "kind": KINDS[*k], "created_at": TIMES[0]}))
            .collect();
        put("dependencies", json!(deps));
    }
    if let Some(b) = g.blocked_by {
        let blocker = if b == IDS.len() + 1 {
            "no-active-blocker"
        } else {
            target(b)
        };
        put("blocked_by", json!(blocker));
    }
    if let Some(a) = g.people.0 {
        let who = ["ann", "bob"][a];
        put("assignee", json!(who));
    }
    if let Some(s) = g.people.1 {
        let sprint = ["s1", "s2"][s];
        put("sprint", json!(sprint));
    }
    if let Some(r) = g.people.2 {
        let release = ["r1", "r2"][r];
        put("release", json!(release));
    }
    if let Some(d) = g.times.2 {
        put("deadline", json!(TIMES[d]));
    }
    let note = |t: &str| json!({"created_at": TIMES[0], "author": "ann", "text": t});
    if g.content.1 > 0 {
        put(
            "comments",
            json!(
                (0..g.content.1)
                    .map(|i| note(&format!("c{i}")))
                    .collect::<Vec<_>>()
            ),
        );
    }
    if g.content.2 > 0 {
        put("notes", json!([note("n")]));
        put("files", json!([{"path": "src/a.rs", "scope": "project"}]));
    }
    if let Some(cmd) = g.content.3 {
        let test = if cmd {
            json!({"command": "cargo test", "scope": "project"})
        } else {
            json!({"path": "tests/x.rs", "scope": "project"})
        };
        put("tests", json!([test]));
    }
    if let Some(ac) = g.governance.0 {
        let text = ["", "done"][ac];
        put("acceptance_criteria", json!(text));
    }
    if let Some(minutes) = g.governance.1 {
        put("estimated_minutes", json!(minutes));
    }
    if g.governance.2 {
        put("resolution", json!("fixed"));
        put("reviewer", json!("rev"));
    }
    if g.governance.3 {
        put("risk", json!("high"));
        put("confidence", json!(50));
    }
    if let Some(area) = g.area {
        put(
            "area",
            [json!("x"), json!(["x", "y"]), json!(3), json!("y")][area].clone(),
        );
    }
    let _ = g.governance.4;
    item(id, extra)
}

#[derive(Clone, Debug)]
struct TrackerGen {
    items: Vec<ItemGen>,
    garbage: usize,
    bad_stream: bool,
}

fn tracker_gen() -> impl Strategy<Value = TrackerGen> {
    (
        proptest::collection::vec(item_gen(), 0..22),
        0..3usize,
        any::<bool>(),
    )
        .prop_map(|(items, garbage, bad_stream)| TrackerGen {
            items,
            garbage,
            bad_stream,
        })
}

fn write_tracker(g: &TrackerGen) -> Result<Fixture, Box<dyn std::error::Error>> {
    let f = Fixture::new()?;
    let mut ids = std::collections::HashSet::new();
    for it in &g.items {
        let meta = metadata(it);
        // One file per id: while an id is stored twice the scan answers every item read
        // (the index defers to it), so such trackers compare nothing here.
        if !ids.insert(meta["id"].to_string()) {
            continue;
        }
        let body = if it.content.0 { "Some body text" } else { "" };
        f.write_item(FOLDERS[it.folder].0, meta, body)?;
        let lines: Vec<Value> = it
            .history
            .iter()
            .map(|(t, who)| {
                let author = ["ann", "bob", "cid"][*who];
                let op = ["create", "update", "close"][*who];
                json!({"ts": TIMES[*t], "author": author, "op": op, "patch": [],
                       "before_hash": "a", "after_hash": "b"})
            })
            .collect();
        if !lines.is_empty() {
            f.append_history(IDS[it.id], &lines)?;
        }
    }
    for n in 0..g.garbage {
        pm_engine::atomic::write(
            &f.root().join(format!("tasks/pm-bad{n}.toon")),
            b"this is { not an item",
        )?;
    }
    if g.bad_stream {
        pm_engine::atomic::write(
            &f.root().join("history/pm-broken.jsonl"),
            b"{nope\n{\"x\":1}\n",
        )?;
    }
    Ok(f)
}

#[derive(Clone, Debug)]
struct QueryGen {
    query: Query,
    sort: Sort,
    limit: Option<usize>,
    offset: Option<usize>,
}

fn ms(i: usize) -> Option<i64> {
    parse_timestamp(TIMES[i])
}

fn query_gen() -> impl Strategy<Value = QueryGen> {
    let status = prop_oneof![
        Just(StatusFilter::NonTerminal),
        Just(StatusFilter::All),
        Just(StatusFilter::EdgeAwareBlocked),
        subsequence(STATUSES.to_vec(), 0..3)
            .prop_map(|s| StatusFilter::Set(s.into_iter().map(String::from).collect())),
    ];
    let window = (
        proptest::option::of(0..TIMES.len()),
        proptest::option::of(0..TIMES.len()),
    )
        .prop_map(|(a, b)| TimeWindow {
            after: a.and_then(ms),
            before: b.and_then(ms),
        });
    let content = proptest::collection::vec(
        (
            prop_oneof![
                Just(Content::Comments),
                Just(Content::Notes),
                Just(Content::Files),
                Just(Content::Tests),
                Just(Content::Deps),
                Just(Content::Body),
                Just(Content::LinkedCommand),
            ],
            any::<bool>(),
        )
            .prop_map(|(content, present)| ContentFilter { content, present }),
        0..2,
    );
    let missing = subsequence(
        vec![
            Missing::AcceptanceCriteria,
            Missing::Estimates,
            Missing::Resolution,
            Missing::Metadata,
            Missing::Reviewer,
            Missing::Risk,
            Missing::Confidence,
            Missing::Sprint,
            Missing::Release,
        ],
        0..2,
    );
    let sort = (
        proptest::option::of(prop_oneof![
            Just(SortField::Priority),
            Just(SortField::Deadline),
            Just(SortField::UpdatedAt),
            Just(SortField::CreatedAt),
            Just(SortField::Title),
            Just(SortField::Parent),
        ]),
        any::<bool>(),
    )
        .prop_map(|(field, descending)| Sort { field, descending });
    (
        (
            status,
            subsequence(vec!["Task", "Epic", "Issue"], 0..2),
            subsequence(vec!["API", "db", "ui", "\u{c9}-TAG", "none"], 0..2),
            subsequence(vec![0i64, 1, 2, 3, 4], 0..3),
            subsequence(IDS.to_vec(), 0..3),
        ),
        (
            subsequence(vec!["ann", "bob"], 0..2),
            proptest::option::of(prop_oneof![
                Just(Assignment::Assigned),
                Just(Assignment::Unassigned)
            ]),
            proptest::option::of(0..IDS.len() + 1),
            subsequence(vec!["s1", "s2"], 0..2),
            subsequence(vec!["r1", "r2"], 0..2),
        ),
        (window.clone(), window.clone(), window, content, missing),
        (
            proptest::option::of(prop_oneof![
                Just(json!("x")),
                Just(json!("y")),
                Just(json!(3))
            ]),
            sort,
            proptest::option::of(1usize..6),
            proptest::option::of(0usize..4),
        ),
    )
        .prop_map(
            |(
                (status, types, tags, priorities, ids),
                (assignees, assignment, parent, sprints, releases),
                (deadline, updated, created, content, missing),
                (field, sort, limit, offset),
            )| {
                let strings = |v: Vec<&str>| v.into_iter().map(String::from).collect::<Vec<_>>();
                QueryGen {
                    query: Query {
                        status,
                        types: strings(types),
                        tags: strings(tags),
                        priorities,
                        ids: strings(ids),
                        assignees: strings(assignees),
                        assignment,
                        parent: parent.map(|p| target(p).to_string()),
                        sprints: strings(sprints),
                        releases: strings(releases),
                        deadline,
                        updated,
                        created,
                        content,
                        missing,
                        fields: field
                            .map(|value| FieldFilter {
                                key: "area".into(),
                                value,
                            })
                            .into_iter()
                            .collect(),
                    },
                    sort,
                    limit,
                    offset,
                }
            },
        )
}

fn event_query_gen() -> impl Strategy<Value = EventQuery> {
    (
        proptest::option::of(prop_oneof![
            (0..TIMES.len()).prop_map(|t| EventSince::Timestamp(TIMES[t].to_string())),
            (0..TIMES.len(), 0..IDS.len(), 0i64..3).prop_map(|(t, s, p)| EventSince::After(
                pm_index::EventPosition {
                    ts: TIMES[t].to_string(),
                    stream: IDS[s].to_string(),
                    position: p,
                }
            )),
        ]),
        subsequence(vec!["create", "update", "close"], 0..2),
        subsequence(vec!["ann", "bob", "cid"], 0..2),
        subsequence(IDS.to_vec(), 0..2),
        0usize..4,
    )
        .prop_map(|(since, ops, authors, streams, limit)| EventQuery {
            since,
            until: None,
            ops: ops.into_iter().map(String::from).collect(),
            authors: authors.into_iter().map(String::from).collect(),
            streams: streams.into_iter().map(String::from).collect(),
            harnesses: Vec::new(),
            agent_instances: Vec::new(),
            limit,
        })
}

fn compare(index: &Index<'_>, scan: &Index<'_>, q: &QueryGen) -> Result<(), TestCaseError> {
    let ctx = format!("{q:?}");
    let err = |e: pm_engine::Error| TestCaseError::fail(e.to_string());
    // Walk every page with cursors on both paths.
    let mut page = Page {
        limit: q.limit,
        start: q.offset.map_or(PageStart::First, PageStart::Offset),
        auto_limit: Some(AutoLimit {
            threshold: 12,
            limit: 5,
        }),
    };
    for _ in 0..40 {
        let a = index.list(&q.query, &q.sort, &page).map_err(err)?;
        let b = scan.list(&q.query, &q.sort, &page).map_err(err)?;
        prop_assert_eq!(a.source(), Source::Index, "{:?}", a.notices);
        assert_same_listing(&a, &b, &ctx);
        match a.rows.next {
            Some(next) => page.start = PageStart::After(Box::new(next)),
            None => break,
        }
    }
    let a = index.summaries(&q.query, &q.sort).map_err(err)?;
    let b = scan.summaries(&q.query, &q.sort).map_err(err)?;
    prop_assert_eq!(&a.items, &b.items, "{}", ctx);
    prop_assert_eq!(data_notices(&a.notices), data_notices(&b.notices));
    let a = index.counts(&q.query).map_err(err)?;
    let b = scan.counts(&q.query).map_err(err)?;
    prop_assert_eq!(&a.counts, &b.counts, "{}", ctx);
    // Aggregations over the index's grouped column rows (no tags, numbers from priority only)
    // equal those over one summary row per item, group order included.
    use pm_engine::read::aggregate::{AggregateSpec, GroupField, aggregate};
    let all_but_tags: Vec<GroupField> = GroupField::ALL
        .into_iter()
        .filter(|f| *f != GroupField::Tags)
        .collect();
    let specs = [
        (all_but_tags, true, Some("priority"), None),
        (vec![GroupField::Parent], false, None, Some("priority")),
        (
            vec![GroupField::Status],
            false,
            Some("priority"),
            Some("priority"),
        ),
        (
            vec![GroupField::Type, GroupField::Status],
            false,
            None,
            None,
        ),
        (
            vec![GroupField::Assignee, GroupField::Priority],
            false,
            None,
            None,
        ),
    ];
    for (group_by, include_unparented, sum, avg) in specs {
        let spec = AggregateSpec {
            group_by,
            completion: true,
            sum: sum.map(Into::into),
            avg: avg.map(Into::into),
            include_unparented,
        };
        let found = index.aggregate_rows(&q.query, &spec).map_err(err)?;
        let (source, a) = (found.source(), found.rows);
        let b = scan.aggregate_rows(&q.query, &spec).map_err(err)?.rows;
        prop_assert_eq!(source, Source::Index);
        prop_assert!(a.len() <= b.len());
        prop_assert_eq!(
            aggregate(&a, &spec),
            aggregate(&b, &spec),
            "{} {:?}",
            ctx,
            spec
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn index_answers_equal_scan_answers(
        tracker in tracker_gen(),
        queries in proptest::collection::vec(query_gen(), 6),
        events in proptest::collection::vec(event_query_gen(), 3),
    ) {
        let schema: RuntimeSchema = schema();
        let f = write_tracker(&tracker).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let index = f.index(&schema);
        let scan = f.scan_index(&schema);
        for q in &queries {
            compare(&index, &scan, q)?;
        }
        for e in &events {
            let a = index.events(e).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let b = scan.events(e).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(a.source(), Source::Index);
            prop_assert_eq!(&a.events, &b.events, "{:?}", e);
            prop_assert_eq!((a.has_more, &a.next), (b.has_more, &b.next));
            prop_assert_eq!(data_notices(&a.notices), data_notices(&b.notices));
        }
        let check = index.check().map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(check.consistent, "{:?}", check);
    }
}

#[test]
fn corpus_index_equals_scan() -> Result<(), Box<dyn std::error::Error>> {
    let dir = pm_testkit::extract_corpus()?;
    let tracker = pm_engine::tracker::Tracker::at(dir.path().join(".agents/pm"));
    let loaded = pm_engine::schema::load(&tracker, &pm_engine::settings::SettingsEnv::default())?;
    let index = Index::open(&tracker, &loaded.schema, pm_index::IndexOptions::default());
    let scan = Index::open(
        &tracker,
        &loaded.schema,
        pm_index::IndexOptions {
            scan_only: true,
            ..pm_index::IndexOptions::default()
        },
    );
    for (query, sort, page) in [
        (Query::new(), Sort::default(), Page::all()),
        (Query::all(), Sort::default(), Page::first(20)),
        (
            Query {
                status: StatusFilter::EdgeAwareBlocked,
                ..Query::new()
            },
            Sort::default(),
            Page::all(),
        ),
        (
            Query::all(),
            Sort {
                field: Some(SortField::Title),
                descending: true,
            },
            Page::first(50),
        ),
    ] {
        let a = index.list(&query, &sort, &page)?;
        let b = scan.list(&query, &sort, &page)?;
        assert_eq!(a.source(), Source::Index, "{:?}", a.notices);
        assert_same_listing(&a, &b, &format!("{query:?}"));
    }
    let check = index.check()?;
    assert!(check.consistent, "{check:?}");
    // Graph rows: columns on the index path equal the rows derived from scanned summaries.
    let found = index.graph_items()?;
    let (source, mut graph_a) = (found.source(), found.rows);
    let mut graph_b = scan.graph_items()?.rows;
    assert_eq!(source, Source::Index);
    graph_a.sort_by(|x, y| x.id.cmp(&y.id));
    graph_b.sort_by(|x, y| x.id.cmp(&y.id));
    assert_eq!(graph_a, graph_b);
    let events = index.events(&EventQuery {
        limit: 1000,
        ..EventQuery::default()
    })?;
    let scanned = scan.events(&EventQuery {
        limit: 1000,
        ..EventQuery::default()
    })?;
    assert_eq!(events.events, scanned.events);
    assert_eq!(events.events.len(), 1000);
    Ok(())
}
