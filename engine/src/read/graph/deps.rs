//! `pm deps <id>`: an item's declared dependencies followed transitively,
//! as a tree (repeated nodes collapsible, cycles marked and not expanded), a breadth-first
//! node/edge graph, or a directional, kind-filtered, resumable context graph. Edges are the
//! `dependencies[]` rows (via = their kind), the scalar `blocked_by`, and a parent that names
//! no item (a typed missing edge). Depth, node and edge bounds keep every answer bounded.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use serde_json::{Map, Value, json};

use super::model::{Direction, GraphItem};
use crate::error::{Error, Result};
use crate::summary::NO_ACTIVE_BLOCKER;

/// Dependency kinds that are legacy spellings (counted in `legacy_alias_counts`).
const LEGACY_KINDS: [&str; 3] = ["blocked_by", "child_of", "parent_child"];

/// One declared edge: `(target id, via)`, plus whether it is a legacy spelling.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Declared {
    target: String,
    via: String,
    legacy: Option<&'static str>,
}

/// What a node shows.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Shown {
    title: String,
    item_type: String,
    status: String,
}

/// The declared dependency edges of every item, forward and reverse.
#[derive(Clone, Debug, Default)]
pub struct DepsIndex {
    items: HashMap<String, Shown>,
    forward: HashMap<String, Vec<Declared>>,
    reverse: HashMap<String, Vec<Declared>>,
}

/// How to bound and shape a deps read.
#[derive(Clone, Debug)]
pub struct DepsOptions {
    /// Expand at most this many levels below the root.
    pub max_depth: usize,
    /// At most this many nodes (root included); `None`: no bound.
    pub node_limit: Option<usize>,
    /// At most this many edges; `None`: no bound.
    pub edge_limit: Option<usize>,
    /// Show a node already expanded elsewhere once, then as `repeated` without children.
    pub collapse_repeated: bool,
    /// `Out`: what the item depends on; `In`: what depends on it; `Both`.
    pub direction: Direction,
    /// Only edges with these `via` kinds (`None`: every kind).
    pub kinds: Option<BTreeSet<String>>,
    /// Context graph: resume after this node id.
    pub after: Option<String>,
}

/// Totals over the whole reachable closure (computed without materializing rows).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Census {
    /// Reachable nodes, the root and missing targets included.
    pub node_count: usize,
    /// Distinct reachable edges.
    pub edge_count: usize,
    /// Reachable ids that name no item.
    pub missing_count: usize,
    /// Legacy spellings among the reachable edges, by spelling.
    pub legacy_alias_counts: BTreeMap<String, usize>,
}

/// What a bounded rendering left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bounds {
    /// Nodes emitted.
    pub nodes: usize,
    /// Edges emitted.
    pub edges: usize,
    /// Why rows were left out (`max_depth`, `node_limit`, `edge_limit`), sorted.
    pub reasons: BTreeSet<&'static str>,
    /// Context graph: the node id to resume after.
    pub next_cursor: Option<String>,
}

impl DepsIndex {
    /// Indexes the declared edges of `items`.
    pub fn build(items: &[GraphItem]) -> DepsIndex {
        let mut index = DepsIndex::default();
        for item in items {
            index.items.entry(item.id.clone()).or_insert_with(|| Shown {
                title: item.title.clone(),
                item_type: item.item_type.clone(),
                status: item.status.clone(),
            });
        }
        for item in items {
            let edges = declared(item, |id| index.items.contains_key(id));
            for e in &edges {
                index
                    .reverse
                    .entry(e.target.clone())
                    .or_default()
                    .push(Declared {
                        target: item.id.clone(),
                        via: e.via.clone(),
                        legacy: e.legacy,
                    });
            }
            index
                .forward
                .entry(item.id.clone())
                .or_default()
                .extend(edges);
        }
        for list in index.reverse.values_mut() {
            list.sort_by(|a, b| a.target.cmp(&b.target).then_with(|| a.via.cmp(&b.via)));
        }
        index
    }

    /// Returns true when an item has this id.
    pub fn contains(&self, id: &str) -> bool {
        self.items.contains_key(id)
    }

    /// Returns every `via` kind used by some item, sorted.
    pub fn kinds(&self) -> BTreeSet<String> {
        self.forward
            .values()
            .flatten()
            .map(|e| e.via.clone())
            .collect()
    }

