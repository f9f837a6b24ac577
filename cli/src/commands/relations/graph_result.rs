//! The typed result of `pm graph <subcommand>`: the envelope's keys in output order, the
//! subcommand's own keys in the flattened body, conditional keys skipped when absent.

use std::collections::BTreeMap;

use pm_engine::read::graph::{Finding, GraphAnalysis, ItemGraph, Reached};
use serde::Serialize;
use serde_json::Value;

use super::deps_result::FieldGroup;

/// The whole `graph` read envelope before the shared read-output step.
#[derive(Serialize)]
pub struct GraphResult {
    pub subcommand: String,
    pub root: Option<String>,
    /// Present for `paths` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    pub count: usize,
    /// Present for `--summary` reads and for `audit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<usize>,
    pub truncated: bool,
    pub cost: GraphCost,
    pub next_cursor: Option<String>,
    #[serde(flatten)]
    pub body: GraphBody,
    pub projection: GraphProjection,
}

/// What the read cost.
#[derive(Serialize)]
pub struct GraphCost {
    pub visited_nodes: usize,
    pub inspected_edges: usize,
}

/// The keys that follow `next_cursor`, by subcommand.
#[derive(Serialize)]
#[serde(untagged)]
pub enum GraphBody {
    /// ancestors, descendants, predecessors, successors and impact.
    Traversal(TraversalBody),
    /// paths.
    Paths(PathsBody),
    /// analyze.
    Analysis { analysis: GraphAnalysis },
    /// audit.
    Audit(AuditBody),
}

/// A traversal's rows and the bounds it ran with.
#[derive(Serialize)]
pub struct TraversalBody {
    /// Traversal rows (absent with `--summary`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ids: Option<Vec<TraversalRow>>,
    /// Impact rows (absent with `--summary`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub affected: Option<Vec<ReachedRow>>,
    pub direction: &'static str,
    pub kinds: Vec<String>,
    pub max_depth: Option<usize>,
    pub limit: Option<usize>,
    pub depth_limited: bool,
    pub missing: Vec<String>,
    pub cycle_count: usize,
    pub cycles: Vec<Vec<String>>,
}

/// A traversal row: the bare id, or the reached node's details with `--full`.
#[derive(Serialize)]
#[serde(untagged)]
pub enum TraversalRow {
    Id(String),
    Reached(ReachedRow),
}

/// A reached node; a traversal names its distance `depth`, impact `distance`.
#[derive(Serialize)]
pub struct ReachedRow {
    pub id: String,
    pub title: String,
    #[serde(rename = "type")]
    pub item_type: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance: Option<usize>,
    pub via: String,
    pub from: String,
}

/// The paths found and the bounds of the search.
#[derive(Serialize)]
pub struct PathsBody {
    /// Absent with `--summary`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<PathRow>>,
    pub direction: &'static str,
    pub kinds: Vec<String>,
    pub max_depth: usize,
    pub max_paths: usize,
    pub stopped_by: Option<&'static str>,
}

/// One path: its length, ids and edge kinds; the nodes' details with `--full`.
#[derive(Serialize)]
pub struct PathRow {
    pub length: usize,
    pub ids: Vec<String>,
    pub via: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<NodeRow>>,
}

/// A node's id, title, type and status.
#[derive(Serialize)]
pub struct NodeRow {
    pub id: String,
    pub title: String,
    #[serde(rename = "type")]
    pub item_type: String,
    pub status: String,
}

/// The page of audit findings and the counts over all of them.
#[derive(Serialize)]
pub struct AuditBody {
    /// Absent with `--summary`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub findings: Option<Vec<Finding>>,
    pub finding_counts: BTreeMap<&'static str, usize>,
    pub limit: Option<usize>,
}

/// Which field groups the projection declares and which it included.
#[derive(Serialize)]
pub struct GraphProjection {
    pub mode: &'static str,
    pub declared_field_groups: Vec<FieldGroup>,
    pub included_field_groups: Vec<&'static str>,
}

impl GraphProjection {
    /// The projection for `mode`: `result_rows` is declared when the read has rows and
    /// included when they are `complete`.
    pub fn new(mode: &'static str, has_rows: bool, complete: bool) -> GraphProjection {
        GraphProjection {
            mode,
            declared_field_groups: if has_rows {
                vec![FieldGroup {
                    name: "result_rows",
                    restore_with: "--full",
                }]
            } else {
                Vec::new()
            },
            included_field_groups: if has_rows && complete {
                vec!["result_rows"]
            } else {
                Vec::new()
            },
        }
    }
}

