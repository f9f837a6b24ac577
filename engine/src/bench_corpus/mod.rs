//! The deterministic benchmark corpus generator (`pm bench generate`): a port of pm-cli's scale
//! fixture generator. Same seed, count and shape give the same bytes; the `scratch` shape is
//! byte-identical to pm-cli's output (item files, history streams, settings and schema seeds).
//!
//! Item files and streams are written with plain `File::create` + `write_all` (no temp file, no
//! fsync), like pm-cli's `direct` mode: the target is a fresh fixture directory nobody reads yet.

mod document;
mod measure;
mod shape;

pub use document::{
    FIXTURE_AUTHOR, Lcg, WEIGHTED_TYPES, build_document, history_text, planned_status,
    planned_type_for, status_for,
};
pub use measure::{Measurement, Profile};
pub use shape::{
    CORPUS_SHAPE_SCHEMA, CorpusShape, EdgeWeight, ItemPlan, REPRESENTATIVE, SCRATCH, corpus_id,
    plan_item,
};

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::{Value, json};

use crate::error::{Error, IoResultExt, Result};
use crate::init::{InitOptions, init_tracker};
use crate::item::ItemFormat;
use crate::item::codec::serialize_item;
use crate::json::to_pretty;
use crate::schema::SchemaSection;
use crate::schema::TypeRegistry;
use crate::settings::SettingsEnv;
use crate::tracker::Tracker;

/// The manifest pm-cli's generator writes beside the tracker.
pub const MANIFEST_FILE: &str = ".pm-scale-fixture.json";
/// The largest count generated without [`CorpusOptions::allow_million`].
pub const DEFAULT_MAX_ITEMS: u64 = 100_000;
/// The largest count generated at all (the `million` tier).
pub const MAX_ITEMS: u64 = 1_000_000;
/// pm-cli's named tiers plus the calibration tier (`calibration` = 2,243 items).
pub const TIERS: [(&str, u64); 5] = [
    ("smoke", 100),
    ("calibration", 2_243),
    ("ci", 10_000),
    ("large", 100_000),
    ("million", 1_000_000),
];

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct CorpusOptions {
    /// Number of items (1 ..= 100,000, or 1,000,000 with `allow_million`).
    pub items: u64,
    /// The seed (pm-cli's default is 42; must be positive).
    pub seed: u64,
    /// The population shape.
    pub shape: CorpusShape,
    /// Replace an existing fixture directory (one holding [`MANIFEST_FILE`]).
    pub force: bool,
    /// Allow counts above [`DEFAULT_MAX_ITEMS`].
    pub allow_million: bool,
}

/// What [`generate_corpus`] wrote.
#[derive(Clone, Debug)]
pub struct CorpusReport {
    /// The workspace directory (canonical path).
    pub workspace_root: PathBuf,
    /// `<workspace>/.agents/pm`.
    pub tracker_root: PathBuf,
    /// The options used.
    pub options: CorpusOptions,
    /// The conformance profile.
    pub profile: Profile,
    /// The first id (pm-cli's `sample_ids.get`).
    pub sample_get: String,
    /// The first 100 `open` ids (pm-cli's `sample_ids.open`).
    pub sample_open: Vec<String>,
    /// Items whose type has a registered folder (what every reader sees).
    pub visible_items: u64,
    /// Visible items per status.
    pub visible_by_status: BTreeMap<String, u64>,
    /// All items per type.
    pub by_type: BTreeMap<String, u64>,
}

/// Resolves `--items`: a count (`_` separators allowed) or a tier name.
///
/// # Errors
/// `Error::InvalidArgument` for anything else, or zero.
pub fn parse_item_count(raw: &str) -> Result<u64> {
    let normalized = raw.trim().to_lowercase();
    if let Some((_, n)) = TIERS.iter().find(|(name, _)| *name == normalized) {
        return Ok(*n);
    }
    match normalized.replace(['_', ','], "").parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(Error::InvalidArgument {
            field: "--items".into(),
            value: raw.into(),
            reason: "must be a positive integer or a tier name".into(),
            allowed: TIERS.iter().map(|(name, _)| (*name).to_string()).collect(),
        }),
    }
}

