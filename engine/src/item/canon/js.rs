//! JavaScript value semantics that canonicalization must reproduce exactly: the `trim` whitespace
//! set, truthiness, `String(v)`, `Number(s)` and number predicates. Nothing here allocates for
//! the common ASCII case.

use serde_json::{Number, Value};

pub use crate::schema::token::is_js_whitespace;

/// Returns `s.trim()` with JavaScript's whitespace set.
pub fn trim(s: &str) -> &str {
    crate::schema::token::js_trim(s)
}

/// Returns `s.trimEnd()` with JavaScript's whitespace set.
pub fn trim_end(s: &str) -> &str {
    s.trim_end_matches(is_js_whitespace)
}

/// Returns `s.trimStart()` with JavaScript's whitespace set.
pub fn trim_start(s: &str) -> &str {
    s.trim_start_matches(is_js_whitespace)
}

/// Returns `s.toLowerCase()` (Unicode default case mapping, locale-independent).
pub fn lowercase(s: &str) -> String {
    if s.bytes().all(|b| !b.is_ascii_uppercase() && b.is_ascii()) {
        return s.to_string();
    }
    s.to_lowercase()
}

/// Returns the trimmed string when `v` is a string with non-whitespace content
/// (pm's `trimStringOrUndefined`).
pub fn trimmed_non_empty(v: &Value) -> Option<&str> {
    let t = trim(v.as_str()?);
    (!t.is_empty()).then_some(t)
}

/// Returns the trimmed string value when `v` is a string with non-whitespace content, reusing
/// the allocation when nothing is trimmed.
pub fn trimmed_owned(v: Value) -> Option<Value> {
    let Value::String(s) = v else {
        return None;
    };
    let t = trim(&s);
    if t.is_empty() {
        None
    } else if t.len() == s.len() {
        Some(Value::String(s))
    } else {
        Some(Value::String(t.to_string()))
    }
}

/// Removes `key` from `map` and returns its trimmed, non-empty string value.
pub fn take_trimmed(map: &mut serde_json::Map<String, Value>, key: &str) -> Option<Value> {
    map.remove(key).and_then(trimmed_owned)
}

/// Returns JavaScript truthiness of a JSON value (`""`, `0`, `NaN`, `false` and `null` are falsy).
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// Returns the numeric value of a JSON number.
pub fn number(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// Returns the value of a finite JSON number (`typeof v === "number" && Number.isFinite(v)`).
pub fn finite_number(v: &Value) -> Option<f64> {
    number(v).filter(|f| f.is_finite())
}

/// Returns true if `v` is a number with an integral value (`Number.isInteger`).
pub fn is_integer(v: &Value) -> bool {
    finite_number(v).is_some_and(|f| f.fract() == 0.0)
}

/// Builds a JSON number from an `f64` the way JavaScript holds it (integral values as integers).
pub fn to_value(f: f64) -> Value {
    crate::json::number_from_f64(f).map_or(Value::Null, Value::Number)
}

/// Returns `Math.floor(v)` for a finite number `v >= min` (pm's `normalizeNonNegativeInteger`
/// with `min = 0`, `normalizePositiveInteger` with `min = 1`).
pub fn floored_at_least(v: &Value, min: f64) -> Option<Value> {
    let f = finite_number(v)?;
    (f >= min).then(|| to_value(f.floor()))
}

/// Returns `String(v)` for a JSON value.
pub fn to_js_string(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => crate::json::format_number(n),
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::Null => String::new(),
                other => to_js_string(other),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".to_string(),
    }
}

/// Returns `Number(s)` for a string: trimmed decimal, `Infinity`, or `0x`/`0o`/`0b` integers;
/// the empty string is 0 and anything else is `NaN`.
pub fn string_to_number(s: &str) -> f64 {
    let t = trim(s);
    if t.is_empty() {
        return 0.0;
    }
    let (sign, unsigned) = match t.as_bytes()[0] {
        b'-' => (-1.0, &t[1..]),
        b'+' => (1.0, &t[1..]),
        _ => (1.0, t),
    };
    if unsigned == "Infinity" {
        return sign * f64::INFINITY;
    }
    if unsigned.len() > 2
        && unsigned.as_bytes()[0] == b'0'
        && sign > 0.0
        && unsigned.len() == t.len()
    {
        let radix = match unsigned.as_bytes()[1] {
            b'x' | b'X' => 16,
            b'o' | b'O' => 8,
            b'b' | b'B' => 2,
            _ => 0,
        };
        if radix != 0 {
            return radix_integer(&unsigned[2..], radix);
        }
    }
    if is_decimal_literal(unsigned) {
        return unsigned.parse::<f64>().map_or(f64::NAN, |f| sign * f);
    }
    f64::NAN
}

