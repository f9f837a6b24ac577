//! `pm merge driver item|json|relationship %O %A %B [--item-path %P] [--prefer ours|theirs]
//! [--output path]`: what git runs for a file both branches changed. Writes the merged file,
//! prints a report (git shows it), and exits non-zero when the result needs review, so git
//! marks the path as conflicted.

use std::path::{Path, PathBuf};

use pm_engine::IoResultExt;
use pm_engine::merge::driver::{DriverEnv, DriverFiles, ItemOutcome, run_item_driver};
use pm_engine::merge::item::ItemMerge;
use pm_engine::merge::json::{merge_json, merge_jsonl};
use pm_engine::merge::receipt::PREFERRED_SIDE;
use pm_engine::merge::receipts::{Receipt, value_hash};
use pm_engine::merge::text::{TextMerge, merge_lines};
use pm_engine::merge::{GitRepo, Side};
use pm_engine::schema::{self, RuntimeSchema};
use serde::Serialize;
use serde_json::Value;

use super::{DriverArtifact, MergeArgs, MergeOutput};
use crate::clock_reads::ReadClock;
use crate::ctx::Ctx;
use crate::exit;
use crate::failure::{CliError, Result, UsageKind};

/// The report every driver prints; the artifact's own block is flattened in.
#[derive(Debug, Serialize)]
struct DriverOutput<T: Serialize> {
    ok: bool,
    artifact: &'static str,
    output_path: String,
    requested_preference: Side,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    conflicts: Vec<String>,
    #[serde(flatten)]
    detail: T,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    guidance: Vec<String>,
    generated_at: String,
}

#[derive(Debug, Serialize)]
struct ItemDetail {
    item: ItemBlock,
    #[serde(skip_serializing_if = "Option::is_none")]
    receipt: Option<ReceiptBlock>,
}

#[derive(Debug, Serialize)]
struct ItemBlock {
    fields_from_theirs: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    union_fields: Vec<String>,
    conflict_resolution: &'static str,
}

#[derive(Debug, Serialize)]
struct ReceiptBlock {
    receipt_id: String,
    item_id: String,
    item_path: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    conflict_fields: Vec<String>,
    fields_from_theirs: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    union_fields: Vec<String>,
    requested_preference: String,
    conflict_resolution: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    decisions: Vec<DecisionHashes>,
}

#[derive(Debug, Serialize)]
struct DecisionHashes {
    field: String,
    retained_hash: String,
    discarded_hash: String,
}

#[derive(Debug, Serialize)]
struct LinesDetail {
    fallback: LinesBlock,
}

#[derive(Debug, Serialize)]
struct LinesBlock {
    strategy: &'static str,
    reason: String,
}

#[derive(Debug, Serialize)]
struct JsonDetail {
    json: JsonBlock,
}

#[derive(Debug, Serialize)]
struct JsonBlock {
    strategy: &'static str,
}

#[derive(Debug, Serialize)]
struct RelationshipDetail {
    relationship: RelationshipBlock,
}

#[derive(Debug, Serialize)]
struct RelationshipBlock {
    strategy: &'static str,
    entries_total: usize,
}

/// Runs `pm merge driver <artifact>`.
///
/// # Errors
/// `missing_required_argument` (exit 2) without the artifact and the three paths; `io_error`
/// when a file cannot be read or written.
pub(super) fn cmd_merge_driver(ctx: &Ctx, args: &MergeArgs) -> Result<MergeOutput> {
    let files = driver_files(ctx, args)?;
    let now = ReadClock::new(&ctx.clock).stamp();
    match args.artifact {
        Some(DriverArtifact::Item) => item_driver(ctx, &files, now),
        Some(DriverArtifact::Json) => json_driver(&files, now),
        _ => relationship_driver(&files, now),
    }
}

fn driver_files(ctx: &Ctx, args: &MergeArgs) -> Result<DriverFiles> {
    let (Some(_), Some(base), Some(ours), Some(theirs)) =
        (args.artifact, &args.base, &args.ours, &args.theirs)
    else {
        return Err(CliError::Usage {
            kind: UsageKind::MissingRequiredArgument,
            detail: "pm merge driver needs <artifact> <base> <ours> <theirs> (git's %O %A %B)"
                .into(),
            flag: None,
            value: None,
            suggestions: Box::default(),
            allowed: Box::default(),
        });
    };
    Ok(DriverFiles {
        base: ctx.cwd.join(base),
        ours: ctx.cwd.join(ours),
        theirs: ctx.cwd.join(theirs),
        output: args.output.as_ref().map(|p| ctx.cwd.join(p)),
        item_path: args.item_path.clone(),
        prefer: args.prefer.side(),
    })
}

fn driver_env(ctx: &Ctx, now: String) -> DriverEnv {
    let tracker = ctx.tracker().ok();
    let schema = tracker
        .as_ref()
        .and_then(|t| schema::load(t, &ctx.settings_env()).ok())
        .map_or_else(RuntimeSchema::builtin, |loaded| loaded.schema);
    DriverEnv {
        schema,
        tracker_root: tracker.map(|t| t.root().to_path_buf()),
        repo: GitRepo::discover(&ctx.cwd).ok(),
        now,
    }
}

fn report<T: Serialize>(
    files: &DriverFiles,
    artifact: &'static str,
    conflicts: Vec<String>,
    detail: T,
    guidance: Vec<String>,
    generated_at: String,
) -> Result<MergeOutput> {
    let exit_code = if conflicts.is_empty() {
        exit::SUCCESS
    } else {
        exit::MERGE_CONFLICT
    };
    let output = DriverOutput {
        ok: conflicts.is_empty(),
        artifact,
        output_path: files.output_path().display().to_string(),
        requested_preference: files.prefer,
        conflicts,
        detail,
        guidance,
        generated_at,
    };
    MergeOutput::of(&output, exit_code)
}

