//! The typed `pm list` envelope: pm's keys in pm's order, the compact projection dropping the
//! presentation keys (`runtime_filters`, `sorting`, `now`).

use pm_engine::query::{Completeness, Sort, Source};
use serde::Serialize;
use serde_json::{Map, Value};

use super::list::sort_name;
use super::list_page::Listed;
use super::list_rows::Projection;

/// The list document before the read-output layer.
#[derive(Debug, Serialize)]
pub(super) struct ListEnvelope {
    items: Vec<Value>,
    count: usize,
    total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    applied_limit: Option<usize>,
    has_more: bool,
    truncated: bool,
    next_cursor: Option<String>,
    completeness: Completeness,
    source: Source,
    filters: FiltersEcho,
    /// `{mode, fields}`, from the projection itself.
    projection: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    sorting: Option<Sorting>,
    #[serde(skip_serializing_if = "Option::is_none")]
    now: Option<String>,
}

/// The `filters` echo: the flags as given (their keys are the flags used), then the empty
/// `runtime_filters` object outside the compact projection.
#[derive(Debug, Serialize)]
struct FiltersEcho {
    #[serde(flatten)]
    echo: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    runtime_filters: Option<Map<String, Value>>,
}

/// The `sorting` echo.
#[derive(Debug, Serialize)]
struct Sorting {
    sort: &'static str,
    order: &'static str,
}

impl ListEnvelope {
    /// Shapes one listed page; `now` is the read's formatted instant.
    pub(super) fn new(
        listed: Listed,
        filters: Map<String, Value>,
        projection: &Projection,
        sort: &Sort,
        now: String,
    ) -> Self {
        let full = *projection != Projection::Compact;
        let order = if sort.descending { "desc" } else { "asc" };
        Self {
            items: listed.rows,
            count: listed.count,
            total: listed.total,
            applied_limit: listed.applied_limit,
            has_more: listed.has_more,
            truncated: listed.has_more,
            next_cursor: listed.next_cursor,
            completeness: listed.completeness,
            source: listed.source,
            filters: FiltersEcho {
                echo: filters,
                runtime_filters: full.then(Map::new),
            },
            projection: projection.echo(),
            sorting: full.then(|| Sorting {
                sort: sort_name(sort),
                order,
            }),
            now: full.then_some(now),
        }
    }

    /// The envelope as the JSON object the read-output layer takes.
    pub(super) fn into_object(mut self) -> Map<String, Value> {
        let rows = std::mem::take(&mut self.items);
        crate::read_output::envelope::to_object_with_rows(&self, "items", rows)
    }
}

#[cfg(test)]
mod tests {
    use pm_engine::query::SortField;

    use super::*;

    fn listed() -> Listed {
        Listed {
            rows: Vec::new(),
            count: 0,
            total: 0,
            applied_limit: Some(20),
            has_more: false,
            next_cursor: None,
            completeness: Completeness::from_counts(0, 0),
            source: Source::Index,
            notices: Vec::new(),
        }
    }

    fn keys(env: &Map<String, Value>) -> Vec<&str> {
        env.keys().map(String::as_str).collect()
    }

    fn sort() -> Sort {
        Sort {
            field: Some(SortField::Priority),
            descending: false,
        }
    }

    #[test]
    fn full_envelope_keys_keep_pm_order() {
        let mut echo = Map::new();
        echo.insert("status".into(), Value::from("open"));
        let now = "2026-01-01T00:00:00.000Z".to_owned();
        let env = ListEnvelope::new(listed(), echo, &Projection::Brief, &sort(), now).into_object();
        let order = [
            "items",
            "count",
            "total",
            "applied_limit",
            "has_more",
            "truncated",
            "next_cursor",
            "completeness",
            "source",
            "filters",
            "projection",
            "sorting",
            "now",
        ];
        assert_eq!(keys(&env), order);
        let filters = env["filters"].as_object().map(keys);
        assert_eq!(filters, Some(vec!["status", "runtime_filters"]));
        let projection = env["projection"].as_object().map(keys);
        assert_eq!(projection, Some(vec!["mode", "fields"]));
        let sorting = env["sorting"].as_object().map(keys);
        assert_eq!(sorting, Some(vec!["sort", "order"]));
        assert_eq!(env["next_cursor"], Value::Null);
    }

    #[test]
    fn compact_envelope_drops_presentation_keys() {
        let mut page = listed();
        page.applied_limit = None;
        let now = String::new();
        let env =
            ListEnvelope::new(page, Map::new(), &Projection::Compact, &sort(), now).into_object();
        let order = [
            "items",
            "count",
            "total",
            "has_more",
            "truncated",
            "next_cursor",
            "completeness",
            "source",
            "filters",
            "projection",
        ];
        assert_eq!(keys(&env), order);
        assert_eq!(env["filters"], Value::Object(Map::new()));
    }
}
