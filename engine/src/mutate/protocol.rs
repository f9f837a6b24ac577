//! The one mutation protocol every operation runs through: take the item lock, read the item,
//! check `--expect-hash` and ownership, then write the file atomically and append the history
//! line, rolling the file back when the append fails. Callers only compute the new document.

use std::path::PathBuf;

use serde_json::Value;

use super::expect::check_expected;
use super::{FaultPoint, MutationContext};
use crate::commit::Commit;
use crate::error::{Error, LifecycleConflict, Result};
use crate::hash::{EMPTY_DOC_HASH, HashEpoch, item_hash};
use crate::history::entry::HistoryEntry;
use crate::history::item_patch;
use crate::ids::{is_valid_id, normalize_id_input};
use crate::item::ItemDoc;
use crate::item::canon::{CanonSchema, canonicalize_owned};
use crate::item::codec::{parse_item, serialize_item};
use crate::lock::{LockGuard, LockOptions, acquire};
use crate::settings::OwnershipEnforcement;
use crate::tracker::ItemFileRef;
use crate::{IoResultExt, atomic};

/// What one mutation did.
#[derive(Clone, Debug)]
pub struct Mutation {
    /// The item id.
    pub id: String,
    /// The history `op`.
    pub op: String,
    /// The canonical document before (empty for create and for a restore of a deleted item).
    pub before: ItemDoc,
    /// The canonical document after (empty for delete).
    pub after: ItemDoc,
    /// Top-level fields that changed (`updated_at` excluded; every field for create).
    pub changed_fields: Vec<String>,
    /// The item's new revision (`item_hash`, the entry's `after_hash`).
    pub item_hash: String,
    /// The appended history entry.
    pub entry: HistoryEntry,
    /// The files written, removed and appended to.
    pub commit: Commit,
    /// Advisory warnings (`warning:<code>:…` tokens without the prefix).
    pub warnings: Vec<String>,
}

/// An item under its lock, read once; dropping it releases the lock.
pub(crate) struct Locked<'c, 'a> {
    pub ctx: &'c MutationContext<'a>,
    /// The item id (normalized, as stored).
    pub id: String,
    /// The file that holds the item, when it exists.
    pub file: Option<ItemFileRef>,
    /// The file's bytes, for rollback.
    bytes: Option<Vec<u8>>,
    /// The canonical document (empty when absent).
    pub before: ItemDoc,
    /// The current revision (`EMPTY_DOC_HASH` when absent).
    pub before_hash: String,
    /// The one timestamp of this mutation.
    pub now: String,
    /// Warnings collected so far.
    pub warnings: Vec<String>,
    guard: Option<LockGuard>,
}

/// Extra fields of the history entry.
#[derive(Clone, Debug, Default)]
pub(crate) struct EntryExtras {
    /// `message`.
    pub message: Option<String>,
    /// `context`.
    pub context: Option<Value>,
    /// Changed fields to report instead of the computed ones.
    pub changed_fields: Option<Vec<String>>,
}

/// Reads an item without locking (list modes of the annotation and link commands).
///
/// # Errors
/// `item_not_found`, `invalid_item_id`, `duplicate_item_id`, unreadable files.
pub fn read_item(
    tracker: &crate::tracker::Tracker,
    settings: &crate::settings::Settings,
    schema: &crate::schema::RuntimeSchema,
    raw_id: &str,
) -> Result<ItemDoc> {
    let file = tracker.locate_item(raw_id, &settings.id_prefix(), &schema.types)?;
    let bytes = std::fs::read(&file.path).at(&file.path)?;
    parse_item(
        &bytes,
        file.format,
        &file.path,
        &CanonSchema::from_runtime(schema),
    )
}

/// Resolves an id that may belong to a deleted item: a live item, else a well-formed
/// candidate whose history stream exists.
pub(crate) fn resolve_with_history(ctx: &MutationContext, raw_id: &str) -> Result<String> {
    match resolve_existing(ctx, raw_id) {
        Err(Error::ItemNotFound { id }) => {
            let prefix = ctx.settings.id_prefix();
            normalize_id_input(raw_id, &prefix)
                .into_iter()
                .filter(|c| is_valid_id(c))
                .find(|c| ctx.tracker.history_path(c).is_file())
                .ok_or(Error::ItemNotFound { id })
        }
        other => other,
    }
}

/// Resolves `raw_id` to an existing item's id without locking (pm's `locateItem`).
pub(crate) fn resolve_existing(ctx: &MutationContext, raw_id: &str) -> Result<String> {
    if super::update::is_placeholder(raw_id) {
        return Err(Error::InvalidId {
            input: raw_id.to_string(),
            reason: "none, null and undefined are not ids".into(),
        });
    }
    let prefix = ctx.settings.id_prefix();
    let file = ctx
        .tracker
        .locate_item(raw_id, &prefix, &ctx.schema.types)?;
    Ok(file.stem)
}