fn radix_integer(digits: &str, radix: u32) -> f64 {
    if digits.is_empty() {
        return f64::NAN;
    }
    let mut acc = 0.0f64;
    for c in digits.chars() {
        match c.to_digit(radix) {
            Some(d) => acc = acc * f64::from(radix) + f64::from(d),
            None => return f64::NAN,
        }
    }
    acc
}

/// `StrUnsignedDecimalLiteral`: digits with an optional fraction and exponent.
fn is_decimal_literal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - frac_start;
    }
    if digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let exp_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return false;
        }
    }
    i == b.len()
}

/// Array length from which V8's TimSort stops being a single binary insertion sort.
const V8_MIN_MERGE: usize = 64;

/// Sorts `v` like JavaScript's `Array.prototype.sort(cmp)` in V8: stable, and never panics even
/// when `cmp` is not a consistent order (pm's timestamp comparator is not, for mixed inputs).
///
/// Below 64 elements this is V8's exact procedure (leading run detection, then binary
/// insertion), so even an inconsistent comparator gives JavaScript's order; longer arrays use a
/// stable merge sort, which agrees with V8 whenever the comparator is consistent.
pub fn sort_by<T>(v: &mut Vec<T>, mut cmp: impl FnMut(&T, &T) -> std::cmp::Ordering) {
    let n = v.len();
    if n < 2 {
        return;
    }
    if n < V8_MIN_MERGE {
        let run = count_and_make_run(v, &mut cmp);
        binary_insertion_sort(v, run, &mut cmp);
        return;
    }
    let mut order: Vec<usize> = (0..n).collect();
    let mut scratch = vec![0usize; n];
    let mut width = 1;
    while width < n {
        let mut start = 0;
        while start < n {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut i, mut j, mut k) = (start, mid, start);
            while i < mid && j < end {
                if cmp(&v[order[j]], &v[order[i]]).is_lt() {
                    scratch[k] = order[j];
                    j += 1;
                } else {
                    scratch[k] = order[i];
                    i += 1;
                }
                k += 1;
            }
            scratch[k..k + (mid - i)].copy_from_slice(&order[i..mid]);
            k += mid - i;
            scratch[k..k + (end - j)].copy_from_slice(&order[j..end]);
            start = end;
        }
        std::mem::swap(&mut order, &mut scratch);
        width *= 2;
    }
    let mut slots: Vec<Option<T>> = v.drain(..).map(Some).collect();
    v.extend(
        order
            .into_iter()
            .map(|i| slots[i].take().expect("a permutation takes each slot once")),
    );
}

/// V8's `CountAndMakeRun` from index 0: the length of the leading run, reversed in place when
/// strictly descending.
fn count_and_make_run<T>(v: &mut [T], cmp: &mut impl FnMut(&T, &T) -> std::cmp::Ordering) -> usize {
    if v.len() < 2 {
        return v.len();
    }
    let descending = cmp(&v[1], &v[0]).is_lt();
    let mut run = 2;
    while run < v.len() {
        let order = cmp(&v[run], &v[run - 1]);
        if (descending && order.is_ge()) || (!descending && order.is_lt()) {
            break;
        }
        run += 1;
    }
    if descending {
        v[..run].reverse();
    }
    run
}

/// V8's `BinaryInsertionSort` over the whole slice, the first `sorted` elements being a run.
fn binary_insertion_sort<T>(
    v: &mut [T],
    sorted: usize,
    cmp: &mut impl FnMut(&T, &T) -> std::cmp::Ordering,
) {
    for start in sorted.max(1)..v.len() {
        let (mut left, mut right) = (0, start);
        while left < right {
            let mid = left + ((right - left) >> 1);
            if cmp(&v[start], &v[mid]).is_lt() {
                right = mid;
            } else {
                left = mid + 1;
            }
        }
        v[left..=start].rotate_right(1);
    }
}

