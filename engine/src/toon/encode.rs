//! The TOON encoder: `serde_json::Value` to the exact text `@toon-format/toon` 4.1.1
//! `encode(value)` produces with default options (indent 2, `,` delimiter, no key folding).
//! Item files are these bytes plus `\n`, so every rule here is byte-for-byte.

use super::quote::{write_key, write_primitive};
use super::shape::{Field, entries, is_primitive, keyed_fields, object_rows, tabular_fields};
use serde_json::{Map, Value};

/// Encodes `value` as TOON, without a trailing newline.
///
/// Forms, as in 4.1.1: `key: prim`; `key:` plus nested lines for objects (a bare `key:` when
/// empty); `key: []`; inline `key[N]: a,b` for primitive arrays; `key[N]{f1,g{c1},…}:` tables
/// for uniform object arrays (nested groups flatten uniform object columns); keyed tables
/// `key[N:]{…}:` for objects whose ≥ 2 values are uniform non-empty objects; `- [M]: …` items
/// for arrays of primitive arrays; and `- …` list items for everything else. Keys follow
/// JavaScript enumeration order; an empty root object encodes as the empty string.
pub fn encode(value: &Value) -> String {
    // Item files average about 7 KB; start big enough to avoid most regrowth.
    let mut out = String::with_capacity(4096);
    let mut w = Writer::new(&mut out, 0);
    match value {
        Value::Array(items) => w.array(None, items, 0),
        Value::Object(map) => match keyed_fields(map) {
            Some(fields) => w.keyed_object(None, map, &fields, 0),
            None => w.object_fields(entries(map), 0),
        },
        primitive => write_primitive(w.out, primitive),
    }
    out
}

/// Appends the lines `encode({key: value})` produces, each indented by `depth` extra levels
/// (the first line without a leading newline). Used by the output renderer for tables.
pub(crate) fn write_key_value_at(out: &mut String, key: &str, value: &Value, depth: usize) {
    Writer::new(out, depth).key_value(key, value, 0);
}

/// Appends the lines `encode(items)` produces for a root array, each indented by `depth`.
pub(crate) fn write_array_at(out: &mut String, items: &[Value], depth: usize) {
    Writer::new(out, depth).array(None, items, 0);
}

/// Writes lines into `out`, joined by `\n`, indented by `base + depth` levels.
struct Writer<'o> {
    out: &'o mut String,
    base: usize,
    started: bool,
}

impl<'o> Writer<'o> {
    fn new(out: &'o mut String, base: usize) -> Writer<'o> {
        Writer {
            out,
            base,
            started: false,
        }
    }

    /// Starts a new line at `depth`.
    fn line(&mut self, depth: usize) {
        if self.started {
            self.out.push('\n');
        }
        self.started = true;
        for _ in 0..(self.base + depth) {
            self.out.push_str("  ");
        }
    }

    /// Starts a new list-item line (`- `) at `depth`.
    fn item(&mut self, depth: usize) {
        self.line(depth);
        self.out.push_str("- ");
    }

    fn object_fields<'a>(
        &mut self,
        entries: impl Iterator<Item = (&'a String, &'a Value)>,
        depth: usize,
    ) {
        for (key, value) in entries {
            self.key_value(key, value, depth);
        }
    }

    fn key_value(&mut self, key: &str, value: &Value, depth: usize) {
        match value {
            Value::Array(items) => self.array(Some(key), items, depth),
            Value::Object(map) => {
                if let Some(fields) = keyed_fields(map) {
                    self.keyed_object(Some(key), map, &fields, depth);
                    return;
                }
                self.line(depth);
                write_key(self.out, key);
                self.out.push(':');
                self.object_fields(entries(map), depth + 1);
            }
            primitive => {
                self.line(depth);
                write_key(self.out, key);
                self.out.push_str(": ");
                write_primitive(self.out, primitive);
            }
        }
    }

