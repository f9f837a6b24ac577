//! The one mutation protocol every operation runs through: take the item lock, read the item
//! and its history stream, check `--expect-hash` and ownership, then write the file atomically
//! and append the history line(s), rolling the file back when the append fails. Every tracker
//! file is reached through [`crate::confine`] (no symlink is followed), the lock is re-checked
//! before each write, and a stream that disagrees with the file gets its repair entry first
//! ([`super::reconcile`]). Callers only compute the new document.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::current::{LoadedFile, load_current, read_item_file, read_stream_confined};
use super::expect::check_expected;
use super::reconcile::{self, Reconcile};
use super::{FaultPoint, MutationContext};
use crate::commit::Commit;
use crate::confine::Root;
use crate::error::{Error, LifecycleConflict, Result};
use crate::hash::{EMPTY_DOC_HASH, HashEpoch, item_hash};
use crate::history::entry::HistoryEntry;
use crate::history::{StreamRead, item_patch};
use crate::ids::{check_id_length, is_valid_id, normalize_id_input};
use crate::item::ItemDoc;
use crate::item::canon::{CanonSchema, canonicalize_owned};
use crate::item::codec::{parse_item, serialize_item};
use crate::lock::{LockGuard, LockOptions, acquire};
use crate::settings::OwnershipEnforcement;
use crate::tracker::ItemFileRef;

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
    /// Warnings pm lists in the mutation result itself (the receipt's `warnings`): governance
    /// findings such as `likely_duplicates:<ids>` or `close_validation_missing_fields:<id>:…`.
    pub receipt_warnings: Vec<String>,
}

/// An item under its lock, read once with its stream; dropping it releases the lock.
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
    /// The history stream as read under the lock (a torn last line left out).
    pub stream: StreamRead,
    /// The repair entry the stream needs before this mutation's own (see [`reconcile`]).
    pub reconcile: Option<Reconcile>,
    /// A copy an interrupted type move left at the old folder (removed by this write).
    stale: Option<LoadedFile>,
    /// The tracker root, opened once for every file of this mutation.
    root: Root,
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
/// `item_not_found`, `invalid_item_id`, `duplicate_item_id`, `path_unsafe`, `item_too_large`,
/// unreadable files.
pub fn read_item(
    tracker: &crate::tracker::Tracker,
    settings: &crate::settings::Settings,
    schema: &crate::schema::RuntimeSchema,
    raw_id: &str,
) -> Result<ItemDoc> {
    let file = tracker.locate_item(raw_id, &settings.id_prefix(), &schema.types)?;
    let root = Root::open(tracker.root())?;
    let limit = settings.item_max_bytes();
    let bytes = read_item_file(&root, &file, limit)?.ok_or_else(|| Error::ItemNotFound {
        id: file.stem.clone(),
    })?;
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
    match ctx.tracker.locate_item(raw_id, &prefix, &ctx.schema.types) {
        Ok(file) => Ok(file.stem),
        // Two files with one id: the lock decides whether it is an interrupted move.
        Err(Error::DuplicateId { id, .. }) => Ok(id),
        Err(err) => Err(err),
    }
}

