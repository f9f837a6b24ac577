//! The optional `context` sections: which sections a depth or `--section`
//! selects, and each section's rows computed from the item summaries. pm's exact section
//! shapes are not in our references; these are ours, documented in `docs/reads.md`.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::query::Relations;
use crate::rank::critical::is_in_progress;
use crate::read::children::{is_container_type, parent_key};
use crate::schema::RuntimeSchema;
use crate::summary::{ItemSummary, StatusClass};

/// Every section in pm's order (the order the omission receipt lists them in), which is
/// also the order of `sections_included` and of the envelope keys.
pub const SECTIONS: [&str; 11] = [
    "hierarchy",
    "activity",
    "progress",
    "blockers",
    "recently_created",
    "unparented",
    "files",
    "workload",
    "staleness",
    "tests",
    "workspace_memory",
];

/// Sections we compute: all but the last, `workspace_memory`, which is not built.
pub const BUILT: &[&str] = SECTIONS.split_at(SECTIONS.len() - 1).0;

/// The sections of `--depth standard`: those pm's omission receipt restores with it.
const STANDARD: [&str; 7] = [
    "hierarchy",
    "activity",
    "progress",
    "blockers",
    "recently_created",
    "unparented",
    "workload",
];

/// A `context --depth`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContextDepth {
    /// No optional sections (pm's default).
    Brief,
    /// hierarchy, activity, progress, blockers, recently_created, unparented, workload.
    Standard,
    /// Standard plus files, staleness, tests (`full` adds workspace_memory in pm; we treat
    /// `full` as deep).
    Deep,
}

impl ContextDepth {
    /// The accepted values.
    pub const VALUES: [&'static str; 4] = ["brief", "standard", "deep", "full"];

    /// Parses a depth (trimmed, case-insensitive).
    pub fn parse(raw: &str) -> Option<ContextDepth> {
        match raw.trim().to_lowercase().as_str() {
            "brief" => Some(ContextDepth::Brief),
            "standard" => Some(ContextDepth::Standard),
            "deep" | "full" => Some(ContextDepth::Deep),
            _ => None,
        }
    }

    /// The name echoed in `depth`.
    pub fn name(self) -> &'static str {
        match self {
            ContextDepth::Brief => "brief",
            ContextDepth::Standard => "standard",
            ContextDepth::Deep => "deep",
        }
    }

    /// The sections of this depth, in pm's order, minus those a settings toggle turns off.
    pub fn sections(self, toggles: &BTreeMap<String, bool>) -> Vec<&'static str> {
        BUILT
            .iter()
            .copied()
            .filter(|s| match self {
                ContextDepth::Brief => false,
                ContextDepth::Standard => STANDARD.contains(s),
                ContextDepth::Deep => true,
            })
            .filter(|s| toggles.get(*s).copied().unwrap_or(true))
            .collect()
    }
}

/// What the sections are computed from.
#[derive(Debug)]
pub struct SectionInput<'a> {
    /// Non-terminal items passing the filters and the parent scope, in critical order.
    pub scope: &'a [&'a ItemSummary],
    /// Every item of the tracker (children and blockers are looked up here).
    pub corpus: &'a [ItemSummary],
    /// Items passing the filters and parent scope at every status (for `progress`).
    pub all_statuses: &'a [&'a ItemSummary],
    /// Recent history events, newest first, already limited and scoped (for `activity`).
    pub activity: Vec<Value>,
    /// Rows per section.
    pub limit: usize,
    /// The clock.
    pub now_ms: i64,
    /// Days without an update after which active work is stale.
    pub stale_threshold_days: u64,
    /// The runtime schema (status roles).
    pub schema: &'a RuntimeSchema,
}

/// Computes `sections` (names from [`BUILT`]) into `{name: value}` in the given order.
pub fn compute(sections: &[&str], input: SectionInput<'_>) -> Map<String, Value> {
    let mut out = Map::new();
    let relations = Relations::from_summaries(input.corpus);
    for name in sections {
        let value = match *name {
            "hierarchy" => hierarchy(&input),
            "activity" => Value::Array(input.activity.clone()),
            "progress" => progress(input.all_statuses),
            "recently_created" => recently_created(&input),
            "unparented" => unparented(&input),
            "workload" => workload(input.scope, input.schema),
            "blockers" => blockers(&input, &relations),
            "files" => counted(&input, |s| s.facts.counts.files, "files"),
            "staleness" => staleness(&input),
            "tests" => counted(&input, |s| s.facts.counts.tests, "tests"),
            _ => continue,
        };
        out.insert((*name).to_owned(), value);
    }
    out
}

fn brief_row(s: &ItemSummary) -> Map<String, Value> {
    let mut row = Map::new();
    row.insert("id".into(), json!(s.id));
    row.insert("title".into(), json!(s.title));
    row.insert("type".into(), json!(s.item_type));
    row.insert("status".into(), json!(s.status));
    row
}

fn is_terminal(s: &ItemSummary) -> bool {
    s.status_class == StatusClass::Terminal
}

