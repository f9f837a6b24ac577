//! Property tests of the TOON codec: for random JSON values shaped like pm items,
//! `decode(encode(v)) == v` and `encode(decode(encode(v))) == encode(v)`.

use pm_engine::json::number_from_f64;
use pm_engine::toon::{decode, encode};
use proptest::prelude::*;
use serde_json::{Map, Value};

use crate::toon_values::{key, text, uniform_rows_of};

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-9_007_199_254_740_991i64..=9_007_199_254_740_991).prop_map(Value::from),
        (-1000i64..1000).prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| number_from_f64(f).map_or(Value::Null, Value::Number)),
        prop::sample::select(vec![
            0.1,
            1.5,
            -2.25,
            1e21,
            1e-7,
            123456789012345680000.0,
            -0.0
        ])
        .prop_map(|f| number_from_f64(f).map_or(Value::Null, Value::Number)),
    ]
}

fn primitive() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => text().prop_map(Value::String),
        2 => number(),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => Just(Value::Null),
    ]
}

/// Arrays of objects sharing one key set (so the encoder picks a table), with pm-normalized
/// number cells.
fn uniform_rows() -> BoxedStrategy<Value> {
    uniform_rows_of(primitive().boxed())
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        4 => primitive(),
        1 => prop::collection::vec(primitive(), 0..5).prop_map(Value::Array),
        1 => uniform_rows(),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            2 => prop::collection::vec((key(), inner.clone()), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            1 => prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            1 => prop::collection::vec(prop::collection::vec(primitive(), 0..4).prop_map(Value::Array), 1..4)
                .prop_map(Value::Array),
        ]
    })
}

/// Item-like documents: an object root with a few ordinary fields and a body.
fn item() -> impl Strategy<Value = Value> {
    (
        text(),
        prop::collection::vec(text(), 0..4),
        prop::collection::vec((key(), value()), 0..8),
        text(),
    )
        .prop_map(|(title, tags, extra, body)| {
            let mut m = Map::new();
            m.insert("id".into(), Value::from("pm-a1b2"));
            m.insert("title".into(), Value::from(title));
            m.insert(
                "tags".into(),
                Value::Array(tags.into_iter().map(Value::from).collect()),
            );
            for (k, v) in extra {
                m.insert(k, v);
            }
            m.insert("body".into(), Value::from(body));
            Value::Object(m)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn decode_inverts_encode(v in value()) {
        // A root string that starts with a byte-order mark is written bare, as pm-cli writes
        // it, and reads back without it (a documented divergence, docs/compatibility.md).
        prop_assume!(!v.as_str().is_some_and(|s| s.starts_with('\u{feff}')));
        let text = encode(&v);
        let back = decode(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&back, &v, "text:\n{}", text);
        prop_assert_eq!(encode(&back), text);
    }

    #[test]
    fn items_round_trip(v in item()) {
        let text = encode(&v);
        let back = decode(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&back, &v, "text:\n{}", text);
        prop_assert_eq!(encode(&back), text);
    }

    /// Arbitrary TOON-ish text never panics, and whatever decodes re-encodes to a fixed point.
    #[test]
    fn decoded_text_reaches_a_fixed_point(s in "(([ -]{0,4})([a-z\"\\[\\]{}:,#|\\\\ -]|[0-9]){0,12}\n?){0,8}") {
        if let Ok(v) = decode(&s) {
            let text = encode(&v);
            let back = decode(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            prop_assert_eq!(&back, &v, "text:\n{}", text);
        }
    }
}
