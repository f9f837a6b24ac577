//! Merge receipts as pm writes them: one JSON file per driver run that took anything from the
//! other side or decided a conflict, in two stores with one id. The clone-local copy
//! (`<git common dir>/pm-merge-receipts/<id>.json`) keeps every value; the tracker copy
//! (`<tracker>/merge-receipts/<id>.json`, committed with the merge) keeps only value hashes,
//! so discarded text never travels to other clones.

use super::item::{Decision, ItemMerge, Side};
use crate::error::Result;
use crate::hash::sha256_hex;
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The folder of clone-local receipts under the git common directory.
pub const CLONE_RECEIPTS_DIR: &str = "pm-merge-receipts";
/// The folder of hash-only receipts under the tracker root.
pub const TRACKER_RECEIPTS_DIR: &str = "merge-receipts";
/// How our item driver resolves a scalar both sides changed (pm-cli's is
/// `stable_value_order`: the value that sorts first).
pub const PREFERRED_SIDE: &str = "preferred_side";

/// One decided scalar as a receipt stores it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DecisionRecord {
    /// The metadata key.
    pub field: String,
    /// The ancestor's value (`null` in the hash-only copy, or when absent).
    pub base: Value,
    /// Our value.
    pub ours: Value,
    /// Their value.
    pub theirs: Value,
    /// The kept value (`{pm_value_hash}` in the hash-only copy).
    pub retained: Value,
    /// The dropped value (`{pm_value_hash}` in the hash-only copy).
    pub discarded: Value,
}

/// A merge receipt (`version: 1`), keys in pm's order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Receipt {
    /// Always 1.
    pub version: u32,
    /// The receipt id (a UUID).
    pub id: String,
    /// The repository-relative item path git passed (`%P`).
    pub item_path: String,
    /// The merged item's id.
    pub item_id: String,
    /// `--prefer`.
    pub requested_preference: Side,
    /// How double edits were resolved ([`PREFERRED_SIDE`]).
    pub conflict_resolution: &'static str,
    /// Fields whose value came from their side alone.
    pub fields_from_theirs: Vec<String>,
    /// Collections merged as a union.
    pub union_fields: Vec<String>,
    /// Decided scalars.
    pub decisions: Vec<DecisionRecord>,
    /// `pending` until `pm merge reconcile` records it.
    pub state: &'static str,
    /// When the driver ran.
    pub created_at: String,
    /// `clone_local` (values) or `hash_only` (hashes).
    pub value_availability: &'static str,
}

impl Receipt {
    /// Returns the receipt of `merge` for `item_path`, or `None` when the merge took nothing
    /// from their side and decided nothing (the result is our file).
    ///
    /// The id is derived from the three inputs, the path and the instant, so a re-run of the
    /// same merge at the same instant names the same receipt.
    pub fn of(
        merge: &ItemMerge,
        item_path: &str,
        inputs: [&[u8]; 3],
        prefer: Side,
        created_at: &str,
    ) -> Option<Receipt> {
        if merge.fields_from_theirs.is_empty()
            && merge.union_fields.is_empty()
            && merge.decisions.is_empty()
        {
            return None;
        }
        let mut seed = format!("{item_path}\n{created_at}\n");
        for input in inputs {
            seed.push_str(&sha256_hex(input));
            seed.push('\n');
        }
        Some(Receipt {
            version: 1,
            id: uuid_from_hex(&sha256_hex(seed.as_bytes())),
            item_path: item_path.to_string(),
            item_id: merge.doc.id().unwrap_or_default().to_string(),
            requested_preference: prefer,
            conflict_resolution: PREFERRED_SIDE,
            fields_from_theirs: merge.fields_from_theirs.clone(),
            union_fields: merge.union_fields.clone(),
            decisions: merge.decisions.iter().map(record).collect(),
            state: "pending",
            created_at: created_at.to_string(),
            value_availability: "clone_local",
        })
    }

    /// Returns the tracker copy: every value replaced by its hash.
    pub fn hash_only(&self) -> Receipt {
        let mut copy = self.clone();
        copy.value_availability = "hash_only";
        for d in &mut copy.decisions {
            d.base = Value::Null;
            d.ours = Value::Null;
            d.theirs = Value::Null;
            d.retained = hashed(&d.retained);
            d.discarded = hashed(&d.discarded);
        }
        copy
    }

