//! The scan path on real trackers: pm's default list order on the fx-100 golden, and a
//! deterministic, complete scan of the pm-cli corpus.

use pm_engine::query::{CompletenessStatus, Page, Query, Sort, StatusFilter};
use pm_engine::scan;
use pm_engine::schema::load;
use pm_engine::settings::SettingsEnv;
use pm_engine::tracker::Tracker;
use serde_json::Value;
use std::error::Error;

type TestResult = Result<(), Box<dyn Error>>;

#[test]
fn fx100_default_order_matches_pm_list_all() -> TestResult {
    let dir = pm_testkit::extract_tar_gz(&pm_testkit::shared_file(
        "golden/reads/fx-100-tracker.tar.gz",
    ))?;
    let tracker = Tracker::at(dir.path().join(".agents/pm"));
    let loaded = load(&tracker, &SettingsEnv::default())?;
    let listing = scan::list(
        &tracker,
        &loaded.schema,
        &Query::all(),
        &Sort::default(),
        &Page::all(),
    )?;
    let golden: Value = serde_json::from_str(&std::fs::read_to_string(pm_testkit::shared_file(
        "golden/reads/fx-100/list-all-full.json",
    ))?)?;
    let expected: Vec<&str> = golden["items"]
        .as_array()
        .ok_or("items")?
        .iter()
        .filter_map(|i| i["id"].as_str())
        .collect();
    let got: Vec<&str> = listing.items.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(got, expected);
    assert_eq!(listing.completeness.status, CompletenessStatus::Complete);

    let open = scan::list(
        &tracker,
        &loaded.schema,
        &Query {
            status: StatusFilter::Set(vec!["open".into()]),
            ..Query::new()
        },
        &Sort::default(),
        &Page::first(20),
    )?;
    let golden: Value = serde_json::from_str(&std::fs::read_to_string(pm_testkit::shared_file(
        "golden/reads/fx-100/list-open.json",
    ))?)?;
    let expected: Vec<&str> = golden["items"]
        .as_array()
        .ok_or("items")?
        .iter()
        .filter_map(|i| i["id"].as_str())
        .collect();
    let got: Vec<&str> = open.items.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(got, expected);
    assert_eq!(
        Some(open.total),
        golden["total"].as_u64().map(|t| t as usize)
    );
    Ok(())
}

#[test]
fn corpus_scan_is_deterministic_and_ordered() -> TestResult {
    let dir = pm_testkit::extract_corpus()?;
    let tracker = Tracker::at(dir.path().join(".agents/pm"));
    let loaded = load(&tracker, &SettingsEnv::default())?;
    let first = scan::scan(&tracker, &loaded.schema)?;
    let second = scan::scan(&tracker, &loaded.schema)?;
    assert!(first.summaries.len() > 2000, "{}", first.summaries.len());
    let sort = Sort::default();
    let a = first.list(&Query::new(), &sort, &Page::all());
    let b = second.list(&Query::new(), &sort, &Page::all());
    assert_eq!(a, b);
    assert!(a.items.iter().all(|s| !s.is_terminal()));
    for pair in a.items.windows(2) {
        assert_eq!(
            sort.compare(&pair[0], &pair[1]),
            std::cmp::Ordering::Less,
            "{} before {}",
            pair[0].id,
            pair[1].id
        );
    }
    assert_eq!(first.unreadable.len(), a.completeness.unreadable_item_count);
    Ok(())
}
