//! A small, fast, deterministic 64-bit hash for freshness bookkeeping: file signatures, the
//! order-independent digests of the sources (stored in `meta`), and content hashes of
//! racily-clean files. Not cryptographic; a collision can only make pm re-read a file it did not
//! need to.

use crate::rows::set_meta;
use crate::source::{ALL_KEYS, ITEM_KEYS, SourceKind};
use crate::store::meta;
use rusqlite::Connection;

/// Multiplier of the word mixer (the 64-bit golden-ratio odd constant).
const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// Returns the hash of `bytes`.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = Hasher64::new();
    h.write(bytes);
    h.finish()
}

/// Returns the content hash of a source: its bytes' hash, or for a symlink (never read: its
/// reads are refused) the hash of where it points, so a link retargeted within the same clock
/// tick is still seen; `None` when neither can be read.
pub fn content_hash(path: &std::path::Path) -> Option<u64> {
    match pm_engine::confine::leaf::read_file(path) {
        Ok(Some(bytes)) => Some(hash_bytes(&bytes)),
        Err(pm_engine::Error::PathUnsafe { .. }) => std::fs::read_link(path)
            .ok()
            .map(|target| hash_bytes(target.as_os_str().as_encoded_bytes())),
        _ => None,
    }
}

/// An incremental hasher over 8-byte words.
#[derive(Clone, Copy, Debug)]
pub struct Hasher64 {
    state: u64,
    len: u64,
}

impl Default for Hasher64 {
    fn default() -> Self {
        Hasher64::new()
    }
}

impl Hasher64 {
    /// Returns a fresh hasher.
    pub fn new() -> Hasher64 {
        Hasher64 {
            state: 0x243F_6A88_85A3_08D3,
            len: 0,
        }
    }

    fn mix(&mut self, word: u64) {
        self.state = (self.state ^ word).rotate_left(29).wrapping_mul(K) ^ (self.state >> 31);
    }

    /// Adds bytes.
    pub fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(word) ^ 0xFF);
        }
        self.len = self.len.wrapping_add(bytes.len() as u64);
    }

    /// Adds a number.
    pub fn write_u64(&mut self, n: u64) {
        self.mix(n);
        self.len = self.len.wrapping_add(8);
    }

    /// Returns the hash (finalized with the length and an avalanche step).
    pub fn finish(&self) -> u64 {
        let mut x = self.state ^ self.len.wrapping_mul(K);
        x ^= x >> 33;
        x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
        x ^= x >> 33;
        x = x.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
        x ^ (x >> 33)
    }
}

/// The stored order-independent digests: the wrapping sum of [`crate::source::Sig::contribution`]
/// and the count of every projected source, overall and for item files alone (the scope of
/// reads that do not depend on history; see [`crate::source::SweepScope`]).
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
    fn hash_is_deterministic_and_length_sensitive() {
        assert_eq!(hash_bytes(b"abc"), hash_bytes(b"abc"));
        assert_ne!(hash_bytes(b"abc"), hash_bytes(b"abd"));
        assert_ne!(hash_bytes(b""), hash_bytes(b"\0"));
        assert_ne!(hash_bytes(b"12345678"), hash_bytes(b"12345678\0"));
        assert_eq!(from_sql(to_sql(u64::MAX)), u64::MAX);
    }
}
