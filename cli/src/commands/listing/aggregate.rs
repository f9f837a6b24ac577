//! `pm aggregate`: grouped item counts for governance queries, with
//! optional completion, sum and average, over the list-style filters; rows are `groups`.

use pm_engine::Error;
use pm_engine::read::aggregate::{AggregateSpec, Group, GroupField, NumericTotal, aggregate};
use pm_engine::schema::load;
use pm_index::Index;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::clock_reads::ReadClock;
use crate::commands::filters::list_filters::{EchoStyle, Filters, SelectArgs, StatusArgs};
use crate::commands::filters::rank_filters::split_values;
use crate::ctx::Ctx;
use crate::failure::Result;
use crate::progress::index_options;
use crate::read_output::{Finished, ReadMeta, Surface, finish_read};

/// Count items in groups (by status unless --group-by says otherwise)
///
/// Every item matching the filters (all statuses unless --status is given) is counted in its
/// group; grouping by tags counts an item once per tag, and grouping by parent skips items
/// without one unless --include-unparented. Groups are ordered by each group-by value in turn
/// (numbers ascending, text by locale, blank values last) and labelled `field=value | …`.
#[derive(Debug, Default, clap::Args)]
pub struct AggregateArgs {
    /// Fields to group by, comma-separated: parent, type, priority, status, assignee, tags,
    /// sprint, release
    #[arg(long, value_name = "FIELDS", default_value = "status")]
    pub group_by: String,

    /// Report the item count of each group (always on; accepted for pm compatibility)
    #[arg(long)]
    pub count: bool,

    /// Report how many items of each group have a terminal status
    #[arg(long)]
    pub completion: bool,

    /// Sum this numeric metadata field per group (e.g. estimated_minutes)
    #[arg(long, value_name = "FIELD")]
    pub sum: Option<String>,

    /// Average this numeric metadata field per group
    #[arg(long, value_name = "FIELD")]
    pub avg: Option<String>,

    /// With --group-by parent: count items without a parent as the (unparented) group
    #[arg(long)]
    pub include_unparented: bool,

    /// The status scope (default: every status).
    #[command(flatten)]
    pub status: StatusArgs,

    /// Item filters.
    #[command(flatten)]
    pub filters: SelectArgs,
}

/// The `aggregate` result after the read-output layer.
pub type AggregateOutput = Finished;

/// The `aggregate` document before the read-output layer, in pm's key order.
#[derive(Debug, Serialize)]
struct AggregateResult {
    groups: Vec<GroupRow>,
    count: usize,
    totals: AggregateTotals,
    filters: AggregateFilters,
    now: String,
}

/// One group: its key (one entry per `--group-by` field), its count and label, then the
/// requested measures.
#[derive(Debug, Serialize)]
struct GroupRow {
    group: Map<String, Value>,
    count: usize,
    group_label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    completion: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sum: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    avg: Option<Value>,
}

/// How many items were considered, grouped and skipped.
#[derive(Debug, Serialize)]
struct AggregateTotals {
    items_considered: usize,
    items_grouped: usize,
    items_skipped_unparented: usize,
}

/// The `filters` echo: the aggregation spec, the status, then the selector echo.
#[derive(Debug, Serialize)]
struct AggregateFilters {
    group_by: Vec<&'static str>,
    count: bool,
    completion: bool,
    sum: Option<String>,
    avg: Option<String>,
    include_unparented: bool,
    status: Value,
    #[serde(flatten)]
    selectors: Map<String, Value>,
}

/// Shapes one group of `spec`.
fn group_row(g: &Group, spec: &AggregateSpec) -> GroupRow {
    let group = g
        .key
        .iter()
        .map(|(field, value)| {
            let v = value.as_ref().map_or(Value::Null, |v| v.to_json());
            (field.as_str().to_owned(), v)
        })
        .collect();
    GroupRow {
        group,
        count: g.count,
        group_label: g.label(),
        completion: spec.completion.then(|| completion(g.done, g.count)),
        sum: spec.sum.as_deref().map(|f| numeric(f, &g.sum, false)),
        avg: spec.avg.as_deref().map(|f| numeric(f, &g.avg, true)),
    }
}