    /// Writes the clone-local copy under `common_dir` and the hash-only copy under
    /// `tracker_root` (either may be absent), atomically; returns the paths written.
    ///
    /// # Errors
    /// `Error::Io` when a file cannot be written.
    pub fn write(
        &self,
        common_dir: Option<&Path>,
        tracker_root: Option<&Path>,
    ) -> Result<Vec<PathBuf>> {
        let mut written = Vec::new();
        let name = format!("{}.json", self.id);
        if let Some(dir) = common_dir {
            let path = dir.join(CLONE_RECEIPTS_DIR).join(&name);
            write_json(&path, self)?;
            written.push(path);
        }
        if let Some(root) = tracker_root {
            let path = root.join(TRACKER_RECEIPTS_DIR).join(&name);
            write_json(&path, &self.hash_only())?;
            written.push(path);
        }
        Ok(written)
    }
}

/// Returns pm's hash of a receipt value: SHA-256 of `JSON.stringify(value)`.
pub fn value_hash(value: &Value) -> String {
    sha256_hex(crate::json::to_compact(value).as_bytes())
}

fn hashed(value: &Value) -> Value {
    let mut map = Map::new();
    map.insert("pm_value_hash".into(), Value::String(value_hash(value)));
    Value::Object(map)
}

fn record(d: &Decision) -> DecisionRecord {
    let or_null = |v: Option<&Value>| v.cloned().unwrap_or(Value::Null);
    DecisionRecord {
        field: d.field.clone(),
        base: or_null(d.base.as_ref()),
        ours: or_null(d.ours.as_ref()),
        theirs: or_null(d.theirs.as_ref()),
        retained: or_null(d.retained()),
        discarded: or_null(d.discarded()),
    }
}

fn write_json(path: &Path, receipt: &Receipt) -> Result<()> {
    let value = serde_json::to_value(receipt)
        .map_err(|e| crate::Error::internal(format!("receipt does not serialize: {e}")))?;
    let mut text = crate::json::to_pretty(&value);
    text.push('\n');
    crate::atomic::write_unsynced(path, text.as_bytes())
}

/// Formats the first 32 hex digits of `hex` as a version-4 UUID.
fn uuid_from_hex(hex: &str) -> String {
    let h = hex.as_bytes();
    let s = |a: usize, b: usize| String::from_utf8_lossy(&h[a..b]).into_owned();
    let variant = match h[16] {
        b'0'..=b'3' => '8',
        b'4'..=b'7' => '9',
        b'8' | b'9' | b'a' | b'b' => 'a',
        _ => 'b',
    };
    format!(
        "{}-{}-4{}-{variant}{}-{}",
        s(0, 8),
        s(8, 12),
        s(13, 16),
        s(17, 20),
        s(20, 32)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::ItemDoc;
    use serde_json::json;

    #[test]
    fn value_hashes_match_pm_cli() {
        // From the write transcript (step 124): the retained and discarded titles.
        assert_eq!(
            value_hash(&json!("Epic title from C")),
            "0397266298ba174cb99d27f03db3c88f52b8113d71d237907b95037653617e71"
        );
    }

    #[test]
    fn receipts_carry_values_locally_and_hashes_in_the_tracker() {
        let merge = ItemMerge {
            doc: ItemDoc {
                metadata: json!({"id": "pm-1"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
                body: String::new(),
            },
            fields_from_theirs: vec!["priority".into()],
            union_fields: Vec::new(),
            decisions: vec![Decision {
                field: "title".into(),
                base: Some(json!("b")),
                ours: Some(json!("o")),
                theirs: Some(json!("t")),
                winner: Side::Ours,
            }],
            body_conflict: false,
        };
        let r = Receipt::of(
            &merge,
            "tasks/pm-1.toon",
            [b"", b"", b""],
            Side::Ours,
            "now",
        )
        .expect("a receipt");
        assert_eq!(r.id.len(), 36);
        assert_eq!(&r.id[14..15], "4");
        assert_eq!(r.decisions[0].retained, json!("o"));
        let h = r.hash_only();
        assert_eq!(h.decisions[0].ours, Value::Null);
        assert_eq!(
            h.decisions[0].discarded["pm_value_hash"],
            json!(value_hash(&json!("t")))
        );
        assert_eq!(h.value_availability, "hash_only");
    }
}
