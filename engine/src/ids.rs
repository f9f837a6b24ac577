//! Item ids: prefix normalization, the candidates an id argument may name, explicit
//! `--id` validation, the validated `ItemId` newtype, and token minting from a caller-chosen
//! entropy source (random bytes, or pm's reproducible `PM_SEED` derivation). Never reads the OS.

use crate::error::{Error, Result};
use crate::schema::token::js_trim;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};

/// Shortest token `ids.token_length` allows.
pub const TOKEN_LENGTH_MIN: usize = 4;
/// Longest token `ids.token_length` allows.
pub const TOKEN_LENGTH_MAX: usize = 12;
/// The prefix used when none (or an empty one) is configured.
pub const DEFAULT_PREFIX: &str = "pm-";
/// Ids pm refuses as explicit `--id` values.
const RESERVED_IDS: [&str; 3] = ["none", "null", "undefined"];
/// Tries per token length when minting with a collision probe (pm's SDK `generateItemId`).
const TRIES_PER_LENGTH: usize = 32;
/// How many characters the probe may add to the configured length.
const MAX_EXTRA_LENGTH: usize = 6;
const ALPHABET: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";

/// Returns pm's canonical id prefix: lowercase ASCII `[a-z0-9]` runs joined by single `-`, plus a
/// trailing `-`; `pm-` when nothing is left (`task` → `task-`, `PM_` → `pm-`).
pub fn normalize_prefix(input: &str) -> String {
    let lowered = input.to_lowercase();
    let mut out = String::new();
    let mut pending_dash = false;
    for c in lowered.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            if pending_dash && !out.is_empty() {
                out.push('-');
            }
            out.push(c);
            pending_dash = false;
        } else {
            pending_dash = true;
        }
    }
    if out.is_empty() {
        return DEFAULT_PREFIX.to_string();
    }
    out.push('-');
    out
}

/// Returns `ids.token_length` clamped to 4..=12; absent or non-finite values give 4.
pub fn clamp_token_length(value: Option<f64>) -> usize {
    match value {
        Some(v) if v.is_finite() => {
            v.trunc()
                .clamp(TOKEN_LENGTH_MIN as f64, TOKEN_LENGTH_MAX as f64) as usize
        }
        _ => TOKEN_LENGTH_MIN,
    }
}

/// Returns an id argument trimmed, lowercased and without one leading `#`.
pub fn normalize_raw_id(input: &str) -> String {
    let lowered = js_trim(input).to_lowercase();
    match lowered.strip_prefix('#') {
        Some(rest) => rest.to_string(),
        None => lowered,
    }
}

/// Returns the ids an argument may name, most likely first: the normalized input with the
/// canonical prefix added when missing, then the bare normalized input (de-duplicated).
pub fn normalize_id_input(raw: &str, prefix: &str) -> Vec<String> {
    let canonical_prefix = normalize_prefix(prefix);
    let bare = normalize_raw_id(raw);
    let prefixed = if bare.starts_with(&canonical_prefix) {
        bare.clone()
    } else {
        format!("{canonical_prefix}{bare}")
    };
    if prefixed == bare {
        vec![prefixed]
    } else {
        vec![prefixed, bare]
    }
}

/// Returns true when `s` matches `^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`: such an id is a single safe
/// path component (no `/`, `\`, `.`, NUL, whitespace or upper case).
pub fn is_valid_id(s: &str) -> bool {
    let bytes = s.as_bytes();
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            alnum(first) && alnum(last) && bytes.iter().all(|b| alnum(b) || *b == b'-')
        }
        _ => false,
    }
}

/// The most a file name of pm's adds to an item id: the temp sibling of its history stream,
/// `.<id>.jsonl.<pid, ≤ 10 digits>.<sequence, ≤ 20 digits>.<8 hex>.tmp` (item files, lock files
/// and their temp names add less).
const LONGEST_NAME_OVERHEAD: usize = 1 + ".jsonl".len() + 1 + 10 + 1 + 20 + 1 + 8 + ".tmp".len();
/// The longest id pm accepts: every file name it creates for the id stays within the 255 bytes
/// file systems allow for one name.
pub const MAX_ID_LEN: usize = 255 - LONGEST_NAME_OVERHEAD;

