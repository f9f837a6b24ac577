//! Differential tests of pm's TOON codec against the `toon-format` crate as an oracle: for
//! random JSON values both encoders must write the same bytes and each decoder must read the
//! other's text back to the same value; the same holds for every item file of the real corpus.
//! Shapes where the crate departs from `@toon-format/toon` 4.1.1 (which pm follows) are listed
//! in `docs/compatibility.md`, "TOON codec and the toon-format crate", and excluded below.

use crate::history_fuzz::config;
use crate::toon_values::{key, object, text, uniform_rows_of};
use pm_engine::history::patch::json_equal;
use pm_engine::json::{format_number, js_key_order};
use pm_engine::toon::{decode, encode};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Number, Value, json};
use std::error::Error;
use std::time::Instant;
use toon_format::{DecodeOptions, EncodeOptions};

/// Numbers on which both codecs agree: integers in JavaScript's safe range, `-0`, fractions,
/// and the largest magnitudes `String(n)` still writes without an exponent.
pub fn plain_number() -> BoxedStrategy<Value> {
    prop_oneof![
        3 => (-1000i64..1000).prop_map(Value::from),
        2 => (-9_007_199_254_740_991i64..=9_007_199_254_740_991).prop_map(Value::from),
        2 => (-1_000_000i64..1_000_000, 1i32..7).prop_map(|(n, e)| float(n as f64 / 10f64.powi(e))),
        1 => (-1e15..1e15f64).prop_map(float),
        2 => select(vec![
            -0.0, 0.0, 0.1, 1.5, -2.25, 1e20, -1e20, 1e-6, 0.000001234, 123456789012345.67,
            9007199254740991.0, 1.0, -1.0, 100.0, 0.30000000000000004,
        ])
        .prop_map(float),
    ]
    .boxed()
}

/// Numbers at JavaScript's edges, where the crate departs from 4.1.1 (see
/// [`has_exponent_number`] and [`has_unsafe_integer`]): exponent forms, integers past 2^53.
pub fn edge_number() -> BoxedStrategy<Value> {
    prop_oneof![
        1 => any::<u64>().prop_map(Value::from),
        1 => any::<i64>().prop_map(Value::from),
        2 => any::<f64>().prop_map(float),
        2 => select(vec![
            1e21, -1e21, 1e-7, 123456789012345680000.0, 9007199254740992.0, 9007199254740993.0,
            18446744073709551616.0, 5e-324, f64::MAX, f64::MIN_POSITIVE, 1.7976931348623157e300,
        ])
        .prop_map(float),
    ]
    .boxed()
}

/// Returns a number: mostly [`plain_number`], sometimes an [`edge_number`].
pub fn number() -> BoxedStrategy<Value> {
    prop_oneof![24 => plain_number(), 1 => edge_number()].boxed()
}

fn float(f: f64) -> Value {
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// Returns a primitive: a string, number, boolean or null.
pub fn primitive() -> BoxedStrategy<Value> {
    prop_oneof![
        4 => text().prop_map(Value::String),
        3 => number(),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => Just(Value::Null),
    ]
    .boxed()
}

/// Arrays of objects with one key set, with [`primitive`] cells (see [`uniform_rows_of`]).
pub fn uniform_rows() -> BoxedStrategy<Value> {
    uniform_rows_of(primitive())
}

/// Objects whose values are uniform objects (the keyed table form), or nearly so.
pub fn keyed_rows() -> BoxedStrategy<Value> {
    (
        prop::collection::vec(key(), 1..4),
        prop::collection::vec(key(), 1..3),
    )
        .prop_flat_map(|(names, columns)| {
            let rows = prop::collection::vec(
                prop::collection::vec(primitive(), columns.len()),
                names.len(),
            );
            (Just(names), Just(columns), rows)
        })
        .prop_map(|(names, columns, rows)| {
            let rows = names
                .into_iter()
                .zip(rows)
                .map(|(name, cells)| (name, object(columns.iter().cloned().zip(cells).collect())));
            object(rows.collect())
        })
        .boxed()
}

/// Returns any JSON value: primitives, empty and non-empty containers, tables, keyed tables,
/// arrays of arrays, mixed arrays and nested objects.
pub fn value() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        6 => primitive(),
        1 => Just(Value::Object(Map::new())),
        1 => Just(Value::Array(Vec::new())),
        2 => prop::collection::vec(primitive(), 0..5).prop_map(Value::Array),
        2 => uniform_rows(),
        1 => keyed_rows(),
    ];
    leaf.prop_recursive(5, 96, 6, |inner| {
        prop_oneof![
            3 => prop::collection::vec((key(), inner.clone()), 0..5).prop_map(object),
            2 => prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            1 => prop::collection::vec(
                prop::collection::vec(primitive(), 0..4).prop_map(Value::Array),
                1..4,
            )
            .prop_map(Value::Array),
        ]
    })
    .boxed()
}

