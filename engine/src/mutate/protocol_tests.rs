use super::*;
use crate::clock::Clock;
use crate::ids::IdMinter;
use crate::init::{InitOptions, init_tracker};
use crate::mutate::{Author, FieldEdit, NewItem, create, update};
use crate::schema::load;
use crate::settings::SettingsEnv;
use crate::tracker::Tracker;

type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

fn tree(root: &std::path::Path) -> std::io::Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut out = Vec::new();
    for folder in ["tasks", "chores"] {
        let dir = root.join(folder);
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            out.push((path.clone(), std::fs::read(&path)?));
        }
    }
    out.sort();
    Ok(out)
}

#[test]
fn failed_history_append_rolls_the_file_back() -> TestResult {
    let dir = tempfile::tempdir()?;
    let root = dir.path().join(".agents/pm");
    init_tracker(&root, &InitOptions::default())?;
    let tracker = Tracker::at(&root);
    let loaded = load(&tracker, &SettingsEnv::default())?;
    let clock = Clock::pinned(1_788_220_800_000, 0);
    let mut observed = std::sync::Mutex::new(Vec::new());
    let observer = |c: &Commit| {
        if let Ok(mut seen) = observed.lock() {
            seen.push(c.clone());
        }
    };
    let mut ctx = MutationContext::new(
        &tracker,
        &loaded.settings,
        &loaded.schema,
        &clock,
        Author::resolve(Some("t"), None, ""),
    );
    ctx.observer = Some(&observer);
    let item = NewItem {
        type_name: "Task".into(),
        title: "Roll back".into(),
        id: Some("pm-rb".into()),
        ..NewItem::default()
    };
    let created = create(&ctx, &item, &mut IdMinter::seeded("s"))?;
    assert_eq!(created.commit.written, [root.join("tasks/pm-rb.toon")]);
    let before = tree(&root)?;
    // The stream turns into a directory right after the file write (read fine under the
    // lock): the append fails and the move must be rolled back.
    let stream = tracker.history_path("pm-rb");
    let saved = std::fs::read(&stream)?;
    let sabotage = |point: FaultPoint| {
        if point == FaultPoint::AfterItemWrite {
            let _ = std::fs::remove_file(&stream);
            let _ = std::fs::create_dir(&stream);
        }
    };
    let move_to_chores = [FieldEdit::Set {
        key: "type".into(),
        value: "Chore".into(),
    }];
    let mut failing = MutationContext::new(
        &tracker,
        &loaded.settings,
        &loaded.schema,
        &clock,
        Author::resolve(Some("t"), None, ""),
    );
    failing.fault = Some(&sabotage);
    let err = update(&failing, "pm-rb", &move_to_chores, None).expect_err("append fails");
    assert_eq!(err.code().as_str(), "io_error", "{err}");
    assert!(!err.changed());
    assert_eq!(tree(&root)?, before, "the move was rolled back");
    assert!(!root.join("locks/pm-rb.lock").exists());
    std::fs::remove_dir(&stream)?;
    crate::atomic::write(&stream, &saved)?;
    update(&ctx, "pm-rb", &move_to_chores, None)?;
    assert!(root.join("chores/pm-rb.toon").is_file());
    assert!(!root.join("tasks/pm-rb.toon").exists());
    let seen = observed.get_mut().map_err(|_| "poisoned")?;
    assert_eq!(seen.len(), 2, "one commit per successful mutation");
    assert_eq!(seen[1].removed, [root.join("tasks/pm-rb.toon")]);
    Ok(())
}

/// Another process takes the lock over while the mutation holds it (before the file write,
/// then between the file write and the append): the mutation aborts with `lock_lost` and
/// the tracker keeps every byte.
#[test]
fn a_lost_lock_aborts_the_mutation_with_nothing_written() -> TestResult {
    let dir = tempfile::tempdir()?;
    let root = dir.path().join(".agents/pm");
    init_tracker(&root, &InitOptions::default())?;
    let tracker = Tracker::at(&root);
    let loaded = load(&tracker, &SettingsEnv::default())?;
    let clock = Clock::pinned(1_788_220_800_000, 0);
    let author = || Author::resolve(Some("t"), None, "");
    let ctx = MutationContext::new(&tracker, &loaded.settings, &loaded.schema, &clock, author());
    let item = NewItem {
        type_name: "Task".into(),
        title: "Held".into(),
        id: Some("pm-ll".into()),
        ..NewItem::default()
    };
    create(&ctx, &item, &mut IdMinter::seeded("s"))?;
    let lock = tracker.lock_path("pm-ll");
    let intruder = "{\"id\":\"pm-ll\",\"pid\":1,\"owner\":\"x\",\"created_at\":\"2026-09-01T00:00:00.000Z\",\"ttl_seconds\":1800,\"token\":\"other\"}\n";
    for at in [FaultPoint::AfterLock, FaultPoint::AfterItemWrite] {
        let before = tree(&root)?;
        let history = std::fs::read(tracker.history_path("pm-ll"))?;
        let take_over = |point: FaultPoint| {
            if point == at {
                let _ = crate::atomic::write(&lock, intruder.as_bytes());
            }
        };
        let mut stolen =
            MutationContext::new(&tracker, &loaded.settings, &loaded.schema, &clock, author());
        stolen.fault = Some(&take_over);
        let edit = [FieldEdit::Set {
            key: "type".into(),
            value: "Chore".into(),
        }];
        let err = update(&stolen, "pm-ll", &edit, None).expect_err("lock lost");
        assert_eq!(err.code().as_str(), "lock_lost", "{at:?}: {err}");
        assert_eq!(tree(&root)?, before, "{at:?}: item files unchanged");
        assert_eq!(std::fs::read(tracker.history_path("pm-ll"))?, history);
        assert_eq!(
            std::fs::read_to_string(&lock)?,
            intruder,
            "the new holder's lock stays"
        );
        std::fs::remove_file(&lock)?;
    }
    Ok(())
}
