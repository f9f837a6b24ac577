//! Value generators shared by the TOON property tests and the oracle test: strings and keys
//! full of what TOON must quote or escape, and arrays of uniform objects (the tabular form).

use proptest::prelude::*;
use proptest::sample::select;
use serde_json::Value;

/// Pieces of strings: every character class TOON quotes or escapes, and words that read as
/// numbers, booleans or null.
const PIECES: &[&str] = &[
    "a",
    "Z",
    "x y",
    " ",
    "  ",
    "\t",
    ",",
    ":",
    "\"",
    "\\",
    "[",
    "]",
    "{",
    "}",
    "#",
    "-",
    "- ",
    "|",
    "\n",
    "\r",
    "\u{0}",
    "\u{1}",
    "\u{1f}",
    "\u{7f}",
    "\u{85}",
    "\u{a0}",
    "\u{2028}",
    "\u{2029}",
    "\u{feff}",
    "é",
    "e\u{301}",
    "😀",
    "𝄞",
    "\u{10ffff}",
    "true",
    "false",
    "null",
    "True",
    "NULL",
    "0",
    "7",
    "05",
    "-1",
    "1.5",
    "1e5",
    "1E-5",
    "-0",
    "0.0",
    ".5",
    "1.",
    "+1",
    "Infinity",
    "NaN",
    "0x1f",
    "1_000",
    "pm-a1b2",
    "2026-08-22T10:00:00.000Z",
    "[]",
    "{}",
];

/// Strings: plain words, concatenations of [`PIECES`], any Unicode.
pub fn text() -> BoxedStrategy<String> {
    prop_oneof![
        3 => "[a-zA-Z0-9 ]{0,10}",
        1 => select(PIECES).prop_map(str::to_string),
        4 => prop::collection::vec(select(PIECES), 0..5).prop_map(|p| p.concat()),
        1 => "\\PC{0,6}",
        1 => any::<String>(),
    ]
    .boxed()
}

/// Keys: identifiers (dotted ones included) and keys that need quotes or reorder in
/// JavaScript (array-index keys enumerate first).
pub fn key() -> BoxedStrategy<String> {
    prop_oneof![
        4 => "[a-z_][a-z0-9_]{0,6}",
        1 => "[a-z]{1,3}\\.[a-z]{1,3}",
        2 => select(vec![
            "", " ", "a b", "0", "1", "10", "01", "-1", "1.5", "-k", "#k", "k#", "é", "😀", "a:b",
            "x,y", "\"q", "[k]", "{k}", "k\\", "true", "null", "1e3", " lead", "trail ", "tab\t",
            "new\nline", "a-b", "a|b", "\u{2028}",
        ])
        .prop_map(str::to_string),
        1 => text(),
    ]
    .boxed()
}

pub fn object(entries: Vec<(String, Value)>) -> Value {
    Value::Object(entries.into_iter().collect())
}

/// Arrays of objects with one key set (the tabular form), rows in the same or shuffled key
/// order, optionally with a column of uniform objects (a nested column group).
pub fn uniform_rows_of(cell: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
    (
        prop::collection::vec(key(), 1..4),
        1usize..4,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_flat_map(move |(keys, rows, nested, reverse)| {
            let width = keys.len();
            prop::collection::vec(
                (
                    prop::collection::vec(cell.clone(), width),
                    cell.clone(),
                    cell.clone(),
                ),
                rows,
            )
            .prop_map(move |cells| {
                let rows = cells.into_iter().enumerate().map(|(i, (values, p, q))| {
                    let mut row: Vec<(String, Value)> = keys.iter().cloned().zip(values).collect();
                    if nested {
                        let group = object(vec![("p".into(), p), ("q".into(), q)]);
                        row.push(("grp".into(), group));
                    }
                    if reverse && i % 2 == 1 {
                        row.reverse();
                    }
                    object(row)
                });
                Value::Array(rows.collect())
            })
        })
        .boxed()
}