/// Groups the tracker's items.
///
/// # Errors
/// `not_in_project`; `invalid_argument_value` for an unknown group-by field, status, type or
/// priority, or a blank `--sum`/`--avg` field; scan failures; the read-output refusals.
pub fn cmd_aggregate(ctx: &Ctx, args: &AggregateArgs) -> Result<AggregateOutput> {
    let spec = spec_of(args)?;
    let tracker = ctx.tracker()?;
    let loaded = load(&tracker, &ctx.settings_env())?;
    let schema = &loaded.schema;
    let view = Filters::new(&args.filters);
    let query = view.to_query(
        args.status.filter(schema)?,
        schema,
        &ReadClock::new(&ctx.clock).window_base(),
    )?;
    let index = Index::open(&tracker, schema, index_options(ctx));
    let rows = index.aggregate_rows(&query, &spec)?.rows;
    let result = aggregate(&rows, &spec);
    let filters = AggregateFilters {
        group_by: spec.group_by.iter().map(|f| f.as_str()).collect(),
        count: true,
        completion: spec.completion,
        sum: spec.sum.clone(),
        avg: spec.avg.clone(),
        include_unparented: spec.include_unparented,
        status: args.status.echo().unwrap_or(Value::Null),
        selectors: view.echo_values(EchoStyle::Every),
    };
    let envelope = AggregateResult {
        groups: result.groups.iter().map(|g| group_row(g, &spec)).collect(),
        count: result.groups.len(),
        totals: AggregateTotals {
            items_considered: result.items_considered,
            items_grouped: result.items_grouped,
            items_skipped_unparented: result.items_skipped_unparented,
        },
        filters,
        now: ReadClock::new(&ctx.clock).stamp(),
    };
    let value = serde_json::to_value(&envelope)
        .map_err(|e| Error::internal(format!("aggregate result: {e}")))?;
    let format = ctx.read_output.resolve_format(ctx.format, None);
    let meta = ReadMeta::new(Surface::Aggregate, "aggregate");
    finish_read(value, &meta, &ctx.read_output, format)
}

fn spec_of(args: &AggregateArgs) -> Result<AggregateSpec> {
    let allowed = || {
        GroupField::ALL
            .iter()
            .map(|f| f.as_str().to_owned())
            .collect::<Vec<_>>()
    };
    let mut group_by = Vec::new();
    for token in split_values(std::slice::from_ref(&args.group_by)) {
        let field = GroupField::parse(&token).ok_or_else(|| Error::InvalidArgument {
            field: "--group-by".into(),
            value: token.clone(),
            reason: "unknown group-by field".into(),
            allowed: allowed(),
        })?;
        if !group_by.contains(&field) {
            group_by.push(field);
        }
    }
    if group_by.is_empty() {
        return Err(Error::InvalidArgument {
            field: "--group-by".into(),
            value: args.group_by.clone(),
            reason: "name at least one field".into(),
            allowed: allowed(),
        }
        .into());
    }
    let field = |flag: &str, raw: &Option<String>| -> Result<Option<String>> {
        match raw.as_deref().map(str::trim) {
            None => Ok(None),
            Some("") => Err(Error::InvalidArgument {
                field: flag.into(),
                value: String::new(),
                reason: "name a numeric metadata field (e.g. estimated_minutes)".into(),
                allowed: Vec::new(),
            }
            .into()),
            Some(f) => Ok(Some(f.to_owned())),
        }
    };
    Ok(AggregateSpec {
        group_by,
        completion: args.completion,
        sum: field("--sum", &args.sum)?,
        avg: field("--avg", &args.avg)?,
        include_unparented: args.include_unparented,
    })
}

/// `{done, total, percent}`: terminal items, items, and their share rounded to 2 decimals.
fn completion(done: usize, total: usize) -> Value {
    let percent = if total == 0 {
        0.0
    } else {
        (done as f64 * 10_000.0 / total as f64).round() / 100.0
    };
    let percent = pm_engine::json::number_from_f64(percent).map_or(Value::Null, Value::Number);
    json!({"done": done, "total": total, "percent": percent})
}

/// `{field, value, counted}`; the average is `null` when no item had a value.
fn numeric(field: &str, total: &NumericTotal, average: bool) -> Value {
    let value = if average {
        (total.counted > 0).then(|| total.sum / total.counted as f64)
    } else {
        Some(total.sum)
    };
    json!({
        "field": field,
        "value": value
            .and_then(pm_engine::json::number_from_f64)
            .map_or(Value::Null, Value::Number),
        "counted": total.counted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(value: &Value) -> Vec<String> {
        value
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    #[test]
    fn aggregate_keys_keep_pm_order() {
        let mut selectors = Map::new();
        selectors.insert("type".into(), Value::Null);
        let result = AggregateResult {
            groups: vec![GroupRow {
                group: Map::new(),
                count: 2,
                group_label: "open".into(),
                completion: Some(completion(1, 2)),
                sum: None,
                avg: Some(numeric("estimated_minutes", &NumericTotal::default(), true)),
            }],
            count: 1,
            totals: AggregateTotals {
                items_considered: 2,
                items_grouped: 2,
                items_skipped_unparented: 0,
            },
            filters: AggregateFilters {
                group_by: vec!["status"],
                count: true,
                completion: true,
                sum: None,
                avg: Some("estimated_minutes".into()),
                include_unparented: false,
                status: Value::Null,
                selectors,
            },
            now: String::new(),
        };
        let value = serde_json::to_value(&result).unwrap();
        let order = ["groups", "count", "totals", "filters", "now"];
        assert_eq!(keys(&value), order);
        let row = ["group", "count", "group_label", "completion", "avg"];
        assert_eq!(keys(&value["groups"][0]), row);
        let filters = [
            "group_by",
            "count",
            "completion",
            "sum",
            "avg",
            "include_unparented",
            "status",
            "type",
        ];
        assert_eq!(keys(&value["filters"]), filters);
        let totals = [
            "items_considered",
            "items_grouped",
            "items_skipped_unparented",
        ];
        assert_eq!(keys(&value["totals"]), totals);
        assert_eq!(value["groups"][0]["completion"]["percent"], 50.0);
    }
}
