//! `pm aggregate`: grouped item counts for governance queries, with
//! optional completion, sum and average, over the list-style filters; rows are `groups`.

use pm_engine::Error;
use pm_engine::read::aggregate::{AggregateSpec, GroupField, NumericTotal, aggregate};
use pm_engine::schema::load;
use pm_index::Index;
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
    let groups: Vec<Value> = result
        .groups
        .iter()
        .map(|g| {
            let mut key = Map::new();
            for (field, value) in &g.key {
                let v = value.as_ref().map_or(Value::Null, |v| v.to_json());
                key.insert(field.as_str().into(), v);
            }
            let mut row = Map::new();
            row.insert("group".into(), Value::Object(key));
            row.insert("count".into(), json!(g.count));
            row.insert("group_label".into(), json!(g.label()));
            if spec.completion {
                row.insert("completion".into(), completion(g.done, g.count));
            }
            if let Some(field) = &spec.sum {
                row.insert("sum".into(), numeric(field, &g.sum, false));
            }
            if let Some(field) = &spec.avg {
                row.insert("avg".into(), numeric(field, &g.avg, true));
            }
            Value::Object(row)
        })
        .collect();
    let mut filters = Map::new();
    let group_by: Vec<&str> = spec.group_by.iter().map(|f| f.as_str()).collect();
    filters.insert("group_by".into(), json!(group_by));
    filters.insert("count".into(), json!(true));
    filters.insert("completion".into(), json!(spec.completion));
    filters.insert("sum".into(), json!(spec.sum));
    filters.insert("avg".into(), json!(spec.avg));
    filters.insert("include_unparented".into(), json!(spec.include_unparented));
    let status = args.status.echo().unwrap_or(Value::Null);
    filters.insert("status".into(), status);
    filters.extend(view.echo_values(EchoStyle::Every));
    let envelope = json!({
        "groups": groups,
        "count": result.groups.len(),
        "totals": {
            "items_considered": result.items_considered,
            "items_grouped": result.items_grouped,
            "items_skipped_unparented": result.items_skipped_unparented,
        },
        "filters": filters,
        "now": ReadClock::new(&ctx.clock).stamp(),
    });
    let format = ctx.read_output.resolve_format(ctx.format, None);
    finish_read(
        envelope,
        &ReadMeta::new(Surface::Aggregate, "aggregate"),
        &ctx.read_output,
        format,
    )
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
