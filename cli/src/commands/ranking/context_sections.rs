//! `context --depth/--section`: resolves which optional sections a context read includes and
//! computes them (`pm_engine::rank::sections`), with the `activity` rows from the
//! history-event projection (`pm_index::Index::events_all`).

use crate::failure::Result;
use pm_engine::Error;
use pm_engine::clock::format_iso_ms;
use pm_engine::query::{Query, Sort};
use pm_engine::rank::sections::{BUILT, ContextDepth, SECTIONS, SectionInput, compute};
use pm_engine::settings::ContextDefaults;
use pm_engine::summary::ItemSummary;
use pm_index::{EventQuery, EventSince, Index};
use serde_json::{Map, Value, json};

/// The resolved depth and sections of a context read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionPlan {
    /// The depth echoed in `depth`.
    pub depth: ContextDepth,
    /// Sections to compute, in pm's order.
    pub sections: Vec<&'static str>,
}

/// Resolves `--depth` (default: `settings.context.default_depth`) and `--section` (repeatable,
/// overrides the depth's list).
///
/// # Errors
/// `invalid_argument_value` for an unknown depth or section, or `workspace_memory` (not built).
pub fn plan(
    depth: Option<&str>,
    sections: &[String],
    defaults: &ContextDefaults,
) -> Result<SectionPlan> {
    let raw = depth.unwrap_or(defaults.default_depth.as_str());
    let depth = ContextDepth::parse(raw).ok_or_else(|| Error::InvalidArgument {
        field: "--depth".into(),
        value: raw.into(),
        reason: "Context --depth must be one of brief|standard|deep|full".into(),
        allowed: ContextDepth::VALUES.iter().map(|v| v.to_string()).collect(),
    })?;
    if sections.is_empty() {
        return Ok(SectionPlan {
            depth,
            sections: depth.sections(&defaults.sections),
        });
    }
    let mut chosen: Vec<&'static str> = Vec::new();
    for raw in sections.iter().flat_map(|s| s.split(',')) {
        let name = raw.trim().to_lowercase();
        let Some(known) = BUILT.iter().copied().find(|s| *s == name) else {
            let reason = if SECTIONS.contains(&name.as_str()) {
                "workspace_memory is not built yet".to_owned()
            } else {
                format!("Unknown context section \"{}\"", raw.trim())
            };
            return Err(Error::InvalidArgument {
                field: "--section".into(),
                value: raw.trim().into(),
                reason,
                allowed: BUILT.iter().map(|s| s.to_string()).collect(),
            }
            .into());
        };
        if !chosen.contains(&known) {
            chosen.push(known);
        }
    }
    chosen.sort_by_key(|s| SECTIONS.iter().position(|x| x == s));
    Ok(SectionPlan {
        depth,
        sections: chosen,
    })
}

/// What `build` needs besides the summaries.
#[derive(Debug)]
pub struct SectionArgs<'a> {
    /// Rows per section.
    pub limit: usize,
    /// History events in the activity section.
    pub activity_limit: usize,
    /// Days without an update that make active work stale.
    pub stale_threshold_days: u64,
    /// The clock.
    pub now_ms: i64,
    /// The filters at every status (for `progress`).
    pub all_statuses: &'a Query,
}

/// Computes the planned sections from the item summaries (read only when a section is
/// planned): the scope is the items `query` keeps (non-terminal, filtered) that `in_scope`
/// (the `--parent` subtree, by id) accepts, in default order.
///
/// # Errors
/// Index and scan failures while reading the summaries or the activity events.
pub fn build(
    plan: &SectionPlan,
    index: &Index<'_>,
    query: &Query,
    in_scope: &dyn Fn(&str) -> bool,
    args: &SectionArgs<'_>,
) -> Result<Map<String, Value>> {
    if plan.sections.is_empty() {
        return Ok(Map::new());
    }
    let corpus = index
        .summaries(&Query::all(), &Sort::default_order())?
        .rows
        .items;
    let scope: Vec<&ItemSummary> = query
        .filter(&corpus)
        .into_iter()
        .filter(|s| in_scope(&s.id))
        .collect();
    let all_statuses: Vec<&ItemSummary> = args
        .all_statuses
        .filter(&corpus)
        .into_iter()
        .filter(|s| in_scope(&s.id))
        .collect();
    let activity = if plan.sections.contains(&"activity") {
        activity_rows(index, &all_statuses, args)?
    } else {
        Vec::new()
    };
    Ok(compute(
        &plan.sections,
        SectionInput {
            scope: &scope,
            corpus: &corpus,
            all_statuses: &all_statuses,
            activity,
            limit: args.limit,
            now_ms: args.now_ms,
            stale_threshold_days: args.stale_threshold_days,
            schema: index.schema(),
        },
    ))
}

/// The newest `activity_limit` history events of the `kept` items within the stale window
/// (`stale_threshold_days` back from now), newest first: `{id, ts, op, author}`.
fn activity_rows(
    index: &Index<'_>,
    kept: &[&ItemSummary],
    args: &SectionArgs<'_>,
) -> Result<Vec<Value>> {
    const DAY_MS: i64 = 86_400_000;
    let days = i64::try_from(args.stale_threshold_days).unwrap_or(i64::MAX / DAY_MS);
    let from = args.now_ms.saturating_sub(days.saturating_mul(DAY_MS));
    let page = index.events_all(
        &EventQuery {
            since: Some(EventSince::Timestamp(format_iso_ms(from))),
            until: Some(format_iso_ms(args.now_ms.saturating_add(1))),
            ..EventQuery::default()
        },
        false,
    )?;
    // Only events of items the filters keep (at any status).
    let wanted: std::collections::BTreeSet<String> =
        kept.iter().map(|s| s.id.to_lowercase()).collect();
    let mut rows: Vec<&pm_index::EventRow> = page
        .events
        .iter()
        .filter(|e| wanted.contains(&e.stream.to_lowercase()))
        .collect();
    rows.sort_by(|a, b| {
        b.ts.cmp(&a.ts)
            .then_with(|| b.stream.cmp(&a.stream))
            .then_with(|| b.position.cmp(&a.position))
    });
    Ok(rows
        .into_iter()
        .take(args.activity_limit)
        .map(|e| json!({"id": e.stream, "ts": e.ts, "op": e.op, "author": e.author}))
        .collect())
}