/// Returns a document: mostly an object of several values (as item files are), else any value.
pub fn document() -> BoxedStrategy<Value> {
    prop_oneof![
        3 => prop::collection::vec((key(), value()), 1..8).prop_map(object),
        1 => value(),
    ]
    .boxed()
}

/// Encodes with the crate's defaults (indent 2, `,` delimiter; it has no key folding).
pub fn oracle_encode(value: &Value) -> Result<String, String> {
    toon_format::encode(value, &EncodeOptions::default()).map_err(|e| e.to_string())
}

/// Decodes with the crate's defaults (strict, indent 2).
pub fn oracle_decode(text: &str) -> Result<Value, String> {
    toon_format::decode(text, &DecodeOptions::default()).map_err(|e| e.to_string())
}

/// Decodes with pm's codec.
pub fn ours_decode(text: &str) -> Result<Value, String> {
    decode(text).map_err(|e| e.to_string())
}

// Known divergences: each predicate names one entry of docs/compatibility.md, "TOON codec and
// the toon-format crate"; the differential property skips values of that shape.

/// Returns true if some node of `value` satisfies `pred`.
fn any_node(value: &Value, pred: &dyn Fn(&Value) -> bool) -> bool {
    pred(value)
        || match value {
            Value::Array(items) => items.iter().any(|v| any_node(v, pred)),
            Value::Object(map) => map.values().any(|v| any_node(v, pred)),
            _ => false,
        }
}

/// Divergence 1: a number JavaScript's `String(n)` writes with an exponent (`1e+21`, `1e-7`;
/// magnitudes ≥ 1e21 or below 1e-6); the crate writes every digit.
pub fn has_exponent_number(value: &Value) -> bool {
    any_node(
        value,
        &|v| matches!(v, Value::Number(n) if format_number(n).contains('e')),
    )
}

const MAX_SAFE: u64 = 9_007_199_254_740_991;
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;

/// Divergence 2: an integer beyond ±(2^53 − 1) that the crate keeps as a 64-bit integer
/// (held as `u64`/`i64`, or an integral double in [-2^63, 2^64)); pm, like JavaScript, rounds it
/// to a double when writing and reads such literals back as doubles.
pub fn has_unsafe_integer(value: &Value) -> bool {
    any_node(value, &|v| {
        let Value::Number(n) = v else { return false };
        if let Some(u) = n.as_u64() {
            return u > MAX_SAFE;
        }
        if let Some(i) = n.as_i64() {
            return i.unsigned_abs() > MAX_SAFE;
        }
        n.as_f64().is_some_and(|f| {
            f.fract() == 0.0 && f.abs() > MAX_SAFE as f64 && (-TWO_POW_63..TWO_POW_64).contains(&f)
        })
    })
}

/// Divergence 3: -2^63, which JavaScript writes `-9223372036854776000`; the crate reads that
/// literal back as a string (a case of divergence 2 whose decoded type differs too).
pub fn has_minus_two_pow_63(value: &Value) -> bool {
    any_node(value, &|v| v.as_f64() == Some(-TWO_POW_63))
}

/// Divergence 4: an object whose keys a JavaScript object enumerates in another order
/// (canonical array-index keys first, ascending); the crate keeps insertion order.
pub fn has_reordered_index_keys(value: &Value) -> bool {
    any_node(
        value,
        &|v| matches!(v, Value::Object(map) if !map.keys().eq(js_key_order(map, false))),
    )
}

