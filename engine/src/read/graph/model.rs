//! The item graph: one node per item (plus one per referenced id that names no item) and one
//! directed edge per parent link or dependency, normalized so that edges point from the
//! parent to the child and from the prerequisite to the item that waits for it.

use std::collections::{BTreeSet, HashMap};

use crate::query::{CHILD_KINDS, PARENT_KINDS};
use crate::summary::{DependencyRef, ItemSummary, NO_ACTIVE_BLOCKER, StatusClass};

/// What the graph needs of one item (the index answers it from columns, without the light
/// metadata; a scan derives it from [`ItemSummary`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphItem {
    /// `id`.
    pub id: String,
    /// `title`.
    pub title: String,
    /// `type`.
    pub item_type: String,
    /// `status`.
    pub status: String,
    /// Whether the status is terminal.
    pub terminal: bool,
    /// Scalar `parent`.
    pub parent: Option<String>,
    /// Scalar `blocked_by`.
    pub blocked_by: Option<String>,
    /// `dependencies[]`, in file order.
    pub dependencies: Vec<DependencyRef>,
}

impl From<&ItemSummary> for GraphItem {
    fn from(s: &ItemSummary) -> GraphItem {
        GraphItem {
            id: s.id.clone(),
            title: s.title.clone(),
            item_type: s.item_type.clone(),
            status: s.status.clone(),
            terminal: s.status_class == StatusClass::Terminal,
            parent: s.parent.clone(),
            blocked_by: s.blocked_by.clone(),
            dependencies: s.dependencies.clone(),
        }
    }
}

/// An edge kind, an index into [`ItemGraph::kind_name`]'s table.
pub type Kind = u16;

/// `parent`: a hierarchy edge, parent → child.
pub const PARENT: Kind = 0;
/// `blocks`: prerequisite → the item it blocks (`blocks`, `blocked_by`, scalar `blocked_by`).
pub const BLOCKS: Kind = 1;
/// `related`: declarer → target; carries no order.
pub const RELATED: Kind = 2;
/// `discovered_from`: origin → the item discovered from it.
pub const DISCOVERED_FROM: Kind = 3;

/// The built-in kinds, in table order.
const BUILTIN: [&str; 4] = ["parent", "blocks", "related", "discovered_from"];

/// What a node shows about its item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeInfo {
    /// The item id (or the referenced id of a missing node).
    pub id: String,
    /// `title` (empty for a missing node).
    pub title: String,
    /// `type`.
    pub item_type: String,
    /// `status`.
    pub status: String,
    /// Whether the status is terminal.
    pub terminal: bool,
    /// Whether no item has this id (only referenced).
    pub missing: bool,
}

/// One adjacency entry: the node at the other end and the edge kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Adj {
    /// The other node.
    pub node: usize,
    /// The edge kind.
    pub kind: Kind,
}

/// Which way a traversal follows edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From an edge's source to its target (children, dependents).
    Out,
    /// From an edge's target to its source (parents, prerequisites).
    In,
    /// Both ways.
    Both,
}

/// A set of edge kinds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindSet(Vec<bool>);

impl KindSet {
    /// Returns true when `kind` is in the set.
    pub fn contains(&self, kind: Kind) -> bool {
        self.0.get(usize::from(kind)).copied().unwrap_or(false)
    }
}

/// The directed item graph of a tracker.
#[derive(Clone, Debug, Default)]
pub struct ItemGraph {
    nodes: Vec<NodeInfo>,
    by_id: HashMap<String, usize>,
    out: Vec<Vec<Adj>>,
    inn: Vec<Vec<Adj>>,
    kinds: Vec<String>,
    edge_count: usize,
    self_loops: Vec<(usize, Kind)>,
}

impl ItemGraph {
    /// Builds the graph of `items`: the scalar `parent`, every `dependencies[]` row and the
    /// scalar `blocked_by`. Duplicate edges (same ends and kind) count once; adjacency lists
    /// are ordered by the other end's id, then kind, so every traversal is deterministic. The
    /// kind table is the built-in kinds, then the other kinds in name order
    /// ([`dependency_kinds`]), so it does not depend on the order of `items`.
    pub fn build(items: &[GraphItem]) -> ItemGraph {
        ItemGraph::build_with_kinds(items, &dependency_kinds(items))
    }

