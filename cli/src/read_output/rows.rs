//! Row collections of a read envelope: dot-path access, the row contract a
//! surface declares, and the census of nested arrays that budget compaction may shorten.

use std::collections::HashSet;
use std::fmt;

use serde_json::{Map, Value, json};

use super::surface::{RowShape, Surface};

/// The jq selector every row contract publishes.
pub const JQ_SELECTOR: &str = ".row_contract.row_keys[] as $key | getpath($key | split(\".\")) | if type == \"array\" then .[] else if type == \"object\" then to_entries[] else empty end end";

/// Root keys that hold receipts or echoes, never result rows: budget compaction and the
/// nested-array census skip them.
const METADATA_ROOT_KEYS: &[&str] = &[
    "applied_bound",
    "budget_exceeded",
    "budget_retention_policy",
    "completeness",
    "context_intent",
    "continuation_contract",
    "continuation_kind",
    "continuation_path",
    "filters",
    "omission_receipt",
    "output_budget_truncation",
    "projection",
    "read_output",
    "read_session",
    "row_contract",
    "sorting",
    "source",
];

/// One step of a path: an object key or an array index.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Seg {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// A path from the envelope root, printed dot-delimited (`checks.1.details.rows`).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowPath(pub Vec<Seg>);

impl RowPath {
    /// Returns the path of a declared dot-delimited row key (every segment is a key).
    pub fn declared(dotted: &str) -> RowPath {
        RowPath(dotted.split('.').map(|s| Seg::Key(s.to_owned())).collect())
    }

    /// Returns the path with one more segment.
    fn child(&self, seg: Seg) -> RowPath {
        let mut segs = self.0.clone();
        segs.push(seg);
        RowPath(segs)
    }
}

impl fmt::Display for RowPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            match seg {
                Seg::Key(k) => f.write_str(k)?,
                Seg::Index(n) => write!(f, "{n}")?,
            }
        }
        Ok(())
    }
}

/// Returns the value at `path`, if every step exists.
pub fn get<'a>(root: &'a Map<String, Value>, path: &RowPath) -> Option<&'a Value> {
    let (first, rest) = path.0.split_first()?;
    let Seg::Key(k) = first else { return None };
    let mut value = root.get(k)?;
    for seg in rest {
        value = match (seg, value) {
            (Seg::Key(k), Value::Object(m)) => m.get(k)?,
            (Seg::Index(i), Value::Array(a)) => a.get(*i)?,
            _ => return None,
        };
    }
    Some(value)
}

