//! The typed result of `pm deps <id>` in read mode: the envelope's keys in output order,
//! conditional keys skipped when absent.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

/// The whole `deps` read envelope before the shared read-output step.
#[derive(Serialize)]
pub struct DepsResult {
    pub id: String,
    pub format: &'static str,
    pub node_count: usize,
    pub edge_count: usize,
    pub edge_basis: &'static str,
    pub missing_count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph: Option<DepsPage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<DepsPage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncation_reasons: Option<BTreeSet<&'static str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limits: Option<DepsLimits>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted_node_count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted_edge_count: Option<usize>,
    pub legacy_alias_counts: BTreeMap<String, usize>,
    pub projection: DepsProjection,
}

/// Nodes and edges of the graph or context format; the context page adds its cursor.
#[derive(Serialize)]
pub struct DepsPage {
    pub nodes: Vec<Value>,
    pub edges: Vec<Value>,
    /// Present (possibly null) only for the context format.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// The bounds in force; an unbounded limit is null.
#[derive(Serialize)]
pub struct DepsLimits {
    pub max_depth: usize,
    pub node_limit: Option<usize>,
    pub edge_limit: Option<usize>,
}

/// Which field groups the projection declares and which it included.
#[derive(Serialize)]
pub struct DepsProjection {
    pub mode: &'static str,
    pub declared_field_groups: [FieldGroup; 1],
    pub included_field_groups: Vec<&'static str>,
}

/// A field group and the flag that restores it.
#[derive(Serialize)]
pub struct FieldGroup {
    pub name: &'static str,
    pub restore_with: &'static str,
}

impl DepsProjection {
    /// The projection for `mode`; the dependency tree counts as included when nothing was cut.
    pub fn new(mode: &'static str, complete: bool) -> DepsProjection {
        DepsProjection {
            mode,
            declared_field_groups: [FieldGroup {
                name: "dependency_tree",
                restore_with: "--full",
            }],
            included_field_groups: if complete {
                vec!["dependency_tree"]
            } else {
                Vec::new()
            },
        }
    }
}

impl DepsResult {
    /// The value the shared read-output step takes.
    pub fn into_value(self) -> pm_engine::Result<Value> {
        serde_json::to_value(self)
            .map_err(|e| pm_engine::Error::internal(format!("deps result: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_output_order() {
        let result = DepsResult {
            id: "a".into(),
            format: "context",
            node_count: 2,
            edge_count: 1,
            edge_basis: "declared_dependencies",
            missing_count: 0,
            tree: None,
            graph: None,
            context: Some(DepsPage {
                nodes: Vec::new(),
                edges: Vec::new(),
                next_cursor: Some(None),
                has_more: Some(false),
            }),
            truncated: Some(false),
            truncation_reasons: Some(BTreeSet::new()),
            limits: Some(DepsLimits {
                max_depth: 10,
                node_limit: Some(25),
                edge_limit: None,
            }),
            omitted_node_count: Some(0),
            omitted_edge_count: Some(0),
            legacy_alias_counts: BTreeMap::new(),
            projection: DepsProjection::new("context", true),
        };
        let text = serde_json::to_string(&result.into_value().unwrap()).unwrap();
        assert_eq!(
            text,
            concat!(
                r#"{"id":"a","format":"context","node_count":2,"edge_count":1,"#,
                r#""edge_basis":"declared_dependencies","missing_count":0,"#,
                r#""context":{"nodes":[],"edges":[],"next_cursor":null,"has_more":false},"#,
                r#""truncated":false,"truncation_reasons":[],"#,
                r#""limits":{"max_depth":10,"node_limit":25,"edge_limit":null},"#,
                r#""omitted_node_count":0,"omitted_edge_count":0,"legacy_alias_counts":{},"#,
                r#""projection":{"mode":"context","declared_field_groups":"#,
                r#"[{"name":"dependency_tree","restore_with":"--full"}],"#,
                r#""included_field_groups":["dependency_tree"]}}"#
            )
        );
    }
}
