//! The TOON encoder: `serde_json::Value` to the exact text `@toon-format/toon` 4.1.1
//! `encode(value)` produces with default options (indent 2, `,` delimiter, no key folding).
//! Item files are these bytes plus `\n`, so every rule here is byte-for-byte.

use super::token::skip_plain;
use crate::json::{format_number, is_array_index, js_key_order};
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
    let mut out = String::with_capacity(256);
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

/// Iterates an object's entries in JavaScript enumeration order (array-index keys first).
pub(crate) enum Entries<'a> {
    Plain(serde_json::map::Iter<'a>),
    Ordered(std::vec::IntoIter<&'a String>, &'a Map<String, Value>),
}

impl<'a> Iterator for Entries<'a> {
    type Item = (&'a String, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Entries::Plain(it) => it.next(),
            Entries::Ordered(keys, map) => {
                let key = keys.next()?;
                map.get_key_value(key.as_str())
            }
        }
    }
}

/// Returns the entries of `map` in JavaScript enumeration order.
pub(crate) fn entries(map: &Map<String, Value>) -> Entries<'_> {
    if map.keys().any(|k| is_array_index(k)) {
        Entries::Ordered(js_key_order(map, false).into_iter(), map)
    } else {
        Entries::Plain(map.iter())
    }
}

fn is_primitive(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

/// One column of a table; a nested group has children.
struct Field<'a> {
    name: &'a str,
    children: Option<Vec<Field<'a>>>,
}

/// Returns the table columns when every row has the same key set and every column is either
/// all primitives or all non-empty objects that are themselves uniformly tabular.
fn tabular_fields<'a>(rows: &[&'a Map<String, Value>]) -> Option<Vec<Field<'a>>> {
    let first = rows.first()?;
    if first.is_empty() {
        return None;
    }
    // Rows whose keys come in exactly the first row's order (the usual case) are compared by
    // position; others by lookup. Index-like keys reorder enumeration, so they take lookups.
    let mut aligned = !first.keys().any(|k| is_array_index(k));
    for row in &rows[1..] {
        if row.len() != first.len() {
            return None;
        }
        if aligned && row.keys().eq(first.keys()) {
            continue;
        }
        aligned = false;
        if !first.keys().all(|k| row.contains_key(k)) {
            return None;
        }
    }
    let mut primitive = vec![true; first.len()];
    if aligned {
        for row in rows {
            for (flag, value) in primitive.iter_mut().zip(row.values()) {
                *flag &= is_primitive(value);
            }
        }
    } else {
        for (flag, (name, _)) in primitive.iter_mut().zip(entries(first)) {
            *flag = rows
                .iter()
                .all(|row| row.get(name).is_some_and(is_primitive));
        }
    }
    let mut fields = Vec::with_capacity(first.len());
    for ((name, _), is_primitive_column) in entries(first).zip(primitive) {
        if is_primitive_column {
            fields.push(Field {
                name,
                children: None,
            });
            continue;
        }
        let mut column: Vec<&'a Map<String, Value>> = Vec::with_capacity(rows.len());
        for row in rows {
            match row.get(name) {
                Some(Value::Object(m)) if !m.is_empty() => column.push(m),
                _ => return None,
            }
        }
        let children = tabular_fields(&column)?;
        fields.push(Field {
            name,
            children: Some(children),
        });
    }
    Some(fields)
}

/// Collects the rows of an array when every element is an object.
fn object_rows(items: &[Value]) -> Option<Vec<&Map<String, Value>>> {
    items
        .iter()
        .map(|v| match v {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .collect()
}

/// Returns the table columns for a keyed table: at least two values, all non-empty objects,
/// uniformly tabular.
fn keyed_fields(map: &Map<String, Value>) -> Option<Vec<Field<'_>>> {
    if map.len() < 2 {
        return None;
    }
    let mut rows = Vec::with_capacity(map.len());
    for (_, v) in entries(map) {
        match v {
            Value::Object(m) if !m.is_empty() => rows.push(m),
            _ => return None,
        }
    }
    tabular_fields(&rows)
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

/// Writes a primitive (`null`, booleans, JavaScript-formatted numbers, TOON strings).
fn write_primitive(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&format_number(n)),
        Value::String(s) => write_string(out, s),
        // Containers never reach here; 4.1.1 would not call the primitive path for them.
        Value::Array(_) | Value::Object(_) => out.push_str("null"),
    }
}

