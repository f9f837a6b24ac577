//! String collation equal to JavaScript's `a.localeCompare(b)` under ICU root/en (tertiary
//! strength, non-ignorable punctuation, no numeric ordering). Every sort that pm performs with
//! `localeCompare` (tags, unknown metadata keys, …) must go through this module.

use icu_collator::options::CollatorOptions;
use icu_collator::{Collator, CollatorBorrowed};
use std::cmp::Ordering;
use std::sync::OnceLock;

/// Returns the ordering of `a` and `b` that JavaScript's `a.localeCompare(b)` gives (sign only).
///
/// Pure-ASCII pairs take a table-driven fast path that reproduces ICU's root collation for
/// ASCII exactly (see [`ascii_compare`]); everything else goes to `icu_collator` with the root
/// locale and default options. Strings that differ only in ignorable characters (most C0
/// controls, DEL) compare `Equal`, as they do in JavaScript.
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    if a.is_ascii() && b.is_ascii() {
        return ascii_compare(a.as_bytes(), b.as_bytes());
    }
    icu_compare(a, b)
}

/// Sorts `v` in place with [`locale_compare`]; the sort is stable, like `Array.prototype.sort`.
pub fn sort_locale(v: &mut [String]) {
    v.sort_by(|a, b| locale_compare(a, b));
}

/// Compares two strings with the ICU4X root collator (no ASCII fast path).
fn icu_compare(a: &str, b: &str) -> Ordering {
    collator().compare(a, b)
}

fn collator() -> &'static CollatorBorrowed<'static> {
    static COLLATOR: OnceLock<CollatorBorrowed<'static>> = OnceLock::new();
    COLLATOR.get_or_init(|| {
        Collator::try_new(Default::default(), CollatorOptions::default())
            .expect("the root collation data is compiled into icu_collator")
    })
}

/// ASCII characters in ascending primary order; the letters stand for both cases.
/// Characters not listed (U+0000–U+0008, U+000E–U+001F, U+007F) are completely ignorable.
const PRIMARY_ORDER: &[u8] =
    b"\t\n\x0B\x0C\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz";

/// Primary weight of every ASCII byte (0 = ignorable); upper-case letters share their
/// lower-case letter's weight.
static PRIMARY: [u8; 128] = primary_table();

const fn primary_table() -> [u8; 128] {
    let mut table = [0u8; 128];
    let mut i = 0;
    while i < PRIMARY_ORDER.len() {
        let ch = PRIMARY_ORDER[i];
        let weight = (i + 1) as u8;
        table[ch as usize] = weight;
        if ch.is_ascii_lowercase() {
            table[ch.to_ascii_uppercase() as usize] = weight;
        }
        i += 1;
    }
    table
}

/// Compares two ASCII byte strings exactly as ICU's root collation does.
///
/// Level 1: the sequences of primary weights (ignorable bytes skipped), shorter prefix first.
/// Level 3 (ASCII has no secondary differences): the first position, left to right, where a
/// lower-case letter (or non-letter) meets an upper-case one; lower case sorts first.
fn ascii_compare(a: &[u8], b: &[u8]) -> Ordering {
    let (mut i, mut j) = (0, 0);
    let mut tertiary = Ordering::Equal;
    loop {
        while i < a.len() && PRIMARY[usize::from(a[i] & 0x7F)] == 0 {
            i += 1;
        }
        while j < b.len() && PRIMARY[usize::from(b[j] & 0x7F)] == 0 {
            j += 1;
        }
        let (ca, cb) = match (a.get(i), b.get(j)) {
            (None, None) => return tertiary,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(&ca), Some(&cb)) => (ca, cb),
        };
        if ca != cb {
            let (pa, pb) = (
                PRIMARY[usize::from(ca & 0x7F)],
                PRIMARY[usize::from(cb & 0x7F)],
            );
            if pa != pb {
                return pa.cmp(&pb);
            }
            if tertiary == Ordering::Equal {
                tertiary = ca.is_ascii_uppercase().cmp(&cb.is_ascii_uppercase());
            }
        }
        i += 1;
        j += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SORTED_VECTOR: [&str; 25] = [
        "_x",
        "-x",
        ".x",
        "~x",
        "10",
        "9",
        "a",
        "A",
        "a b",
        "a_b",
        "a-b",
        "a:b",
        "a.b",
        "a/b",
        "a1",
        "ab",
        "b",
        "B",
        "cli-update",
        "cli:update:dep",
        "e",
        "é",
        "f",
        "zeta",
        "Zeta",
    ];

    #[test]
    fn sorts_the_spec_vector_like_node() {
        let mut v: Vec<String> = SORTED_VECTOR.iter().rev().map(|s| s.to_string()).collect();
        sort_locale(&mut v);
        assert_eq!(v, SORTED_VECTOR);
        // ICU alone agrees too.
        let mut w: Vec<&str> = SORTED_VECTOR.iter().rev().copied().collect();
        w.sort_by(|a, b| icu_compare(a, b));
        assert_eq!(w, SORTED_VECTOR);
    }

    #[test]
    fn case_and_ignorables() {
        assert_eq!(locale_compare("a", "A"), Ordering::Less);
        assert_eq!(locale_compare("aB", "Ab"), Ordering::Less);
        assert_eq!(locale_compare("ab", "Aa"), Ordering::Greater);
        assert_eq!(locale_compare("a\u{1}b", "ab"), Ordering::Equal);
        assert_eq!(locale_compare("\u{7f}", ""), Ordering::Equal);
        assert_eq!(locale_compare("a\tb", "a b"), Ordering::Less);
        assert_eq!(locale_compare("", "\t"), Ordering::Less);
        assert_eq!(locale_compare("Tag", "tag"), Ordering::Greater);
    }

    #[test]
    fn every_ascii_pair_matches_icu() {
        for x in 0u8..128 {
            for y in 0u8..128 {
                let (a, b) = ((x as char).to_string(), (y as char).to_string());
                assert_eq!(
                    ascii_compare(a.as_bytes(), b.as_bytes()),
                    icu_compare(&a, &b),
                    "{x} {y}"
                );
                let (a2, b2) = (format!("q{a}Z"), format!("Q{b}z"));
                assert_eq!(
                    ascii_compare(a2.as_bytes(), b2.as_bytes()),
                    icu_compare(&a2, &b2),
                    "{x} {y}"
                );
            }
        }
    }

    #[test]
    fn non_ascii_uses_icu() {
        assert_eq!(locale_compare("é", "e"), Ordering::Greater);
        assert_eq!(locale_compare("é", "f"), Ordering::Less);
        assert_eq!(locale_compare("Ä", "a"), Ordering::Greater);
    }

    fn ascii_string() -> impl Strategy<Value = String> {
        // Bias towards the interesting bytes: controls, punctuation, digits, a few letters.
        let byte = prop_oneof![
            0u8..128,
            prop::sample::select(
                b" _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$\t\n\x0B\x0C\r\x01\x7F".to_vec()
            ),
            prop::sample::select(b"aAbBzZ019".to_vec()),
        ];
        prop::collection::vec(byte, 0..8)
            .prop_map(|bytes| bytes.into_iter().map(char::from).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn ascii_fast_path_equals_icu(a in ascii_string(), b in ascii_string()) {
            prop_assert_eq!(ascii_compare(a.as_bytes(), b.as_bytes()), icu_compare(&a, &b));
            prop_assert_eq!(locale_compare(&a, &b), icu_compare(&a, &b));
        }
    }
}