/// Active containers with their direct children's completion.
fn hierarchy(input: &SectionInput<'_>) -> Value {
    let mut children: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for item in input.corpus {
        if let Some(parent) = item.parent.as_deref() {
            let entry = children.entry(parent_key(parent)).or_default();
            entry.0 += 1;
            entry.1 += usize::from(is_terminal(item));
        }
    }
    let rows: Vec<Value> = input
        .scope
        .iter()
        .filter(|s| is_container_type(&s.item_type))
        .take(input.limit)
        .map(|s| {
            let (total, closed) = children
                .get(&parent_key(&s.id))
                .copied()
                .unwrap_or_default();
            let mut row = brief_row(s);
            row.insert("children_total".into(), json!(total));
            row.insert("children_closed".into(), json!(closed));
            let pct = (closed * 100).checked_div(total).unwrap_or(0);
            row.insert("completion_pct".into(), json!(pct));
            Value::Object(row)
        })
        .collect();
    Value::Array(rows)
}

/// Counts per status of the filtered items at every status.
fn progress(items: &[&ItemSummary]) -> Value {
    let mut by_status: BTreeMap<&str, usize> = BTreeMap::new();
    for s in items {
        *by_status.entry(s.status.as_str()).or_default() += 1;
    }
    let total = items.len();
    let closed = items.iter().filter(|s| is_terminal(s)).count();
    let pct = (closed * 100).checked_div(total).unwrap_or(0);
    json!({
        "total": total,
        "closed": closed,
        "active": total - closed,
        "completion_pct": pct,
        "by_status": by_status,
    })
}

/// Newest active items first.
fn recently_created(input: &SectionInput<'_>) -> Value {
    let mut items: Vec<&&ItemSummary> = input.scope.iter().collect();
    items.sort_by(|a, b| {
        b.created_ms
            .cmp(&a.created_ms)
            .then_with(|| a.id.cmp(&b.id))
    });
    rows_with(items.into_iter().take(input.limit), |s, row| {
        row.insert("created_at".into(), json!(s.created_at));
    })
}

/// Active leaf work without a parent.
fn unparented(input: &SectionInput<'_>) -> Value {
    let items = input
        .scope
        .iter()
        .filter(|s| s.parent.is_none() && !is_container_type(&s.item_type))
        .take(input.limit);
    rows_with(items, |_, _| {})
}

/// Active items per assignee (`null` for unassigned), busiest first.
fn workload(scope: &[&ItemSummary], schema: &RuntimeSchema) -> Value {
    let mut per: BTreeMap<Option<&str>, (usize, usize)> = BTreeMap::new();
    for s in scope {
        let entry = per.entry(s.assignee.as_deref()).or_default();
        entry.0 += 1;
        entry.1 += usize::from(is_in_progress(&s.status, schema));
    }
    let mut rows: Vec<(Option<&str>, usize, usize)> =
        per.into_iter().map(|(a, (n, p))| (a, n, p)).collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Value::Array(
        rows.into_iter()
            .map(|(assignee, active, in_progress)| {
                json!({"assignee": assignee, "active": active, "in_progress": in_progress})
            })
            .collect(),
    )
}

/// Active items with an open blocker, and their open blockers.
fn blockers(input: &SectionInput<'_>, relations: &Relations) -> Value {
    let mut rows = Vec::new();
    for s in input.scope {
        if rows.len() == input.limit {
            break;
        }
        let open: Vec<String> = relations
            .blockers(s)
            .into_iter()
            .filter(|b| !relations.is_terminal_id(b))
            .collect();
        if !open.is_empty() {
            let mut row = brief_row(s);
            row.insert("blocker_ids".into(), json!(open));
            rows.push(Value::Object(row));
        }
    }
    Value::Array(rows)
}

/// Active items with linked files or tests, most first.
fn counted(input: &SectionInput<'_>, count: fn(&ItemSummary) -> u32, key: &str) -> Value {
    let mut items: Vec<&&ItemSummary> = input.scope.iter().filter(|s| count(s) > 0).collect();
    items.sort_by(|a, b| count(b).cmp(&count(a)).then_with(|| a.id.cmp(&b.id)));
    rows_with(items.into_iter().take(input.limit), |s, row| {
        row.insert(key.to_owned(), json!(count(s)));
    })
}

/// Active items not updated for `stale_threshold_days`, oldest first.
fn staleness(input: &SectionInput<'_>) -> Value {
    const DAY_MS: i64 = 86_400_000;
    let threshold = i64::try_from(input.stale_threshold_days).unwrap_or(i64::MAX / DAY_MS);
    let cutoff = input
        .now_ms
        .saturating_sub(threshold.saturating_mul(DAY_MS));
    let mut items: Vec<(&&ItemSummary, i64)> = input
        .scope
        .iter()
        .filter_map(|s| Some((s, s.updated_ms?)))
        .filter(|(_, updated)| *updated <= cutoff)
        .collect();
    items.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.id.cmp(&b.0.id)));
    let now = input.now_ms;
    rows_with(
        items.into_iter().take(input.limit).map(|(s, _)| s),
        |s, row| {
            row.insert("updated_at".into(), json!(s.updated_at));
            let days = s.updated_ms.map_or(0, |u| (now - u) / DAY_MS);
            row.insert("days_since_update".into(), json!(days));
        },
    )
}

fn rows_with<'a>(
    items: impl Iterator<Item = &'a &'a ItemSummary>,
    extra: impl Fn(&ItemSummary, &mut Map<String, Value>),
) -> Value {
    Value::Array(
        items
            .map(|s| {
                let mut row = brief_row(s);
                extra(s, &mut row);
                Value::Object(row)
            })
            .collect(),
    )
}
