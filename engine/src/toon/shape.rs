//! Shape analysis for the encoder: JavaScript key order, and whether arrays and objects can be
//! written as tables (uniform rows, nested column groups) or keyed tables, as 4.1.1 decides.

use crate::json::{is_array_index, js_key_order};
use serde_json::{Map, Value};

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

pub(super) fn is_primitive(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

/// One column of a table; a nested group has children.
pub(super) struct Field<'a> {
    pub name: &'a str,
    pub children: Option<Vec<Field<'a>>>,
}

/// Returns the table columns when every row has the same key set and every column is either
/// all primitives or all non-empty objects that are themselves uniformly tabular.
pub(super) fn tabular_fields<'a>(rows: &[&'a Map<String, Value>]) -> Option<Vec<Field<'a>>> {
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
pub(super) fn object_rows(items: &[Value]) -> Option<Vec<&Map<String, Value>>> {
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
pub(super) fn keyed_fields(map: &Map<String, Value>) -> Option<Vec<Field<'_>>> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rows(v: &Value) -> Vec<&Map<String, Value>> {
        v.as_array()
            .map(|a| a.iter().filter_map(Value::as_object).collect())
            .unwrap_or_default()
    }

    fn names(fields: &[Field<'_>]) -> String {
        let parts: Vec<String> = fields
            .iter()
            .map(|f| match &f.children {
                Some(c) => format!("{}{{{}}}", f.name, names(c)),
                None => f.name.to_string(),
            })
            .collect();
        parts.join(",")
    }

    #[test]
    fn tabular_shapes() {
        let same = json!([{"a": 1, "b": {"x": 1}}, {"b": {"x": 2}, "a": 2}]);
        assert_eq!(
            tabular_fields(&rows(&same)).map(|f| names(&f)),
            Some("a,b{x}".to_string())
        );
        let mixed_column = json!([{"a": 1}, {"a": {"x": 1}}]);
        assert!(tabular_fields(&rows(&mixed_column)).is_none());
        let empty_object = json!([{"a": {}}, {"a": {}}]);
        assert!(tabular_fields(&rows(&empty_object)).is_none());
        let different_keys = json!([{"a": 1}, {"b": 1}]);
        assert!(tabular_fields(&rows(&different_keys)).is_none());
        let index_keys = json!([{"b": 1, "1": 2}, {"1": 3, "b": 4}]);
        assert_eq!(
            tabular_fields(&rows(&index_keys)).map(|f| names(&f)),
            Some("1,b".to_string())
        );
    }

    #[test]
    fn keyed_shapes() {
        let keyed = json!({"x": {"a": 1}, "y": {"a": 2}});
        assert!(keyed.as_object().and_then(keyed_fields).is_some());
        let single = json!({"x": {"a": 1}});
        assert!(single.as_object().and_then(keyed_fields).is_none());
        let not_objects = json!({"x": {"a": 1}, "y": 2});
        assert!(not_objects.as_object().and_then(keyed_fields).is_none());
    }
}