impl NodeRow {
    /// The row of `node`.
    pub fn of(graph: &ItemGraph, node: usize) -> NodeRow {
        let info = graph.info(node);
        NodeRow {
            id: info.id.clone(),
            title: info.title.clone(),
            item_type: info.item_type.clone(),
            status: info.status.clone(),
        }
    }
}

impl ReachedRow {
    /// The row of `r`; `impact` names its distance `distance` instead of `depth`.
    pub fn of(graph: &ItemGraph, r: &Reached, impact: bool) -> ReachedRow {
        let NodeRow {
            id,
            title,
            item_type,
            status,
        } = NodeRow::of(graph, r.node);
        ReachedRow {
            id,
            title,
            item_type,
            status,
            depth: (!impact).then_some(r.depth),
            distance: impact.then_some(r.depth),
            via: graph.kind_name(r.via).to_owned(),
            from: graph.id(r.from).to_owned(),
        }
    }
}

impl GraphResult {
    /// The value the shared read-output step takes.
    pub fn into_value(self) -> pm_engine::Result<Value> {
        serde_json::to_value(self)
            .map_err(|e| pm_engine::Error::internal(format!("graph result: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(target: Option<String>, total: Option<usize>, body: GraphBody) -> GraphResult {
        GraphResult {
            subcommand: "s".into(),
            root: None,
            target,
            count: 1,
            total,
            truncated: false,
            cost: GraphCost {
                visited_nodes: 2,
                inspected_edges: 3,
            },
            next_cursor: None,
            body,
            projection: GraphProjection::new("default", true, false),
        }
    }

    fn text(result: GraphResult) -> String {
        serde_json::to_string(&result.into_value().unwrap()).unwrap()
    }

    const HEAD: &str =
        r#""truncated":false,"cost":{"visited_nodes":2,"inspected_edges":3},"next_cursor":null,"#;
    const PROJECTION: &str = r#""projection":{"mode":"default","declared_field_groups":[{"name":"result_rows","restore_with":"--full"}],"included_field_groups":[]}}"#;

    #[test]
    fn traversal_keys_keep_output_order() {
        let row = ReachedRow {
            id: "a".into(),
            title: "t".into(),
            item_type: "Task".into(),
            status: "open".into(),
            depth: None,
            distance: Some(1),
            via: "parent".into(),
            from: "r".into(),
        };
        let body = GraphBody::Traversal(TraversalBody {
            ids: None,
            affected: Some(vec![row]),
            direction: "out",
            kinds: vec!["parent".into()],
            max_depth: None,
            limit: Some(10),
            depth_limited: false,
            missing: Vec::new(),
            cycle_count: 0,
            cycles: Vec::new(),
        });
        assert_eq!(
            text(result(None, None, body)),
            [
                r#"{"subcommand":"s","root":null,"count":1,"#,
                HEAD,
                r#""affected":[{"id":"a","title":"t","type":"Task","status":"open","distance":1,"#,
                r#""via":"parent","from":"r"}],"direction":"out","kinds":["parent"],"#,
                r#""max_depth":null,"limit":10,"depth_limited":false,"missing":[],"#,
                r#""cycle_count":0,"cycles":[],"#,
                PROJECTION,
            ]
            .concat()
        );
    }

    #[test]
    fn paths_and_audit_keys_keep_output_order() {
        let body = GraphBody::Paths(PathsBody {
            paths: Some(vec![PathRow {
                length: 1,
                ids: vec!["a".into(), "b".into()],
                via: vec!["blocks".into()],
                nodes: None,
            }]),
            direction: "out",
            kinds: Vec::new(),
            max_depth: 10,
            max_paths: 10,
            stopped_by: None,
        });
        assert_eq!(
            text(result(Some("b".into()), Some(1), body)),
            [
                r#"{"subcommand":"s","root":null,"target":"b","count":1,"total":1,"#,
                HEAD,
                r#""paths":[{"length":1,"ids":["a","b"],"via":["blocks"]}],"#,
                r#""direction":"out","kinds":[],"max_depth":10,"max_paths":10,"stopped_by":null,"#,
                PROJECTION,
            ]
            .concat()
        );
        let body = GraphBody::Audit(AuditBody {
            findings: None,
            finding_counts: BTreeMap::from([("self_reference", 1)]),
            limit: None,
        });
        assert_eq!(
            text(result(None, Some(1), body)),
            [
                r#"{"subcommand":"s","root":null,"count":1,"total":1,"#,
                HEAD,
                r#""finding_counts":{"self_reference":1},"limit":null,"#,
                PROJECTION,
            ]
            .concat()
        );
    }
}
