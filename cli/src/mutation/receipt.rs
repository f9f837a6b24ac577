//! Mutation receipts: the compact `{id, status, changed_field_count, …}`
//! envelope by default, the full `{item, changed_fields, warnings}` envelope with
//! `--full-changed-fields`, `{id, status}` with `--id-only`, and the claim/release shapes.

use pm_engine::mutate::{Mutation, RepairAllReport, RepairReport};
use serde::Serialize;
use serde_json::{Map, Value};

/// Receipt flags every single-item mutation accepts.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ReceiptArgs {
    /// Print the full item and every changed field instead of the compact receipt
    #[arg(long)]
    pub full_changed_fields: bool,

    /// Print only the id and the resulting status
    #[arg(long, conflicts_with = "full_changed_fields")]
    pub id_only: bool,
}

/// The compact receipt.
#[derive(Debug, Serialize)]
pub struct MutationReceipt {
    /// The item id.
    pub id: String,
    /// The status after the mutation.
    pub status: String,
    /// How many top-level fields changed (`updated_at` not counted).
    pub changed_field_count: usize,
    /// The close reason, when the item has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub close_reason: Option<String>,
    /// A reopen's recurrence record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recurrence: Option<Value>,
    /// The warnings pm lists in the result (governance findings such as `likely_duplicates:`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The compact receipt of a delete.
#[derive(Debug, Serialize)]
pub struct DeleteReceipt {
    /// The item id.
    pub id: String,
    /// Always `deleted`.
    pub status: &'static str,
    /// Always true.
    pub deleted: bool,
    /// The status the item had.
    pub previous_status: String,
    /// Always 1.
    pub changed_field_count: usize,
}

/// The full receipt (`--full-changed-fields`).
#[derive(Debug, Serialize)]
pub struct FullReceipt {
    /// The item metadata after the mutation (empty after a delete).
    pub item: Map<String, Value>,
    /// Every changed field.
    pub changed_fields: Vec<String>,
    /// Advisory warnings.
    pub warnings: Vec<String>,
}

/// `--id-only`.
#[derive(Debug, Serialize)]
pub struct IdOnly {
    /// The item id.
    pub id: String,
    /// The status after the mutation (`deleted` after a delete).
    pub status: String,
}

/// `pm claim`.
#[derive(Debug, Serialize)]
pub struct ClaimOutput {
    /// The item metadata after the claim.
    pub item: Map<String, Value>,
    /// The new owner.
    pub claimed_by: String,
    /// The owner before, if any.
    pub previous_assignee: Option<String>,
    /// Whether `--force` took the item over.
    pub forced: bool,
}

/// `pm release`.
#[derive(Debug, Serialize)]
pub struct ReleaseOutput {
    /// The item metadata after the release.
    pub item: Map<String, Value>,
    /// Who released it.
    pub released_by: String,
    /// The owner before.
    pub previous_assignee: Option<String>,
    /// Whether `--force` was given.
    pub forced: bool,
}

/// Any mutation result.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum MutationOutput {
    /// The compact receipt.
    Receipt(MutationReceipt),
    /// A delete's compact receipt.
    Delete(DeleteReceipt),
    /// `--full-changed-fields`.
    Full(FullReceipt),
    /// `--id-only`.
    IdOnly(IdOnly),
    /// `pm claim`.
    Claim(ClaimOutput),
    /// `pm release`.
    Release(ReleaseOutput),
    /// `pm comments|notes|learnings`.
    Annotation(AnnotationOutput),
    /// `pm files|docs`.
    Links(LinksOutput),
    /// `pm history-repair <id>`.
    Repair(Box<RepairReport>),
    /// `pm history-repair --all`.
    RepairAll(Box<RepairAllReport>),
}

impl MutationOutput {
    /// Returns the exit code of a completed run: a bulk repair with failed streams exits 7 when
    /// some stream was repaired (partial effect), 1 when none was.
    pub fn exit_code(&self) -> u8 {
        match self {
            MutationOutput::RepairAll(report) if report.has_failures() => {
                if report.totals.repaired > 0 {
                    crate::exit::PARTIAL_EFFECT
                } else {
                    crate::exit::FAILURE
                }
            }
            _ => crate::exit::SUCCESS,
        }
    }
}

/// Returns item metadata in pm's output order: the stored (canonical) order with
/// `dependencies` moved right after `updated_at`, as pm's result objects list them.
pub fn output_item(metadata: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in metadata {
        if key == "dependencies" {
            continue;
        }
        out.insert(key.clone(), value.clone());
        if key == "updated_at"
            && let Some(deps) = metadata.get("dependencies")
        {
            out.insert("dependencies".into(), deps.clone());
        }
    }
    if let Some(deps) = metadata
        .get("dependencies")
        .filter(|_| !out.contains_key("dependencies"))
    {
        out.insert("dependencies".into(), deps.clone());
    }
    out
}

/// Returns the receipt `args` asks for.
pub fn receipt_for(m: &Mutation, args: &ReceiptArgs) -> MutationOutput {
    let deleted = m.after.is_empty();
    let status = if deleted {
        "deleted".to_string()
    } else {
        m.after.str_field("status").unwrap_or_default().to_string()
    };
    if args.id_only {
        return MutationOutput::IdOnly(IdOnly {
            id: m.id.clone(),
            status,
        });
    }
    if args.full_changed_fields {
        return MutationOutput::Full(FullReceipt {
            item: output_item(&m.after.metadata),
            changed_fields: m.changed_fields.clone(),
            warnings: [m.receipt_warnings.as_slice(), m.warnings.as_slice()].concat(),
        });
    }
    if deleted {
        return MutationOutput::Delete(DeleteReceipt {
            id: m.id.clone(),
            status: "deleted",
            deleted: true,
            previous_status: m.before.str_field("status").unwrap_or_default().to_string(),
            changed_field_count: m.changed_fields.len(),
        });
    }
    let recurrence = (m.op == "reopen")
        .then(|| m.entry.context.as_ref()?.get("recurrence").cloned())
        .flatten();
    MutationOutput::Receipt(MutationReceipt {
        id: m.id.clone(),
        status,
        changed_field_count: m.changed_fields.len(),
        close_reason: m.after.str_field("close_reason").map(String::from),
        recurrence,
        warnings: m.receipt_warnings.clone(),
    })
}

/// pm's annotation envelope.
#[derive(Debug, Serialize)]
pub struct AnnotationOutput {
    /// The item id.
    pub id: String,
    /// `{<comments|notes|learnings>: [entries]}`.
    #[serde(flatten)]
    pub entries: Map<String, Value>,
    /// Entries returned.
    pub count: usize,
    /// Entries stored.
    pub total_count: usize,
    /// Entries returned.
    pub returned_count: usize,
    /// Whether stored entries were left out.
    pub has_more: bool,
    /// What the mutation did (absent when listing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mutation_receipt: Option<Value>,
    /// What was left out and how to get it.
    pub omission_receipt: Value,
}

/// pm's linked-path envelope.
#[derive(Debug, Serialize)]
pub struct LinksOutput {
    /// The item id.
    pub id: String,
    /// `{<files|docs>: [entries]}`.
    #[serde(flatten)]
    pub entries: Map<String, Value>,
    /// Whether the command changed the item.
    pub changed: bool,
    /// Linked paths.
    pub count: usize,
}
