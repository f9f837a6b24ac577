//! The ranking rows of `context` and `next` read from the index's columns equal the rows derived
//! from scanned summaries (random trackers with order, risk, deadlines, schedules, blocking and
//! hierarchy edges, duplicate ids, non-ASCII text, and light texts that name the keys only inside
//! values), after the build and after items are rewritten and repaired incrementally, and the
//! summaries fetched by row key equal the scanned ones.

use crate::fixture::{Fixture, item, schema};
use pm_engine::query::{Query, Source, StatusFilter};
use pm_engine::rank::item::RankItem;
use pm_engine::schema::RuntimeSchema;
use pm_index::{Index, RankCorpus};
use proptest::prelude::*;
use serde_json::{Value, json};

const IDS: [&str; 6] = ["pm-a", "pm-b", "pm-B", "pm-c1", "pm-e\u{301}", "pm-z"];
const STATUSES: [&str; 5] = ["open", "in_progress", "blocked", "closed", "draft"];
const KINDS: [&str; 4] = ["blocks", "blocked_by", "child", "related"];
/// How many `order` values [`metadata`] picks from.
const ORDERS: usize = 7;
const TIMES: [&str; 3] = [
    "2026-01-01T00:00:00.000Z",
    "2026-03-01T12:00:00Z",
    "not a time",
];

#[derive(Clone, Debug)]
struct Gen {
    id: usize,
    status: usize,
    priority: i64,
    parent: Option<usize>,
    deps: Vec<(usize, usize)>,
    blocked_by: Option<usize>,
    assignee: Option<usize>,
    deadline: Option<usize>,
    order: Option<usize>,
    risk: Option<usize>,
    schedule: Option<usize>,
    comments: usize,
    decoy: bool,
    unicode: bool,
}

fn gen_item() -> impl Strategy<Value = Gen> {
    (
        (
            0..IDS.len(),
            0..STATUSES.len(),
            0i64..5,
            proptest::option::of(0..IDS.len() + 1),
            proptest::collection::vec((0..IDS.len() + 1, 0..KINDS.len()), 0..3),
            proptest::option::of(0..IDS.len() + 2),
        ),
        (
            proptest::option::of(0..3usize),
            proptest::option::of(0..TIMES.len()),
            proptest::option::of(0..ORDERS),
            proptest::option::of(0..3usize),
            proptest::option::of(0..4usize),
            0..3usize,
            any::<bool>(),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (id, status, priority, parent, deps, blocked_by),
                (assignee, deadline, order, risk, schedule, comments, decoy, unicode),
            )| Gen {
                id,
                status,
                priority,
                parent,
                deps,
                blocked_by,
                assignee,
                deadline,
                order,
                risk,
                schedule,
                comments,
                decoy,
                unicode,
            },
        )
}

fn target(i: usize) -> &'static str {
    IDS.get(i).copied().unwrap_or("pm-unknown")
}