/// Takes the lock of `id` and reads the item (absent is allowed), then checks the
/// `--expect-hash` guards.
pub(crate) fn lock_item<'c, 'a>(ctx: &'c MutationContext<'a>, id: &str) -> Result<Locked<'c, 'a>> {
    let mut opts = LockOptions::from_settings(ctx.settings, ctx.author.name.clone());
    opts.force = ctx.force;
    let guard = acquire(ctx.tracker, id, &opts, ctx.clock)?;
    ctx.fault(FaultPoint::AfterLock);
    let mut hits = ctx.tracker.files_for_id(id, &ctx.schema.types);
    if hits.len() > 1 {
        return Err(Error::DuplicateId {
            id: id.to_string(),
            paths: hits.into_iter().map(|h| h.path).collect(),
        });
    }
    let file = hits.pop();
    let canon = CanonSchema::from_runtime(ctx.schema);
    let (bytes, before) = match &file {
        Some(file) => {
            let bytes = std::fs::read(&file.path).at(&file.path)?;
            let doc = parse_item(&bytes, file.format, &file.path, &canon)?;
            (Some(bytes), doc)
        }
        None => (None, ItemDoc::empty()),
    };
    let before_hash = if before.is_empty() {
        EMPTY_DOC_HASH.to_string()
    } else {
        item_hash(&before, HashEpoch::V2)
    };
    check_expected(ctx, id, &before_hash)?;
    Ok(Locked {
        ctx,
        id: id.to_string(),
        file,
        bytes,
        before,
        before_hash,
        now: ctx.clock.now_iso(),
        warnings: Vec::new(),
        guard: Some(guard),
    })
}

/// Locates `raw_id`, locks it and reads it; fails with `item_not_found` when the file is gone.
pub(crate) fn lock_existing<'c, 'a>(
    ctx: &'c MutationContext<'a>,
    raw_id: &str,
) -> Result<Locked<'c, 'a>> {
    let id = resolve_existing(ctx, raw_id)?;
    let locked = lock_item(ctx, &id)?;
    if locked.file.is_none() {
        return Err(Error::ItemNotFound { id });
    }
    Ok(locked)
}

impl Locked<'_, '_> {
    /// Returns the item's owner principal (`claim_principal`, else `assignee`) when assigned.
    pub fn owner(&self) -> Option<String> {
        let assignee = self.before.str_field("assignee")?;
        Some(
            self.before
                .str_field("claim_principal")
                .unwrap_or(assignee)
                .to_string(),
        )
    }

    /// Applies pm's ownership rule: an item assigned to another principal may only be changed
    /// with `--force`; governance decides between refusing, warning and ignoring.
    pub fn check_ownership(&mut self) -> Result<()> {
        let Some(owner) = self.owner() else {
            return Ok(());
        };
        if self.ctx.force || owner == self.ctx.author.name {
            return Ok(());
        }
        match self.ctx.settings.governance().ownership_enforcement {
            OwnershipEnforcement::Strict => Err(Error::Lifecycle {
                kind: LifecycleConflict::OwnershipConflict,
                id: self.id.clone(),
                holder: Some(owner.clone()),
                detail: format!(
                    "Item {} is assigned to {owner}; {} may not change it without --force",
                    self.id, self.ctx.author.name
                ),
            }),
            OwnershipEnforcement::Warn => {
                self.warnings.push(format!(
                    "ownership_conflict:{}:owner={owner}:actor={}",
                    self.id, self.ctx.author.name
                ));
                Ok(())
            }
            OwnershipEnforcement::None => Ok(()),
        }
    }

    /// Returns a copy of the current document with `updated_at` set to this mutation's time.
    pub fn draft(&self) -> ItemDoc {
        let mut doc = self.before.clone();
        doc.metadata
            .insert("updated_at".into(), Value::String(self.now.clone()));
        doc
    }

    /// Canonicalizes `after`, writes it (or removes the file when `after` is empty), appends
    /// the history entry and tells the observer; rolls the file back if the append fails.
    pub fn commit(self, op: &str, after: ItemDoc, extras: EntryExtras) -> Result<Mutation> {
        let after = if after.is_empty() {
            after
        } else {
            canonicalize_owned(after, &CanonSchema::from_runtime(self.ctx.schema))
        };
        self.finish(op, after, extras, true)
    }

    /// Appends the entry from `before` to `after` without touching the item file, which already
    /// holds `after` (history repair of a torn write).
    pub fn commit_as_recorded(
        self,
        op: &str,
        after: ItemDoc,
        extras: EntryExtras,
    ) -> Result<Mutation> {
        self.finish(op, after, extras, false)
    }

