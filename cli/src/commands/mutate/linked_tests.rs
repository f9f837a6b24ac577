//! `pm test <id>`: link (`--add`) or unlink (`--remove`) tests, or list them. Running linked
//! tests is not supported yet; only the collection is edited.

use pm_engine::Error;
use pm_engine::mutate::{LinkedTest, read_item, tests_add, tests_remove};
use serde_json::{Map, Value};

use crate::ctx::Ctx;
use crate::failure::Result;
use crate::mutation::{LinksOutput, MutationOutput, Workspace, with_context};

/// Link tests to an item, unlink them, or list them
///
/// A test is a shell command with an optional test file, scope, timeout and note:
/// --add 'path=tests/io.rs,timeout_seconds=240,command=cargo test -p io'. `command` and `note`
/// take the rest of the text, so put them last; a spec without keys is a bare command.
#[derive(Debug, clap::Args)]
pub struct TestArgs {
    /// The item id
    #[arg(value_name = "ID")]
    pub id: String,

    /// Link a test: path=<p>,scope=<project|global>,timeout_seconds=<n>,command=<cmd>, or a bare command (repeatable)
    #[arg(long, value_name = "SPEC")]
    pub add: Vec<String>,

    /// Unlink tests by command, path or 1-based position (repeatable)
    #[arg(long, value_name = "SELECTOR", conflicts_with = "add")]
    pub remove: Vec<String>,

    /// Bypass ownership checks and clear a stale item lock (a lock whose owner is alive is
    /// never broken)
    #[arg(long)]
    pub force: bool,
}

/// Links, unlinks or lists an item's tests.
///
/// # Errors
/// Spec refusals, `item_not_found`, ownership, lock and revision conflicts.
pub fn cmd_test(ctx: &Ctx, args: &TestArgs) -> Result<(MutationOutput, Vec<String>)> {
    let (id, doc, changed, warnings) = if !args.add.is_empty() {
        let tests = args
            .add
            .iter()
            .map(|raw| LinkedTest::parse(raw, "--add"))
            .collect::<Result<Vec<_>, Error>>()?;
        let m = with_context(ctx, "test", args.force, |mctx, _| {
            Ok(tests_add(mctx, &args.id, &tests)?)
        })?;
        (m.id, m.after, true, m.warnings)
    } else if !args.remove.is_empty() {
        let m = with_context(ctx, "test", args.force, |mctx, _| {
            Ok(tests_remove(mctx, &args.id, &args.remove, "--remove")?)
        })?;
        (m.id, m.after, true, m.warnings)
    } else {
        let ws = Workspace::open(ctx)?;
        let doc = read_item(&ws.tracker, &ws.settings, &ws.schema, &args.id)?;
        let id = doc.id().unwrap_or_default().to_string();
        (id, doc, false, Vec::new())
    };
    let list = doc
        .metadata
        .get("tests")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let count = list.len();
    let mut entries = Map::new();
    entries.insert("tests".to_string(), Value::Array(list));
    let out = LinksOutput {
        id,
        entries,
        changed,
        count,
    };
    Ok((MutationOutput::Links(out), warnings))
}
