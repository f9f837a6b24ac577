//! Reading an item's current state under its lock: the item file (never through a symlink,
//! refused over the size limit before it is read), its history stream as readers parse it, and
//! the completion of an interrupted type move (a writer killed between writing the item at its
//! new folder and removing the old file leaves two files with one id).

use std::path::Path;

use crate::confine::{EntryKind, Root};
use crate::error::{Error, Result};
use crate::hash::{EMPTY_DOC_HASH, HashEpoch, item_hash};
use crate::history::{StreamRead, parse_stream};
use crate::item::ItemDoc;
use crate::item::canon::CanonSchema;
use crate::item::codec::parse_item;
use crate::tracker::ItemFileRef;

/// An item file as read.
#[derive(Clone, Debug)]
pub(crate) struct LoadedFile {
    /// Where it is.
    pub file: ItemFileRef,
    /// Its bytes (for rollback).
    pub bytes: Vec<u8>,
    /// Its canonical document.
    pub doc: ItemDoc,
    /// Its hash (epoch 2).
    pub hash: String,
}

/// The item's current file, if any, and a stale copy an interrupted move left behind.
pub(crate) struct Current {
    /// The file that holds the item.
    pub file: Option<LoadedFile>,
    /// The copy at the old folder whose state the stream already records; the next write
    /// removes it (it is the move's unfinished second step).
    pub stale: Option<LoadedFile>,
}

/// Reads an item file without following symlinks, refusing one over `limit` bytes before
/// reading it; `None` when it vanished.
pub(crate) fn read_item_file(
    root: &Root,
    file: &ItemFileRef,
    limit: u64,
) -> Result<Option<Vec<u8>>> {
    let Some((dir, name)) = root.parent_of(&file.path, false)? else {
        return Ok(None);
    };
    if let EntryKind::File(size) = dir.kind(name)?
        && size > limit
    {
        return Err(Error::ItemTooLarge {
            id: file.stem.clone(),
            path: file.path.clone(),
            size,
            limit,
        });
    }
    dir.read(name)
}

/// Reads the history stream of `id`, as readers read it.
pub(crate) fn read_stream_confined(root: &Root, path: &Path, id: &str) -> Result<StreamRead> {
    match root.parent_of(path, false)? {
        Some((dir, name)) => match dir.read(name)? {
            Some(bytes) => parse_stream(&bytes, id, path),
            None => Ok(StreamRead::default()),
        },
        None => Ok(StreamRead::default()),
    }
}

fn load(
    root: &Root,
    file: ItemFileRef,
    limit: u64,
    canon: &CanonSchema,
) -> Result<Option<LoadedFile>> {
    let Some(bytes) = read_item_file(root, &file, limit)? else {
        return Ok(None);
    };
    let doc = parse_item(&bytes, file.format, &file.path, canon)?;
    let hash = if doc.is_empty() {
        EMPTY_DOC_HASH.to_string()
    } else {
        item_hash(&doc, HashEpoch::V2)
    };
    Ok(Some(LoadedFile {
        file,
        bytes,
        doc,
        hash,
    }))
}

/// Reads the files that hold `id` (`hits`). Two files are an interrupted move when exactly one
/// of them holds the state the stream last recorded: the other is the move's result. Any other
/// duplicate is refused.
///
/// # Errors
/// `duplicate_item_id`, `path_unsafe`, `item_too_large`, parse errors.
pub(crate) fn load_current(
    root: &Root,
    id: &str,
    mut hits: Vec<ItemFileRef>,
    stream: &StreamRead,
    limit: u64,
    canon: &CanonSchema,
) -> Result<Current> {
    let duplicate = |hits: &[ItemFileRef]| Error::DuplicateId {
        id: id.to_string(),
        paths: hits.iter().map(|h| h.path.clone()).collect(),
    };
    match hits.len() {
        0 => Ok(Current {
            file: None,
            stale: None,
        }),
        1 => Ok(Current {
            file: load(root, hits.remove(0), limit, canon)?,
            stale: None,
        }),
        2 => {
            let err = duplicate(&hits);
            let second = load(root, hits.remove(1), limit, canon)?;
            let first = load(root, hits.remove(0), limit, canon)?;
            let (Some(first), Some(second)) = (first, second) else {
                return Err(err);
            };
            let recorded = stream.entries.last().map(|e| e.after_hash.as_str());
            match (
                Some(first.hash.as_str()) == recorded,
                Some(second.hash.as_str()) == recorded,
            ) {
                (true, false) => Ok(Current {
                    file: Some(second),
                    stale: Some(first),
                }),
                (false, true) => Ok(Current {
                    file: Some(first),
                    stale: Some(second),
                }),
                _ => Err(err),
            }
        }
        _ => Err(duplicate(&hits)),
    }
}
