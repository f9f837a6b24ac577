//! Hierarchy integrity for the lifecycle check: scalar `parent` and hierarchy dependency rows
//! normalized into one parent graph; cycles, children with more than one parent, and scalar
//! parents that disagree with dependency parents. Ids are compared lower-cased, as pm does.

use std::collections::{BTreeMap, BTreeSet};

use super::items::CheckItem;
use crate::collate::locale_compare;

/// Dependency kinds whose target is the holder's parent.
const TARGET_PARENT_KINDS: [&str; 2] = ["parent", "child_of"];
/// Dependency kinds whose holder is the target's parent.
const SOURCE_PARENT_KINDS: [&str; 2] = ["child", "parent_child"];

/// What the hierarchy analysis found.
#[derive(Debug, Default)]
pub(crate) struct Hierarchy {
    /// Cycle components (sorted ids) and whether every member is terminal.
    pub cycles: Vec<(Vec<String>, bool)>,
    /// `child:parent,parent:legacy|active` rows.
    pub cardinality: Vec<(String, bool)>,
    /// `child:scalar=P:dependencies=Q,R:legacy|active` rows.
    pub divergence: Vec<(String, bool)>,
    /// Child → parents adjacency (for cycle sample paths).
    pub graph: BTreeMap<String, Vec<String>>,
    /// Every relation, deduplicated and sorted by identity.
    pub relations: Vec<Relation>,
}

/// One parent → child relation and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Relation {
    /// The parent id (lower-cased).
    pub parent: String,
    /// The child id (lower-cased).
    pub child: String,
    /// Whether a dependency row (not the scalar `parent`) asserts it.
    pub from_dependency: bool,
    /// The dependency kind (`parent` for the scalar field).
    pub kind: String,
    /// The item that stores the relation.
    pub holder: String,
}

impl Relation {
    /// Returns pm's relation identity (the sort key).
    fn identity(&self) -> String {
        let source = if self.from_dependency {
            "dependency"
        } else {
            "scalar_parent"
        };
        let target = if self.from_dependency {
            if self.holder == self.child {
                self.parent.as_str()
            } else {
                self.child.as_str()
            }
        } else {
            ""
        };
        [
            self.parent.as_str(),
            self.child.as_str(),
            source,
            self.kind.as_str(),
            self.holder.as_str(),
            target,
        ]
        .join("\u{0}")
    }

    /// Returns pm's JSON row of the relation.
    pub fn to_json(&self) -> serde_json::Value {
        let mut row = serde_json::Map::new();
        row.insert("parent_id".into(), self.parent.clone().into());
        row.insert("child_id".into(), self.child.clone().into());
        let source = if self.from_dependency {
            "dependency"
        } else {
            "scalar_parent"
        };
        row.insert("source".into(), source.into());
        row.insert("kind".into(), self.kind.clone().into());
        row.insert("holder_id".into(), self.holder.clone().into());
        if self.from_dependency {
            let target = if self.holder == self.child {
                &self.parent
            } else {
                &self.child
            };
            row.insert("target_id".into(), target.clone().into());
        }
        row.insert("child_cardinality".into(), "one".into());
        serde_json::Value::Object(row)
    }
}

/// What the hierarchy analysis reads of an item: a parsed item, or its facts kept by the
/// `pm health` memo.
pub(crate) trait HierarchyItem {
    /// Returns the item id.
    fn item_id(&self) -> &str;
    /// Returns whether the status is terminal.
    fn is_terminal(&self) -> bool;
    /// Returns the scalar `parent`, trimmed, when it is a non-empty string.
    fn parent_text(&self) -> Option<&str>;
    /// Returns `(id, kind)` of the dependency rows (every row the analysis may use).
    fn dependency_rows(&self) -> impl Iterator<Item = (&str, &str)>;
}

impl HierarchyItem for CheckItem {
    fn item_id(&self) -> &str {
        &self.id
    }

    fn is_terminal(&self) -> bool {
        self.terminal
    }

    fn parent_text(&self) -> Option<&str> {
        self.text("parent")
    }

    fn dependency_rows(&self) -> impl Iterator<Item = (&str, &str)> {
        self.dependencies()
    }
}