/// Refuses an id longer than [`MAX_ID_LEN`] (pm would fail later with "File name too long").
///
/// # Errors
/// `Error::InvalidId` naming the limit.
pub fn check_id_length(id: &str) -> Result<()> {
    if id.len() <= MAX_ID_LEN {
        return Ok(());
    }
    Err(Error::InvalidId {
        input: id.to_string(),
        reason: format!(
            "the id has {} characters; ids may have at most {MAX_ID_LEN} (the longest file name pm writes for an id must fit in 255 bytes)",
            id.len()
        ),
    })
}

/// Validates an explicit `--id` value and returns the canonical id (prefix added when missing).
///
/// # Errors
/// `Error::InvalidId` (`invalid_item_id`) for empty input, the reserved words `none`, `null` and
/// `undefined`, and anything outside `^[a-z0-9]([a-z0-9-]*[a-z0-9])?$` after prefixing, which
/// covers `/`, `..` and every other way to escape a folder.
pub fn validate_explicit_id(raw: &str, prefix: &str) -> Result<ItemId> {
    let bare = normalize_raw_id(raw);
    let invalid = |reason: &str| Error::InvalidId {
        input: raw.to_string(),
        reason: reason.to_string(),
    };
    if bare.is_empty() {
        return Err(invalid("the id is empty"));
    }
    if RESERVED_IDS.contains(&bare.as_str()) {
        return Err(invalid("none, null and undefined are reserved"));
    }
    let candidates = normalize_id_input(raw, prefix);
    let id = &candidates[0];
    if !is_valid_id(id) {
        return Err(invalid(
            "ids use lowercase letters, digits and inner hyphens only (^[a-z0-9]([a-z0-9-]*[a-z0-9])?$)",
        ));
    }
    check_id_length(id)?;
    Ok(ItemId(id.clone()))
}

/// A validated item id: matches `^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`, so it is safe as a file stem.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct ItemId(String);

impl ItemId {
    /// Parses an already-normalized id.
    ///
    /// # Errors
    /// `Error::InvalidId` when `s` does not match the id pattern.
    pub fn parse(s: &str) -> Result<ItemId> {
        if is_valid_id(s) {
            Ok(ItemId(s.to_string()))
        } else {
            Err(Error::InvalidId {
                input: s.to_string(),
                reason: "not of the form ^[a-z0-9]([a-z0-9-]*[a-z0-9])?$".to_string(),
            })
        }
    }

    /// Returns the id text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Returns the id text, consuming the id.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for ItemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for ItemId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Mints id tokens from an explicit entropy source; the library never draws entropy on its own.
///
/// * [`IdMinter::seeded`] is pm's reproducible mode (`PM_SEED`): token *n* (0-based, per minter)
///   takes the first `length` bytes of `sha256(seed + "\0" + n)` (`n` in decimal) and maps each
///   byte to `0-9a-z` by `byte % 36`. Checked against pm: seed `anchor-golden`, first token,
///   gives `8don` at length 4 and `8donxj` at length 6 (`shared/golden/reads/*/create.*`).
///   How pm advances `n` across several mints in one process is not verified (open item).
/// * [`IdMinter::from_byte_source`] draws uniform characters from caller bytes (rejection
///   sampling: bytes 252..=255 are skipped so `byte % 36` stays uniform).
/// * [`IdMinter::from_entropy`] is the explicit opt-in for unseeded ids (see its docs).
pub struct IdMinter {
    source: TokenSource,
}

enum TokenSource {
    Seeded { seed: String, counter: u64 },
    Bytes(Box<dyn FnMut() -> u8 + Send>),
}

impl fmt::Debug for IdMinter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            TokenSource::Seeded { seed, counter } => f
                .debug_struct("IdMinter::Seeded")
                .field("seed", seed)
                .field("counter", counter)
                .finish(),
            TokenSource::Bytes(_) => f.write_str("IdMinter::Bytes"),
        }
    }
}

