//! The `filters` echo of `pm list` (status, the filters of the one front-end, paging,
//! presentation) and the query contract its cursors are bound to.

use pm_engine::query::Sort;
use serde_json::{Map, Value, json};

use super::list::{ListArgs, ListSpelling, sort_name};
use crate::args::numbers::NumberFlag;
use crate::commands::filters::list_filters::{EchoStyle, ListFilterArgs, StatusScope};

impl ListFilterArgs {
    /// Appends the echo of the given value filters, `type` to `release` (the keys before the
    /// paging options); pm's list prints `parent` between `assignee_filter` and `sprint`.
    pub fn echo_selectors(&self, out: &mut Map<String, Value>) {
        let mut values = self.filters().echo_values(EchoStyle::Given);
        if let Some(parent) = values.shift_remove("parent") {
            let at = (values.keys())
                .position(|k| k == "sprint" || k == "release")
                .unwrap_or(values.len());
            values.shift_insert(at, "parent".into(), parent);
        }
        out.extend(values);
    }

    /// Appends the echo of the switches that are on (gaps, content, `today`/`recent`).
    pub fn echo_switches(&self, out: &mut Map<String, Value>) {
        out.extend(self.filters().echo_switches());
    }
}

/// `status` and `blocked_semantics`, the first keys of the `filters` echo.
pub(super) fn echo_status(
    out: &mut Map<String, Value>,
    scope: &StatusScope,
    all: bool,
    spelling: ListSpelling,
) {
    match (scope, spelling.status()) {
        (StatusScope::Many(ids), _) => {
            out.insert("status".into(), json!(ids));
        }
        (StatusScope::Single(id), _) => {
            out.insert("status".into(), json!(id));
        }
        (_, Some(id)) => {
            out.insert("status".into(), json!(id));
        }
        (StatusScope::All, None) => {
            out.insert("status".into(), json!("all"));
        }
        (StatusScope::Default, None) if all || spelling == ListSpelling::All => {
            out.insert("status".into(), json!("all"));
        }
        (StatusScope::Default, None) => {}
    }
    if spelling == ListSpelling::Blocked {
        out.insert("blocked_semantics".into(), json!("status_or_dependency"));
    }
}

/// The raw paging and projection options, between the selectors and the switches.
pub(super) fn echo_paging(out: &mut Map<String, Value>, args: &ListArgs) {
    if let Some(v) = &args.limit {
        out.insert("limit".into(), json!(v.raw()));
    }
    if let Some(v) = &args.offset {
        out.insert("offset".into(), json!(v.raw()));
    }
    if args.include_body {
        out.insert("include_body".into(), json!(true));
    }
    if let Some(v) = &args.fields {
        out.insert("fields".into(), json!(v));
    }
}

/// `no_truncate`, `strict_read`, `tree`, `tree_depth`, `sort`, `order`.
pub(super) fn echo_presentation(out: &mut Map<String, Value>, args: &ListArgs, sort: &Sort) {
    if args.no_truncate {
        out.insert("no_truncate".into(), json!(true));
    }
    if args.strict_read {
        out.insert("strict_read".into(), json!(true));
    }
    if args.tree {
        out.insert("tree".into(), json!(true));
    }
    if let Some(v) = &args.tree_depth {
        out.insert("tree_depth".into(), json!(v.raw()));
    }
    if sort.field.is_some() {
        out.insert("sort".into(), json!(sort_name(sort)));
        let order = if sort.descending { "desc" } else { "asc" };
        out.insert("order".into(), json!(order));
    }
}

/// The query contract a cursor is bound to: every query-semantic option, none of the paging or
/// presentation ones.
pub(super) fn cursor_contract(filters: &Map<String, Value>, sort: &Sort, args: &ListArgs) -> Value {
    const PRESENTATION: [&str; 8] = [
        "limit",
        "offset",
        "include_body",
        "compact",
        "fields",
        "no_truncate",
        "strict_read",
        "runtime_filters",
    ];
    let semantic: Map<String, Value> = filters
        .iter()
        .filter(|(k, _)| !PRESENTATION.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    json!({
        "filters": semantic,
        "sort": sort_name(sort),
        "order": if sort.descending { "desc" } else { "asc" },
        "tree": args.tree,
        "tree_depth": args.tree_depth.raw(),
    })
}