    /// [`ItemGraph::build`] with the kind table seeded from `dependency_kinds`: the
    /// [`dependency_kinds`] of the whole tracker. Built over a subset of the items, the graph
    /// then names and orders kinds exactly as the graph of every item does.
    pub fn build_with_kinds(items: &[GraphItem], dependency_kinds: &[String]) -> ItemGraph {
        let mut g = ItemGraph {
            kinds: BUILTIN.iter().map(|k| (*k).to_owned()).collect(),
            ..ItemGraph::default()
        };
        for kind in dependency_kinds {
            if let EdgeKind::Custom(name) = edge_kind(kind) {
                g.intern(name);
            }
        }
        for item in items {
            if g.by_id.contains_key(&item.id) {
                continue;
            }
            g.push_node(NodeInfo {
                id: item.id.clone(),
                title: item.title.clone(),
                item_type: item.item_type.clone(),
                status: item.status.clone(),
                terminal: item.terminal,
                missing: false,
            });
        }
        let mut edges: BTreeSet<(usize, usize, Kind)> = BTreeSet::new();
        for item in items {
            let Some(&me) = g.by_id.get(&item.id) else {
                continue;
            };
            for edge in declared_edges(item) {
                let other = g.node_or_missing(edge.other);
                let kind = match edge.kind {
                    EdgeKind::Builtin(kind) => kind,
                    EdgeKind::Custom(name) => g.intern(name),
                };
                edges.insert(if edge.outgoing {
                    (me, other, kind)
                } else {
                    (other, me, kind)
                });
            }
        }
        g.out = vec![Vec::new(); g.nodes.len()];
        g.inn = vec![Vec::new(); g.nodes.len()];
        for (from, to, kind) in edges {
            if from == to {
                g.self_loops.push((from, kind));
            }
            g.out[from].push(Adj { node: to, kind });
            g.inn[to].push(Adj { node: from, kind });
            g.edge_count += 1;
        }
        let nodes = &g.nodes;
        for list in g.out.iter_mut().chain(g.inn.iter_mut()) {
            list.sort_by(|a, b| {
                nodes[a.node]
                    .id
                    .cmp(&nodes[b.node].id)
                    .then(a.kind.cmp(&b.kind))
            });
        }
        g
    }

    fn push_node(&mut self, info: NodeInfo) -> usize {
        let ix = self.nodes.len();
        self.by_id.insert(info.id.clone(), ix);
        self.nodes.push(info);
        ix
    }

    fn node_or_missing(&mut self, id: &str) -> usize {
        let id = id.trim();
        match self.by_id.get(id) {
            Some(&ix) => ix,
            None => self.push_node(NodeInfo {
                id: id.to_owned(),
                title: String::new(),
                item_type: String::new(),
                status: String::new(),
                terminal: false,
                missing: true,
            }),
        }
    }

    fn intern(&mut self, kind: &str) -> Kind {
        let name = if kind.is_empty() { "unspecified" } else { kind };
        if let Some(ix) = self.kinds.iter().position(|k| k == name) {
            return Kind::try_from(ix).unwrap_or(Kind::MAX);
        }
        self.kinds.push(name.to_owned());
        Kind::try_from(self.kinds.len() - 1).unwrap_or(Kind::MAX)
    }

    /// Returns the number of nodes (items and missing references).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Returns true when the graph has no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Returns the number of distinct edges.
    pub fn edge_count(&self) -> usize {
        self.edge_count
    }

    /// Returns the node of an item id (missing references included).
    pub fn node(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// Returns what a node shows.
    pub fn info(&self, node: usize) -> &NodeInfo {
        &self.nodes[node]
    }

    /// Returns a node's id.
    pub fn id(&self, node: usize) -> &str {
        &self.nodes[node].id
    }

    /// Returns the name of an edge kind.
    pub fn kind_name(&self, kind: Kind) -> &str {
        self.kinds
            .get(usize::from(kind))
            .map_or("unspecified", String::as_str)
    }

    /// Returns every kind name in table order (built-ins first, then kinds seen in items).
    pub fn kind_names(&self) -> &[String] {
        &self.kinds
    }

    /// Returns the edges leaving `node`.
    pub fn outgoing(&self, node: usize) -> &[Adj] {
        &self.out[node]
    }

    /// Returns the edges entering `node`.
    pub fn incoming(&self, node: usize) -> &[Adj] {
        &self.inn[node]
    }

    /// Returns the neighbours of `node` in `direction` (for `Both`, outgoing then incoming).
    pub fn neighbours(&self, node: usize, direction: Direction) -> impl Iterator<Item = Adj> + '_ {
        let (out, inn): (&[Adj], &[Adj]) = match direction {
            Direction::Out => (&self.out[node], &[]),
            Direction::In => (&[], &self.inn[node]),
            Direction::Both => (&self.out[node], &self.inn[node]),
        };
        out.iter().chain(inn.iter()).copied()
    }