impl IdMinter {
    /// Returns pm's reproducible minter for `PM_SEED=<seed>`, starting at token 0.
    pub fn seeded(seed: impl Into<String>) -> IdMinter {
        IdMinter {
            source: TokenSource::Seeded {
                seed: seed.into(),
                counter: 0,
            },
        }
    }

    /// Returns a minter drawing uniform token characters from `next_byte`.
    pub fn from_byte_source(next_byte: impl FnMut() -> u8 + Send + 'static) -> IdMinter {
        IdMinter {
            source: TokenSource::Bytes(Box::new(next_byte)),
        }
    }

    /// Returns a minter for unseeded ids: a SHA-256 counter-mode stream keyed by 32 bytes taken
    /// from the standard library's per-process random hasher keys (`RandomState`), so two
    /// processes mint independent tokens without this crate reading the OS directly.
    pub fn from_entropy() -> IdMinter {
        let mut key = [0u8; 32];
        for (i, chunk) in key.chunks_mut(8).enumerate() {
            let mut hasher = RandomState::new().build_hasher();
            hasher.write_usize(i);
            hasher.write_u32(std::process::id());
            chunk.copy_from_slice(&hasher.finish().to_le_bytes());
        }
        let mut block = [0u8; 32];
        let mut block_index: u64 = 0;
        let mut offset = block.len();
        IdMinter::from_byte_source(move || {
            if offset == block.len() {
                let mut hasher = Sha256::new();
                hasher.update(key);
                hasher.update(block_index.to_le_bytes());
                block.copy_from_slice(&hasher.finalize());
                block_index += 1;
                offset = 0;
            }
            offset += 1;
            block[offset - 1]
        })
    }

    /// Returns a token of `length` characters (clamped to 4..=12) over `0-9a-z`.
    pub fn token(&mut self, length: usize) -> String {
        let length = length.clamp(TOKEN_LENGTH_MIN, TOKEN_LENGTH_MAX);
        match &mut self.source {
            TokenSource::Seeded { seed, counter } => {
                let mut hasher = Sha256::new();
                hasher.update(seed.as_bytes());
                hasher.update([0u8]);
                hasher.update(counter.to_string().as_bytes());
                let digest = hasher.finalize();
                *counter += 1;
                digest[..length]
                    .iter()
                    .map(|b| ALPHABET[usize::from(*b) % 36] as char)
                    .collect()
            }
            TokenSource::Bytes(next) => {
                let mut out = String::with_capacity(length);
                while out.len() < length {
                    let b = next();
                    if b < 252 {
                        out.push(ALPHABET[usize::from(b) % 36] as char);
                    }
                }
                out
            }
        }
    }

    /// Returns `<normalized prefix><token>` without checking whether it exists (pm's `create`).
    pub fn mint(&mut self, prefix: &str, token_length: usize) -> ItemId {
        let id = format!("{}{}", normalize_prefix(prefix), self.token(token_length));
        ItemId::parse(&id).expect("a normalized prefix plus a base-36 token is a valid id")
    }