    fn edges<'a>(&'a self, id: &str, options: &'a DepsOptions) -> Vec<&'a Declared> {
        let empty: &[Declared] = &[];
        let out = self.forward.get(id).map_or(empty, Vec::as_slice);
        let inn = self.reverse.get(id).map_or(empty, Vec::as_slice);
        let (a, b) = match options.direction {
            Direction::Out => (out, empty),
            Direction::In => (empty, inn),
            Direction::Both => (out, inn),
        };
        a.iter()
            .chain(b)
            .filter(|e| options.kinds.as_ref().is_none_or(|k| k.contains(&e.via)))
            .collect()
    }

    fn node(&self, id: &str) -> Map<String, Value> {
        let mut node = Map::new();
        node.insert("id".into(), json!(id));
        match self.items.get(id) {
            Some(s) => {
                node.insert("title".into(), json!(s.title));
                node.insert("type".into(), json!(s.item_type));
                node.insert("status".into(), json!(s.status));
            }
            None => {
                for key in ["title", "type", "status"] {
                    node.insert(key.into(), Value::Null);
                }
            }
        }
        node
    }

    /// Returns the totals over everything reachable from `root` (no bounds but `max_depth`).
    pub fn census(&self, root: &str, options: &DepsOptions) -> Census {
        let mut census = Census::default();
        let mut depth: HashMap<String, usize> = HashMap::from([(root.to_owned(), 0)]);
        let mut queue = VecDeque::from([root.to_owned()]);
        while let Some(id) = queue.pop_front() {
            let d = depth[&id];
            if !self.contains(&id) {
                census.missing_count += 1;
            }
            if d >= options.max_depth {
                continue;
            }
            for e in self.edges(&id, options) {
                census.edge_count += 1;
                if let Some(legacy) = e.legacy {
                    *census.legacy_alias_counts.entry(legacy.into()).or_default() += 1;
                }
                if !depth.contains_key(&e.target) {
                    depth.insert(e.target.clone(), d + 1);
                    queue.push_back(e.target.clone());
                }
            }
        }
        census.node_count = depth.len();
        census
    }

    /// Returns the dependency tree of `root` and what its bounds left out.
    pub fn tree(&self, root: &str, options: &DepsOptions) -> (Value, Bounds) {
        let mut bounds = Bounds {
            nodes: 1,
            ..Bounds::default()
        };
        let mut expanded: BTreeSet<String> = BTreeSet::new();
        let mut path: Vec<String> = vec![root.to_owned()];
        let mut node = self.node(root);
        node.insert("missing".into(), json!(!self.contains(root)));
        node.insert("cycle".into(), json!(false));
        let children = self.children(root, 0, options, &mut path, &mut expanded, &mut bounds);
        node.insert("dependencies".into(), Value::Array(children));
        (Value::Object(node), bounds)
    }

    fn children(
        &self,
        id: &str,
        depth: usize,
        options: &DepsOptions,
        path: &mut Vec<String>,
        expanded: &mut BTreeSet<String>,
        bounds: &mut Bounds,
    ) -> Vec<Value> {
        expanded.insert(id.to_owned());
        let edges = self.edges(id, options);
        if depth >= options.max_depth {
            if !edges.is_empty() {
                bounds.reasons.insert("max_depth");
            }
            return Vec::new();
        }
        let mut out = Vec::new();
        for e in edges {
            if options.node_limit.is_some_and(|n| bounds.nodes >= n) {
                bounds.reasons.insert("node_limit");
                break;
            }
            if options.edge_limit.is_some_and(|n| bounds.edges >= n) {
                bounds.reasons.insert("edge_limit");
                break;
            }
            bounds.nodes += 1;
            bounds.edges += 1;
            let missing = !self.contains(&e.target);
            let cycle = path.contains(&e.target);
            let repeated = !cycle && options.collapse_repeated && expanded.contains(&e.target);
            let mut node = self.node(&e.target);
            node.insert("via".into(), json!(e.via));
            node.insert("missing".into(), json!(missing));
            node.insert("cycle".into(), json!(cycle));
            if repeated {
                node.insert("repeated".into(), json!(true));
            }
            if !missing && !cycle && !repeated {
                path.push(e.target.clone());
                let children = self.children(&e.target, depth + 1, options, path, expanded, bounds);
                path.pop();
                if !children.is_empty() {
                    node.insert("dependencies".into(), Value::Array(children));
                }
            }
            out.push(Value::Object(node));
        }
        out
    }

