//! What `pm merge driver item` does with git's three files: parse them with the item reader,
//! merge field by field (`item.rs`), write the canonical bytes over ours (or `--output`), and
//! record a receipt. A side that does not parse as an item is merged as plain lines instead,
//! so git still gets a file to stop on.

use super::item::{ItemMerge, Side, merge_items};
use super::receipt::receipt_of;
use super::receipts::{Receipt, ReceiptStore};
use super::repo::GitRepo;
use super::text::{TextMerge, merge_lines};
use crate::error::{IoResultExt, Result};
use crate::item::ItemDoc;
use crate::item::ItemFormat;
use crate::item::canon::{CanonSchema, canonicalize_owned};
use crate::item::codec::{parse_item, serialize_item};
use crate::schema::RuntimeSchema;
use std::path::{Path, PathBuf};

/// git's three files and the driver's knobs.
#[derive(Clone, Debug)]
pub struct DriverFiles {
    /// The common ancestor (`%O`; empty when the file is new on both sides).
    pub base: PathBuf,
    /// Our version (`%A`), overwritten with the result unless `output` is given.
    pub ours: PathBuf,
    /// Their version (`%B`).
    pub theirs: PathBuf,
    /// `--output`: where to write the result instead of `ours`.
    pub output: Option<PathBuf>,
    /// `--item-path` (`%P`): the repository-relative path of the item.
    pub item_path: Option<String>,
    /// `--prefer`.
    pub prefer: Side,
}

impl DriverFiles {
    /// Returns where the result is written.
    pub fn output_path(&self) -> &Path {
        self.output.as_deref().unwrap_or(&self.ours)
    }
}

/// Where the driver runs: the tracker's schema and where receipts go.
#[derive(Clone, Debug)]
pub struct DriverEnv {
    /// The tracker's runtime schema (the built-in one when no tracker was found).
    pub schema: RuntimeSchema,
    /// The tracker root, for the hash-only receipt copy.
    pub tracker_root: Option<PathBuf>,
    /// The repository, for the clone-local receipt copy.
    pub repo: Option<GitRepo>,
    /// The instant receipts are stamped with.
    pub now: String,
}

/// What an item driver run did.
#[derive(Clone, Debug)]
pub enum ItemOutcome {
    /// The field-aware merge ran.
    Merged {
        /// Its account.
        merge: Box<ItemMerge>,
        /// The receipt written, if any.
        receipt: Option<Box<Receipt>>,
    },
    /// A side did not parse as an item: the files were merged as lines.
    Lines {
        /// Why the item reader refused.
        reason: String,
        /// Whether the lines conflicted.
        conflicted: bool,
    },
}

impl ItemOutcome {
    /// Returns whether git should stop on the file.
    pub fn is_conflicted(&self) -> bool {
        match self {
            ItemOutcome::Merged { merge, .. } => merge.is_conflicted(),
            ItemOutcome::Lines { conflicted, .. } => *conflicted,
        }
    }
}

/// Runs the item driver.
///
/// # Errors
/// `Error::Io` when an input cannot be read or the result or a receipt cannot be written.
pub fn run_item_driver(files: &DriverFiles, env: &DriverEnv) -> Result<ItemOutcome> {
    let base = read_optional(&files.base)?;
    let ours = std::fs::read(&files.ours).at(&files.ours)?;
    let theirs = std::fs::read(&files.theirs).at(&files.theirs)?;
    let format = item_format(files, &ours);
    let canon = CanonSchema::from_runtime(&env.schema);
    let parse = |bytes: &[u8], path: &Path| -> Result<ItemDoc> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(ItemDoc::empty());
        }
        parse_item(bytes, format, path, &canon)
    };
    let parsed = (|| {
        Ok::<_, crate::Error>((
            parse(&base, &files.base)?,
            parse(&ours, &files.ours)?,
            parse(&theirs, &files.theirs)?,
        ))
    })();
    let (base_doc, ours_doc, theirs_doc) = match parsed {
        Ok(docs) => docs,
        Err(err) => return merge_as_lines(files, [&base, &ours, &theirs], err.to_string()),
    };
    let mut merge = merge_items(&base_doc, &ours_doc, &theirs_doc, files.prefer);
    merge.doc = canonicalize_owned(std::mem::take(&mut merge.doc), &canon);
    let bytes = serialize_item(&merge.doc, format)?;
    crate::atomic::write_unsynced(files.output_path(), &bytes)?;
    let item_path = files
        .item_path
        .clone()
        .unwrap_or_else(|| files.ours.to_string_lossy().into_owned());
    let receipt = receipt_of(
        &merge,
        &item_path,
        [&base, &ours, &theirs],
        files.prefer,
        &env.now,
    );
    if let Some(receipt) = &receipt {
        ReceiptStore {
            clone_dir: env
                .repo
                .as_ref()
                .map(|r| r.common_dir.join(super::receipts::CLONE_RECEIPTS_DIR)),
            tracker_dir: env
                .tracker_root
                .as_ref()
                .map(|t| t.join(super::receipts::TRACKER_RECEIPTS_DIR)),
        }
        .write(receipt)?;
    }
    Ok(ItemOutcome::Merged {
        merge: Box::new(merge),
        receipt: receipt.map(Box::new),
    })
}

fn merge_as_lines(files: &DriverFiles, inputs: [&[u8]; 3], reason: String) -> Result<ItemOutcome> {
    let [base, ours, theirs] = inputs.map(String::from_utf8_lossy);
    let merged = merge_lines(&base, &ours, &theirs);
    let conflicted = matches!(merged, TextMerge::Conflicted(_));
    crate::atomic::write_unsynced(files.output_path(), merged.into_text().as_bytes())?;
    Ok(ItemOutcome::Lines { reason, conflicted })
}

/// Returns the file's bytes, or nothing when it does not exist (git passes an empty file for a
/// missing ancestor; some callers pass no file at all).
fn read_optional(path: &Path) -> Result<Vec<u8>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).at(path),
    }
}

/// Returns the item format: by `--item-path`'s extension (git's temp files have none), else
/// by our file's, else JSON front matter (`{` first) is Markdown and anything else TOON.
fn item_format(files: &DriverFiles, ours: &[u8]) -> ItemFormat {
    files
        .item_path
        .as_deref()
        .and_then(|p| ItemFormat::from_path(Path::new(p)))
        .or_else(|| ItemFormat::from_path(&files.ours))
        .unwrap_or_else(|| match ours.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{') => ItemFormat::Markdown,
            _ => ItemFormat::Toon,
        })
}
