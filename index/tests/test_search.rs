//! Search on the index equals search on a scan: random trackers with text in every searchable
//! field (case, unicode, whitespace runs, ids, plans, events) and random keyword queries, match
//! modes, filters and thresholds; plus the stored search text equals the text extracted from
//! each parsed item file.

use crate::fixture::{Fixture, data_notices, item, schema};
use pm_engine::item::canon::CanonSchema;
use pm_engine::query::{Query, Source, StatusFilter};
use pm_engine::rank::search::{
    Hit, KeywordQuery, MatchMode, SearchOptions, SearchSpec, SearchText, SearchTuning,
};
use pm_engine::schema::RuntimeSchema;
use pm_index::Index;
use proptest::prelude::*;
use proptest::sample::{select, subsequence};
use serde_json::{Value, json};

const IDS: [&str; 6] = ["pm-a1", "pm-B2", "pm-b2", "pm-c 3", "pm-\u{c9}4", "pm-z"];
const WORDS: [&str; 12] = [
    "alpha",
    "Alpha",
    "ALPHA-beta",
    "beta",
    "gamma",
    "\u{c9}t\u{e9}",
    "\u{130}stanbul",
    "auth",
    "authority",
    "x_y",
    "pm-a1",
    "7",
];
const STATUSES: [&str; 4] = ["open", "in_progress", "closed", "blocked"];
const FOLDERS: [(&str, &str); 2] = [("tasks", "Task"), ("issues", "Issue")];

fn text_gen() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        (
            select(WORDS.to_vec()),
            select(vec![" ", "  ", "\n", "\t ", "-", ""]),
        ),
        0..5,
    )
    .prop_map(|parts| parts.iter().map(|(w, s)| format!("{w}{s}")).collect())
}

#[derive(Clone, Debug)]
struct ItemGen {
    id: usize,
    folder: usize,
    status: usize,
    priority: i64,
    updated: usize,
    title: String,
    description: String,
    body: String,
    tags: Vec<&'static str>,
    notes: Vec<String>,
    extra: (Option<String>, Option<String>, Option<String>, bool),
}

fn item_gen() -> impl Strategy<Value = ItemGen> {
    (
        (
            0..IDS.len(),
            0..FOLDERS.len(),
            0..STATUSES.len(),
            0i64..3,
            0..3usize,
        ),
        (text_gen(), text_gen(), text_gen()),
        (
            subsequence(WORDS.to_vec(), 0..3),
            proptest::collection::vec(text_gen(), 0..3),
            (
                proptest::option::of(text_gen()),
                proptest::option::of(text_gen()),
                proptest::option::of(text_gen()),
                any::<bool>(),
            ),
        ),
    )
        .prop_map(
            |((id, folder, status, priority, updated), (title, description, body), rest)| ItemGen {
                id,
                folder,
                status,
                priority,
                updated,
                title,
                description,
                body,
                tags: rest.0,
                notes: rest.1,
                extra: rest.2,
            },
        )
}

fn metadata(g: &ItemGen) -> Value {
    let times = [
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:00Z",
        "2026-03-01T00:00:00.000Z",
    ];
    let mut m = item(
        IDS[g.id],
        json!({
            "type": FOLDERS[g.folder].1, "status": STATUSES[g.status], "priority": g.priority,
            "title": g.title, "description": g.description, "tags": g.tags,
            "updated_at": times[g.updated],
        }),
    );
    let obj = m.as_object_mut().expect("object");
    let note = |t: &String| json!({"created_at": times[0], "author": "ann", "text": t});
    if !g.notes.is_empty() {
        obj.insert(
            "comments".into(),
            json!(g.notes.iter().map(note).collect::<Vec<_>>()),
        );
        obj.insert("learnings".into(), json!([note(&g.notes[0])]));
    }
    let (reminder, event, plan, dep) = &g.extra;
    if let Some(t) = reminder {
        obj.insert("reminders".into(), json!([{"at": times[2], "text": t}]));
    }
    if let Some(t) = event {
        obj.insert(
            "events".into(),
            json!([{"start_at": times[0], "title": t, "all_day": true,
                    "recurrence": {"freq": "weekly", "by_weekday": ["mo", "tu"]}}]),
        );
    }
    if let Some(t) = plan {
        obj.insert("plan_mode".into(), json!("deep"));
        obj.insert(
            "plan_steps".into(),
            json!([{"title": t, "status": "pending", "linked_items": [{"id": "pm-z"}]}]),
        );
    }
    if *dep {
        obj.insert(
            "dependencies".into(),
            json!([{"id": "pm-a1", "kind": "blocks", "created_at": times[0]}]),
        );
    }
    m
}

fn write_tracker(items: &[ItemGen]) -> Result<Fixture, Box<dyn std::error::Error>> {
    let f = Fixture::new()?;
    let mut ids = std::collections::HashSet::new();
    for it in items {
        let meta = metadata(it);
        // One file per id: while an id is stored twice the scan answers every item read
        // (the index defers to it), so such trackers compare nothing here.
        if ids.insert(meta["id"].to_string()) {
            f.write_item(FOLDERS[it.folder].0, meta, &it.body)?;
        }
    }
    pm_engine::atomic::write(&f.root().join("tasks/pm-bad.toon"), b"not { an item")?;
    Ok(f)
}

#[derive(Clone, Debug)]
struct SearchGen {
    words: Vec<&'static str>,
    mode: MatchMode,
    title_exact: bool,
    phrase_exact: bool,
    min_score: f64,
    status: Option<&'static str>,
}