fn metadata(g: &Gen) -> Value {
    let mut extra = json!({"status": STATUSES[g.status], "priority": g.priority});
    let m = extra.as_object_mut().expect("object");
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    if let Some(p) = g.parent {
        put("parent", json!(target(p)));
    }
    if !g.deps.is_empty() {
        let deps: Vec<Value> = (g.deps.iter())
            .map(|(t, k)| json!({"id": target(*t), "kind": KINDS[*k]}))
            .collect();
        put("dependencies", json!(deps));
    }
    if let Some(b) = g.blocked_by {
        let blocker = match b {
            b if b == IDS.len() + 1 => "no-active-blocker",
            b => target(b),
        };
        put("blocked_by", json!(blocker));
    }
    if let Some(a) = g.assignee {
        put("assignee", json!([" ann ", "bob", ""][a]));
    }
    if let Some(d) = g.deadline {
        put("deadline", json!(TIMES[d]));
    }
    if let Some(o) = g.order {
        let orders: [Value; ORDERS] = [
            json!(3),
            json!(-1.5),
            json!("2"),
            json!(null),
            json!(0.1),
            json!(2.5e-7),
            json!(1e21),
        ];
        put("order", orders[o].clone());
    }
    if let Some(r) = g.risk {
        put("risk", json!(["High", " low ", "medium"][r]));
    }
    if let Some(s) = g.schedule {
        let (key, value) = [
            ("reminders", json!([{"at": TIMES[1], "text": "ping"}])),
            ("events", json!([{"start_at": TIMES[0], "title": "demo"}])),
            ("reminders", json!("not a list")),
            ("events", json!([])),
        ][s]
            .clone();
        put(key, value);
    }
    if g.comments > 0 {
        let notes: Vec<Value> = (0..g.comments)
            .map(|i| json!({"created_at": TIMES[0], "author": "ann", "text": format!("c{i}")}))
            .collect();
        put("comments", json!(notes));
    }
    if g.unicode {
        // Multi-byte text: the stored light length counts bytes.
        put("title", json!("Prüfung ☃ 日本語 𝄞"));
        put("description", json!("naïve — \u{e9}t\u{e9} \u{1F600}"));
    }
    if g.decoy {
        // The key names appear only inside values: the rows must not take them for keys.
        put("description", json!("\"order\":1 \"reminders\":[]"));
        put("tags", json!(["order", "events"]));
        put("meta", json!({"order": 9, "events": [1]}));
    }
    item(IDS[g.id], extra)
}

fn folder(n: usize) -> &'static str {
    ["tasks", "epics", "issues"][n % 3]
}

fn write(items: &[Gen]) -> Result<Fixture, Box<dyn std::error::Error>> {
    let f = Fixture::new()?;
    for (n, g) in items.iter().enumerate() {
        f.write_item(folder(n), metadata(g), "")?;
    }
    Ok(f)
}

/// Returns the generation of the fixture's current index database.
fn generation(f: &Fixture) -> Result<u64, TestCaseError> {
    let paths = pm_index::internals::store::IndexPaths::of(&f.tracker);
    pm_index::internals::store::current_db(&paths)
        .map(|(_, generation)| generation)
        .map_err(|c| TestCaseError::fail(format!("{c:?}")))
}

/// Returns the rows without their handles (row keys on the index path, positions on the scan
/// path).
fn unkeyed(corpus: &RankCorpus) -> Vec<RankItem> {
    (corpus.items.iter())
        .map(|r| RankItem {
            key: 0,
            ..r.clone()
        })
        .collect()
}

fn same_corpus(index: &Index<'_>, scan: &Index<'_>, query: &Query) -> Result<(), TestCaseError> {
    let err = |e: pm_engine::Error| TestCaseError::fail(e.to_string());
    let a = index.rank_corpus(query).map_err(err)?;
    let b = scan.rank_corpus(query).map_err(err)?;
    prop_assert_eq!(a.source(), Source::Index, "{:?}", a.notices);
    prop_assert_eq!(b.source(), Source::Scan);
    prop_assert_eq!(unkeyed(&a), unkeyed(&b));
    prop_assert_eq!(&a.matches, &b.matches, "{:?}", query);
    let rows_a: Vec<&RankItem> = a.items.iter().collect();
    let rows_b: Vec<&RankItem> = b.items.iter().collect();
    let details_a = index.rank_details(&a, &rows_a).map_err(err)?;
    let details_b = scan.rank_details(&b, &rows_b).map_err(err)?;
    prop_assert_eq!(details_a.rows, details_b.rows);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn index_rank_rows_equal_scan_rank_rows(
        items in proptest::collection::vec(gen_item(), 0..18),
        updates in proptest::collection::vec((any::<proptest::sample::Index>(), gen_item()), 0..4),
        priorities in proptest::sample::subsequence(vec![0i64, 1, 2, 3, 4], 0..3),
    ) {
        let schema: RuntimeSchema = schema();
        let fail = |e: Box<dyn std::error::Error>| TestCaseError::fail(e.to_string());
        // One file per id: while an id is stored twice the scan answers every item read (the
        // index defers to it), so such trackers compare nothing here.
        let mut ids = std::collections::HashSet::new();
        let items: Vec<Gen> = items.into_iter().filter(|g| ids.insert(g.id)).collect();
        let f = write(&items).map_err(fail)?;
        let scan = f.scan_index(&schema);
        let filtered = Query {
            status: StatusFilter::NonTerminal,
            priorities,
            ..Query::default()
        };
        for query in [Query::all(), filtered.clone()] {
            same_corpus(&f.index(&schema), &scan, &query)?;
        }
        // Rewrite some items in place (same id and folder: the same file); the next read
        // repairs their rows incrementally instead of rebuilding.
        let built = generation(&f)?;
        for (at, g) in updates.iter().filter(|_| !items.is_empty()) {
            let n = at.index(items.len());
            let g = Gen { id: items[n].id, ..g.clone() };
            f.write_item(folder(n), metadata(&g), "").map_err(fail)?;
        }
        for query in [Query::all(), filtered] {
            same_corpus(&f.index(&schema), &scan, &query)?;
        }
        prop_assert_eq!(generation(&f)?, built);
        assert_rank_columns(&f.tracker).map_err(fail)?;
    }
}