/// Divergence 5: a root string starting with U+FEFF, which 4.1.1 writes bare (and its decoder
/// then drops as a byte-order mark); the crate quotes it.
pub fn is_bom_root_string(value: &Value) -> bool {
    value.as_str().is_some_and(|s| s.starts_with('\u{feff}'))
}

/// Divergence 6: a fraction whose shortest round-trip decimal is not unique (a tie such as
/// -966622482470152.25): JavaScript picks one rule's digit, Rust's `{}` (the crate's
/// formatter) the other; both texts read back as the same double.
pub fn has_other_shortest_digits(value: &Value) -> bool {
    any_node(value, &|v| {
        let Value::Number(n) = v else { return false };
        let js = format_number(n);
        n.as_f64()
            .is_some_and(|f| f.fract() != 0.0 && !js.contains('e') && format!("{f}") != js)
    })
}

/// Returns true if `value` has the shape of a documented divergence.
pub fn known_divergence(value: &Value) -> bool {
    has_exponent_number(value)
        || has_unsafe_integer(value)
        || has_minus_two_pow_63(value)
        || has_reordered_index_keys(value)
        || is_bom_root_string(value)
        || has_other_shortest_digits(value)
}

/// serde_json equality plus equal key order and number representation.
fn identical(a: &Value, b: &Value) -> bool {
    a == b && serde_json::to_string(a).ok() == serde_json::to_string(b).ok()
}

fn fail(what: &str, text: &str, got: &Result<Value, String>, want: &Value) -> TestCaseError {
    TestCaseError::fail(format!("{what}:\n{text}\ngot {got:?}\nwant {want}"))
}

/// Values with at least one documented divergence in them.
fn divergent_value() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        3 => edge_number(),
        1 => Just(json!(-TWO_POW_63)),
        1 => (key(), primitive(), "(0|[1-9][0-9]{0,3})").prop_map(|(k, v, i)| json!({k: v, i: 1})),
    ];
    prop_oneof![
        4 => (value(), key(), leaf).prop_map(|(v, k, leaf)| json!({"v": v, k: leaf})),
        1 => text().prop_map(|s| Value::String(format!("\u{feff}{s}"))),
    ]
    .boxed()
}

proptest! {
    #![proptest_config(config(256, "proptest-regressions/test_toon_oracle.txt"))]

    /// Outside the documented divergences both encoders write the same bytes, and each
    /// decoder reads the other's text as the value pm's decoder reads from its own.
    #[test]
    fn codecs_agree_with_the_oracle(v in document()) {
        prop_assume!(!known_divergence(&v));
        let ours = encode(&v);
        let theirs = oracle_encode(&v).map_err(|e| TestCaseError::fail(format!("{e}: {v}")))?;
        prop_assert_eq!(&ours, &theirs, "value {}", v);
        let back = ours_decode(&ours).map_err(|e| TestCaseError::fail(format!("{e}\n{ours}")))?;
        let crossed = ours_decode(&theirs);
        if !crossed.as_ref().is_ok_and(|c| identical(c, &back)) {
            return Err(fail("pm decoding the crate's text", &theirs, &crossed, &back));
        }
        let crossed = oracle_decode(&ours);
        if !crossed.as_ref().is_ok_and(|c| identical(c, &back)) {
            return Err(fail("the crate decoding pm's text", &ours, &crossed, &back));
        }
    }

    /// On the divergent shapes (but -2^63 and BOM roots) the two texts still mean the same
    /// JavaScript value: each decoder reads the other's text as pm reads its own, up to
    /// number representation and key order.
    #[test]
    fn divergent_texts_read_as_the_same_values(v in divergent_value()) {
        prop_assume!(!has_minus_two_pow_63(&v) && !is_bom_root_string(&v));
        let ours = encode(&v);
        let theirs = oracle_encode(&v).map_err(|e| TestCaseError::fail(format!("{e}: {v}")))?;
        let back = ours_decode(&ours).map_err(|e| TestCaseError::fail(format!("{e}\n{ours}")))?;
        for (what, text, got) in [
            ("pm decoding the crate's text", &theirs, ours_decode(&theirs)),
            ("the crate decoding pm's text", &ours, oracle_decode(&ours)),
        ] {
            if !got.as_ref().is_ok_and(|g| json_equal(g, &back)) {
                return Err(fail(what, text, &got, &back));
            }
        }
    }
}

