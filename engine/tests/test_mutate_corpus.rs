//! Mutations on a copy of the real corpus: a mixed sequence (updates, tags, comments, links,
//! close/reopen, claim/release, type moves, delete/restore) on a sample of real items, then the
//! tracker-wide history verifier must find every touched chain intact and every file in line.

use pm_engine::clock::Clock;
use pm_engine::history::verify::{DriftStatus, StreamStatus};
use pm_engine::history::verify_tracker_history;
use pm_engine::item::ItemFormat;
use pm_engine::item::canon::CanonSchema;
use pm_engine::item::codec::parse_item;
use pm_engine::mutate::{
    AnnotationKind, Author, FieldEdit, LinkEdit, LinkKind, LinkedPath, MutationContext,
    RestoreTarget, add_annotation, claim, close, delete, edit_links, release, reopen, restore,
    update,
};
use pm_engine::schema;
use pm_engine::settings::SettingsEnv;
use pm_engine::tracker::{self, Tracker};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[test]
fn mixed_mutations_on_real_items_keep_every_chain_valid() -> TestResult {
    let corpus = pm_testkit::extract_corpus()?;
    let tracker = Tracker::at(corpus.path().join(".agents/pm"));
    let loaded = schema::load(&tracker, &SettingsEnv::default())?;
    let files = tracker.item_files(&loaded.schema.types)?.files;
    let sample: Vec<String> = files.iter().step_by(50).map(|f| f.stem.clone()).collect();
    assert!(sample.len() >= 50);
    let clock = Clock::pinned(1_788_220_800_000, 1);
    let mut ctx = MutationContext::new(
        &tracker,
        &loaded.settings,
        &loaded.schema,
        &clock,
        Author::resolve(Some("corpus-agent"), None, ""),
    );
    ctx.force = true;
    let statuses = &loaded.schema.statuses;
    for (n, id) in sample.iter().enumerate() {
        let edits = vec![
            FieldEdit::Set {
                key: "priority".into(),
                value: (n % 5).to_string(),
            },
            FieldEdit::AddTags(vec![format!("corpus-{n}")]),
        ];
        update(&ctx, id, &edits, Some("corpus sequence".into()))?;
        add_annotation(&ctx, id, AnnotationKind::Comment, &format!("note {n}"))?;
        let link = LinkedPath::parse(&format!("path=src/f{n}.rs,note=n"), "--add")?;
        let edit = LinkEdit {
            add: vec![link],
            ..LinkEdit::default()
        };
        edit_links(&ctx, id, LinkKind::Files, &edit)?;
        claim(&ctx, id)?;
        release(&ctx, id)?;
        let m = update(&ctx, id, &[], None)?;
        let status = m.after.str_field("status").unwrap_or_default().to_string();
        if statuses.is_terminal(&status) {
            reopen(&ctx, id, "corpus reopen", None)?;
        } else {
            close(&ctx, id, "corpus close", None)?;
        }
        if n % 9 == 0 {
            let m = update(
                &ctx,
                id,
                &[FieldEdit::Set {
                    key: "type".into(),
                    value: "Chore".into(),
                }],
                None,
            )?;
            assert_eq!(m.after.str_field("type"), Some("Chore"));
        }
        if n % 11 == 0 {
            let before = delete(&ctx, id, None)?;
            let versions = pm_engine::history::read_stream(&tracker.history_path(id), id)?
                .entries
                .len();
            let restored = restore(&ctx, id, RestoreTarget::Version(versions - 1), None)?;
            assert_eq!(
                restored.item_hash,
                pm_engine::hash::item_hash(&before.before, pm_engine::hash::HashEpoch::V2)
            );
        }
    }
    let files = tracker.item_files(&loaded.schema.types)?.files;
    let touched: Vec<_> = files
        .into_iter()
        .filter(|f| sample.contains(&f.stem))
        .collect();
    assert_eq!(touched.len(), sample.len());
    let report = verify_tracker_history(&tracker, &touched, |file| {
        let bytes = std::fs::read(&file.path).map_err(|source| pm_engine::Error::Io {
            path: file.path.clone(),
            source,
        })?;
        let format = match file.format {
            tracker::ItemFormat::Toon => ItemFormat::Toon,
            tracker::ItemFormat::Markdown => ItemFormat::Markdown,
        };
        parse_item(
            &bytes,
            format,
            &file.path,
            &CanonSchema::from_runtime(&loaded.schema),
        )
    })?;
    for item in report.items.iter().filter(|i| sample.contains(&i.id)) {
        assert_eq!(
            item.stream,
            StreamStatus::Ok,
            "{}: {:?}",
            item.id,
            item.issues
        );
        assert_eq!(item.files.len(), 1, "{}", item.id);
        assert_eq!(item.files[0].drift, DriftStatus::Ok, "{}", item.id);
        assert_eq!(
            item.files[0].path.extension().and_then(|e| e.to_str()),
            Some("toon")
        );
    }
    Ok(())
}