#[test]
fn corpus_rank_rows_equal_scan_rows() -> Result<(), Box<dyn std::error::Error>> {
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
    let query = Query {
        status: StatusFilter::NonTerminal,
        ..Query::default()
    };
    same_corpus(&index, &scan, &query).map_err(|e| e.to_string())?;
    let rows = index.rank_corpus(&query)?;
    // Every item of the corpus with an `order` is terminal, and terminal rows keep no order
    // (the random trackers above cover ordered open items).
    assert!(rows.items.iter().all(|r| r.order().is_none()));
    assert!(rows.items.iter().any(|r| r.is_terminal()));
    assert!(rows.items.iter().any(|r| r.has_schedule));
    let (n, ordered, scheduled) = assert_rank_columns(&tracker)?;
    assert!(
        n > 2_000 && ordered > 0 && scheduled > 0,
        "{n} {ordered} {scheduled}"
    );
    Ok(())
}

/// Asserts that every item row's rank columns are the facts of its stored `light_json`, by the
/// engine's definitions (terminal rows included, which the ranking rows leave empty). Returns
/// the number of rows, of rows with an order and of rows with a schedule.
fn assert_rank_columns(
    tracker: &pm_engine::tracker::Tracker,
) -> Result<(usize, usize, usize), Box<dyn std::error::Error>> {
    use pm_engine::rank::item::{light_has_schedule, light_order};
    let (db, _) = pm_index::internals::store::current_db(
        &pm_index::internals::store::IndexPaths::of(tracker),
    )
    .map_err(|c| format!("{c:?}"))?;
    let conn = pm_index::internals::store::open_read(&db)?;
    let mut stmt =
        conn.prepare("SELECT light_json, rank_order, has_schedule, light_len FROM items")?;
    let mut rows = stmt.query([])?;
    let (mut n, mut ordered, mut scheduled) = (0, 0, 0);
    while let Some(r) = rows.next()? {
        let text: String = r.get(0)?;
        let light: serde_json::Map<String, Value> = serde_json::from_str(&text)?;
        let order: Option<f64> = r.get(1)?;
        let has_schedule: bool = r.get(2)?;
        assert_eq!(order, light_order(&light), "{text}");
        assert_eq!(has_schedule, light_has_schedule(&light), "{text}");
        assert_eq!(r.get::<_, i64>(3)?, i64::try_from(text.len())?, "{text}");
        n += 1;
        ordered += usize::from(order.is_some());
        scheduled += usize::from(has_schedule);
    }
    Ok((n, ordered, scheduled))
}
