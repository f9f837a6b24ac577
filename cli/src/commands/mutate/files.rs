//! `pm files|docs <id>`: link paths (`--add`, `--add-glob`), unlink them (`--remove`), rewrite
//! their prefixes (`--migrate`), or list them; `--validate-paths` checks the linked project
//! paths exist as files.

use pm_engine::Error;
use pm_engine::mutate::{
    LinkEdit, LinkGlob, LinkKind, LinkedPath, PathMigration, edit_links, read_item,
};
use serde_json::{Map, Value};

use crate::args::item_id::ItemId;
use crate::ctx::Ctx;
use crate::failure::{CliError, Result};
use crate::mutation::{LinksOutput, MutationOutput, Workspace, with_context};

/// Link paths to an item, unlink them, or list them
#[derive(Debug, clap::Args)]
pub struct LinksArgs {
    #[command(flatten)]
    pub item: ItemId,

    /// Link a path: path=<p>,scope=<project|global>,note=<text> or a bare path (repeatable;
    /// - reads one per line from stdin)
    #[arg(long, value_name = "SPEC")]
    pub add: Vec<String>,

    /// Link every file a glob matches under the workspace root: a plain glob or
    /// pattern=<glob>,scope=<s>,note=<text> (repeatable; an already linked path is kept as is;
    /// no match adds nothing)
    #[arg(long, value_name = "GLOB")]
    pub add_glob: Vec<String>,

    /// Unlink a path: path=<p>, a bare path, or - to read one per line from stdin (repeatable)
    #[arg(long, value_name = "PATH")]
    pub remove: Vec<String>,

    /// Rewrite linked paths that start with a prefix: from=<prefix>,to=<prefix> (repeatable)
    #[arg(long, value_name = "SPEC")]
    pub migrate: Vec<String>,

    /// Note for every link this run adds with --add or --add-glob (a note= in the value wins)
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,

    /// List the linked paths without changing anything (the default without a change flag)
    #[arg(long, conflicts_with_all = ["add", "add_glob", "remove", "migrate"])]
    pub list: bool,

    /// Check that every linked project path exists as a file: paths this run adds must, and
    /// the others are reported as warnings
    #[arg(long)]
    pub validate_paths: bool,

    /// The message of the history entry the change writes
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,

    /// Bypass ownership checks and clear a stale item lock (a lock whose owner is alive is
    /// never broken)
    #[arg(long)]
    pub force: bool,
}

/// `pm files`: the shared link flags plus `--append-stable`
#[derive(Debug, clap::Args)]
pub struct FilesArgs {
    #[command(flatten)]
    pub links: LinksArgs,

    /// Keep the stored order and append new links instead of sorting the list by path
    #[arg(long)]
    pub append_stable: bool,
}

impl LinksArgs {
    /// Whether the flags ask for a change.
    pub fn writes(&self) -> bool {
        !(self.add.is_empty()
            && self.add_glob.is_empty()
            && self.remove.is_empty()
            && self.migrate.is_empty())
    }
}

/// Links, unlinks, migrates or lists paths.
///
/// # Errors
/// Path refusals, `item_not_found`, ownership, lock and revision conflicts.
pub fn cmd_links(
    ctx: &Ctx,
    kind: LinkKind,
    args: &LinksArgs,
    append_stable: bool,
) -> Result<(MutationOutput, Vec<String>)> {
    let field = kind.field();
    let raw_id = args.item.get()?;
    if args.note.is_some() && args.add.is_empty() && args.add_glob.is_empty() {
        return Err(Error::invalid_argument(
            "--note",
            args.note.as_deref().unwrap_or_default(),
            "--note annotates the links of --add or --add-glob; give one of them",
            Vec::new(),
        )
        .into());
    }
    let (id, doc, changed, mut warnings) = if args.writes() {
        let edit = planned_edit(ctx, args, append_stable)?;
        if args.validate_paths {
            refuse_missing(ctx, &edit)?;
        }
        let m = with_context(ctx, field, args.force, |mctx, _| {
            Ok(edit_links(mctx, raw_id, kind, &edit)?)
        })?;
        (m.id, m.after, true, m.warnings)
    } else {
        let ws = Workspace::open(ctx)?;
        let doc = read_item(&ws.tracker, &ws.settings, &ws.schema, raw_id)?;
        let id = doc.id().unwrap_or_default().to_string();
        (id, doc, false, Vec::new())
    };
    let list = doc
        .metadata
        .get(field)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if args.validate_paths {
        let missing = missing_paths(ctx, &list)?;
        warnings.extend(
            missing
                .into_iter()
                .map(|(p, why)| format!("linked_path_invalid:{p}:{}", why.replace(' ', "_"))),
        );
    }
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

fn planned_edit(ctx: &Ctx, args: &LinksArgs, append_stable: bool) -> Result<LinkEdit> {
    let with_note = |mut link: LinkedPath| {
        if link.note.is_none() {
            link.note.clone_from(&args.note);
        }
        link
    };
    let add = specs(ctx, &args.add)?
        .iter()
        .map(|raw| LinkedPath::parse(raw, "--add").map(with_note))
        .collect::<Result<Vec<_>, Error>>()?;
    let globs = args
        .add_glob
        .iter()
        .map(|raw| {
            let mut glob = LinkGlob::parse(raw)?;
            if glob.note.is_none() {
                glob.note.clone_from(&args.note);
            }
            Ok(glob)
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let migrate = args
        .migrate
        .iter()
        .map(|raw| PathMigration::parse(raw))
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(LinkEdit {
        add,
        globs,
        remove: specs(ctx, &args.remove)?,
        migrate,
        append_stable,
        message: args.message.clone(),
    })
}

/// The values of a repeatable spec flag, with `-` replaced by the non-empty lines of stdin
/// (a leading `- ` list marker dropped).
fn specs(ctx: &Ctx, values: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::with_capacity(values.len());
    for value in values {
        if value != "-" {
            out.push(value.clone());
            continue;
        }
        let text = ctx.read_stdin()?;
        let lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        out.extend(lines.map(|l| l.strip_prefix("- ").unwrap_or(l).to_string()));
    }
    Ok(out)
}

/// With `--validate-paths`, an explicit project path that is not a file refuses the change.
fn refuse_missing(ctx: &Ctx, edit: &LinkEdit) -> Result<()> {
    let rows: Vec<Value> = edit
        .add
        .iter()
        .map(|l| serde_json::json!({"path": l.path, "scope": l.scope}))
        .collect();
    match missing_paths(ctx, &rows)?.into_iter().next() {
        None => Ok(()),
        Some((path, why)) => Err(CliError::from(Error::invalid_argument(
            "--add",
            &path,
            format!("--validate-paths: the path {why} in the workspace"),
            Vec::new(),
        ))),
    }
}

/// Project-scope paths (not URLs) that are missing or not regular files, with the reason.
fn missing_paths(ctx: &Ctx, rows: &[Value]) -> Result<Vec<(String, &'static str)>> {
    let tracker = ctx.tracker()?;
    let root = tracker.workspace_root();
    Ok(rows
        .iter()
        .filter(|r| r.get("scope").and_then(Value::as_str).unwrap_or("project") == "project")
        .filter_map(|r| r.get("path").and_then(Value::as_str))
        .filter(|p| !p.contains("://"))
        .filter_map(|p| match std::fs::metadata(root.join(p)) {
            Ok(meta) if meta.is_file() => None,
            Ok(_) => Some((p.to_string(), "is not a regular file")),
            Err(_) => Some((p.to_string(), "does not exist")),
        })
        .collect())
}