impl<T: HierarchyItem> HierarchyItem for &T {
    fn item_id(&self) -> &str {
        (**self).item_id()
    }

    fn is_terminal(&self) -> bool {
        (**self).is_terminal()
    }

    fn parent_text(&self) -> Option<&str> {
        (**self).parent_text()
    }

    fn dependency_rows(&self) -> impl Iterator<Item = (&str, &str)> {
        (**self).dependency_rows()
    }
}

/// Returns whether a lower-cased dependency kind makes a parent relation (the only rows the
/// analysis uses).
pub(crate) fn is_hierarchy_kind(kind: &str) -> bool {
    TARGET_PARENT_KINDS.contains(&kind) || SOURCE_PARENT_KINDS.contains(&kind)
}

/// Analyses the hierarchy of `items`.
pub(crate) fn analyze<T: HierarchyItem>(items: &[T]) -> Hierarchy {
    let mut by_id: BTreeMap<String, &T> = BTreeMap::new();
    for item in items {
        by_id
            .entry(item.item_id().trim().to_lowercase())
            .or_insert(item);
    }
    let terminal: BTreeSet<&str> = by_id
        .iter()
        .filter(|(_, i)| i.is_terminal())
        .map(|(id, _)| id.as_str())
        .collect();
    let scalar_parent = |item: &T| {
        item.parent_text()
            .map(str::to_lowercase)
            .filter(|p| by_id.contains_key(p))
    };
    let mut relations = Vec::new();
    for (holder, item) in &by_id {
        if let Some(parent) = scalar_parent(item) {
            relations.push(Relation {
                parent,
                child: holder.clone(),
                from_dependency: false,
                kind: "parent".into(),
                holder: holder.clone(),
            });
        }
        for (target, kind) in item.dependency_rows() {
            let target = target.to_lowercase();
            if !by_id.contains_key(&target) {
                continue;
            }
            let kind = kind.to_lowercase();
            let (parent, child) = if TARGET_PARENT_KINDS.contains(&kind.as_str()) {
                (target, holder.clone())
            } else if SOURCE_PARENT_KINDS.contains(&kind.as_str()) {
                (holder.clone(), target)
            } else {
                continue;
            };
            relations.push(Relation {
                parent,
                child,
                from_dependency: true,
                kind,
                holder: holder.clone(),
            });
        }
    }
    let mut parents_by_child: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut dependency_parents: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in &relations {
        parents_by_child
            .entry(r.child.clone())
            .or_default()
            .insert(r.parent.clone());
        if r.from_dependency {
            dependency_parents
                .entry(r.child.clone())
                .or_default()
                .insert(r.parent.clone());
        }
    }
    let is_terminal = |id: &str| terminal.contains(id);
    let mut out = Hierarchy::default();
    for (child, parents) in &parents_by_child {
        if parents.len() > 1 {
            let legacy = is_terminal(child) && parents.iter().all(|p| is_terminal(p));
            let ids: Vec<&str> = parents.iter().map(String::as_str).collect();
            let tag = if legacy { "legacy" } else { "active" };
            out.cardinality
                .push((format!("{child}:{}:{tag}", ids.join(",")), legacy));
        }
    }
    for (child, item) in &by_id {
        let Some(scalar) = scalar_parent(item) else {
            continue;
        };
        let others: Vec<&str> = dependency_parents
            .get(child)
            .into_iter()
            .flatten()
            .filter(|p| **p != scalar)
            .map(String::as_str)
            .collect();
        if others.is_empty() {
            continue;
        }
        let legacy =
            is_terminal(child) && is_terminal(&scalar) && others.iter().all(|p| is_terminal(p));
        let tag = if legacy { "legacy" } else { "active" };
        out.divergence.push((
            format!(
                "{child}:scalar={scalar}:dependencies={}:{tag}",
                others.join(",")
            ),
            legacy,
        ));
    }
    for (child, parents) in &parents_by_child {
        out.graph
            .insert(child.clone(), parents.iter().cloned().collect());
    }
    let nodes: Vec<String> = by_id.keys().cloned().collect();
    for component in cyclic_components(&nodes, &out.graph) {
        let legacy = component.iter().all(|id| is_terminal(id));
        out.cycles.push((component, legacy));
    }
    let mut keyed: Vec<(String, Relation)> =
        relations.into_iter().map(|r| (r.identity(), r)).collect();
    keyed.sort_by(|a, b| locale_compare(&a.0, &b.0));
    keyed.dedup_by(|a, b| a.0 == b.0);
    out.relations = keyed.into_iter().map(|(_, r)| r).collect();
    out.cardinality.sort_by(|a, b| locale_compare(&a.0, &b.0));
    out.divergence.sort_by(|a, b| locale_compare(&a.0, &b.0));
    out
}