    /// Returns the edges whose source is their target, as `(node, kind)`.
    pub fn self_loops(&self) -> &[(usize, Kind)] {
        &self.self_loops
    }

    /// Returns the set of just `parent` edges.
    pub fn hierarchy_kinds(&self) -> KindSet {
        self.kind_set(|k| k == PARENT)
    }

    /// Returns the ordering kinds: every kind except `parent` and `related`.
    pub fn dependency_kinds(&self) -> KindSet {
        self.kind_set(|k| k != PARENT && k != RELATED)
    }

    /// Returns the kinds with an order: every kind except `related`.
    pub fn directed_kinds(&self) -> KindSet {
        self.kind_set(|k| k != RELATED)
    }

    /// Returns every kind.
    pub fn all_kinds(&self) -> KindSet {
        self.kind_set(|_| true)
    }

    fn kind_set(&self, keep: impl Fn(Kind) -> bool) -> KindSet {
        KindSet(
            (0..self.kinds.len())
                .map(|k| keep(Kind::try_from(k).unwrap_or(Kind::MAX)))
                .collect(),
        )
    }

    /// Returns the set of the named kinds; `Err(name)` for a name that is neither built in nor
    /// used by any item.
    ///
    /// # Errors
    /// The first unknown name.
    pub fn parse_kinds<'a>(
        &self,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<KindSet, String> {
        let mut set = vec![false; self.kinds.len()];
        for name in names {
            let name = name.trim();
            match self.kinds.iter().position(|k| k == name) {
                Some(ix) => set[ix] = true,
                None => return Err(name.to_owned()),
            }
        }
        Ok(KindSet(set))
    }
}

/// The kind of a declared edge: built in, or a custom dependency kind (as written).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EdgeKind<'a> {
    /// One of the built-in kinds.
    Builtin(Kind),
    /// A custom kind (`unspecified` when empty).
    Custom(&'a str),
}

impl<'a> EdgeKind<'a> {
    /// Returns the kind's name in the kind table.
    pub(crate) fn name(self) -> &'a str {
        match self {
            EdgeKind::Builtin(k) => BUILTIN[usize::from(k)],
            EdgeKind::Custom("") => "unspecified",
            EdgeKind::Custom(name) => name,
        }
    }
}

/// One edge an item declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DeclaredEdge<'a> {
    /// The referenced id, trimmed.
    pub other: &'a str,
    /// True when the edge leaves the declaring item (declarer → other).
    pub outgoing: bool,
    /// The edge kind.
    pub kind: EdgeKind<'a>,
}

/// Returns every kind a `dependencies[]` row with a non-blank target uses, sorted by name
/// (byte order) without repeats: the order of the non-built-in kinds in a graph's kind table.
pub fn dependency_kinds(items: &[GraphItem]) -> Vec<String> {
    let kinds: BTreeSet<&str> = items
        .iter()
        .flat_map(|item| &item.dependencies)
        .filter(|dep| !dep.id.trim().is_empty())
        .map(|dep| dep.kind.as_str())
        .collect();
    kinds.into_iter().map(str::to_owned).collect()
}

/// Classifies a `dependencies[]` kind.
pub(crate) fn edge_kind(kind: &str) -> EdgeKind<'_> {
    if PARENT_KINDS.contains(&kind) || CHILD_KINDS.contains(&kind) {
        return EdgeKind::Builtin(PARENT);
    }
    match kind {
        "blocks" | "blocked_by" => EdgeKind::Builtin(BLOCKS),
        "related" => EdgeKind::Builtin(RELATED),
        "discovered_from" => EdgeKind::Builtin(DISCOVERED_FROM),
        _ => EdgeKind::Custom(kind),
    }
}