/// Returns the value at `path` mutably, if every step exists.
pub fn get_mut<'a>(root: &'a mut Map<String, Value>, path: &RowPath) -> Option<&'a mut Value> {
    let (first, rest) = path.0.split_first()?;
    let Seg::Key(k) = first else { return None };
    let mut value = root.get_mut(k)?;
    for seg in rest {
        value = match (seg, value) {
            (Seg::Key(k), Value::Object(m)) => m.get_mut(k)?,
            (Seg::Index(i), Value::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(value)
}

/// Returns the row count of a collection value: array length or object-map size.
pub fn collection_len(value: &Value) -> Option<usize> {
    match value {
        Value::Array(a) => Some(a.len()),
        Value::Object(m) => Some(m.len()),
        _ => None,
    }
}

/// Keeps the first `n` rows of a collection (object maps: the first `n` keys in JavaScript
/// enumeration order, which is the order the renderer prints).
pub fn keep_prefix(value: &mut Value, n: usize) {
    match value {
        Value::Array(a) => a.truncate(n),
        Value::Object(m) => {
            let keep: HashSet<String> = pm_engine::json::js_key_order(m, false)
                .into_iter()
                .take(n)
                .cloned()
                .collect();
            m.retain(|k, _| keep.contains(k));
        }
        _ => {}
    }
}

/// Drops the first `n` rows of a collection (object maps: the first `n` keys).
pub fn drop_prefix(value: &mut Value, n: usize) {
    match value {
        Value::Array(a) => {
            a.drain(..n.min(a.len()));
        }
        Value::Object(m) => {
            let skip: Vec<String> = pm_engine::json::js_key_order(m, false)
                .into_iter()
                .take(n)
                .cloned()
                .collect();
            for key in skip {
                m.shift_remove(&key);
            }
        }
        _ => {}
    }
}

/// A row collection the envelope currently holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowCollection {
    /// Where it is.
    pub path: RowPath,
    /// How it holds rows.
    pub shape: RowShape,
}

/// Where a result's rows are, as its surface declares them (or, without a declaration, every
/// top-level array).
#[derive(Clone, Debug)]
pub struct RowContract {
    surface: Surface,
    /// Whether a surface declaration applies (a sentinel key is present).
    declared: bool,
    /// Primary row collections present in the result, in declaration order.
    pub rows: Vec<RowCollection>,
    /// Independently resumable nested collections (validate diagnostics), in document order.
    pub continuation_rows: Vec<RowPath>,
}

impl RowContract {
    /// Derives the contract of `result` as produced by `surface`.
    pub fn derive(surface: Surface, result: &Map<String, Value>) -> RowContract {
        let declared = surface
            .sentinel_keys()
            .iter()
            .any(|k| result.contains_key(*k))
            && !surface.row_keys(result).is_empty();
        let rows = if declared {
            surface
                .row_keys(result)
                .into_iter()
                .filter_map(|key| {
                    let path = RowPath::declared(key.path);
                    let present = match (key.shape, get(result, &path)) {
                        (RowShape::Collection, Some(v)) => collection_len(v).is_some(),
                        (RowShape::Single, Some(v)) => v.is_object(),
                        _ => false,
                    };
                    present.then_some(RowCollection {
                        path,
                        shape: key.shape,
                    })
                })
                .collect()
        } else {
            result
                .iter()
                .filter(|(_, v)| v.is_array())
                .map(|(k, _)| RowCollection {
                    path: RowPath(vec![Seg::Key(k.clone())]),
                    shape: RowShape::Collection,
                })
                .collect()
        };
        let continuation_rows = if surface == Surface::Validate && declares_diagnostic_rows(result)
        {
            diagnostic_paths(result)
        } else {
            Vec::new()
        };
        RowContract {
            surface,
            declared,
            rows,
            continuation_rows,
        }
    }

    /// Returns the `row_contract` object printed on request, or `None` when the result is
    /// not a declared envelope of its surface.
    pub fn to_json(&self) -> Option<Value> {
        if !self.declared {
            return None;
        }
        let row_keys: Vec<String> = self.rows.iter().map(|r| r.path.to_string()).collect();
        let mut contract = Map::new();
        contract.insert("command".into(), json!(self.surface.name()));
        let kind = if row_keys.is_empty() {
            "none"
        } else {
            "collection"
        };
        contract.insert("row_kind".into(), json!(kind));
        contract.insert("row_keys".into(), json!(row_keys));
        if !self.continuation_rows.is_empty() {
            let keys: Vec<String> = self
                .continuation_rows
                .iter()
                .map(ToString::to_string)
                .collect();
            contract.insert("continuation_row_keys".into(), json!(keys));
        }
        let fields = if self.surface.fields_supported() {
            "supported"
        } else {
            "unsupported"
        };
        contract.insert("fields".into(), json!(fields));
        if !row_keys.is_empty() {
            contract.insert("jq_selector".into(), json!(JQ_SELECTOR));
        }
        contract.insert("toon_encoding".into(), json!("tabular_when_uniform"));
        Some(Value::Object(contract))
    }

    /// Returns the collections whose rows can be continued by an output cursor: the primary
    /// collections (not single rows) followed by the continuation collections.
    pub fn continuation_paths(&self) -> Vec<RowPath> {
        self.rows
            .iter()
            .filter(|r| r.shape == RowShape::Collection)
            .map(|r| r.path.clone())
            .chain(self.continuation_rows.iter().cloned())
            .collect()
    }

    /// Forgets row collections `env` no longer holds (after a root projection).
    pub fn retain_present(&mut self, env: &Map<String, Value>) {
        self.rows.retain(|r| match (r.shape, get(env, &r.path)) {
            (RowShape::Collection, Some(v)) => collection_len(v).is_some(),
            (RowShape::Single, Some(v)) => v.is_object(),
            _ => false,
        });
        self.continuation_rows
            .retain(|p| get(env, p).is_some_and(Value::is_array));
    }
}

fn declares_diagnostic_rows(result: &Map<String, Value>) -> bool {
    result
        .get("projection")
        .and_then(|p| p.get("declared_field_groups"))
        .and_then(Value::as_array)
        .is_some_and(|groups| {
            groups
                .iter()
                .any(|g| g.get("name").and_then(Value::as_str) == Some("diagnostic_rows"))
        })
}

/// Returns the outermost arrays under `checks.<n>.details`, in document order.
fn diagnostic_paths(result: &Map<String, Value>) -> Vec<RowPath> {
    let mut found = Vec::new();
    let Some(Value::Array(checks)) = result.get("checks") else {
        return found;
    };
    for (i, check) in checks.iter().enumerate() {
        let Some(details) = check.get("details") else {
            continue;
        };
        let base = RowPath(vec![
            Seg::Key("checks".into()),
            Seg::Index(i),
            Seg::Key("details".into()),
        ]);
        outermost_arrays(details, &base, &mut found);
    }
    found
}

fn outermost_arrays(value: &Value, path: &RowPath, out: &mut Vec<RowPath>) {
    match value {
        Value::Array(_) => out.push(path.clone()),
        Value::Object(m) => {
            for (k, v) in m {
                outermost_arrays(v, &path.child(Seg::Key(k.clone())), out);
            }
        }
        _ => {}
    }
}

/// Returns the total number of rows across the primary collections (a single row counts one).
pub fn count_rows(env: &Map<String, Value>, contract: &RowContract) -> usize {
    contract
        .rows
        .iter()
        .filter_map(|r| match r.shape {
            RowShape::Collection => get(env, &r.path).and_then(collection_len),
            RowShape::Single => get(env, &r.path).filter(|v| v.is_object()).map(|_| 1),
        })
        .sum()
}

/// Calls `f` on every primary row: array entries, object-map values and single rows.
pub fn for_each_row_mut(
    env: &mut Map<String, Value>,
    contract: &RowContract,
    mut f: impl FnMut(&mut Value),
) {
    for r in &contract.rows {
        match (r.shape, get_mut(env, &r.path)) {
            (RowShape::Collection, Some(Value::Array(a))) => a.iter_mut().for_each(&mut f),
            (RowShape::Collection, Some(Value::Object(m))) => m.values_mut().for_each(&mut f),
            (RowShape::Single, Some(v)) if v.is_object() => f(v),
            _ => {}
        }
    }
}

/// Calls `f` on every primary row, read-only.
pub fn for_each_row(env: &Map<String, Value>, contract: &RowContract, mut f: impl FnMut(&Value)) {
    for r in &contract.rows {
        match (r.shape, get(env, &r.path)) {
            (RowShape::Collection, Some(Value::Array(a))) => a.iter().for_each(&mut f),
            (RowShape::Collection, Some(Value::Object(m))) => m.values().for_each(&mut f),
            (RowShape::Single, Some(v)) if v.is_object() => f(v),
            _ => {}
        }
    }
}

/// A collection budget compaction may shorten, with its current length.
#[derive(Clone, Debug)]
pub struct BudgetCollection {
    /// Where it is.
    pub path: RowPath,
    /// Its current row count.
    pub len: usize,
}

/// Returns every collection budget compaction may shorten: the primary collections (arrays
/// and object maps), then every nested array outside the metadata root keys.
pub fn budget_collections(
    env: &Map<String, Value>,
    contract: &RowContract,
) -> Vec<BudgetCollection> {
    let mut out: Vec<BudgetCollection> = contract
        .rows
        .iter()
        .filter(|r| r.shape == RowShape::Collection)
        .filter_map(|r| {
            let len = get(env, &r.path).and_then(collection_len)?;
            Some(BudgetCollection {
                path: r.path.clone(),
                len,
            })
        })
        .collect();
    let declared: HashSet<RowPath> = out.iter().map(|c| c.path.clone()).collect();
    for (key, value) in env {
        if METADATA_ROOT_KEYS.contains(&key.as_str()) {
            continue;
        }
        let path = RowPath(vec![Seg::Key(key.clone())]);
        nested_arrays(value, path, &declared, &mut out);
    }
    out
}

fn nested_arrays(
    value: &Value,
    path: RowPath,
    declared: &HashSet<RowPath>,
    out: &mut Vec<BudgetCollection>,
) {
    match value {
        Value::Array(a) => {
            if !declared.contains(&path) {
                out.push(BudgetCollection {
                    path: path.clone(),
                    len: a.len(),
                });
            }
            for (i, entry) in a.iter().enumerate() {
                if entry.is_array() || entry.is_object() {
                    nested_arrays(entry, path.child(Seg::Index(i)), declared, out);
                }
            }
        }
        Value::Object(m) => {
            for (k, v) in m {
                if v.is_array() || v.is_object() {
                    nested_arrays(v, path.child(Seg::Key(k.clone())), declared, out);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn declared_rows_need_a_sentinel_and_a_present_collection() {
        let list = obj(json!({"items": [{"id": "a"}], "count": 1}));
        let c = RowContract::derive(Surface::List, &list);
        assert_eq!(c.rows.len(), 1);
        assert_eq!(
            c.to_json(),
            Some(json!({
                "command": "list", "row_kind": "collection", "row_keys": ["items"],
                "fields": "supported", "jq_selector": JQ_SELECTOR,
                "toon_encoding": "tabular_when_uniform"
            }))
        );
        // No sentinel: every top-level array is a row collection, and no contract is printed.
        let bare = obj(json!({"a": [1], "b": {"x": 1}, "c": [2]}));
        let c = RowContract::derive(Surface::List, &bare);
        let paths: Vec<String> = c.rows.iter().map(|r| r.path.to_string()).collect();
        assert_eq!(paths, ["a", "c"]);
        assert_eq!(c.to_json(), None);
        // next: `recommended` is a single row; null means absent.
        let next = obj(json!({"recommended": null, "ready": [], "blocked": []}));
        let c = RowContract::derive(Surface::Next, &next);
        let paths: Vec<String> = c.rows.iter().map(|r| r.path.to_string()).collect();
        assert_eq!(paths, ["ready", "blocked"]);
        let next = obj(json!({"recommended": {"id": "x"}, "ready": [{"id": "y"}]}));
        let c = RowContract::derive(Surface::Next, &next);
        assert_eq!(c.rows[0].shape, RowShape::Single);
        assert_eq!(count_rows(&next, &c), 2);
        assert_eq!(c.continuation_paths(), [RowPath::declared("ready")]);
    }

    #[test]
    fn dotted_row_keys_and_graph_subcommands() {
        let deps = obj(json!({"projection": {}, "graph": {"nodes": [1, 2], "edges": []}}));
        let c = RowContract::derive(Surface::Deps, &deps);
        let paths: Vec<String> = c.rows.iter().map(|r| r.path.to_string()).collect();
        assert_eq!(paths, ["graph.nodes", "graph.edges"]);
        assert_eq!(count_rows(&deps, &c), 2);
        let graph =
            obj(json!({"subcommand": "articulation", "articulation_points": [1], "bridges": []}));
        let c = RowContract::derive(Surface::Graph, &graph);
        assert_eq!(c.rows.len(), 2);
    }

    #[test]
    fn validate_declares_outermost_diagnostic_arrays() {
        let validate = obj(json!({
            "checks": [
                {"name": "a", "details": {"rows": [1, 2], "nested": {"ids": [[1]]}, "n": 3}},
                {"name": "b", "details": {"codes": [{"ids": [1]}]}}
            ],
            "warnings": [],
            "projection": {"mode": "full", "declared_field_groups": [{"name": "diagnostic_rows", "restore_with": "--full"}], "included_field_groups": ["diagnostic_rows"]}
        }));
        let c = RowContract::derive(Surface::Validate, &validate);
        let keys: Vec<String> = c
            .continuation_rows
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            keys,
            [
                "checks.0.details.rows",
                "checks.0.details.nested.ids",
                "checks.1.details.codes"
            ]
        );
        let json = c.to_json().unwrap_or_default();
        assert_eq!(json["row_keys"], json!(["checks", "warnings"]));
        assert_eq!(
            json["continuation_row_keys"].as_array().map(Vec::len),
            Some(3)
        );
    }

    #[test]
    fn census_finds_nested_arrays_outside_metadata() {
        let env = obj(json!({
            "items": [{"id": "a", "tags": ["x", "y"]}, {"id": "b", "deps": [[1]]}],
            "filters": {"tags": ["x"]},
            "read_output": {"precedence": ["a"]},
        }));
        let c = RowContract::derive(Surface::List, &env);
        let found: Vec<(String, usize)> = budget_collections(&env, &c)
            .into_iter()
            .map(|b| (b.path.to_string(), b.len))
            .collect();
        assert_eq!(
            found,
            [
                ("items".into(), 2),
                ("items.0.tags".into(), 2),
                ("items.1.deps".into(), 1),
                ("items.1.deps.0".into(), 1)
            ]
        );
    }

    #[test]
    fn prefixes_of_arrays_and_maps() {
        let mut a = json!([1, 2, 3]);
        keep_prefix(&mut a, 2);
        assert_eq!(a, json!([1, 2]));
        drop_prefix(&mut a, 1);
        assert_eq!(a, json!([2]));
        let mut m = json!({"b": 1, "a": 2, "c": 3});
        keep_prefix(&mut m, 2);
        assert_eq!(pm_engine::json::to_compact(&m), r#"{"b":1,"a":2}"#);
        drop_prefix(&mut m, 1);
        assert_eq!(m, json!({"a": 2}));
        let env = obj(json!({"x": {"y": [1, {"z": 2}]}}));
        let path = RowPath(vec![
            Seg::Key("x".into()),
            Seg::Key("y".into()),
            Seg::Index(1),
            Seg::Key("z".into()),
        ]);
        assert_eq!(path.to_string(), "x.y.1.z");
        assert_eq!(get(&env, &path), Some(&json!(2)));
    }
}
