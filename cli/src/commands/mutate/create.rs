//! `pm create`: turns the operands, field flags and `--stdin-json` document into an engine
//! `NewItem` and prints the mutation receipt.

use pm_engine::Error;
use pm_engine::governance::GivenOptions;
use pm_engine::ids::IdMinter;
use pm_engine::mutate::{DependencySeed, FieldEdit, NewItem, create, edits_from_json, split_list};
use serde_json::{Map, Value};

use crate::ctx::Ctx;
use crate::failure::{CliError, Result, UsageKind};
use crate::mutation::{FieldFlags, MutationOutput, ReceiptArgs, receipt_for, with_context};

/// Create a work item
///
/// Example: pm create task "Fix login" --priority 1 --tags auth,bug --dep id=pm-a1b2,kind=blocks
#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// Item type (Task, Feature, Epic, Issue, Chore, Decision, Milestone, …)
    #[arg(value_name = "TYPE")]
    pub type_operand: Option<String>,

    /// Item title
    #[arg(value_name = "TITLE")]
    pub title_operand: Option<String>,

    /// Item type, instead of the first operand
    #[arg(long = "type", value_name = "TYPE")]
    pub type_flag: Option<String>,

    /// Item title, instead of the second operand
    #[arg(short = 't', long, value_name = "TITLE")]
    pub title: Option<String>,

    /// Use this id instead of minting one (normalized with the tracker prefix)
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,

    /// Add a dependency: id=<id>,kind=<kind> or a bare id (repeatable)
    #[arg(long, value_name = "SPEC")]
    pub dep: Vec<String>,

    /// Markdown body
    #[arg(short = 'b', long, value_name = "TEXT", conflicts_with = "body_file")]
    pub body: Option<String>,

    /// Markdown body read from this file
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<std::path::PathBuf>,

    /// Add tags on top of --tags (comma-separated, repeatable)
    #[arg(long, value_name = "TAGS")]
    pub add_tags: Vec<String>,

    /// History message
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,

    /// Leave these fields unset (comma-separated; recorded in the history message)
    #[arg(long, value_name = "FIELDS")]
    pub unset: Vec<String>,

    /// Read the whole item document as a JSON object from stdin
    #[arg(long)]
    pub stdin_json: bool,

    /// Create required-option policy mode: strict|progressive
    #[arg(long, value_name = "MODE")]
    pub create_mode: Option<String>,

    /// Scheduling preset for Reminder|Meeting|Event: lightweight (creates progressively)
    #[arg(long, value_name = "PRESET")]
    pub schedule_preset: Option<String>,

    /// Explicitly create even when strict similarity governance finds likely duplicates
    #[arg(long)]
    pub allow_duplicate: bool,

    /// Explicit-empty collections.
    #[command(flatten)]
    pub clear: ClearFlags,

    /// Field flags.
    #[command(flatten)]
    pub fields: FieldFlags,

    /// Receipt flags.
    #[command(flatten)]
    pub receipt: ReceiptArgs,
}

