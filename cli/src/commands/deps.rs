//! `pm deps <id> --add/--remove`: edit an item's dependency rows (targets must exist).

use pm_engine::mutate::{DependencySeed, deps_add, deps_remove, split_list};
use pm_engine::{Error, Result};

use crate::ctx::Ctx;
use crate::mutation::{MutationOutput, ReceiptArgs, receipt_for, with_context};

/// Add or remove dependencies of an item
#[derive(Debug, clap::Args)]
pub struct DepsArgs {
    /// The item id
    #[arg(value_name = "ID")]
    pub id: String,

    /// Add a dependency: id=<id>,kind=<kind> or a bare id (repeatable)
    #[arg(long, value_name = "SPEC")]
    pub add: Vec<String>,

    /// Remove the dependency on these ids (comma-separated, repeatable)
    #[arg(long, value_name = "IDS", conflicts_with = "add")]
    pub remove: Vec<String>,

    /// Change an item another principal holds
    #[arg(long)]
    pub force: bool,

    /// Receipt flags.
    #[command(flatten)]
    pub receipt: ReceiptArgs,
}

/// Adds or removes dependency rows.
///
/// # Errors
/// `dependency_target_unresolved`, unknown kinds, a missing `--add`/`--remove`, ownership,
/// lock and revision conflicts.
pub fn cmd_deps(ctx: &Ctx, args: &DepsArgs) -> Result<(MutationOutput, Vec<String>)> {
    let m = if !args.add.is_empty() {
        let seeds = args
            .add
            .iter()
            .map(|raw| DependencySeed::parse(raw, "cli:deps:add"))
            .collect::<Result<Vec<_>>>()?;
        with_context(ctx, "deps", args.force, |mctx, _| {
            deps_add(mctx, &args.id, &seeds)
        })?
    } else if !args.remove.is_empty() {
        let ids: Vec<String> = args.remove.iter().flat_map(|r| split_list(r)).collect();
        with_context(ctx, "deps", args.force, |mctx, _| {
            deps_remove(mctx, &args.id, &ids)
        })?
    } else {
        return Err(Error::Usage {
            kind: pm_engine::UsageKind::MissingRequiredArgument,
            detail: "deps needs --add or --remove".into(),
            flag: Some("--add".into()),
            value: None,
            suggestions: Box::new([]),
            allowed: Box::new([]),
        });
    };
    Ok((receipt_for(&m, &args.receipt), m.warnings))
}
