//! The grammar of `pm comments|notes|learnings`: the flags the three share, each command's own
//! `--add` spelling, and the notes-only JSON events and filters. [`LogRequest`] is what the
//! command reads, whichever of the three parsed it.

use pm_engine::mutate::AnnotationKind;

use crate::args::numbers::{AtLeastOne, Count, Number};

/// The flags comments, notes and learnings share
#[derive(Debug, clap::Args)]
pub struct LogArgs {
    /// The item id (or use --id)
    #[arg(value_name = "ID", required_unless_present = "item")]
    pub id: Option<String>,

    /// Entry text: the same as --add, or the replacement text of --edit; - reads stdin
    #[arg(value_name = "TEXT")]
    pub text: Option<String>,

    /// The item id, as a flag (then a single operand is the entry text)
    #[arg(long = "id", value_name = "ITEM-ID")]
    pub item: Option<String>,

    /// Read the entry text from standard input (multi-line markdown kept as typed)
    #[arg(long)]
    pub stdin: bool,

    /// Read the entry text from a UTF-8 file (relative to the working directory)
    #[arg(long, value_name = "PATH")]
    pub file: Option<String>,

    /// Replace the text of the entry at this 1-based position (text from TEXT, --add, --stdin
    /// or --file); the entry keeps its author and creation time and gains `edited_at`
    #[arg(long, value_name = "INDEX", conflicts_with = "delete")]
    pub edit: Option<Number<AtLeastOne>>,

    /// Delete the entry at this 1-based position
    #[arg(long, value_name = "INDEX")]
    pub delete: Option<Number<AtLeastOne>>,

    /// Return only the newest N entries
    #[arg(long, value_name = "N")]
    pub limit: Option<Number<Count>>,

    /// After a change, return every entry instead of only the one changed
    #[arg(long)]
    pub full_history: bool,

    /// The message of the history entry the change writes
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,

    /// Bypass ownership checks and clear a stale item lock (a lock whose owner is alive is
    /// never broken)
    #[arg(long)]
    pub force: bool,
}

/// List, add, edit or delete an item's comments
#[derive(Debug, clap::Args)]
pub struct CommentsArgs {
    /// Add a comment with this text (- reads stdin); without a change, list the comments
    #[arg(long, value_name = "TEXT", alias = "comment", alias = "body")]
    pub add: Option<String>,

    #[command(flatten)]
    pub log: LogArgs,
}

/// List, add, edit or delete an item's learnings
#[derive(Debug, clap::Args)]
pub struct LearningsArgs {
    /// Add a learning with this text (- reads stdin); without a change, list the learnings
    #[arg(long, value_name = "TEXT", alias = "learning")]
    pub add: Option<String>,

    #[command(flatten)]
    pub log: LogArgs,
}

/// List, add, edit or delete an item's notes and JSON context events
#[derive(Debug, clap::Args)]
pub struct NotesArgs {
    /// Add a text note (- reads stdin); without a change, list the notes
    #[arg(long, value_name = "TEXT", alias = "note")]
    pub add: Option<String>,

    /// Append a JSON context event (one JSON object; its `type` becomes the event type).
    /// Events are append-only: they cannot be edited or deleted
    #[arg(long, value_name = "JSON")]
    pub add_json: Option<String>,

    /// List only JSON events created at or after this ISO timestamp
    #[arg(long, value_name = "TIMESTAMP")]
    pub since: Option<String>,

    /// List only JSON events of this top-level type
    #[arg(long, value_name = "TYPE")]
    pub event_type: Option<String>,

    /// Include the count and truncation fields (always present in this pm's output)
    #[arg(long)]
    pub include_meta: bool,

    #[command(flatten)]
    pub log: LogArgs,
}

/// One invocation of a log command, whichever of the three parsed it.
#[derive(Debug)]
pub struct LogRequest<'a> {
    /// Which collection.
    pub kind: AnnotationKind,
    /// `--add` (or an alias).
    pub add: Option<&'a str>,
    /// `notes --add-json`.
    pub add_json: Option<&'a str>,
    /// `notes --since`.
    pub since: Option<&'a str>,
    /// `notes --event-type`.
    pub event_type: Option<&'a str>,
    /// The shared flags.
    pub log: &'a LogArgs,
}

impl CommentsArgs {
    /// The request of `pm comments`.
    pub fn request(&self) -> LogRequest<'_> {
        LogRequest::plain(AnnotationKind::Comment, self.add.as_deref(), &self.log)
    }
}

impl LearningsArgs {
    /// The request of `pm learnings`.
    pub fn request(&self) -> LogRequest<'_> {
        LogRequest::plain(AnnotationKind::Learning, self.add.as_deref(), &self.log)
    }
}

impl NotesArgs {
    /// The request of `pm notes`.
    pub fn request(&self) -> LogRequest<'_> {
        LogRequest {
            add_json: self.add_json.as_deref(),
            since: self.since.as_deref(),
            event_type: self.event_type.as_deref(),
            ..LogRequest::plain(AnnotationKind::Note, self.add.as_deref(), &self.log)
        }
    }
}

impl<'a> LogRequest<'a> {
    /// Whether the invocation changes the collection (otherwise it lists it).
    pub fn writes(&self) -> bool {
        let log = self.log;
        let text_operand = log.text.is_some() || (log.item.is_some() && log.id.is_some());
        text_operand
            || self.add.is_some()
            || self.add_json.is_some()
            || log.stdin
            || log.file.is_some()
            || log.edit.is_some()
            || log.delete.is_some()
    }

    fn plain(kind: AnnotationKind, add: Option<&'a str>, log: &'a LogArgs) -> LogRequest<'a> {
        LogRequest {
            kind,
            add,
            add_json: None,
            since: None,
            event_type: None,
            log,
        }
    }
}
