//! `pm stats`: item totals by type and status plus history totals, from the
//! index facade's counts (the same `(type, status)` rows `aggregate` builds on).

use pm_engine::query::{Query, StatusCount, TypeTally, tally_by_status, tally_by_type};
use pm_engine::schema::load;
use pm_index::Index;
use serde::Serialize;
use serde_json::{Map, Value};

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

/// The `stats` document before the read-output layer, in pm's key order.
#[derive(Debug, Serialize)]
struct StatsResult {
    totals: Totals,
    by_type: Vec<TypeRow>,
    /// Status ids are data (the registry plus any other status that occurs).
    by_status: Map<String, Value>,
    omitted_zero_buckets: usize,
    generated_at: String,
}

/// Item and history totals.
#[derive(Debug, Serialize)]
struct Totals {
    items: usize,
    history_streams: usize,
    history_entries: usize,
}

/// One `by_type` row: the type, its total, the built-in status columns and the rest.
#[derive(Debug, Serialize)]
struct TypeRow {
    #[serde(rename = "type")]
    item_type: String,
    total: usize,
    open: usize,
    in_progress: usize,
    blocked: usize,
    draft: usize,
    closed: usize,
    canceled: usize,
    other: usize,
}

impl From<TypeTally> for TypeRow {
    fn from(t: TypeTally) -> Self {
        let [open, in_progress, blocked, draft, closed, canceled] = t.columns;
        Self {
            item_type: t.item_type,
            total: t.total,
            open,
            in_progress,
            blocked,
            draft,
            closed,
            canceled,
            other: t.other,
        }
    }
}

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
    let by_type = type_rows(&stats.counts, &registered, args.include_empty, &mut omitted);
    let by_status = status_counts(&stats.counts, &statuses, args.include_empty, &mut omitted);
    let result = StatsResult {
        totals: Totals {
            items: stats.counts.iter().map(|r| r.count).sum(),
            history_streams: stats.history.streams,
            history_entries: stats.history.entries,
        },
        by_type,
        by_status,
        omitted_zero_buckets: omitted,
        generated_at: ReadClock::new(&ctx.clock).stamp(),
    };
    let value = serde_json::to_value(&result)
        .map_err(|e| pm_engine::Error::internal(format!("stats result: {e}")))?;
    let format = ctx.read_output.resolve_format(ctx.format, None);
    let meta = ReadMeta::new(Surface::Stats, "stats");
    finish_read(value, &meta, &ctx.read_output, format)
}

/// The `by_type` rows, zero rows counted into `omitted` unless `include_empty`.
fn type_rows(
    counts: &[StatusCount],
    registered: &[&str],
    include_empty: bool,
    omitted: &mut usize,
) -> Vec<TypeRow> {
    tally_by_type(counts, registered)
        .into_iter()
        .filter(|t| {
            let keep = include_empty || t.total > 0;
            *omitted += usize::from(!keep);
            keep
        })
        .map(TypeRow::from)
        .collect()
}

/// The `by_status` counts in registry order, zero counts counted into `omitted` unless
/// `include_empty`.
fn status_counts(
    counts: &[StatusCount],
    statuses: &[&str],
    include_empty: bool,
    omitted: &mut usize,
) -> Map<String, Value> {
    let mut by_status = Map::new();
    for (status, n) in tally_by_status(counts, statuses) {
        if include_empty || n > 0 {
            by_status.insert(status, Value::from(n));
        } else {
            *omitted += 1;
        }
    }
    by_status
}

#[cfg(test)]
mod tests {
    use pm_engine::query::STATUS_COLUMNS;

    use super::*;

    fn keys(value: &Value) -> Vec<&str> {
        value
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    #[test]
    fn type_row_keys_follow_the_status_columns() {
        let tally = TypeTally {
            item_type: "task".into(),
            total: 21,
            columns: [1, 2, 3, 4, 5, 6],
            other: 0,
        };
        let value = serde_json::to_value(TypeRow::from(tally)).unwrap();
        let mut expected = vec!["type", "total"];
        expected.extend(STATUS_COLUMNS);
        expected.push("other");
        assert_eq!(keys(&value), expected);
        for (i, column) in STATUS_COLUMNS.iter().enumerate() {
            assert_eq!(value[*column], i + 1, "{column}");
        }
    }

    #[test]
    fn stats_keys_keep_pm_order() {
        let result = StatsResult {
            totals: Totals {
                items: 1,
                history_streams: 2,
                history_entries: 3,
            },
            by_type: Vec::new(),
            by_status: Map::new(),
            omitted_zero_buckets: 0,
            generated_at: "2026-01-01T00:00:00.000Z".into(),
        };
        let value = serde_json::to_value(&result).unwrap();
        let order = [
            "totals",
            "by_type",
            "by_status",
            "omitted_zero_buckets",
            "generated_at",
        ];
        assert_eq!(keys(&value), order);
        let totals = ["items", "history_streams", "history_entries"];
        assert_eq!(keys(&value["totals"]), totals);
    }
}