/// Takes the lock of `id`, reads the item (absent is allowed) and its stream, checks the
/// `--expect-hash` guards, and plans the repair entry a disagreeing stream needs.
///
/// # Errors
/// `invalid_item_id` (too long), `settings_invalid`, lock errors, `duplicate_item_id`,
/// `path_unsafe`, `item_too_large`, the item's parse errors, `item_revision_conflict`, and the
/// stream's reader errors (`history_invalid_json`, `history_merge_conflict_markers_detected`).
pub(crate) fn lock_item<'c, 'a>(ctx: &'c MutationContext<'a>, id: &str) -> Result<Locked<'c, 'a>> {
    check_id_length(id)?;
    let limit = ctx.settings.checked_item_max_bytes()?;
    let mut opts = LockOptions::from_settings(ctx.settings, ctx.author.name.clone())?;
    opts.force = ctx.force;
    let guard = acquire(ctx.tracker, id, &opts, ctx.clock)?;
    ctx.fault(FaultPoint::AfterLock);
    let root = Root::open(ctx.tracker.root())?;
    let stream = read_stream_confined(&root, &ctx.tracker.history_path(id), id)?;
    let hits = ctx.tracker.files_for_id(id, &ctx.schema.types)?;
    let canon = CanonSchema::from_runtime(ctx.schema);
    let current = load_current(&root, id, hits, &stream, limit, &canon)?;
    let (file, bytes, before, before_hash) = match current.file {
        Some(loaded) => (
            Some(loaded.file),
            Some(loaded.bytes),
            loaded.doc,
            loaded.hash,
        ),
        None => (None, None, ItemDoc::empty(), EMPTY_DOC_HASH.to_string()),
    };
    check_expected(ctx, id, &before_hash, &stream.entries)?;
    let reconcile = reconcile::plan(&stream.entries, &before, &before_hash);
    let mut warnings = Vec::new();
    if let Some(stale) = &current.stale {
        warnings.push(format!(
            "interrupted_move_completed:{id}:{}",
            stale.file.path.display()
        ));
    }
    if let Some(torn) = &stream.torn_tail {
        warnings.push(format!("history_torn_tail_removed:{id}:line_{}", torn.line));
    }
    if let Some(plan) = &reconcile {
        warnings.push(format!("history_reconciled:{id}:{}", plan.kind.as_str()));
    }
    Ok(Locked {
        ctx,
        id: id.to_string(),
        file,
        bytes,
        before,
        before_hash,
        now: ctx.clock.now_iso(),
        warnings,
        stream,
        reconcile,
        stale: current.stale,
        root,
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
    /// the repair entry the stream needs (if any) and the mutation's entry, and tells the
    /// observer; rolls the file back if the append fails.
    pub fn commit(self, op: &str, after: ItemDoc, extras: EntryExtras) -> Result<Mutation> {
        let after = if after.is_empty() {
            after
        } else {
            canonicalize_owned(after, &CanonSchema::from_runtime(self.ctx.schema))
        };
        self.finish(op, after, extras)
    }

    /// Returns the repair entry of this mutation (the one [`Locked::commit`] writes first).
    pub fn repair_entry(&self, message: Option<String>) -> Option<HistoryEntry> {
        let plan = self.reconcile.as_ref()?;
        let message = message.unwrap_or_else(|| {
            format!(
                "history-repair: recorded the on-disk item before this write ({}: the file and \
                 its history disagreed after an interrupted write, a hand edit or a merge).",
                plan.kind.as_str()
            )
        });
        Some(plan.entry(&self.now, &self.ctx.author.name, message))
    }

    /// Records only the repair the stream needs (cutting a torn last line first), without
    /// touching the item file (`pm history-repair`); returns the appended entry, if any.
    pub fn record_repair(self, message: Option<String>) -> Result<Option<HistoryEntry>> {
        let entry = self.repair_entry(message);
        self.record_entry(entry)
    }

    /// Appends `entry` (when given) without touching the item file, cutting a torn last line
    /// and completing an interrupted move first (`pm history-repair`, `pm merge reconcile`);
    /// returns the entry.
    pub fn record_entry(mut self, entry: Option<HistoryEntry>) -> Result<Option<HistoryEntry>> {
        let lines: Vec<String> = entry.iter().map(HistoryEntry::to_line).collect();
        if lines.is_empty() && self.stream.torn_tail.is_none() && self.stale.is_none() {
            self.release()?;
            return Ok(None);
        }
        self.held()?;
        let mut commit = Commit {
            ids: vec![self.id.clone()],
            ..Commit::default()
        };
        let current = self.file.as_ref().map(|f| f.path.clone());
        self.remove_stale(current.as_ref(), &mut commit)?;
        let history_path = self.ctx.tracker.history_path(&self.id);
        self.append(&history_path, &lines)?;
        commit.appended.push(history_path);
        if let Some(observer) = self.ctx.observer {
            observer(&commit);
        }
        self.release()?;
        Ok(entry)
    }

    fn finish(mut self, op: &str, after: ItemDoc, extras: EntryExtras) -> Result<Mutation> {
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
        let mut lines: Vec<String> = self
            .repair_entry(None)
            .iter()
            .map(HistoryEntry::to_line)
            .collect();
        lines.push(entry.to_line());
        let mut commit = Commit {
            ids: vec![self.id.clone()],
            ..Commit::default()
        };
        let new_bytes = self.serialize(&after)?;
        self.held()?;
        let new_path = self.write(&after, new_bytes.as_deref(), &mut commit)?;
        let history_path = ctx.tracker.history_path(&self.id);
        if let Err(err) = self
            .held()
            .and_then(|()| self.append(&history_path, &lines))
        {
            self.roll_back(new_path.as_ref())?;
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
        self.release()?;
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
            receipt_warnings: Vec::new(),
        })
    }

    /// Checks that this mutation still holds the item lock (`lock_lost` otherwise).
    fn held(&self) -> Result<()> {
        match &self.guard {
            Some(guard) => guard.check_held(),
            None => Err(Error::internal(
                "the item lock was released before the write",
            )),
        }
    }

    fn release(&mut self) -> Result<()> {
        match self.guard.take() {
            Some(guard) => guard.release(),
            None => Ok(()),
        }
    }

    /// Returns the bytes `after` is written as, refusing them over `limits.item_max_bytes`.
    fn serialize(&self, after: &ItemDoc) -> Result<Option<Vec<u8>>> {
        if after.is_empty() {
            return Ok(None);
        }
        let ctx = self.ctx;
        let bytes = serialize_item(after, ctx.settings.item_format())?;
        let limit = ctx.settings.checked_item_max_bytes()?;
        if bytes.len() as u64 > limit {
            return Err(Error::ItemTooLarge {
                id: self.id.clone(),
                path: self.target_path(after),
                size: bytes.len() as u64,
                limit,
            });
        }
        Ok(Some(bytes))
    }

    /// Appends `lines` to the stream in one write, cutting a torn last line first.
    fn append(&self, path: &Path, lines: &[String]) -> Result<()> {
        let cut = self.stream.torn_tail.as_ref().map(|t| t.offset);
        crate::history::append::append_lines(&self.root, path, lines, cut)
    }

    /// Writes `after` to its path (removing the old path after a move) or removes the file
    /// when `after` is empty; returns the new path.
    fn write(
        &self,
        after: &ItemDoc,
        bytes: Option<&[u8]>,
        commit: &mut Commit,
    ) -> Result<Option<PathBuf>> {
        let old_path = self.file.as_ref().map(|f| f.path.clone());
        let new_path = bytes.map(|_| self.target_path(after));
        if let (Some(path), Some(bytes)) = (&new_path, bytes) {
            self.write_file(path, bytes)?;
            commit.written.push(path.clone());
        }
        if let Some(old) = old_path.filter(|old| new_path.as_ref() != Some(old)) {
            if let Err(err) = self.remove_file(&old) {
                self.roll_back(new_path.as_ref())?;
                return Err(err);
            }
            commit.removed.push(old);
        }
        self.remove_stale(new_path.as_ref(), commit)?;
        self.ctx.fault(FaultPoint::AfterItemWrite);
        Ok(new_path)
    }

    /// Removes the copy an interrupted move left behind (unless this write just replaced it).
    fn remove_stale(&self, new_path: Option<&PathBuf>, commit: &mut Commit) -> Result<()> {
        if let Some(stale) = &self.stale
            && new_path != Some(&stale.file.path)
        {
            if let Err(err) = self.remove_file(&stale.file.path) {
                self.roll_back(new_path)?;
                return Err(err);
            }
            commit.removed.push(stale.file.path.clone());
        }
        Ok(())
    }

    fn write_file(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        match self.root.parent_of(path, true)? {
            Some((dir, name)) => dir.write_atomic(name, bytes),
            None => Err(Error::internal(format!("no folder for {}", path.display()))),
        }
    }

    fn remove_file(&self, path: &Path) -> Result<bool> {
        match self.root.parent_of(path, false)? {
            Some((dir, name)) => dir.remove(name),
            None => Ok(false),
        }
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
            self.remove_file(new)
                .map_err(|e| torn(e.to_string(), new))?;
        }
        if let (Some(old), Some(bytes)) = (old, &self.bytes) {
            self.write_file(old, bytes)
                .map_err(|e| torn(e.to_string(), old))?;
        }
        if let Some(stale) = &self.stale
            && new_path != Some(&stale.file.path)
        {
            self.write_file(&stale.file.path, &stale.bytes)
                .map_err(|e| torn(e.to_string(), &stale.file.path))?;
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
#[path = "protocol_tests.rs"]
mod tests;
