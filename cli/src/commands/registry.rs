//! The command registry: every fact about a subcommand besides its argument struct and its run
//! function, declared once in one [`CommandSpec`] — its name and aliases, whether help hides
//! it, whether the read-output controls apply, whether the secret guard scans it, whether it
//! prints an NDJSON stream, its read surface and its clap argument builder.
//!
//! [`Command`] reaches its spec through one exhaustive `match` (a variant without a spec does
//! not compile); [`ALL`] lists every spec for lookups by name (the lazy grammar, contracts).
//! `tests::registry_matches_the_full_grammar` holds the registry equal to the clap grammar.

use clap::Args;

use crate::commands::{
    ActivityArgs, AggregateArgs, AppendArgs, BenchArgs, ClaimArgs, CloseArgs, Command,
    CommentsArgs, CompletionsArgs, ContextArgs, ContractsArgs, CreateArgs, DeleteArgs, DepsArgs,
    EventsArgs, FilesArgs, GcArgs, GetArgs, GraphArgs, HealthArgs, HistoryArgs, HistoryRepairArgs,
    InitArgs, ItemArgs, LearningsArgs, LinksArgs, ListArgs, MergeArgs, NextArgs, NotesArgs,
    ReindexArgs, ReleaseArgs, RestoreArgs, SearchArgs, StatsArgs, TestArgs, UpdateArgs,
    ValidateArgs, WhereArgs,
};
use crate::read_output::{CommandKind, Surface};
use GuardRule::{Always, Never, WhenWriting};
use ReadRule::{NotRead, Read, ReadUnlessWriting};

/// Builds one subcommand's arguments onto its named `clap::Command` (an `XxxArgs` derive).
pub type Augment = fn(clap::Command) -> clap::Command;

/// Whether the universal read-output controls apply to a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadRule {
    /// A read surface in every invocation.
    Read,
    /// Never a read surface: only `--output-format` applies.
    NotRead,
    /// A read surface, except in its writing mode, where it is its surface in a mutation mode.
    ReadUnlessWriting,
}

/// Whether the mutation secret guard scans an invocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuardRule {
    /// Never: the command writes no user text into an item or its history.
    Never,
    /// Every invocation.
    Always,
    /// Only invocations in the command's writing mode (`comments --add`, `deps --remove`).
    WhenWriting,
}

/// The declared facts of one subcommand.
#[derive(Clone, Copy, Debug)]
pub struct CommandSpec {
    /// The name as typed on the command line.
    pub name: &'static str,
    /// Other names it answers to.
    pub aliases: &'static [&'static str],
    /// Whether help leaves it out (the `list-*` spellings).
    pub hidden: bool,
    /// Whether the read-output controls apply.
    pub read: ReadRule,
    /// Whether the secret guard scans it.
    pub guard: GuardRule,
    /// Whether stdout is an NDJSON stream (a JSON document per line) instead of one document.
    pub ndjson: bool,
    /// The read surface its name resolves to, if any.
    pub surface: Option<Surface>,
    /// Its clap argument builder (the lazy grammar of a normal invocation).
    pub augment: Augment,
}

impl CommandSpec {
    const fn new(name: &'static str, read: ReadRule, guard: GuardRule, augment: Augment) -> Self {
        CommandSpec {
            name,
            aliases: &[],
            hidden: false,
            read,
            guard,
            ndjson: false,
            surface: None,
            augment,
        }
    }

    const fn on(mut self, surface: Surface) -> Self {
        self.surface = Some(surface);
        self
    }