    fn finish(
        mut self,
        op: &str,
        after: ItemDoc,
        extras: EntryExtras,
        write_file: bool,
    ) -> Result<Mutation> {
        let ctx = self.ctx;
        let after_hash = if after.is_empty() {
            EMPTY_DOC_HASH.to_string()
        } else {
            item_hash(&after, HashEpoch::V2)
        };
        let mut entry = HistoryEntry::new(
            self.now.clone(),
            ctx.author.name.clone(),
            op,
            item_patch(&self.before, &after),
            self.before_hash.clone(),
            after_hash.clone(),
        );
        entry.author_source = Some(ctx.author.source.as_str().to_string());
        entry.agent_provenance = ctx.provenance.clone();
        entry.message = extras.message;
        entry.context = extras.context;
        let mut commit = Commit {
            ids: vec![self.id.clone()],
            ..Commit::default()
        };
        let new_path = if write_file {
            self.write(&after, &mut commit)?
        } else {
            None
        };
        let history_path = ctx.tracker.history_path(&self.id);
        if let Err(err) = crate::history::append_entry(&history_path, &entry) {
            if write_file {
                self.roll_back(new_path.as_ref())?;
            }
            return Err(err);
        }
        commit.appended.push(history_path);
        ctx.fault(FaultPoint::AfterHistoryAppend);
        if let Some(observer) = ctx.observer {
            observer(&commit);
        }
        let changed_fields = extras
            .changed_fields
            .unwrap_or_else(|| changed_fields(&self.before, &after));
        if let Some(guard) = self.guard.take() {
            guard.release()?;
        }
        Ok(Mutation {
            id: self.id.clone(),
            op: op.to_string(),
            before: std::mem::take(&mut self.before),
            after,
            changed_fields,
            item_hash: after_hash,
            entry,
            commit,
            warnings: std::mem::take(&mut self.warnings),
        })
    }

    /// Writes `after` to its path (removing the old path after a move) or removes the file
    /// when `after` is empty; returns the new path.
    fn write(&self, after: &ItemDoc, commit: &mut Commit) -> Result<Option<PathBuf>> {
        let ctx = self.ctx;
        let old_path = self.file.as_ref().map(|f| f.path.clone());
        let new_path = (!after.is_empty()).then(|| self.target_path(after));
        if let Some(path) = &new_path {
            let bytes = serialize_item(after, ctx.settings.item_format())?;
            atomic::write(path, &bytes)?;
            commit.written.push(path.clone());
        }
        if let Some(old) = old_path.filter(|old| new_path.as_ref() != Some(old)) {
            if let Err(err) = atomic::remove(&old) {
                self.roll_back(new_path.as_ref())?;
                return Err(err);
            }
            commit.removed.push(old);
        }
        ctx.fault(FaultPoint::AfterItemWrite);
        Ok(new_path)
    }

    /// Returns where `after` lives: its type's folder, the tracker's item format.
    fn target_path(&self, after: &ItemDoc) -> PathBuf {
        let ctx = self.ctx;
        let type_name = after.str_field("type").unwrap_or_default();
        let folder = match ctx.schema.types.resolve(type_name) {
            Some(def) => def.folder.clone(),
            None => ctx.schema.types.folder_for(type_name),
        };
        ctx.tracker
            .item_path(&folder, &self.id, ctx.settings.item_format())
    }

    /// Restores the state before the write: the old bytes at the old path, the new path gone.
    fn roll_back(&self, new_path: Option<&PathBuf>) -> Result<()> {
        let torn = |detail: String, path: &PathBuf| Error::MutationTorn {
            id: self.id.clone(),
            path: path.clone(),
            detail,
        };
        let old = self.file.as_ref().map(|f| &f.path);
        if let Some(new) = new_path
            && old != Some(new)
        {
            atomic::remove(new).map_err(|e| torn(e.to_string(), new))?;
        }
        if let (Some(old), Some(bytes)) = (old, &self.bytes) {
            atomic::write(old, bytes).map_err(|e| torn(e.to_string(), old))?;
        }
        Ok(())
    }
}

/// Returns the top-level keys whose values differ (`updated_at` excluded), in the after
/// document's order followed by removed keys; `body` when the body changed; for a create (empty
/// before) every key of `after`.
pub(crate) fn changed_fields(before: &ItemDoc, after: &ItemDoc) -> Vec<String> {
    if before.is_empty() {
        return after.metadata.keys().cloned().collect();
    }
    let mut out: Vec<String> = after
        .metadata
        .iter()
        .filter(|(k, v)| *k != "updated_at" && before.metadata.get(*k) != Some(*v))
        .map(|(k, _)| k.clone())
        .collect();
    out.extend(
        before
            .metadata
            .keys()
            .filter(|k| !after.metadata.contains_key(*k))
            .cloned(),
    );
    if before.body != after.body {
        out.push("body".into());
    }
    out
}

#[cfg(test)]
mod tests {
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
        // A directory where the stream should be makes the append fail after the file write.
        let stream = tracker.history_path("pm-rb");
        let saved = std::fs::read(&stream)?;
        std::fs::remove_file(&stream)?;
        std::fs::create_dir(&stream)?;
        let move_to_chores = [FieldEdit::Set {
            key: "type".into(),
            value: "Chore".into(),
        }];
        let err = update(&ctx, "pm-rb", &move_to_chores, None).expect_err("append fails");
        assert_eq!(err.code().as_str(), "io_error");
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
}