/// The documented divergences, byte for byte: (value, pm's text, the crate's text).
#[test]
fn known_divergences_are_as_documented() -> Result<(), Box<dyn Error>> {
    let cases = [
        (json!({"a": 1e21}), "a: 1e+21", "a: 1000000000000000000000"),
        (json!({"a": 1e-7}), "a: 1e-7", "a: 0.0000001"),
        (
            json!({"a": 9_007_199_254_740_993u64}),
            "a: 9007199254740992",
            "a: 9007199254740993",
        ),
        (
            json!({"a": u64::MAX}),
            "a: 18446744073709552000",
            "a: 18446744073709551615",
        ),
        (
            json!({"a": i64::MIN}),
            "a: -9223372036854776000",
            "a: -9223372036854775808",
        ),
        (json!({"b": 1, "0": 2}), "\"0\": 2\nb: 1", "b: 1\n\"0\": 2"),
        (json!("\u{feff}x"), "\u{feff}x", "\"\u{feff}x\""),
        (
            json!({"a": -966_622_482_470_152.2}), // exactly -966622482470152.25
            "a: -966622482470152.2",
            "a: -966622482470152.3",
        ),
    ];
    for (value, ours, theirs) in cases {
        assert!(
            known_divergence(&value),
            "{value} is not a known divergence"
        );
        assert_eq!(encode(&value), ours, "pm: {value}");
        assert_eq!(oracle_encode(&value)?, theirs, "crate: {value}");
    }
    // Decoding: literals past 2^53 are doubles for pm, 64-bit integers for the crate; the
    // literal JavaScript writes for -2^63 is a string for the crate; both drop a leading BOM.
    let big = "a: 9007199254740993";
    assert_eq!(ours_decode(big)?, json!({"a": 9_007_199_254_740_992.0}));
    assert_eq!(oracle_decode(big)?, json!({"a": 9_007_199_254_740_993u64}));
    let min = "a: -9223372036854776000";
    assert_eq!(ours_decode(min)?, json!({"a": -TWO_POW_63}));
    assert_eq!(oracle_decode(min)?, json!({"a": "-9223372036854776000"}));
    assert_eq!(ours_decode("\u{feff}x")?, json!("x"));
    assert_eq!(oracle_decode("\u{feff}x")?, json!("x"));
    Ok(())
}

/// Every item file of the real corpus (written by 4.1.1) decodes to the same value with both
/// codecs, and both re-encode that value to the file's bytes.
#[test]
fn corpus_items_agree_with_the_oracle() -> Result<(), Box<dyn Error>> {
    let corpus = pm_testkit::extract_corpus()?;
    let started = Instant::now();
    let files = crate::test_toon_corpus::toon_files(&corpus.path().join(".agents/pm"))?;
    for path in &files {
        let text = std::fs::read_to_string(path)?;
        let body = text.strip_suffix('\n').unwrap_or(&text);
        let ours = decode(body).map_err(|e| format!("{}: {e}", path.display()))?;
        let theirs = oracle_decode(body).map_err(|e| format!("{}: {e}", path.display()))?;
        assert!(
            identical(&ours, &theirs),
            "{}: the decoders disagree",
            path.display()
        );
        assert!(!known_divergence(&ours), "{}", path.display());
        assert!(encode(&ours) == body, "{}: pm re-encodes", path.display());
        assert!(
            oracle_encode(&theirs)? == body,
            "{}: the crate re-encodes differently",
            path.display()
        );
    }
    eprintln!(
        "oracle: {} corpus item files agree ({:?})",
        files.len(),
        started.elapsed()
    );
    assert_eq!(files.len(), 2536);
    Ok(())
}