    const fn aliases(mut self, aliases: &'static [&'static str]) -> Self {
        self.aliases = aliases;
        self
    }

    const fn hidden(mut self) -> Self {
        self.hidden = true;
        self
    }

    const fn ndjson(mut self) -> Self {
        self.ndjson = true;
        self
    }

    /// Returns whether `token` is this command's name or one of its aliases.
    pub fn answers_to(&self, token: &str) -> bool {
        self.name == token || self.aliases.contains(&token)
    }

    /// Returns the read kind of an invocation, `writing` when it is in the writing mode.
    pub fn read_kind(&self, writing: bool) -> CommandKind {
        match (self.read, self.surface) {
            (ReadRule::Read, _) => CommandKind::Read,
            (ReadRule::ReadUnlessWriting, _) if !writing => CommandKind::Read,
            (ReadRule::ReadUnlessWriting, Some(surface)) => CommandKind::HybridMutation(surface),
            (ReadRule::NotRead | ReadRule::ReadUnlessWriting, _) => CommandKind::NotRead,
        }
    }

    /// Returns whether the secret guard scans an invocation, `writing` when it is in the
    /// writing mode.
    pub fn guarded(&self, writing: bool) -> bool {
        match self.guard {
            GuardRule::Never => false,
            GuardRule::Always => true,
            GuardRule::WhenWriting => writing,
        }
    }
}

/// A read surface.
const fn read(name: &'static str, surface: Surface, augment: Augment) -> CommandSpec {
    CommandSpec::new(name, Read, Never, augment).on(surface)
}

/// A list-family spelling: a hidden read of the list surface.
const fn list(name: &'static str) -> CommandSpec {
    read(name, Surface::List, ListArgs::augment_args).hidden()
}

/// A command that writes user text in every invocation.
const fn mutation(name: &'static str, augment: Augment) -> CommandSpec {
    CommandSpec::new(name, NotRead, Always, augment)
}

/// Upkeep and tooling: neither a read surface nor guarded.
const fn upkeep(name: &'static str, augment: Augment) -> CommandSpec {
    CommandSpec::new(name, NotRead, Never, augment)
}

/// A command that reads, and writes user text when asked to (`--add`, `--remove`).
const fn modal(name: &'static str, augment: Augment) -> CommandSpec {
    CommandSpec::new(name, NotRead, WhenWriting, augment)
}

pub static GET: CommandSpec =
    read("get", Surface::Get, GetArgs::augment_args).aliases(&["fetch", "read", "show", "view"]);
pub static HISTORY: CommandSpec = read("history", Surface::History, HistoryArgs::augment_args);
pub static INIT: CommandSpec = upkeep("init", InitArgs::augment_args);
pub static VALIDATE: CommandSpec = read("validate", Surface::Validate, ValidateArgs::augment_args);
pub static GC: CommandSpec = upkeep("gc", GcArgs::augment_args);
pub static HEALTH: CommandSpec = read("health", Surface::Health, HealthArgs::augment_args);
pub static REINDEX: CommandSpec = upkeep("reindex", ReindexArgs::augment_args);
pub static WHERE: CommandSpec = upkeep("where", WhereArgs::augment_args);
pub static CREATE: CommandSpec = mutation("create", CreateArgs::augment_args);
pub static UPDATE: CommandSpec = mutation("update", UpdateArgs::augment_args);
pub static CLOSE: CommandSpec = mutation("close", CloseArgs::augment_args);
pub static ITEM: CommandSpec = mutation("item", ItemArgs::augment_args);
pub static CLAIM: CommandSpec = mutation("claim", ClaimArgs::augment_args);
pub static RELEASE: CommandSpec = mutation("release", ReleaseArgs::augment_args);
pub static DELETE: CommandSpec = mutation("delete", DeleteArgs::augment_args);
pub static RESTORE: CommandSpec = mutation("restore", RestoreArgs::augment_args);
pub static APPEND: CommandSpec = mutation("append", AppendArgs::augment_args);
pub static COMMENTS: CommandSpec =
    modal("comments", CommentsArgs::augment_args).on(Surface::Comments);
pub static NOTES: CommandSpec = modal("notes", NotesArgs::augment_args).on(Surface::Notes);
pub static LEARNINGS: CommandSpec = modal("learnings", LearningsArgs::augment_args);
pub static FILES: CommandSpec = modal("files", FilesArgs::augment_args).on(Surface::Files);
pub static DOCS: CommandSpec = modal("docs", LinksArgs::augment_args).on(Surface::Docs);
pub static TEST: CommandSpec = modal("test", TestArgs::augment_args).aliases(&["tests"]);
pub static DEPS: CommandSpec = CommandSpec::new(
    "deps",
    ReadUnlessWriting,
    WhenWriting,
    DepsArgs::augment_args,
)
.on(Surface::Deps);
pub static HISTORY_REPAIR: CommandSpec = upkeep("history-repair", HistoryRepairArgs::augment_args);
pub static CONTRACTS: CommandSpec =
    read("contracts", Surface::Contracts, ContractsArgs::augment_args);