/// Rewrites every number in `v` into the form JavaScript would hold after `JSON.parse`: an
/// `f64`, stored as an integer when integral and safe. Used on JSON parsed by serde_json so
/// that `1.0` and `1` compare and print alike.
pub fn normalize_numbers(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if n.is_f64()
                && let Some(f) = n.as_f64()
            {
                *n = crate::json::number_from_f64(f).unwrap_or_else(|| Number::from(0));
            } else if let Some(u) = n.as_u64()
                && u > (1u64 << 53)
            {
                *n = crate::json::number_from_f64(u as f64).unwrap_or_else(|| Number::from(0));
            } else if let Some(i) = n.as_i64()
                && i < -(1i64 << 53)
            {
                *n = crate::json::number_from_f64(i as f64).unwrap_or_else(|| Number::from(0));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize_numbers),
        Value::Object(map) => map.values_mut().for_each(normalize_numbers),
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

/// Compares two JSON values for deep equality with JavaScript number semantics (`1` equals
/// `1.0`) and key order ignored, as pm's round-trip guard does.
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(l, r)| deep_equal(l, r))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, l)| y.get(k).is_some_and(|r| deep_equal(l, r)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn trim_uses_the_javascript_whitespace_set() {
        assert_eq!(trim("\u{FEFF}\u{A0} a \u{2029}\u{3000}"), "a");
        // U+0085 (NEL) is whitespace for Rust but not for JavaScript.
        assert_eq!(trim("\u{85}a\u{85}"), "\u{85}a\u{85}");
        assert_eq!(trim_end("x \t\n\u{B}\u{C}\r"), "x");
        assert_eq!(trim_start("\u{200A}x "), "x ");
    }

    #[test]
    fn lowercase_is_unicode_default() {
        assert_eq!(lowercase("Area:CI"), "area:ci");
        assert_eq!(lowercase("ÉTÉ"), "été");
        assert_eq!(lowercase("İ"), "i\u{307}");
    }

    #[test]
    fn truthiness_matches_javascript() {
        for falsy in [json!(null), json!(false), json!(0), json!(0.0), json!("")] {
            assert!(!truthy(&falsy), "{falsy}");
        }
        for t in [json!(" "), json!(1), json!([]), json!({}), json!(true)] {
            assert!(truthy(&t), "{t}");
        }
    }

    #[test]
    fn string_and_number_conversions() {
        assert_eq!(to_js_string(&json!(1.5)), "1.5");
        assert_eq!(to_js_string(&json!(true)), "true");
        assert_eq!(to_js_string(&json!([1, null, "a"])), "1,,a");
        assert_eq!(to_js_string(&json!({"a": 1})), "[object Object]");
        assert_eq!(string_to_number(" 12 "), 12.0);
        assert_eq!(string_to_number(""), 0.0);
        assert_eq!(string_to_number("1e3"), 1000.0);
        assert_eq!(string_to_number(".5"), 0.5);
        assert_eq!(string_to_number("0x1f"), 31.0);
        assert_eq!(string_to_number("-Infinity"), f64::NEG_INFINITY);
        assert!(string_to_number("1a").is_nan());
        assert!(string_to_number("-0x1").is_nan());
        assert!(string_to_number("e5").is_nan());
    }

    #[test]
    fn numbers_normalize_like_json_parse() {
        let mut v: Value =
            serde_json::from_str(r#"{"a":1.0,"b":[2.5,-0.0],"c":18014398509481985}"#)
                .expect("valid json");
        normalize_numbers(&mut v);
        assert_eq!(
            crate::json::to_compact(&v),
            r#"{"a":1,"b":[2.5,0],"c":18014398509481984}"#
        );
        assert!(deep_equal(
            &json!({"x": 1, "y": [1.0]}),
            &json!({"y": [1], "x": 1.0})
        ));
        assert!(!deep_equal(&json!({"x": 1}), &json!({"x": "1"})));
    }

    #[test]
    fn sort_is_stable_and_tolerates_inconsistent_comparators() {
        for n in [0, 1, 2, 5, 63, 64, 65, 200] {
            let mut v: Vec<(u32, usize)> = (0..n).map(|i| ((i as u32 * 7919) % 13, i)).collect();
            let mut expected = v.clone();
            expected.sort_by_key(|p| p.0);
            sort_by(&mut v, |a, b| a.0.cmp(&b.0));
            assert_eq!(v, expected, "n = {n}");
        }
        let mut desc: Vec<u32> = (0..10).rev().collect();
        sort_by(&mut desc, |a, b| a.cmp(b));
        assert_eq!(desc, (0..10).collect::<Vec<_>>());
        // Rock-paper-scissors: not an order at all. JavaScript does not throw, neither may we.
        let beats = |a: &u8, b: &u8| match (a, b) {
            (0, 1) | (1, 2) | (2, 0) => std::cmp::Ordering::Less,
            (x, y) if x == y => std::cmp::Ordering::Equal,
            _ => std::cmp::Ordering::Greater,
        };
        for n in [3, 70, 300] {
            let mut v: Vec<u8> = (0..n).map(|i| (i % 3) as u8).collect();
            sort_by(&mut v, beats);
            assert_eq!(v.len(), n);
        }
    }

    #[test]
    fn floors_and_integers() {
        assert_eq!(floored_at_least(&json!(2.7), 0.0), Some(json!(2)));
        assert_eq!(floored_at_least(&json!(-1), 0.0), None);
        assert_eq!(floored_at_least(&json!(0.5), 1.0), None);
        assert!(is_integer(&json!(3.0)));
        assert!(!is_integer(&json!(3.5)));
        assert!(!is_integer(&json!("3")));
    }
}