/// Generates the corpus into `<workspace>/.agents/pm` (pm-cli's `generateSyntheticWorkspace`
/// without the manifest; see [`manifest_json`] and [`write_manifest`]).
///
/// The `scratch` shape leaves `Story` unregistered, as pm-cli 2026.8.22 does: its items are
/// written to `storys/`, a folder no reader scans (2,243 items → 1,998 visible). The
/// `representative` shape registers `Story` and its custom type, status and field in the schema
/// files, so all of its items are visible.
///
/// # Errors
/// `Error::InvalidArgument` for a bad count or seed, or a non-empty target that is not a
/// fixture (or is one, without `force`); `Error::Io` for write failures; `Error::Internal`
/// when the population drifts from its declaration.
pub fn generate_corpus(workspace: &Path, options: &CorpusOptions) -> Result<CorpusReport> {
    check_options(options)?;
    prepare_target(workspace, options.force)?;
    std::fs::create_dir_all(workspace).at(workspace)?;
    let workspace_root = workspace.canonicalize().at(workspace)?;
    let tracker_root = workspace_root.join(".agents").join("pm");
    let init = InitOptions {
        author_default: Some(FIXTURE_AUTHOR.into()),
        workspace_root: Some(workspace_root.clone()),
        ..InitOptions::default()
    };
    init_tracker(&tracker_root, &init)?;
    let shape = options.shape;
    if shape.name != SCRATCH.name {
        register_schema(&tracker_root, &shape)?;
    }
    let tracker = Tracker::at(&tracker_root);
    let types = crate::schema::load(&tracker, &SettingsEnv::default())?
        .schema
        .types;
    let mut folders: Vec<String> = ["Epic"]
        .iter()
        .chain(WEIGHTED_TYPES.iter())
        .chain(shape.custom_types.iter())
        .map(|t| types.folder_for(t))
        .collect();
    folders.push("history".into());
    for folder in &folders {
        let dir = tracker_root.join(folder);
        std::fs::create_dir_all(&dir).at(&dir)?;
    }
    let (n, seed) = (options.items, options.seed);
    (0..n).into_par_iter().try_for_each(|i| {
        let plan = plan_item(&shape, i, n, seed);
        let doc = build_document(&shape, &plan, n, seed);
        let folder = types.folder_for(doc.str_field("type").unwrap_or_default());
        let item_path = tracker.item_path(&folder, &plan.id, ItemFormat::Toon);
        write_new(&item_path, &serialize_item(&doc, ItemFormat::Toon)?)?;
        let history = history_text(&doc, shape.history_entries_per_item);
        write_new(&tracker.history_path(&plan.id), history.as_bytes())
    })?;
    let report = summarize(&types, workspace_root, tracker_root, options);
    if !report.profile.matches_declaration {
        return Err(Error::Internal {
            detail: format!(
                "generated corpus shape drifted: {}",
                report.profile.json["mismatches"]
            ),
        });
    }
    Ok(report)
}

/// Returns pm-cli's fixture manifest (version 2) for `report`, plus our `counts` block.
pub fn manifest_json(report: &CorpusReport, generated_at: &str, generation_ms: u64) -> Value {
    let workspace = report.workspace_root.display().to_string();
    let status_counts: serde_json::Map<String, Value> = report
        .visible_by_status
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let type_counts: serde_json::Map<String, Value> = report
        .by_type
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    json!({
        "version": 2,
        "generated_at": generated_at,
        "workspace_root": workspace,
        "pm_root": report.tracker_root.display().to_string(),
        "item_count": report.options.items,
        "history_stream_count": report.options.items,
        "history_entry_count": report.profile.history_entry_count,
        "seed": report.options.seed,
        "shape": report.options.shape.to_json(),
        "measured_shape": report.profile.json,
        "mode": "direct",
        "generation_ms": generation_ms,
        "sample_ids": {"get": report.sample_get, "open": report.sample_open},
        "counts": {
            "visible_items": report.visible_items,
            "unregistered_type_items": report.options.items - report.visible_items,
            "visible_by_status": status_counts,
            "by_type": type_counts,
        },
    })
}

/// Writes `manifest` as `<workspace>/.pm-scale-fixture.json` (pretty JSON plus `\n`).
///
/// # Errors
/// `Error::Io` when the file cannot be written.
pub fn write_manifest(report: &CorpusReport, manifest: &Value) -> Result<()> {
    let mut text = to_pretty(manifest);
    text.push('\n');
    crate::atomic::write(&report.workspace_root.join(MANIFEST_FILE), text.as_bytes())
}

fn check_options(options: &CorpusOptions) -> Result<()> {
    let limit = if options.allow_million {
        MAX_ITEMS
    } else {
        DEFAULT_MAX_ITEMS
    };
    if options.items == 0 || options.items > limit {
        let reason = if options.items > DEFAULT_MAX_ITEMS && options.items <= MAX_ITEMS {
            "counts above 100000 need --allow-million".to_string()
        } else {
            format!("must be between 1 and {limit}")
        };
        return Err(Error::InvalidArgument {
            field: "--items".into(),
            value: options.items.to_string(),
            reason,
            allowed: Vec::new(),
        });
    }
    if options.seed == 0 || options.seed > (1 << 53) - 1 {
        return Err(Error::InvalidArgument {
            field: "--seed".into(),
            value: options.seed.to_string(),
            reason: "must be a positive safe integer".into(),
            allowed: Vec::new(),
        });
    }
    Ok(())
}