pub static COMPLETIONS: CommandSpec = upkeep("completions", CompletionsArgs::augment_args);
// events accepts the universal controls; they have no effect on the stream.
pub static EVENTS: CommandSpec = read("events", Surface::Events, EventsArgs::augment_args).ndjson();
pub static ACTIVITY: CommandSpec = read("activity", Surface::Activity, ActivityArgs::augment_args);
pub static GRAPH: CommandSpec = read("graph", Surface::Graph, GraphArgs::augment_args);
pub static LIST: CommandSpec = read("list", Surface::List, ListArgs::augment_args);
pub static LIST_ALL: CommandSpec = list("list-all");
pub static LIST_DRAFT: CommandSpec = list("list-draft");
pub static LIST_OPEN: CommandSpec = list("list-open");
pub static LIST_IN_PROGRESS: CommandSpec = list("list-in-progress");
pub static LIST_BLOCKED: CommandSpec = list("list-blocked");
pub static LIST_CLOSED: CommandSpec = list("list-closed");
pub static LIST_CANCELED: CommandSpec = list("list-canceled");
pub static STATS: CommandSpec = read("stats", Surface::Stats, StatsArgs::augment_args);
pub static AGGREGATE: CommandSpec =
    read("aggregate", Surface::Aggregate, AggregateArgs::augment_args);
pub static SEARCH: CommandSpec = read("search", Surface::Search, SearchArgs::augment_args);
pub static NEXT: CommandSpec = read("next", Surface::Next, NextArgs::augment_args);
pub static CONTEXT: CommandSpec =
    read("context", Surface::Context, ContextArgs::augment_args).aliases(&["ctx"]);
pub static BENCH: CommandSpec = upkeep("bench", BenchArgs::augment_args);
pub static MERGE: CommandSpec = upkeep("merge", MergeArgs::augment_args);

/// Every subcommand's spec, in [`Command`] declaration order.
pub static ALL: &[&CommandSpec] = &[
    &GET,
    &HISTORY,
    &INIT,
    &VALIDATE,
    &GC,
    &HEALTH,
    &REINDEX,
    &WHERE,
    &CREATE,
    &UPDATE,
    &CLOSE,
    &ITEM,
    &CLAIM,
    &RELEASE,
    &DELETE,
    &RESTORE,
    &APPEND,
    &COMMENTS,
    &NOTES,
    &LEARNINGS,
    &FILES,
    &DOCS,
    &TEST,
    &DEPS,
    &HISTORY_REPAIR,
    &CONTRACTS,
    &COMPLETIONS,
    &EVENTS,
    &ACTIVITY,
    &GRAPH,
    &LIST,
    &LIST_ALL,
    &LIST_DRAFT,
    &LIST_OPEN,
    &LIST_IN_PROGRESS,
    &LIST_BLOCKED,
    &LIST_CLOSED,
    &LIST_CANCELED,
    &STATS,
    &AGGREGATE,
    &SEARCH,
    &NEXT,
    &CONTEXT,
    &BENCH,
    &MERGE,
];

/// Returns the spec of the subcommand named `name` (not an alias).
pub fn by_name(name: &str) -> Option<&'static CommandSpec> {
    ALL.iter().copied().find(|spec| spec.name == name)
}

/// Returns the spec of the subcommand `token` names or aliases.
pub fn by_token(token: &str) -> Option<&'static CommandSpec> {
    ALL.iter().copied().find(|spec| spec.answers_to(token))
}

/// A command's spec plus whether this invocation is in its writing mode (consulted only by
/// the `ReadUnlessWriting` and `WhenWriting` rules).
struct Registered {
    spec: &'static CommandSpec,
    writing: bool,
}

const fn fixed(spec: &'static CommandSpec) -> Registered {
    Registered {
        spec,
        writing: false,
    }
}