/// Returns the edges `item` declares, in graph-building order: the scalar `parent`, the
/// scalar `blocked_by`, then every `dependencies[]` row with a non-blank target.
pub(crate) fn declared_edges(item: &GraphItem) -> Vec<DeclaredEdge<'_>> {
    let mut out = Vec::with_capacity(item.dependencies.len() + 2);
    if let Some(parent) = &item.parent {
        out.push(DeclaredEdge {
            other: parent.trim(),
            outgoing: false,
            kind: EdgeKind::Builtin(PARENT),
        });
    }
    if let Some(blocker) = item
        .blocked_by
        .as_deref()
        .filter(|b| *b != NO_ACTIVE_BLOCKER)
    {
        out.push(DeclaredEdge {
            other: blocker.trim(),
            outgoing: false,
            kind: EdgeKind::Builtin(BLOCKS),
        });
    }
    for dep in &item.dependencies {
        let other = dep.id.trim();
        if other.is_empty() {
            continue;
        }
        let kind = dep.kind.as_str();
        let outgoing = CHILD_KINDS.contains(&kind)
            || (!PARENT_KINDS.contains(&kind) && matches!(kind, "blocks" | "related"));
        out.push(DeclaredEdge {
            other,
            outgoing,
            kind: edge_kind(kind),
        });
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::item::ItemFormat;
    use crate::schema::RuntimeSchema;
    use crate::summary::ItemFacts;
    use serde_json::{Map, Value, json};

    /// Returns an open task with `parent` and `dependencies` (`(id, kind)`) set.
    pub(crate) fn item(id: &str, parent: Option<&str>, deps: &[(&str, &str)]) -> GraphItem {
        let mut light: Map<String, Value> = Map::new();
        light.insert("id".into(), json!(id));
        light.insert("title".into(), json!(format!("Item {id}")));
        light.insert("type".into(), json!("Task"));
        light.insert("status".into(), json!("open"));
        if let Some(p) = parent {
            light.insert("parent".into(), json!(p));
        }
        let deps: Vec<Value> = deps
            .iter()
            .map(|(d, k)| json!({"id": d, "kind": k}))
            .collect();
        light.insert("dependencies".into(), Value::Array(deps));
        GraphItem::from(&ItemSummary::from_parts(
            light,
            ItemFacts::default(),
            format!("tasks/{id}.toon"),
            ItemFormat::Toon,
            &RuntimeSchema::builtin(),
        ))
    }

    #[test]
    fn the_kind_table_does_not_depend_on_item_order() {
        let mut items = vec![
            item("pm-a", None, &[("pm-b", "verifies")]),
            item("pm-b", None, &[("pm-c", "implements"), ("pm-a", "blocks")]),
            item("pm-c", None, &[(" ", "zeta"), ("pm-a", "")]),
        ];
        let forward = ItemGraph::build(&items);
        items.reverse();
        let backward = ItemGraph::build(&items);
        assert_eq!(forward.kind_names(), backward.kind_names());
        let custom: Vec<&str> = forward.kind_names()[BUILTIN.len()..]
            .iter()
            .map(String::as_str)
            .collect();
        // A blank target declares no edge, so `zeta` is not a kind of the graph.
        assert_eq!(custom, ["unspecified", "implements", "verifies"]);
    }

    #[test]
    fn edges_are_normalized_and_deduplicated() {
        let items = [
            item("a", None, &[]),
            item("b", Some("a"), &[("a", "parent"), ("c", "blocks")]),
            item("c", None, &[("gone", "blocked_by"), ("a", "related")]),
            item(
                "d",
                None,
                &[("b", "child_of"), ("a", "discovered_from"), ("x", "custom")],
            ),
        ];
        let g = ItemGraph::build(&items);
        let id = |n: usize| g.id(n).to_owned();
        let out = |node: &str| -> Vec<String> {
            let n = g.node(node).unwrap_or(usize::MAX);
            g.outgoing(n)
                .iter()
                .map(|a| format!("{}:{}", id(a.node), g.kind_name(a.kind)))
                .collect()
        };
        assert_eq!(out("a"), ["b:parent", "d:discovered_from"]);
        assert_eq!(out("b"), ["c:blocks", "d:parent"]);
        assert_eq!(out("c"), ["a:related"]);
        assert_eq!(out("gone"), ["c:blocks"]);
        assert_eq!(out("x"), ["d:custom"]);
        assert!(g.info(g.node("gone").unwrap_or(0)).missing);
        assert_eq!(g.edge_count(), 7);
        let deps = g.dependency_kinds();
        assert!(deps.contains(BLOCKS) && !deps.contains(PARENT) && !deps.contains(RELATED));
        assert!(g.parse_kinds(["custom"]).is_ok());
        assert_eq!(g.parse_kinds(["nope"]), Err("nope".to_owned()));
    }
}