    /// Returns a minted id for which `exists` is false, probing like pm's SDK: 32 tries per
    /// length, then one character more, up to the configured length + 6 (at most 12).
    ///
    /// # Errors
    /// `Error::Internal` when every try collided.
    pub fn mint_unused(
        &mut self,
        prefix: &str,
        token_length: usize,
        mut exists: impl FnMut(&ItemId) -> bool,
    ) -> Result<ItemId> {
        let mut length = token_length.clamp(TOKEN_LENGTH_MIN, TOKEN_LENGTH_MAX);
        let max_length = (length + MAX_EXTRA_LENGTH).min(TOKEN_LENGTH_MAX);
        let mut attempts = 0usize;
        while length <= max_length {
            for _ in 0..TRIES_PER_LENGTH {
                let id = self.mint(prefix, length);
                if !exists(&id) {
                    return Ok(id);
                }
                attempts += 1;
            }
            length += 1;
        }
        Err(Error::internal(format!(
            "unable to generate a unique id after {attempts} attempts"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_normalize_like_pm() {
        assert_eq!(normalize_prefix("task"), "task-");
        assert_eq!(normalize_prefix("PM_"), "pm-");
        assert_eq!(normalize_prefix("pm-"), "pm-");
        assert_eq!(normalize_prefix("  My  Team!"), "my-team-");
        assert_eq!(normalize_prefix(""), "pm-");
        assert_eq!(normalize_prefix("__"), "pm-");
    }

    #[test]
    fn token_length_clamps() {
        assert_eq!(clamp_token_length(None), 4);
        assert_eq!(clamp_token_length(Some(f64::NAN)), 4);
        assert_eq!(clamp_token_length(Some(2.0)), 4);
        assert_eq!(clamp_token_length(Some(6.9)), 6);
        assert_eq!(clamp_token_length(Some(40.0)), 12);
    }

    #[test]
    fn id_input_candidates() {
        assert_eq!(normalize_id_input(" #PM-AbC1 ", "pm-"), vec!["pm-abc1"]);
        assert_eq!(normalize_id_input("abc1", "pm"), vec!["pm-abc1", "abc1"]);
        assert_eq!(normalize_id_input("#x", "task"), vec!["task-x", "x"]);
    }

    #[test]
    fn id_pattern_by_hand() {
        for ok in ["a", "pm-t73k", "0", "a-b-c", "pm-021kdp"] {
            assert!(is_valid_id(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "A", "a/b", "..", "a.b", "a b", "a\0", "é"] {
            assert!(!is_valid_id(bad), "{bad:?}");
        }
    }

    #[test]
    fn explicit_ids_are_validated() -> Result<()> {
        assert_eq!(validate_explicit_id("#I001", "pm-")?.as_str(), "pm-i001");
        assert_eq!(validate_explicit_id("pm-e001", "pm-")?.as_str(), "pm-e001");
        for bad in [
            "none",
            "NULL",
            " undefined ",
            "",
            "../x",
            "a/b",
            "pm-..",
            "x.y",
            "-",
        ] {
            let err = validate_explicit_id(bad, "pm-").expect_err(bad);
            assert_eq!(err.code().as_str(), "invalid_item_id");
        }
        Ok(())
    }

    #[test]
    fn seeded_tokens_match_pm() {
        assert_eq!(IdMinter::seeded("anchor-golden").token(4), "8don");
        assert_eq!(IdMinter::seeded("anchor-golden").token(6), "8donxj");
        let mut minter = IdMinter::seeded("anchor-golden");
        assert_eq!(minter.mint("pm-", 4).as_str(), "pm-8don");
        // The second token uses counter 1: sha256("anchor-golden\01").
        assert_eq!(minter.token(4), "kb44");
    }

    #[test]
    fn byte_source_is_uniform_by_rejection() {
        let mut bytes = vec![255u8, 252, 0, 35, 36, 251].into_iter().cycle();
        let mut minter = IdMinter::from_byte_source(move || bytes.next().unwrap_or(0));
        // 255 and 252 are skipped; 0 → '0', 35 → 'z', 36 → '0', 251 → 251 % 36 = 35 → 'z'.
        assert_eq!(minter.token(4), "0z0z");
    }

    #[test]
    fn entropy_minter_gives_valid_distinct_ids() {
        let mut minter = IdMinter::from_entropy();
        let a = minter.mint("pm-", 12);
        let b = minter.mint("pm-", 12);
        assert_ne!(a, b);
        assert_eq!(a.as_str().len(), 15);
    }

    #[test]
    fn probing_grows_the_token() -> Result<()> {
        let mut minter = IdMinter::seeded("s");
        let id = minter.mint_unused("pm-", 4, |id| id.as_str().len() < 8)?;
        assert_eq!(id.as_str().len(), 8);
        let err = IdMinter::seeded("s").mint_unused("pm-", 12, |_| true);
        assert!(err.is_err());
        Ok(())
    }
}