const fn writing_if(spec: &'static CommandSpec, writing: bool) -> Registered {
    Registered { spec, writing }
}

impl Command {
    /// The one place a variant meets its spec.
    fn registered(&self) -> Registered {
        let links = |add: &[String], remove: &[String]| !add.is_empty() || !remove.is_empty();
        match self {
            Command::Get(_) => fixed(&GET),
            Command::History(_) => fixed(&HISTORY),
            Command::Init(_) => fixed(&INIT),
            Command::Validate(_) => fixed(&VALIDATE),
            Command::Gc(_) => fixed(&GC),
            Command::Health(_) => fixed(&HEALTH),
            Command::Reindex(_) => fixed(&REINDEX),
            Command::Where(_) => fixed(&WHERE),
            Command::Create(_) => fixed(&CREATE),
            Command::Update(_) => fixed(&UPDATE),
            Command::Close(_) => fixed(&CLOSE),
            Command::Item(_) => fixed(&ITEM),
            Command::Claim(_) => fixed(&CLAIM),
            Command::Release(_) => fixed(&RELEASE),
            Command::Delete(_) => fixed(&DELETE),
            Command::Restore(_) => fixed(&RESTORE),
            Command::Append(_) => fixed(&APPEND),
            Command::Comments(a) => writing_if(&COMMENTS, a.request().writes()),
            Command::Notes(a) => writing_if(&NOTES, a.request().writes()),
            Command::Learnings(a) => writing_if(&LEARNINGS, a.request().writes()),
            Command::Files(a) => writing_if(&FILES, a.links.writes()),
            Command::Docs(a) => writing_if(&DOCS, a.writes()),
            Command::Test(a) => writing_if(&TEST, links(&a.add, &a.remove)),
            Command::Deps(a) => writing_if(&DEPS, !a.is_read()),
            Command::HistoryRepair(_) => fixed(&HISTORY_REPAIR),
            Command::Contracts(_) => fixed(&CONTRACTS),
            Command::Completions(_) => fixed(&COMPLETIONS),
            Command::Events(_) => fixed(&EVENTS),
            Command::Activity(_) => fixed(&ACTIVITY),
            Command::Graph(_) => fixed(&GRAPH),
            Command::List(_) => fixed(&LIST),
            Command::ListAll(_) => fixed(&LIST_ALL),
            Command::ListDraft(_) => fixed(&LIST_DRAFT),
            Command::ListOpen(_) => fixed(&LIST_OPEN),
            Command::ListInProgress(_) => fixed(&LIST_IN_PROGRESS),
            Command::ListBlocked(_) => fixed(&LIST_BLOCKED),
            Command::ListClosed(_) => fixed(&LIST_CLOSED),
            Command::ListCanceled(_) => fixed(&LIST_CANCELED),
            Command::Stats(_) => fixed(&STATS),
            Command::Aggregate(_) => fixed(&AGGREGATE),
            Command::Search(_) => fixed(&SEARCH),
            Command::Next(_) => fixed(&NEXT),
            Command::Context(_) => fixed(&CONTEXT),
            Command::Bench(_) => fixed(&BENCH),
            Command::Merge(_) => fixed(&MERGE),
        }
    }

