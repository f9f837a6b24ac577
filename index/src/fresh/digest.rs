//! Hashes for freshness bookkeeping. Two kinds, never mixed:
//!
//! * **Content identity** ([`content_id`], BLAKE3 truncated to 64 bits): the content hash of a
//!   racily-clean file and the prefix hash of a history stream. A collision here would hide an
//!   edit, so it is a cryptographic hash.
//! * **Signature digests** ([`signature`], [`name_hash`], xxh3): hashes of stat signatures and
//!   names, summed into the order-independent digests stored in `meta`. A collision can only
//!   make pm re-check a file it did not need to.
//!
//! Both are ours (pm's own hashes are SHA-256 and live in the engine); changing either changes
//! stored values, so it bumps `PROJECTION_VERSION`.

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

use crate::fresh::source::{ALL_KEYS, ITEM_KEYS, SourceKind};
use crate::rows::set_meta;
use crate::store::meta;
use rusqlite::Connection;

/// Returns the content identity of `bytes`: the first 8 bytes of their BLAKE3 hash.
pub fn content_id(bytes: &[u8]) -> u64 {
    let hash = blake3::hash(bytes);
    let mut word = [0u8; 8];
    word.copy_from_slice(&hash.as_bytes()[..8]);
    u64::from_le_bytes(word)
}

/// Returns the content hash of a source: its bytes' [`content_id`], or for a symlink (never
/// read: its reads are refused) the identity of where it points, so a link retargeted within
/// the same clock tick is still seen; `None` when neither can be read.
pub fn content_hash(path: &std::path::Path) -> Option<u64> {
    match pm_engine::confine::leaf::read_file(path) {
        Ok(Some(bytes)) => Some(content_id(&bytes)),
        Err(pm_engine::Error::PathUnsafe { .. }) => std::fs::read_link(path)
            .ok()
            .map(|target| content_id(target.as_os_str().as_encoded_bytes())),
        _ => None,
    }
}

/// Returns the signature digest of a name.
pub fn name_hash(bytes: &[u8]) -> u64 {
    xxh3_64(bytes)
}

/// Returns the signature digest of a name and up to four numbers (a file's path and its stat
/// signature, say): the numbers seed the hash of the name, so neither allocates.
pub fn signature(bytes: &[u8], numbers: &[u64]) -> u64 {
    let mut words = [0u8; 32];
    for (slot, n) in words.chunks_exact_mut(8).zip(numbers.iter().take(4)) {
        slot.copy_from_slice(&n.to_le_bytes());
    }
    xxh3_64_with_seed(bytes, xxh3_64(&words[..8 * numbers.len().min(4)]))
}

/// The stored order-independent digests: the wrapping sum of [`crate::fresh::source::Sig::contribution`]
/// and the count of every projected source, overall and for item files alone (the scope of
/// reads that do not depend on history; see [`crate::fresh::source::SweepScope`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DigestTotals {
    /// Sum over all sources.
    pub all: u64,
    /// Sources in all.
    pub all_count: i64,
    /// Sum over item files.
    pub items: u64,
    /// Item files.
    pub items_count: i64,
}

impl DigestTotals {
    /// Counts a projected source in.
    pub fn add(&mut self, kind: SourceKind, contribution: u64) {
        self.all = self.all.wrapping_add(contribution);
        self.all_count += 1;
        if kind == SourceKind::Item {
            self.items = self.items.wrapping_add(contribution);
            self.items_count += 1;
        }
    }

    /// Counts a removed source out (`None`: a kind this version does not know, counted in the
    /// overall sum only).
    pub fn remove(&mut self, kind: Option<SourceKind>, contribution: u64) {
        self.all = self.all.wrapping_sub(contribution);
        self.all_count -= 1;
        if kind == Some(SourceKind::Item) {
            self.items = self.items.wrapping_sub(contribution);
            self.items_count -= 1;
        }
    }

    /// Reads the stored totals (missing keys read as zero).
    ///
    /// # Errors
    /// SQLite failures.
    pub fn load(conn: &Connection) -> rusqlite::Result<DigestTotals> {
        let number = |key: &str| -> rusqlite::Result<i64> {
            Ok(meta(conn, key)?.and_then(|v| v.parse().ok()).unwrap_or(0))
        };
        let (digest_all, count_all) = ALL_KEYS;
        let (digest_items, count_items) = ITEM_KEYS;
        Ok(DigestTotals {
            all: from_sql(number(digest_all)?),
            all_count: number(count_all)?,
            items: from_sql(number(digest_items)?),
            items_count: number(count_items)?,
        })
    }

    /// Stores the totals.
    ///
    /// # Errors
    /// SQLite failures.
    pub fn store(&self, conn: &Connection) -> rusqlite::Result<()> {
        let (digest_all, count_all) = ALL_KEYS;
        let (digest_items, count_items) = ITEM_KEYS;
        set_meta(conn, digest_all, &to_sql(self.all).to_string())?;
        set_meta(conn, count_all, &self.all_count.to_string())?;
        set_meta(conn, digest_items, &to_sql(self.items).to_string())?;
        set_meta(conn, count_items, &self.items_count.to_string())
    }
}

/// Stores a `u64` in an SQLite INTEGER column (same bits).
pub fn to_sql(n: u64) -> i64 {
    i64::from_ne_bytes(n.to_ne_bytes())
}

/// Reads a `u64` stored with [`to_sql`].
pub fn from_sql(n: i64) -> u64 {
    u64::from_ne_bytes(n.to_ne_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_deterministic_and_length_sensitive() {
        assert_eq!(content_id(b"abc"), content_id(b"abc"));
        assert_ne!(content_id(b"abc"), content_id(b"abd"));
        assert_ne!(content_id(b""), content_id(b"\0"));
        assert_ne!(content_id(b"12345678"), content_id(b"12345678\0"));
        // The identity is BLAKE3's: its published hash of the empty input starts af1349b9.
        assert_eq!(content_id(b"").to_le_bytes()[..4], [0xaf, 0x13, 0x49, 0xb9]);
        assert_eq!(signature(b"a", &[1, 2]), signature(b"a", &[1, 2]));
        assert_ne!(signature(b"a", &[1, 2]), signature(b"a", &[2, 1]));
        assert_ne!(signature(b"a", &[1]), signature(b"a", &[1, 0]));
        assert_ne!(name_hash(b"tasks"), name_hash(b"task"));
        assert_eq!(from_sql(to_sql(u64::MAX)), u64::MAX);
    }
}
