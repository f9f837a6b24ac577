//! Token measurement of printed output: `ceil(utf8_bytes / 4)` of exactly the text the renderer
//! prints (indentation and final newline included). Fitting results to a budget is `read_output`'s.

use serde_json::Value;

use super::{Format, encoded_len};

/// The estimator every receipt names.
pub const ESTIMATOR: &str = "ceil(utf8_bytes / 4)";

/// Returns the token estimate of `bytes` printed bytes: `ceil(bytes / 4)`.
pub fn tokens_for_bytes(bytes: usize) -> u64 {
    u64::try_from(bytes.div_ceil(4)).unwrap_or(u64::MAX)
}

/// The printed size of a root object put together from its entries: in both encodings a
/// root entry prints the same wherever it stands (JSON: `"key": value` lines joined by commas;
/// TOON: its lines, joined by newlines, and nothing when compaction drops it), so entries
/// measured once can be added to entries measured later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RootSize {
    format: Format,
    /// Entries that print (TOON drops nulls and empty collections).
    printed: usize,
    /// Their bytes, separators not counted.
    bytes: usize,
}

impl RootSize {
    /// Measures `entries` (key/value pairs of one root object).
    pub fn of<'a>(
        entries: impl IntoIterator<Item = (&'a String, &'a mut Value)>,
        format: Format,
    ) -> Self {
        RootSize {
            format,
            printed: 0,
            bytes: 0,
        }
        .plus(entries, format)
    }

    /// Adds the size of more `entries` of the same root object. A TOON entry is measured as
    /// a one-entry object: its value moves there and back, it is not copied.
    pub fn plus<'a>(
        mut self,
        entries: impl IntoIterator<Item = (&'a String, &'a mut Value)>,
        format: Format,
    ) -> Self {
        debug_assert_eq!(self.format, format);
        for (key, value) in entries {
            match format {
                Format::Json => {
                    self.printed += 1;
                    self.bytes += super::json::root_entry_len(key, value);
                }
                Format::Toon => {
                    let single: serde_json::Map<String, Value> =
                        std::iter::once((key.clone(), std::mem::take(value))).collect();
                    let single = Value::Object(single);
                    let text = super::toon::encode(&single);
                    if let Value::Object(mut single) = single {
                        *value = single.remove(key).unwrap_or_default();
                    }
                    if text != "{}\n" {
                        self.printed += 1;
                        self.bytes += text.len().saturating_sub(1);
                    }
                }
            }
        }
        self
    }

    /// Returns the bytes the whole root object prints, final newline included.
    pub fn bytes(self) -> usize {
        match (self.format, self.printed) {
            (_, 0) => 3,
            (Format::Json, n) => self.bytes + n + 3,
            (Format::Toon, n) => self.bytes + n,
        }
    }

    /// Returns the token estimate of the printed object.
    pub fn tokens(self) -> u64 {
        tokens_for_bytes(self.bytes())
    }
}

/// Returns the token estimate of `value` as the renderer prints it in `format`.
pub fn measure(value: &Value, format: Format) -> u64 {
    tokens_for_bytes(encoded_len(value, format))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::encode;
    use serde_json::json;

    #[test]
    fn estimate_counts_the_printed_bytes() {
        let value = json!({"a": "é"});
        // JSON: `{\n  "a": "é"\n}\n` = 16 bytes (é is two) → 4 tokens.
        assert_eq!(encode(&value, Format::Json).len(), 16);
        assert_eq!(measure(&value, Format::Json), 4);
        // TOON: `a: "é"\n` = 8 bytes → 2 tokens.
        assert_eq!(measure(&value, Format::Toon), 2);
        assert_eq!(tokens_for_bytes(0), 0);
        assert_eq!(tokens_for_bytes(5), 2);
    }

    #[test]
    fn root_sizes_add_up_to_the_printed_bytes() {
        let samples = [
            json!({}),
            json!({"a": null, "b": []}),
            json!({"items": [{"id": "pm-1", "t": null}, {"id": "pm-2", "t": "x"}], "count": 2,
                "next_cursor": null, "filters": {"runtime_filters": {}}, "10": true,
                "omission_receipt": {"omitted_field_groups": []}, "tags": ["a", "b:c"],
                "nested": [[1, 2], {"a": {"b": "é"}}], "empty": {}}),
        ];
        for value in samples {
            let Value::Object(map) = &value else { continue };
            for format in [Format::Json, Format::Toon] {
                let mut map = map.clone();
                let (head, tail) = map
                    .iter_mut()
                    .partition::<Vec<_>, _>(|(k, _)| k.len() % 2 == 0);
                let size = RootSize::of(head, format).plus(tail, format);
                assert_eq!(
                    size.bytes(),
                    encode(&value, format).len(),
                    "{format:?} {value}"
                );
                assert_eq!(Value::Object(map), value, "the entries are given back");
            }
        }
    }
}
