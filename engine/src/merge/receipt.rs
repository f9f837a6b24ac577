//! The receipt of one item-driver run: what it took from their side and which scalars it
//! decided, built from the merge ([`receipt_of`]) in pm's `version: 1` layout. The type and
//! its two stores (values clone-locally, hashes in the tracker) are
//! [`super::receipts`]'s.

use super::item::{Decision, ItemMerge, Side};
use super::receipts::{Decision as DecisionRecord, Receipt, ReceiptState};
use crate::hash::sha256_hex;
use serde_json::Value;

/// How our item driver resolves a scalar both sides changed (pm-cli's is
/// `stable_value_order`: the value that sorts first).
pub const PREFERRED_SIDE: &str = "preferred_side";

/// Returns the receipt of `merge` for `item_path`, or `None` when the merge took nothing
/// from their side and decided nothing (the result is our file).
///
/// The id is derived from the three inputs, the path and the instant, so a re-run of the
/// same merge at the same instant names the same receipt.
pub fn receipt_of(
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
        requested_preference: prefer.as_str().to_string(),
        conflict_resolution: PREFERRED_SIDE.to_string(),
        fields_from_theirs: merge.fields_from_theirs.clone(),
        union_fields: merge.union_fields.clone(),
        decisions: merge.decisions.iter().map(record).collect(),
        state: ReceiptState::Pending,
        created_at: created_at.to_string(),
        value_availability: "clone_local".to_string(),
        reconciled_at: None,
    })
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
        use super::super::receipts::value_hash;
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
        let r = receipt_of(
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
            json!(super::super::receipts::value_hash(&json!("t")))
        );
        assert_eq!(h.value_availability, "hash_only");
    }
}