/// Returns the strongly connected components of `graph` that form a cycle (more than one node,
/// or a self edge), each sorted, the list sorted (Tarjan, iterative).
pub(crate) fn cyclic_components(
    nodes: &[String],
    graph: &BTreeMap<String, Vec<String>>,
) -> Vec<Vec<String>> {
    let index_of: BTreeMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let edges: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            graph
                .get(n)
                .into_iter()
                .flatten()
                .filter_map(|t| index_of.get(t.as_str()).copied())
                .collect()
        })
        .collect();
    let n = nodes.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut next = 0usize;
    let mut out = Vec::new();
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut frames: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut edge)) = frames.last_mut() {
            if let Some(&w) = edges[v].get(*edge) {
                *edge += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    frames.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(nodes[w].clone());
                    if w == v {
                        break;
                    }
                }
                let self_loop = component.len() == 1 && edges[v].contains(&v);
                if component.len() > 1 || self_loop {
                    component.sort_by(|a, b| locale_compare(a, b));
                    out.push(component);
                }
            }
        }
    }
    out.sort_by(|a: &Vec<String>, b: &Vec<String>| {
        locale_compare(&a[0], &b[0])
            .then(a.len().cmp(&b.len()))
            .then_with(|| locale_compare(&a.join(","), &b.join(",")))
    });
    out
}

/// Returns one closed walk through a cycle component, starting at its first id (`a->b->a`).
pub(crate) fn sample_path(component: &[String], graph: &BTreeMap<String, Vec<String>>) -> String {
    let Some(start) = component.first() else {
        return String::new();
    };
    if component.len() == 1 {
        return format!("{start}->{start}");
    }
    let members: BTreeSet<&str> = component.iter().map(String::as_str).collect();
    let mut path = vec![start.as_str()];
    let mut seen: BTreeSet<&str> = BTreeSet::from([start.as_str()]);
    if walk(start, start, graph, &members, &mut path, &mut seen) {
        return path.join("->");
    }
    let mut fallback: Vec<&str> = component.iter().map(String::as_str).collect();
    fallback.push(start);
    fallback.join("->")
}

fn walk<'a>(
    current: &str,
    start: &'a str,
    graph: &'a BTreeMap<String, Vec<String>>,
    members: &BTreeSet<&str>,
    path: &mut Vec<&'a str>,
    seen: &mut BTreeSet<&'a str>,
) -> bool {
    for next in graph.get(current).into_iter().flatten() {
        let next = next.as_str();
        if !members.contains(next) {
            continue;
        }
        if next == start && path.len() > 1 {
            path.push(start);
            return true;
        }
        if !seen.insert(next) {
            continue;
        }
        path.push(next);
        if walk(next, start, graph, members, path, seen) {
            return true;
        }
        path.pop();
        seen.remove(next);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_cycles_and_sample_paths() {
        let nodes: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let graph: BTreeMap<String, Vec<String>> = [
            ("a", vec!["b"]),
            ("b", vec!["a"]),
            ("c", vec!["c"]),
            ("d", vec!["a"]),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
        .collect();
        let cycles = cyclic_components(&nodes, &graph);
        assert_eq!(cycles, [vec!["a", "b"], vec!["c"]]);
        assert_eq!(sample_path(&cycles[0], &graph), "a->b->a");
        assert_eq!(sample_path(&cycles[1], &graph), "c->c");
    }
}