    /// Returns the breadth-first node and edge rows reachable from `root` (the root first),
    /// resumed after `options.after` for a context page, and what the bounds left out.
    ///
    /// # Errors
    /// `invalid_query_cursor` when `options.after` is not a node of this graph.
    pub fn graph(
        &self,
        root: &str,
        options: &DepsOptions,
    ) -> Result<(Vec<Value>, Vec<Value>, Bounds)> {
        let mut bounds = Bounds::default();
        let mut depth: HashMap<String, usize> = HashMap::from([(root.to_owned(), 0)]);
        let mut bfs_parent: HashMap<String, String> = HashMap::new();
        let mut order: Vec<String> = vec![root.to_owned()];
        let mut queue = VecDeque::from([root.to_owned()]);
        let mut edges: Vec<(String, String, String, bool)> = Vec::new();
        while let Some(id) = queue.pop_front() {
            let d = depth[&id];
            let out = self.edges(&id, options);
            if d >= options.max_depth {
                if !out.is_empty() {
                    bounds.reasons.insert("max_depth");
                }
                continue;
            }
            for e in out {
                let cycle = match depth.get(&e.target) {
                    None => {
                        depth.insert(e.target.clone(), d + 1);
                        bfs_parent.insert(e.target.clone(), id.clone());
                        order.push(e.target.clone());
                        if self.contains(&e.target) {
                            queue.push_back(e.target.clone());
                        }
                        false
                    }
                    Some(_) => self.is_bfs_ancestor(&bfs_parent, &e.target, &id),
                };
                edges.push((id.clone(), e.target.clone(), e.via.clone(), cycle));
            }
        }
        let start = match &options.after {
            None => 0,
            Some(after) => match order.iter().position(|id| id == after) {
                Some(i) => i + 1,
                None => {
                    return Err(Error::CursorNotInResult {
                        flag: "--cursor",
                        after: after.clone(),
                    });
                }
            },
        };
        let mut end = order.len();
        if let Some(limit) = options.node_limit
            && end - start > limit
        {
            end = start + limit;
            bounds.reasons.insert("node_limit");
            bounds.next_cursor = Some(order[end - 1].clone());
        }
        let page: BTreeSet<&str> = order[start..end].iter().map(String::as_str).collect();
        let nodes: Vec<Value> = order[start..end]
            .iter()
            .map(|id| {
                let mut node = self.node(id);
                node.insert("depth".into(), json!(depth[id]));
                node.insert("missing".into(), json!(!self.contains(id)));
                Value::Object(node)
            })
            .collect();
        let mut edge_rows: Vec<Value> = Vec::new();
        for (from, to, via, cycle) in edges
            .iter()
            .filter(|(f, t, _, _)| page.contains(f.as_str()) || page.contains(t.as_str()))
        {
            if options.edge_limit.is_some_and(|n| edge_rows.len() >= n) {
                bounds.reasons.insert("edge_limit");
                break;
            }
            edge_rows.push(json!({
                "from": from, "to": to, "via": via,
                "missing": !self.contains(to), "cycle": cycle,
            }));
        }
        bounds.nodes = nodes.len();
        bounds.edges = edge_rows.len();
        Ok((nodes, edge_rows, bounds))
    }

    /// Returns true when `target` lies on the breadth-first tree path from the root to `from`
    /// (the edge from `from` to `target` closes a cycle).
    fn is_bfs_ancestor(&self, parents: &HashMap<String, String>, target: &str, from: &str) -> bool {
        let mut at = from;
        loop {
            if at == target {
                return true;
            }
            match parents.get(at) {
                Some(p) => at = p,
                None => return false,
            }
        }
    }
}