    /// Writes `[key][N(:)]{fields}:`.
    fn header(&mut self, key: Option<&str>, len: usize, fields: Option<&[Field<'_>]>, keyed: bool) {
        if let Some(key) = key {
            write_key(self.out, key);
        }
        self.out.push('[');
        self.out.push_str(&len.to_string());
        if keyed {
            self.out.push(':');
        }
        self.out.push(']');
        if let Some(fields) = fields {
            self.out.push('{');
            write_field_list(self.out, fields);
            self.out.push('}');
        }
        self.out.push(':');
    }

    /// Writes the rest of an inline primitive array line: `[key][N]: a,b` (`[N]:` when empty).
    fn inline(&mut self, key: Option<&str>, items: &[Value]) {
        self.header(key, items.len(), None, false);
        for (i, v) in items.iter().enumerate() {
            self.out.push_str(if i == 0 { " " } else { "," });
            write_primitive(self.out, v);
        }
    }

    fn array(&mut self, key: Option<&str>, items: &[Value], depth: usize) {
        if items.is_empty() {
            self.line(depth);
            if let Some(key) = key {
                write_key(self.out, key);
                self.out.push_str(": []");
            } else {
                self.out.push_str("[]");
            }
            return;
        }
        if items.iter().all(is_primitive) {
            self.line(depth);
            self.inline(key, items);
            return;
        }
        let all_primitive_arrays = items.iter().all(|v| match v {
            Value::Array(inner) => inner.iter().all(is_primitive),
            _ => false,
        });
        if all_primitive_arrays {
            self.line(depth);
            self.header(key, items.len(), None, false);
            for v in items {
                if let Value::Array(inner) = v {
                    self.item(depth + 1);
                    self.inline(None, inner);
                }
            }
            return;
        }
        if let Some(rows) = object_rows(items)
            && let Some(fields) = tabular_fields(&rows)
        {
            self.line(depth);
            self.header(key, rows.len(), Some(&fields), false);
            for row in rows {
                self.line(depth + 1);
                write_row(self.out, row, &fields, &mut true);
            }
            return;
        }
        self.line(depth);
        self.header(key, items.len(), None, false);
        for v in items {
            self.list_item(v, depth + 1);
        }
    }

    fn keyed_object(
        &mut self,
        key: Option<&str>,
        map: &Map<String, Value>,
        fields: &[Field<'_>],
        depth: usize,
    ) {
        self.line(depth);
        self.header(key, map.len(), Some(fields), true);
        self.keyed_rows(map, fields, depth + 1);
    }

    fn keyed_rows(&mut self, map: &Map<String, Value>, fields: &[Field<'_>], depth: usize) {
        for (entry_key, entry) in entries(map) {
            self.line(depth);
            write_key(self.out, entry_key);
            self.out.push_str(": ");
            if let Value::Object(row) = entry {
                write_row(self.out, row, fields, &mut true);
            }
        }
    }

    fn list_item(&mut self, value: &Value, depth: usize) {
        match value {
            Value::Array(inner) => {
                self.item(depth);
                if inner.iter().all(is_primitive) {
                    self.inline(None, inner);
                } else {
                    self.header(None, inner.len(), None, false);
                    for v in inner {
                        self.list_item(v, depth + 1);
                    }
                }
            }
            Value::Object(map) => self.object_item(map, depth),
            primitive => {
                self.item(depth);
                write_primitive(self.out, primitive);
            }
        }
    }

    /// Writes an object as a list item: first field on the hyphen line, the rest one level
    /// deeper than the hyphen.
    fn object_item(&mut self, map: &Map<String, Value>, depth: usize) {
        let mut it = entries(map);
        let Some((key, value)) = it.next() else {
            self.line(depth);
            self.out.push('-');
            return;
        };
        match value {
            Value::Array(items) => {
                let table =
                    object_rows(items).and_then(|rows| tabular_fields(&rows).map(|f| (rows, f)));
                if let Some((rows, fields)) = table {
                    self.item(depth);
                    self.header(Some(key), rows.len(), Some(&fields), false);
                    for row in rows {
                        self.line(depth + 2);
                        write_row(self.out, row, &fields, &mut true);
                    }
                } else if items.is_empty() {
                    self.item(depth);
                    write_key(self.out, key);
                    self.out.push_str(": []");
                } else if items.iter().all(is_primitive) {
                    self.item(depth);
                    self.inline(Some(key), items);
                } else {
                    self.item(depth);
                    self.header(Some(key), items.len(), None, false);
                    for v in items {
                        self.list_item(v, depth + 2);
                    }
                }
            }
            Value::Object(inner) => {
                if let Some(fields) = keyed_fields(inner) {
                    self.item(depth);
                    self.header(Some(key), inner.len(), Some(&fields), true);
                    self.keyed_rows(inner, &fields, depth + 2);
                } else {
                    self.item(depth);
                    write_key(self.out, key);
                    self.out.push(':');
                    self.object_fields(entries(inner), depth + 2);
                }
            }
            primitive => {
                self.item(depth);
                write_key(self.out, key);
                self.out.push_str(": ");
                write_primitive(self.out, primitive);
            }
        }
        self.object_fields(it, depth + 1);
    }
}

fn write_field_list(out: &mut String, fields: &[Field<'_>]) {
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_key(out, field.name);
        if let Some(children) = &field.children {
            out.push('{');
            write_field_list(out, children);
            out.push('}');
        }
    }
}

/// Writes a row's leaf cells in field order, comma-separated.
fn write_row(out: &mut String, row: &Map<String, Value>, fields: &[Field<'_>], first: &mut bool) {
    let aligned = row.len() == fields.len() && row.keys().zip(fields).all(|(k, f)| k == f.name);
    if aligned {
        for (field, value) in fields.iter().zip(row.values()) {
            write_cell(out, field, Some(value), first);
        }
    } else {
        for field in fields {
            write_cell(out, field, row.get(field.name), first);
        }
    }
}

fn write_cell(out: &mut String, field: &Field<'_>, value: Option<&Value>, first: &mut bool) {
    match (&field.children, value) {
        (Some(children), Some(Value::Object(inner))) => write_row(out, inner, children, first),
        (_, value) => {
            if !*first {
                out.push(',');
            }
            *first = false;
            write_primitive(out, value.unwrap_or(&Value::Null));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn object_forms() {
        let v = json!({
            "id": "pm-t73k",
            "empty": {},
            "none": [],
            "tags": ["area:ci", "x"],
            "nested": {"a": 1, "b": {"c": true}},
            "odd key": 1,
            "2": "index key first"
        });
        assert_eq!(
            encode(&v),
            "\"2\": index key first\nid: pm-t73k\nempty:\nnone: []\ntags[2]: \"area:ci\",x\nnested:\n  a: 1\n  b:\n    c: true\n\"odd key\": 1"
        );
        assert_eq!(encode(&json!({})), "");
    }

    #[test]
    fn tables_groups_and_keyed() {
        let v = json!({"deps": [
            {"id": "a", "data": {"type": "t", "n": 1}, "k": null},
            {"id": "b", "data": {"n": 2, "type": "u"}, "k": "x y"}
        ]});
        assert_eq!(
            encode(&v),
            "deps[2]{id,data{type,n},k}:\n  a,t,1,null\n  b,u,2,x y"
        );
        let keyed = json!({"m": {"x": {"a": 1, "b": 2}, "y": {"b": 4, "a": 3}}});
        assert_eq!(encode(&keyed), "m[2:]{a,b}:\n  x: 1,2\n  y: 3,4");
        let single = json!({"m": {"x": {"a": 1}}});
        assert_eq!(encode(&single), "m:\n  x:\n    a: 1");
    }

    #[test]
    fn list_forms() {
        let v = json!({"deps": [
            {"id": "a", "kind": "parent"},
            {"id": "b"},
            {},
            "s",
            [1, 2],
            [{"q": 1}],
            {"rows": [{"a": 1}, {"a": 2}], "z": 1},
            {"t": [1], "u": {"v": 1}},
            {"e": [], "o": {}},
            {"l": [[1], {"w": 1}]}
        ]});
        let expected = "deps[10]:\n  - id: a\n    kind: parent\n  - id: b\n  -\n  - s\n  - [2]: 1,2\n  - [1]:\n    - q: 1\n  - rows[2]{a}:\n      1\n      2\n    z: 1\n  - t[1]: 1\n    u:\n      v: 1\n  - e: []\n    o:\n  - l[2]:\n      - [1]: 1\n      - w: 1";
        assert_eq!(encode(&v), expected);
        let aoa = json!({"m": [[1, "a"], []]});
        assert_eq!(encode(&aoa), "m[2]:\n  - [2]: 1,a\n  - [0]:");
        assert_eq!(encode(&json!([])), "[]");
        assert_eq!(encode(&json!([{"a": 1}])), "[1]{a}:\n  1");
    }
}
