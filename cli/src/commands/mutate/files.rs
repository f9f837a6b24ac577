//! `pm files|docs <id>`: link (`--add`) or unlink (`--remove`) paths, or list them.

use pm_engine::Error;
use pm_engine::mutate::{LinkKind, LinkedPath, link_add, link_remove, read_item};
use serde_json::{Map, Value};

use crate::ctx::Ctx;
use crate::failure::Result;
use crate::mutation::{LinksOutput, MutationOutput, Workspace, with_context};

/// Link paths to an item, unlink them, or list them
#[derive(Debug, clap::Args)]
pub struct LinksArgs {
    /// The item id
    #[arg(value_name = "ID")]
    pub id: String,

    /// Link a path: path=<p>,scope=<project|global>,note=<text> or a bare path (repeatable)
    #[arg(long, value_name = "SPEC")]
    pub add: Vec<String>,

    /// Unlink a path (repeatable)
    #[arg(long, value_name = "PATH", conflicts_with = "add")]
    pub remove: Vec<String>,

    /// Bypass ownership checks and clear a stale item lock (a lock whose owner is alive is
    /// never broken)
    #[arg(long)]
    pub force: bool,
}

/// Links, unlinks or lists paths.
///
/// # Errors
/// Path refusals, `item_not_found`, ownership, lock and revision conflicts.
pub fn cmd_links(
    ctx: &Ctx,
    kind: LinkKind,
    args: &LinksArgs,
) -> Result<(MutationOutput, Vec<String>)> {
    let field = kind.field();
    let (id, doc, changed, warnings) = if !args.add.is_empty() {
        let links = args
            .add
            .iter()
            .map(|raw| LinkedPath::parse(raw, "--add"))
            .collect::<Result<Vec<_>, Error>>()?;
        let m = with_context(ctx, field, args.force, |mctx, _| {
            Ok(link_add(mctx, &args.id, kind, &links, "--add")?)
        })?;
        (m.id, m.after, true, m.warnings)
    } else if !args.remove.is_empty() {
        let m = with_context(ctx, field, args.force, |mctx, _| {
            Ok(link_remove(mctx, &args.id, kind, &args.remove, "--remove")?)
        })?;
        (m.id, m.after, true, m.warnings)
    } else {
        let ws = Workspace::open(ctx)?;
        let doc = read_item(&ws.tracker, &ws.settings, &ws.schema, &args.id)?;
        (
            doc.id().unwrap_or_default().to_string(),
            doc,
            false,
            Vec::new(),
        )
    };
    let list = doc
        .metadata
        .get(field)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let count = list.len();
    let mut entries = Map::new();
    entries.insert(field.to_string(), Value::Array(list));
    let out = LinksOutput {
        id,
        entries,
        changed,
        count,
    };
    Ok((MutationOutput::Links(out), warnings))
}
