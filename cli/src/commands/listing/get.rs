//! `pm get <id>` (aliases fetch, read, show, view): one item at a depth with its linked
//! artifacts, claim state, schedule, children rollup, omission receipt and item hash.

use pm_engine::Error;
use pm_engine::item::ItemDoc;
use pm_engine::read::{
    ChildSource, GetDepth, GetScope, HistoryPoint, TrackerView, get_item, get_item_at,
};
use pm_engine::schema::RuntimeSchema;
use pm_engine::tracker::Tracker;
use pm_index::{Index, IndexOptions};
use std::sync::Arc;

use crate::args::numbers::{Number, NumberFlag, TokenBudget};
use crate::ctx::Ctx;
use crate::failure::Result;
use crate::read_output::{Finished, ReadMeta, Surface, finish_read, intent, split_csv};
use crate::render::Format;

/// Show one item with its linked artifacts, claim state, schedule and children
///
/// Depths: brief (metadata and counts), standard (the default: adds the body, linked files,
/// tests and docs, claim state, schedule and a children count for container types), deep or
/// full (adds every collection array and a sample of children). `--fields` keeps only the
/// named item fields and sections, computing a named section the depth would leave out
/// (`--fields comments`, `--fields children`). Also prints item_hash, the SHA-256 of the
/// canonical document, equal to the last after_hash of the item's history.
#[derive(Debug, Default, clap::Args)]
pub struct GetArgs {
    /// The item id (the tracker's prefix may be left out)
    #[arg(value_name = "ID")]
    pub id: String,

    /// Detail depth: brief, standard, deep or full (full is deep)
    #[arg(long, value_name = "DEPTH", conflicts_with = "full")]
    pub depth: Option<String>,

    /// Show everything (same as --depth deep)
    #[arg(long, conflicts_with = "fields")]
    pub full: bool,

    /// Keep only these item fields and sections, comma-separated: item fields (title or
    /// item.title), item, body, linked[.files|.tests|.docs], claim_state[.<key>], children,
    /// schedule[.<key>], the collections (comments, notes, …), notes_count, tests_count,
    /// collection_counts
    #[arg(long, value_name = "CSV")]
    pub fields: Option<String>,

    /// Output encoding: toon or json
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,

    /// Show the item as its history replays to a version (entry count) or an ISO instant
    #[arg(long, value_name = "VERSION|ISO")]
    pub at: Option<String>,

    /// Context intent: inspect (the standard item within a 3200-token budget)
    #[arg(long = "for", value_name = "INTENT")]
    pub for_intent: Option<String>,

    /// Token budget of the --for intent (at least 256)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub token_budget: Option<Number<TokenBudget>>,
}

/// The `get` result after the read-output layer.
pub type GetOutput = Finished;

/// Reads the item `args.id` at the requested depth.
///
/// # Errors
/// `invalid_argument_value` for an unknown `--depth` or a token budget below 256;
/// `unknown_context_intent`; `missing_required_option` for `--token-budget` without `--for`;
/// `not_in_project`, `item_not_found` (exit 3), the read errors of the item file and its
/// history, and the read-output refusals.
pub fn cmd_get(ctx: &Ctx, args: &GetArgs) -> Result<GetOutput> {
    // The inspect intent keeps the standard depth; an explicit --depth/--full still wins.
    let resolved_intent = intent::resolve(
        Surface::Get,
        args.for_intent.as_deref(),
        args.token_budget.as_ref(),
        None,
    )?;
    let depth = match (&args.depth, args.full) {
        (_, true) => GetDepth::Deep,
        (None, false) => GetDepth::Standard,
        (Some(raw), false) => GetDepth::parse(raw).ok_or_else(|| Error::InvalidArgument {
            field: "--depth".into(),
            value: raw.clone(),
            reason: "Get --depth must be one of brief|standard|deep|full".into(),
            allowed: GetDepth::VALUES.iter().map(|v| v.to_string()).collect(),
        })?,
    };
    let selectors = match ctx.read_output.selectors(Surface::Get) {
        canonical if canonical.is_empty() => {
            args.fields.as_deref().map(split_csv).unwrap_or_default()
        }
        canonical => canonical,
    };
    let scope = GetScope::requesting(depth, &selectors);
    let view = TrackerView::open(ctx.tracker()?, &ctx.settings_env())?;
    let children = IndexedChildren {
        tracker: view.tracker().clone(),
        schema: view.schema().clone(),
        scan_only: ctx.no_index,
        freshness: ctx.index_freshness,
    };
    let view = view.with_child_source(Arc::new(children));
    let item = match args.at.as_deref() {
        Some(raw) => get_item_at(&view, &args.id, scope, HistoryPoint::parse(raw)?)?,
        None => get_item(&view, &args.id, scope)?,
    };
    let result = serde_json::to_value(&item).map_err(|e| Error::internal(e.to_string()))?;
    let mut meta = ReadMeta::new(Surface::Get, "get")
        .legacy_value("--fields", args.fields.as_deref())
        .legacy_switch("--full", args.full)
        .legacy_value("--depth", args.depth.as_deref())
        .legacy_value("--token-budget", args.token_budget.raw());
    if let Some(format) = args.format {
        meta = meta.legacy_value("--format", Some(format.name()));
    }
    meta.operand = Some(args.id.clone());
    meta.intent = resolved_intent;
    meta.brief_fallback = depth == GetDepth::Standard && !args.full && selectors.is_empty();
    meta.selectors = args.fields.as_deref().map(split_csv).unwrap_or_default();
    let format = ctx.read_output.resolve_format(ctx.format, args.format);
    finish_read(result, &meta, &ctx.read_output, format)
}

/// A container's children from the index facade (light metadata, no file parsing), with the
/// facade's own freshness check and scan fallback.
#[derive(Debug)]
struct IndexedChildren {
    tracker: Tracker,
    schema: RuntimeSchema,
    scan_only: bool,
    freshness: pm_index::Freshness,
}

impl ChildSource for IndexedChildren {
    fn children(&self, parent_key: &str) -> pm_engine::Result<(Vec<ItemDoc>, usize)> {
        let options = IndexOptions {
            scan_only: self.scan_only,
            check_once: true,
            freshness: self.freshness,
            ..IndexOptions::default()
        };
        let children = Index::open(&self.tracker, &self.schema, options)
            .children(parent_key)?
            .rows;
        let docs = children
            .items
            .into_iter()
            .map(|metadata| ItemDoc {
                metadata,
                body: String::new(),
            })
            .collect();
        Ok((docs, children.inspected))
    }
}