fn item_driver(ctx: &Ctx, files: &DriverFiles, now: String) -> Result<MergeOutput> {
    let env = driver_env(ctx, now.clone());
    match run_item_driver(files, &env)? {
        ItemOutcome::Merged { merge, receipt } => {
            let guidance = item_guidance(&merge, receipt.as_deref(), files.prefer);
            let detail = ItemDetail {
                item: ItemBlock {
                    fields_from_theirs: merge.fields_from_theirs.clone(),
                    union_fields: merge.union_fields.clone(),
                    conflict_resolution: PREFERRED_SIDE,
                },
                receipt: receipt.as_deref().map(|r| receipt_block(r, &merge)),
            };
            report(files, "item", merge.conflicts(), detail, guidance, now)
        }
        ItemOutcome::Lines { reason, conflicted } => {
            let conflicts = if conflicted {
                vec!["$".into()]
            } else {
                Vec::new()
            };
            let detail = LinesDetail {
                fallback: LinesBlock {
                    strategy: "line_merge",
                    reason,
                },
            };
            report(files, "item", conflicts, detail, Vec::new(), now)
        }
    }
}

fn receipt_block(receipt: &Receipt, merge: &ItemMerge) -> ReceiptBlock {
    ReceiptBlock {
        receipt_id: receipt.id.clone(),
        item_id: receipt.item_id.clone(),
        item_path: receipt.item_path.clone(),
        conflict_fields: merge.decisions.iter().map(|d| d.field.clone()).collect(),
        fields_from_theirs: receipt.fields_from_theirs.clone(),
        union_fields: receipt.union_fields.clone(),
        requested_preference: receipt.requested_preference.clone(),
        conflict_resolution: receipt.conflict_resolution.clone(),
        decisions: receipt
            .decisions
            .iter()
            .map(|d| DecisionHashes {
                field: d.field.clone(),
                retained_hash: value_hash(&d.retained),
                discarded_hash: value_hash(&d.discarded),
            })
            .collect(),
    }
}

fn item_guidance(merge: &ItemMerge, receipt: Option<&Receipt>, prefer: Side) -> Vec<String> {
    let mut out = Vec::new();
    let id = merge.doc.id().unwrap_or_default();
    if !merge.decisions.is_empty() {
        let fields: Vec<&str> = merge.decisions.iter().map(|d| d.field.as_str()).collect();
        let receipt = receipt.map_or(String::new(), |r| format!(" in receipt {}", r.id));
        out.push(format!(
            "Both branches changed {}; the item driver kept the {} value (--prefer {}) and recorded the other{receipt}. Review the merged file for item {id}, re-apply the discarded change if needed, then \"git add\" it.",
            fields.join(", "),
            prefer.as_str(),
            prefer.as_str(),
        ));
    }
    if merge.body_conflict {
        out.push(format!(
            "Both branches changed the same body lines of item {id}; the body holds conflict markers. Edit them out, then \"git add\" the file."
        ));
    }
    out
}

fn json_driver(files: &DriverFiles, now: String) -> Result<MergeOutput> {
    let [base, ours, theirs] = read_three(files)?;
    let parse = |text: &str| -> Option<Value> {
        if text.trim().is_empty() {
            Some(Value::Null)
        } else {
            serde_json::from_str(text).ok()
        }
    };
    let (Some(b), Some(o), Some(t)) = (parse(&base), parse(&ours), parse(&theirs)) else {
        return lines_driver(files, "json", [&base, &ours, &theirs], now);
    };
    let merged = merge_json(&b, &o, &t, files.prefer);
    let mut text = pm_engine::json::to_pretty(&merged.value);
    if ours.ends_with('\n') {
        text.push('\n');
    }
    write(files.output_path(), &text)?;
    let detail = JsonDetail {
        json: JsonBlock {
            strategy: "key_merge",
        },
    };
    report(files, "json", merged.conflicts, detail, Vec::new(), now)
}

fn relationship_driver(files: &DriverFiles, now: String) -> Result<MergeOutput> {
    let [_, ours, theirs] = read_three(files)?;
    let merged = merge_jsonl(&ours, &theirs);
    write(files.output_path(), &merged)?;
    let detail = RelationshipDetail {
        relationship: RelationshipBlock {
            strategy: "append_union",
            entries_total: merged.lines().count(),
        },
    };
    report(files, "relationship", Vec::new(), detail, Vec::new(), now)
}

fn lines_driver(
    files: &DriverFiles,
    artifact: &'static str,
    inputs: [&str; 3],
    now: String,
) -> Result<MergeOutput> {
    let merged = merge_lines(inputs[0], inputs[1], inputs[2]);
    let conflicts = match merged {
        TextMerge::Conflicted(_) => vec!["$".to_string()],
        TextMerge::Clean(_) => Vec::new(),
    };
    write(files.output_path(), &merged.into_text())?;
    let detail = LinesDetail {
        fallback: LinesBlock {
            strategy: "line_merge",
            reason: "a side is not valid JSON".into(),
        },
    };
    report(files, artifact, conflicts, detail, Vec::new(), now)
}

fn read_three(files: &DriverFiles) -> Result<[String; 3]> {
    let read = |path: &PathBuf, optional: bool| -> Result<String> {
        match std::fs::read(path) {
            Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) if optional && e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(e) => Ok(Err(e).at(path)?),
        }
    };
    Ok([
        read(&files.base, true)?,
        read(&files.ours, false)?,
        read(&files.theirs, false)?,
    ])
}

fn write(path: &Path, text: &str) -> Result<()> {
    pm_engine::atomic::write_unsynced(path, text.as_bytes())?;
    Ok(())
}