/// Creates the item and returns its receipt.
///
/// # Errors
/// Usage errors for a missing type or title or a bad `--stdin-json` document, then the
/// engine's refusals (`item_id_collision`, invalid values, unresolved references, …).
pub fn cmd_create(ctx: &Ctx, args: &CreateArgs) -> Result<(MutationOutput, Vec<String>)> {
    let mut doc = if args.stdin_json {
        stdin_document(ctx)?
    } else {
        Map::new()
    };
    let take = |doc: &mut Map<String, Value>, key: &str| {
        doc.shift_remove(key)
            .and_then(|v| v.as_str().map(String::from))
    };
    let (type_name, title) = match (&args.type_flag, &args.type_operand, &args.title_operand) {
        (Some(t), Some(title), None) => (Some(t.clone()), Some(title.clone())),
        (flag, operand, title) => (flag.clone().or(operand.clone()), title.clone()),
    };
    let type_name = type_name.or_else(|| take(&mut doc, "type"));
    let title = args
        .title
        .clone()
        .or(title)
        .or_else(|| take(&mut doc, "title"));
    let (Some(type_name), Some(title)) = (type_name, title) else {
        return Err(missing(
            "TYPE and TITLE (operands, --type/--title or --stdin-json)",
        ));
    };
    let id = args.id.clone().or_else(|| take(&mut doc, "id"));
    let flag_body = match &args.body_file {
        Some(path) => Some(read_body_file(path)?),
        None => args.body.clone(),
    };
    let body_from_doc = flag_body.is_none() && doc.contains_key("body");
    let body_given = flag_body.is_some() || body_from_doc;
    let body = flag_body
        .or_else(|| take(&mut doc, "body"))
        .unwrap_or_default();
    let mut edits = edits_from_json(&doc);
    edits.extend(args.fields.edits());
    let add_tags: Vec<String> = args.add_tags.iter().flat_map(|t| split_list(t)).collect();
    if !add_tags.is_empty() {
        edits.push(FieldEdit::AddTags(add_tags));
    }
    for dep in &args.dep {
        edits.push(FieldEdit::AddDependency(DependencySeed::parse(
            dep,
            "cli:create:dep",
        )?));
    }
    let mut explicit_unset: Vec<String> = args.unset.iter().flat_map(|u| split_list(u)).collect();
    explicit_unset.extend(args.clear.fields().map(String::from));
    edits.extend(explicit_unset.iter().cloned().map(FieldEdit::Unset));
    let mut given = Vec::new();
    if ctx.explicit_author_flag().is_some() {
        given.push("author".to_string());
    }
    if body_given {
        given.push("body".to_string());
    }
    let item = NewItem {
        type_name,
        title,
        id,
        edits,
        body,
        message: args.message.clone(),
        explicit_unset,
        create_mode: args.create_mode.clone(),
        schedule_preset: args.schedule_preset.clone(),
        options: GivenOptions {
            given,
            cleared: Vec::new(),
        },
        allow_duplicate: args.allow_duplicate,
    };
    let mut minter = match &ctx.seed {
        Some(seed) => IdMinter::seeded(seed.clone()),
        None => IdMinter::from_entropy(),
    };
    let m = with_context(ctx, "create", false, |mctx, _| {
        Ok(create(mctx, &item, &mut minter)?)
    })?;
    Ok((receipt_for(&m, &args.receipt), m.warnings))
}

/// `--clear-<collection>`: the collection is intentionally empty (satisfies strict create mode;
/// recorded as `explicit_unset=` in the history message).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ClearFlags {
    /// Clear dependency entries
    #[arg(long)]
    pub clear_deps: bool,
    /// Clear comments
    #[arg(long)]
    pub clear_comments: bool,
    /// Clear notes
    #[arg(long)]
    pub clear_notes: bool,
    /// Clear learnings
    #[arg(long)]
    pub clear_learnings: bool,
    /// Clear linked files
    #[arg(long)]
    pub clear_files: bool,
    /// Clear linked tests
    #[arg(long)]
    pub clear_tests: bool,
    /// Clear linked docs
    #[arg(long)]
    pub clear_docs: bool,
    /// Clear reminders
    #[arg(long)]
    pub clear_reminders: bool,
    /// Clear events
    #[arg(long)]
    pub clear_events: bool,
    /// Clear type options
    #[arg(long)]
    pub clear_type_options: bool,
}

impl ClearFlags {
    /// Returns the metadata keys of the cleared collections.
    pub fn fields(&self) -> impl Iterator<Item = &'static str> {
        [
            (self.clear_deps, "dependencies"),
            (self.clear_comments, "comments"),
            (self.clear_notes, "notes"),
            (self.clear_learnings, "learnings"),
            (self.clear_files, "files"),
            (self.clear_tests, "tests"),
            (self.clear_docs, "docs"),
            (self.clear_reminders, "reminders"),
            (self.clear_events, "events"),
            (self.clear_type_options, "type_options"),
        ]
        .into_iter()
        .filter_map(|(on, key)| on.then_some(key))
    }
}

/// Reads a `--body-file` (a path relative to the current directory).
///
/// # Errors
/// `invalid_argument_value` naming the file and the I/O error when it cannot be read.
pub(crate) fn read_body_file(path: &std::path::Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| {
        Error::invalid_argument(
            "--body-file",
            &path.display().to_string(),
            format!("cannot read the file: {e}"),
            Vec::new(),
        )
        .into()
    })
}

/// Reads the `--stdin-json` document (a JSON object).
pub(crate) fn stdin_document(ctx: &Ctx) -> Result<Map<String, Value>> {
    let text = ctx.read_stdin()?;
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(Error::InvalidArgument {
            field: "--stdin-json".into(),
            value: text.chars().take(80).collect(),
            reason: "stdin must hold one JSON object".into(),
            allowed: Vec::new(),
        }
        .into()),
    }
}

fn missing(what: &str) -> CliError {
    CliError::Usage {
        kind: UsageKind::MissingRequiredArgument,
        detail: format!("create needs {what}"),
        flag: Some("TITLE".into()),
        value: None,
        suggestions: Box::new([]),
        allowed: Box::new([]),
    }
}
