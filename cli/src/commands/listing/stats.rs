//! `pm stats`: item totals by type and status plus history totals, from the
//! index facade's counts (the same `(type, status)` rows `aggregate` builds on).

use pm_engine::query::{Query, STATUS_COLUMNS, tally_by_status, tally_by_type};
use pm_engine::schema::load;
use pm_index::Index;
use serde_json::{Map, Value, json};

use crate::clock_reads::ReadClock;
use crate::ctx::Ctx;
use crate::failure::Result;
use crate::progress::index_options;
use crate::read_output::{Finished, ReadMeta, Surface, finish_read};

/// Count items by type and status, and history streams and entries
///
/// by_type lists types by total (zero rows left out unless --include-empty), by_status lists
/// statuses in registry order; omitted_zero_buckets says how many zero rows and statuses were
/// left out.
#[derive(Debug, Default, clap::Args)]
pub struct StatsArgs {
    /// Keep types and statuses without items
    #[arg(long)]
    pub include_empty: bool,
}

/// The `stats` result after the read-output layer.
pub type StatsOutput = Finished;

/// Counts the tracker's items and history.
///
/// # Errors
/// `not_in_project`; scan failures; the read-output refusals.
pub fn cmd_stats(ctx: &Ctx, args: &StatsArgs) -> Result<StatsOutput> {
    let tracker = ctx.tracker()?;
    let loaded = load(&tracker, &ctx.settings_env())?;
    let schema = &loaded.schema;
    let index = Index::open(&tracker, schema, index_options(ctx));
    let stats = index.stats(&Query::all())?;
    let history = &stats.history;
    let registered: Vec<&str> = schema
        .types
        .definitions()
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    let statuses: Vec<&str> = schema
        .statuses
        .definitions()
        .iter()
        .map(|d| d.id.as_str())
        .collect();
    let mut omitted = 0usize;
    let by_type: Vec<Value> = tally_by_type(&stats.counts, &registered)
        .into_iter()
        .filter(|t| {
            let keep = args.include_empty || t.total > 0;
            omitted += usize::from(!keep);
            keep
        })
        .map(|t| {
            let mut row = Map::new();
            row.insert("type".into(), json!(t.item_type));
            row.insert("total".into(), json!(t.total));
            for (name, n) in STATUS_COLUMNS.iter().zip(t.columns) {
                row.insert((*name).into(), json!(n));
            }
            row.insert("other".into(), json!(t.other));
            Value::Object(row)
        })
        .collect();
    let mut by_status = Map::new();
    for (status, n) in tally_by_status(&stats.counts, &statuses) {
        if args.include_empty || n > 0 {
            by_status.insert(status, json!(n));
        } else {
            omitted += 1;
        }
    }
    let items: usize = stats.counts.iter().map(|r| r.count).sum();
    let result = json!({
        "totals": {
            "items": items,
            "history_streams": history.streams,
            "history_entries": history.entries,
        },
        "by_type": by_type,
        "by_status": by_status,
        "omitted_zero_buckets": omitted,
        "generated_at": ReadClock::new(&ctx.clock).stamp(),
    });
    let format = ctx.read_output.resolve_format(ctx.format, None);
    finish_read(
        result,
        &ReadMeta::new(Surface::Stats, "stats"),
        &ctx.read_output,
        format,
    )
}