    /// Returns the command's declared facts.
    pub fn spec(&self) -> &'static CommandSpec {
        self.registered().spec
    }

    /// Returns the subcommand name as typed on the command line.
    pub fn name(&self) -> &'static str {
        self.spec().name
    }

    /// Returns whether the command is a read surface (the universal `--output-*` controls
    /// apply), a read surface in a mutation mode, or neither.
    pub fn read_kind(&self) -> CommandKind {
        let Registered { spec, writing } = self.registered();
        spec.read_kind(writing)
    }

    /// Returns whether the mutation secret guard scans this invocation: the commands that
    /// write user text into an item or its history, in their writing modes (pm's
    /// `isMutationInvocation`; `deps --add/--remove` and `item reopen` are ours).
    pub fn secret_guarded(&self) -> bool {
        let Registered { spec, writing } = self.registered();
        spec.guarded(writing)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use clap::{CommandFactory, Parser};

    use super::*;
    use crate::commands::Cli;

    /// Every subcommand of the full grammar (in declaration order) has exactly one spec, with
    /// its name, aliases and visibility, and every spec is a subcommand of the grammar.
    #[test]
    fn registry_matches_the_full_grammar() {
        let mut full = Cli::command();
        full.build();
        let grammar: Vec<&clap::Command> = full
            .get_subcommands()
            .filter(|c| c.get_name() != "help")
            .collect();
        let names = |specs: &[&CommandSpec]| specs.iter().map(|s| s.name).collect::<Vec<_>>();
        let clap_names: Vec<&str> = grammar.iter().map(|c| c.get_name()).collect();
        assert_eq!(names(ALL), clap_names);
        for sub in grammar {
            let name = sub.get_name();
            let specs: Vec<_> = ALL.iter().filter(|s| s.name == name).collect();
            assert_eq!(specs.len(), 1, "{name}: one spec");
            let aliases: Vec<&str> = sub.get_all_aliases().collect();
            assert_eq!(specs[0].aliases, aliases, "{name}: aliases");
            assert_eq!(specs[0].hidden, sub.is_hide_set(), "{name}: hidden");
        }
    }

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = BTreeSet::new();
        for spec in ALL {
            for token in std::iter::once(&spec.name).chain(spec.aliases) {
                assert!(seen.insert(*token), "{token} names two commands");
            }
        }
        assert_eq!(by_token("ctx").map(|s| s.name), Some("context"));
        assert_eq!(by_token("show").map(|s| s.name), Some("get"));
        assert!(by_name("show").is_none());
    }

    /// A command's surface is the one its name resolves to; a command that becomes its
    /// surface in a mutation mode has one.
    #[test]
    fn surfaces_are_what_the_names_resolve_to() {
        for spec in ALL {
            assert_eq!(spec.surface, Surface::resolve(spec.name), "{}", spec.name);
            if spec.read == ReadRule::ReadUnlessWriting {
                assert!(spec.surface.is_some(), "{}", spec.name);
            }
        }
        let streams: Vec<&str> = ALL.iter().filter(|s| s.ndjson).map(|s| s.name).collect();
        assert_eq!(streams, ["events"]);
    }

    fn parsed(args: &[&str]) -> Command {
        let argv = std::iter::once("pm").chain(args.iter().copied());
        Cli::try_parse_from(argv).expect("parses").command
    }

    /// Reads, writes and the two modes of the commands that have both.
    #[test]
    fn read_kinds_and_guards_follow_the_mode() {
        let cases: &[(&[&str], &str, CommandKind, bool)] = &[
            (&["list-open"], "list-open", CommandKind::Read, false),
            (&["ctx"], "context", CommandKind::Read, false),
            (&["show", "pm-a1"], "get", CommandKind::Read, false),
            (&["events"], "events", CommandKind::Read, false),
            (&["deps", "pm-a1"], "deps", CommandKind::Read, false),
            (
                &["deps", "pm-a1", "--add", "pm-b2"],
                "deps",
                CommandKind::HybridMutation(Surface::Deps),
                true,
            ),
            (
                &["comments", "pm-a1"],
                "comments",
                CommandKind::NotRead,
                false,
            ),
            (
                &["notes", "pm-a1", "--add", "text"],
                "notes",
                CommandKind::NotRead,
                true,
            ),
            (&["files", "pm-a1"], "files", CommandKind::NotRead, false),
            (
                &["docs", "pm-a1", "--remove", "a.md"],
                "docs",
                CommandKind::NotRead,
                true,
            ),
            (
                &["tests", "pm-a1", "--add", "command=cargo test"],
                "test",
                CommandKind::NotRead,
                true,
            ),
            (
                &["close", "pm-a1", "done"],
                "close",
                CommandKind::NotRead,
                true,
            ),
            (&["gc"], "gc", CommandKind::NotRead, false),
        ];
        for (args, name, kind, guarded) in cases {
            let command = parsed(args);
            assert_eq!(command.name(), *name, "{args:?}");
            assert_eq!(command.read_kind(), *kind, "{args:?}");
            assert_eq!(command.secret_guarded(), *guarded, "{args:?}");
        }
    }
}