fn search_gen() -> impl Strategy<Value = SearchGen> {
    let word = select(
        WORDS
            .iter()
            .copied()
            .chain([
                "a1",
                "PM-Z",
                "pm-c",
                "lph",
                "\u{e9}t\u{e9}",
                "weekly",
                "blocks",
            ])
            .collect::<Vec<_>>(),
    );
    (
        proptest::collection::vec(word, 1..4),
        select(vec![MatchMode::Or, MatchMode::And, MatchMode::Exact]),
        (any::<bool>(), any::<bool>()),
        select(vec![0.0, 10.0, 60.0]),
        proptest::option::of(select(STATUSES.to_vec())),
    )
        .prop_map(|(words, mode, flags, min_score, status)| SearchGen {
            words,
            mode,
            title_exact: flags.0 && flags.1,
            phrase_exact: flags.0 && !flags.1,
            min_score,
            status,
        })
}

fn spec(s: &SearchGen) -> Option<SearchSpec> {
    let query = KeywordQuery::new(&s.words.join(" "))?;
    Some(SearchSpec::new(
        query,
        SearchOptions {
            tuning: SearchTuning::default(),
            id_prefix: "pm-".into(),
            match_mode: s.mode,
            title_exact: s.title_exact,
            phrase_exact: s.phrase_exact,
            min_score: s.min_score,
        },
    ))
}

fn query(s: &SearchGen) -> Query {
    Query {
        status: s
            .status
            .map_or(StatusFilter::All, |st| StatusFilter::Set(vec![st.into()])),
        ..Query::default()
    }
}

/// Ranked hits with their total, the answering path, and the number of data notices.
type Ranked = (Vec<Hit>, usize, Source, usize);

fn ranked(
    index: &Index<'_>,
    q: &Query,
    spec: &SearchSpec,
    keep: Option<usize>,
) -> Result<Ranked, pm_engine::Error> {
    let found = index.search(q, keep, |t| spec.hit(t))?;
    let notices = data_notices(&found.notices).len();
    let source = found.source();
    Ok((found.rows.hits, found.rows.total, source, notices))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn index_search_equals_scan_search(
        items in proptest::collection::vec(item_gen(), 0..16),
        searches in proptest::collection::vec(search_gen(), 8),
    ) {
        let schema: RuntimeSchema = schema();
        let f = write_tracker(&items).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let index = f.index(&schema);
        let scan = f.scan_index(&schema);
        let err = |e: pm_engine::Error| TestCaseError::fail(e.to_string());
        for s in &searches {
            let Some(spec) = spec(s) else { continue };
            let q = query(s);
            let a = ranked(&index, &q, &spec, None).map_err(err)?;
            let b = ranked(&scan, &q, &spec, None).map_err(err)?;
            prop_assert_eq!(a.2, Source::Index);
            prop_assert_eq!(b.2, Source::Scan);
            prop_assert_eq!(&a.0, &b.0, "{:?}", s);
            prop_assert_eq!((a.1, a.3), (b.1, b.3));
            prop_assert_eq!(a.1, a.0.len());
            // Keeping the first hits returns the prefix of the full ranking.
            let top = ranked(&index, &q, &spec, Some(2)).map_err(err)?;
            prop_assert_eq!(&top.0[..], &a.0[..a.0.len().min(2)]);
            prop_assert_eq!(top.1, a.1);
        }
        stored_text_equals_extracted(&f, &schema).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
}

/// The text the index stores for each item is `SearchText::of` its parsed file.
fn stored_text_equals_extracted(
    f: &Fixture,
    schema: &RuntimeSchema,
) -> Result<(), Box<dyn std::error::Error>> {
    let index = f.index(schema);
    index.list(
        &Query::all(),
        &pm_engine::query::Sort::default(),
        &pm_engine::query::Page::all(),
    )?;
    let fingerprint = pm_index::internals::rows::schema_fingerprint(schema);
    let (conn, _, _) = pm_index::internals::store::probe(index.paths(), &fingerprint)
        .map_err(|c| format!("no index: {c:?}"))?;
    let stored = pm_index::internals::search::stored_texts(&conn)?;
    let canon = CanonSchema::from_runtime(schema);
    let mut extracted = Vec::new();
    for file in f.tracker.item_files(&schema.types)?.files {
        if let Ok(doc) = pm_engine::scan::read_item(&file, &canon) {
            extracted.push((
                pm_engine::summary::relative_path(&file),
                SearchText::of(&doc),
            ));
        }
    }
    extracted.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(stored, extracted);
    Ok(())
}

#[test]
fn corpus_search_text_and_hits_match_the_scan() -> Result<(), Box<dyn std::error::Error>> {
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
    for (words, mode) in [
        ("search", MatchMode::Or),
        ("index scan", MatchMode::Or),
        ("index scan", MatchMode::And),
        ("read output", MatchMode::Exact),
        ("pm-", MatchMode::Or),
    ] {
        let s = SearchGen {
            words: words.split(' ').collect(),
            mode,
            title_exact: false,
            phrase_exact: false,
            min_score: 0.0,
            status: None,
        };
        let spec = spec(&s).ok_or("query")?;
        let a = ranked(&index, &Query::all(), &spec, None)?;
        let b = ranked(&scan, &Query::all(), &spec, None)?;
        assert_eq!(a.2, Source::Index);
        assert!(!a.0.is_empty(), "{words}");
        assert_eq!(a.0, b.0, "{words}");
    }
    Ok(())
}