/// Refuses a non-empty target unless it is a fixture and `force` is set, then clears it.
fn prepare_target(workspace: &Path, force: bool) -> Result<()> {
    let mut entries = match std::fs::read_dir(workspace) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(err).at(workspace),
    };
    if entries.next().is_none() {
        return Ok(());
    }
    let refuse = |reason: &str| Error::InvalidArgument {
        field: "--out".into(),
        value: workspace.display().to_string(),
        reason: reason.into(),
        allowed: Vec::new(),
    };
    if !workspace.join(MANIFEST_FILE).is_file() {
        return Err(refuse(
            "directory is not empty and is not a generated fixture; choose an empty directory",
        ));
    }
    if !force {
        return Err(refuse(
            "directory holds a generated fixture; pass --force to replace it",
        ));
    }
    std::fs::remove_dir_all(workspace).at(workspace)
}

/// Registers `Story` and the shape's custom types, statuses and fields in the schema files.
fn register_schema(root: &Path, shape: &CorpusShape) -> Result<()> {
    let describe = |what: &str| format!("Synthetic {} corpus {what}", shape.name);
    let types: Vec<Value> = ["Story"]
        .iter()
        .chain(shape.custom_types)
        .map(|name| json!({"name": name, "description": describe("type")}))
        .collect();
    let mut statuses = SchemaSection::Statuses.seed();
    if let Some(list) = statuses["statuses"].as_array_mut() {
        for status in shape.custom_statuses {
            let roles = if shape.terminal_statuses.contains(status) {
                json!(["terminal", "terminal_done"])
            } else {
                json!(["active"])
            };
            list.push(json!({"id": status, "roles": roles, "description": describe("status")}));
        }
    }
    let fields: Vec<Value> = shape
        .custom_fields
        .iter()
        .map(|key| {
            json!({"key": key, "type": "string",
                "commands": ["create", "update", "list", "search", "context"],
                "description": describe("field")})
        })
        .collect();
    for (section, value) in [
        (SchemaSection::Types, json!({"definitions": types})),
        (SchemaSection::Statuses, statuses),
        (SchemaSection::Fields, json!({"fields": fields})),
    ] {
        let mut text = to_pretty(&value);
        text.push('\n');
        crate::atomic::write(&root.join(section.default_path()), text.as_bytes())?;
    }
    Ok(())
}

/// Measures the population and collects sample ids and visible counts (sequential, cheap).
fn summarize(
    types: &TypeRegistry,
    workspace_root: PathBuf,
    tracker_root: PathBuf,
    options: &CorpusOptions,
) -> CorpusReport {
    let (n, seed, shape) = (options.items, options.seed, options.shape);
    let mut measurement = Measurement::new(shape);
    let mut sample_open = Vec::new();
    let mut visible_items = 0;
    let mut visible_by_status = BTreeMap::new();
    let mut by_type = BTreeMap::new();
    for i in 0..n {
        let plan = plan_item(&shape, i, n, seed);
        measurement.add(&plan);
        let status = planned_status(&plan);
        let item_type = planned_type_for(&plan, seed);
        *by_type.entry(item_type.to_string()).or_insert(0) += 1;
        if types.resolve(item_type).is_some() {
            visible_items += 1;
            *visible_by_status.entry(status.to_string()).or_insert(0) += 1;
        }
        if status == "open" && sample_open.len() < 100 {
            sample_open.push(plan.id);
        }
    }
    CorpusReport {
        workspace_root,
        tracker_root,
        options: *options,
        profile: measurement.finish(),
        sample_get: corpus_id(0),
        sample_open,
        visible_items,
        visible_by_status,
        by_type,
    }
}

fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = std::fs::File::create(path).at(path)?;
    file.write_all(bytes).at(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Visible (non-Story) items per status for the scratch shape at `n` items, seed 42.
    fn scratch_visible(n: u64) -> (u64, u64, [u64; 5]) {
        let statuses = ["open", "closed", "canceled", "in_progress", "blocked"];
        let (mut story, mut visible, mut by_status) = (0, 0, [0; 5]);
        for i in 0..n {
            let plan = plan_item(&SCRATCH, i, n, 42);
            if planned_type_for(&plan, 42) == "Story" {
                story += 1;
                continue;
            }
            visible += 1;
            let slot = statuses.iter().position(|s| *s == planned_status(&plan));
            by_status[slot.expect("built-in status")] += 1;
        }
        (story, visible, by_status)
    }

    #[test]
    fn tier_visible_counts_match_the_spec_table() {
        assert_eq!(
            scratch_visible(2_243),
            (245, 1_998, [311, 1_390, 198, 49, 50])
        );
        assert_eq!(
            scratch_visible(10_000),
            (981, 9_019, [1_396, 6_279, 896, 224, 224])
        );
        assert_eq!(
            scratch_visible(100_000),
            (9_563, 90_437, [13_999, 62_938, 9_000, 2_250, 2_250])
        );
    }

    #[test]
    fn item_counts_accept_tiers_and_separators() -> Result<()> {
        assert_eq!(parse_item_count("calibration")?, 2_243);
        assert_eq!(parse_item_count("10_000")?, 10_000);
        assert_eq!(parse_item_count("Large")?, 100_000);
        assert!(parse_item_count("0").is_err());
        assert!(parse_item_count("many").is_err());
        Ok(())
    }
}