/// Writes a key bare when it matches `^[A-Za-z_][A-Za-z0-9_.]*$`, else quoted.
fn write_key(out: &mut String, key: &str) {
    let b = key.as_bytes();
    let bare = b
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.');
    if bare {
        out.push_str(key);
    } else {
        write_quoted(out, key);
    }
}

/// Writes a string value bare when 4.1.1 considers it safe, else quoted and escaped.
pub(crate) fn write_string(out: &mut String, s: &str) {
    if is_safe_unquoted(s) {
        out.push_str(s);
    } else {
        write_quoted(out, s);
    }
}

/// The quoting test of 4.1.1 for the comma delimiter.
fn is_safe_unquoted(s: &str) -> bool {
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return false;
    };
    if matches!(first, b' ' | b'\t' | b'-' | b'#') || matches!(last, b' ' | b'\t') {
        return false;
    }
    if matches!(s, "true" | "false" | "null") || is_numeric_like(b) {
        return false;
    }
    skip_plain(b, 0, needs_quotes) == b.len()
}

#[inline(always)]
fn needs_quotes(c: u8) -> bool {
    (c < 0x20)
        | (c == b':')
        | (c == b'"')
        | (c == b'\\')
        | (c == b'[')
        | (c == b']')
        | (c == b'{')
        | (c == b'}')
        | (c == b',')
}

/// Matches `^[+-]?\d+(\.\d+)?(e[+-]?\d+)?$` (case-insensitive).
fn is_numeric_like(b: &[u8]) -> bool {
    let digits = |mut i: usize| {
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > start).then_some(i)
    };
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let Some(end) = digits(i) else { return false };
    i = end;
    if b.get(i) == Some(&b'.') {
        let Some(end) = digits(i + 1) else {
            return false;
        };
        i = end;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let Some(end) = digits(i) else { return false };
        i = end;
    }
    i == b.len()
}

/// Writes `"…"` with the TOON escapes: `\\ \" \n \r \t`, other C0 controls as `\u00xx`.
fn write_quoted(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(s.len() + 2);
    out.push('"');
    let b = s.as_bytes();
    let mut plain = 0;
    loop {
        let i = skip_plain(b, plain, |c| (c < 0x20) | (c == b'"') | (c == b'\\'));
        out.push_str(&s[plain..i]);
        let Some(&c) = b.get(i) else { break };
        match c {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            _ => {
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(c >> 4)]));
                out.push(char::from(HEX[usize::from(c & 0xF)]));
            }
        }
        plain = i + 1;
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn primitives_and_quoting() {
        let cases = [
            (json!("plain text"), "plain text"),
            (json!(""), "\"\""),
            (json!(" lead"), "\" lead\""),
            (json!("trail\t"), "\"trail\\t\""),
            (json!("true"), "\"true\""),
            (json!("1e5"), "\"1e5\""),
            (json!("05"), "\"05\""),
            (json!("+3.5"), "\"+3.5\""),
            (json!("1.5x"), "1.5x"),
            (json!("a:b"), "\"a:b\""),
            (json!("a,b"), "\"a,b\""),
            (json!("-x"), "\"-x\""),
            (json!("#x"), "\"#x\""),
            (json!("a#x"), "a#x"),
            (json!("q\"\\"), "\"q\\\"\\\\\""),
            (json!("\u{1}\u{1f}\u{7f}é"), "\"\\u0001\\u001f\u{7f}é\""),
            (json!(-0.0), "0"),
            (json!(1e21), "1e+21"),
            (json!(0.1), "0.1"),
            (json!(null), "null"),
            (json!(false), "false"),
        ];
        for (value, expected) in cases {
            assert_eq!(encode(&value), expected, "{value}");
        }
    }

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