/// Returns the edges `item` declares, deduplicated and sorted by target then via: each
/// `dependencies[]` row with a non-blank target, the scalar `blocked_by`, and a `parent` for
/// which `is_item` is false.
fn declared(item: &GraphItem, is_item: impl Fn(&str) -> bool) -> Vec<Declared> {
    let mut edges: Vec<Declared> = Vec::new();
    for dep in item.dependencies.iter().filter(|d| !d.id.trim().is_empty()) {
        edges.push(Declared {
            target: dep.id.trim().to_owned(),
            via: if dep.kind.is_empty() {
                "unspecified".into()
            } else {
                dep.kind.clone()
            },
            legacy: LEGACY_KINDS.iter().copied().find(|k| *k == dep.kind),
        });
    }
    if let Some(b) = item
        .blocked_by
        .as_deref()
        .filter(|b| *b != NO_ACTIVE_BLOCKER)
    {
        edges.push(Declared {
            target: b.to_owned(),
            via: "blocked_by".into(),
            legacy: Some("blocked_by"),
        });
    }
    if let Some(p) = item.parent.as_deref().filter(|p| !is_item(p)) {
        edges.push(Declared {
            target: p.to_owned(),
            via: "parent".into(),
            legacy: None,
        });
    }
    let mut seen = BTreeSet::new();
    edges.retain(|e| seen.insert((e.target.clone(), e.via.clone())));
    edges.sort_by(|a, b| a.target.cmp(&b.target).then_with(|| a.via.cmp(&b.via)));
    edges
}

/// Returns `(target, via)` of every edge `item` declares (see [`DepsIndex::build`]); `is_item`
/// tells whether an id names an item (a parent that names none is an edge).
pub(crate) fn declared_targets(
    item: &GraphItem,
    is_item: impl Fn(&str) -> bool,
) -> Vec<(String, String)> {
    declared(item, is_item)
        .into_iter()
        .map(|d| (d.target, d.via))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::graph::model::tests::item;

    fn options() -> DepsOptions {
        DepsOptions {
            max_depth: 10,
            node_limit: None,
            edge_limit: None,
            collapse_repeated: false,
            direction: Direction::Out,
            kinds: None,
            after: None,
        }
    }

    fn index() -> DepsIndex {
        DepsIndex::build(&[
            item("a", None, &[("b", "blocks"), ("c", "related")]),
            item("b", None, &[("c", "blocks"), ("a", "blocked_by")]),
            item("c", Some("gone"), &[("x", "related")]),
        ])
    }

    #[test]
    fn tree_marks_cycles_missing_and_repeats() {
        let idx = index();
        let (tree, bounds) = idx.tree("a", &options());
        let deps = &tree["dependencies"];
        assert_eq!(deps[0]["id"], "b");
        assert_eq!(deps[0]["dependencies"][0]["id"], "a");
        assert_eq!(deps[0]["dependencies"][0]["cycle"], true);
        assert_eq!(deps[0]["dependencies"][1]["id"], "c");
        assert_eq!(
            deps[0]["dependencies"][1]["dependencies"][0]["via"],
            "parent"
        );
        assert_eq!(
            deps[0]["dependencies"][1]["dependencies"][0]["missing"],
            true
        );
        assert!(bounds.reasons.is_empty());
        let collapsed = idx
            .tree(
                "a",
                &DepsOptions {
                    collapse_repeated: true,
                    ..options()
                },
            )
            .0;
        assert_eq!(collapsed["dependencies"][1]["repeated"], true);
        let census = idx.census("a", &options());
        assert_eq!((census.node_count, census.missing_count), (5, 2));
        assert_eq!(census.legacy_alias_counts.get("blocked_by"), Some(&1));
        let (_, shallow) = idx.tree(
            "a",
            &DepsOptions {
                max_depth: 1,
                ..options()
            },
        );
        assert!(shallow.reasons.contains("max_depth"));
    }

    #[test]
    fn graph_pages_by_node() -> Result<()> {
        let idx = index();
        let paged = DepsOptions {
            node_limit: Some(2),
            ..options()
        };
        let (nodes, edges, bounds) = idx.graph("a", &paged)?;
        let ids: Vec<&str> = nodes.iter().filter_map(|n| n["id"].as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert!(
            edges
                .iter()
                .any(|e| e["from"] == "b" && e["to"] == "a" && e["cycle"] == true)
        );
        assert_eq!(bounds.next_cursor.as_deref(), Some("b"));
        let next = DepsOptions {
            after: bounds.next_cursor,
            ..paged
        };
        let ids: Vec<String> = idx
            .graph("a", &next)?
            .0
            .iter()
            .filter_map(|n| n["id"].as_str().map(String::from))
            .collect();
        assert_eq!(ids, ["c", "gone"]);
        let back = DepsOptions {
            direction: Direction::In,
            ..options()
        };
        let ids: Vec<String> = idx
            .graph("c", &back)?
            .0
            .iter()
            .filter_map(|n| n["id"].as_str().map(String::from))
            .collect();
        assert_eq!(ids, ["c", "a", "b"]);
        Ok(())
    }
}
