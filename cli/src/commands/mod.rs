//! The `Command` enum (one variant per subcommand) and the dispatch `match`; every other fact
//! about a command is its spec in `registry.rs`.
//! Each command lives in `commands/<family>/<name>.rs` as `XxxArgs`, `cmd_xxx` and `XxxOutput`;
//! the families are `listing/`, `ranking/`, `filters/` (the one filter front-end),
//! `relations/`, `timeline/`, `mutate/`, `maintain/` and `merge/` (the git merge fence).

mod cli;
mod filters;
mod listing;
mod maintain;
mod merge;
pub(crate) mod mutate;
mod ranking;
pub mod registry;
mod relations;
mod timeline;

use std::io::{self, Write};

use pm_engine::mutate::LinkKind;
use serde_json::Value;

pub use cli::{Cli, invoked_grammar};
pub use listing::aggregate::{AggregateArgs, cmd_aggregate};
pub use listing::get::{GetArgs, GetOutput, cmd_get};
pub use listing::list::{ListArgs, ListSpelling, cmd_list};
pub use listing::stats::{StatsArgs, StatsOutput, cmd_stats};
pub use maintain::bench::{BenchArgs, BenchCommand, BenchGenerateArgs, cmd_bench};
pub use maintain::completions::{CompletionsArgs, cmd_completions};
pub use maintain::contracts::{ContractsArgs, cmd_contracts, streams_ndjson};
pub use maintain::gc::{GcArgs, GcOutput, cmd_gc};
pub use maintain::health::{HealthArgs, HealthOutput, cmd_health};
pub use maintain::init::{InitArgs, InitOutput, InitSummary, InitTarget, cmd_init};
pub use maintain::reindex::{ReindexArgs, ReindexOutput, cmd_reindex};
pub use maintain::validate::{ValidateArgs, ValidateOutput, cmd_validate};
pub use maintain::r#where::{WhereArgs, WhereOutput, cmd_where};
pub use merge::{MergeArgs, MergeOutput, cmd_merge};
pub use mutate::append::{AppendArgs, cmd_append};
pub use mutate::claim::{ClaimArgs, ReleaseArgs, cmd_claim, cmd_release};
pub use mutate::close::{CloseArgs, cmd_close};
pub use mutate::comments::cmd_annotation;
pub use mutate::create::{CreateArgs, cmd_create};
pub use mutate::delete::{DeleteArgs, RestoreArgs, cmd_delete, cmd_restore};
pub use mutate::files::{FilesArgs, LinksArgs, cmd_links};
pub use mutate::item::{ItemArgs, ItemCommand, ReopenArgs, cmd_item};
pub use mutate::linked_tests::{TestArgs, cmd_test};
pub use mutate::log_args::{CommentsArgs, LearningsArgs, LogArgs, LogRequest, NotesArgs};
pub use mutate::update::{UpdateArgs, cmd_update};
pub use ranking::context::{ContextArgs, cmd_context};
pub use ranking::next::{NextArgs, cmd_next};
pub use ranking::search::{SearchArgs, cmd_search};
pub use relations::deps::{DepsArgs, DepsCollapse, DepsFormat, cmd_deps, cmd_deps_read};
pub use relations::graph::{GraphArgs, GraphDirection, GraphOutput, GraphSubcommand, cmd_graph};
pub use timeline::activity::{ActivityArgs, ActivityOutput, cmd_activity};
pub use timeline::events::{EventsArgs, cmd_events};
pub use timeline::history::{HistoryArgs, HistoryOutput, cmd_history};
pub use timeline::history_repair::{HistoryRepairArgs, cmd_history_repair};

use crate::ctx::Ctx;
use crate::exit;
use crate::failure::{CliError, Result, UsageKind};
use crate::mutation::MutationOutput;
use crate::read_output::{CommandKind, Finished};
use crate::render::{Format, render, render_summarized, render_value};

/// pm's subcommands. Variants carry no doc comment: the help text is the one on `XxxArgs`;
/// aliases and visibility are read from the registry, whose test holds the names equal.
#[derive(Debug, clap::Subcommand)]
#[allow(missing_docs)]
pub enum Command {
    #[command(visible_aliases = registry::GET.aliases)]
    Get(GetArgs),
    History(HistoryArgs),
    Init(InitArgs),
    Validate(ValidateArgs),
    Gc(GcArgs),
    Health(HealthArgs),
    Reindex(ReindexArgs),
    Where(WhereArgs),
    Create(CreateArgs),
    Update(UpdateArgs),
    Close(CloseArgs),
    Item(ItemArgs),
    Claim(ClaimArgs),
    Release(ReleaseArgs),
    Delete(DeleteArgs),
    Restore(RestoreArgs),
    Append(AppendArgs),
    Comments(CommentsArgs),
    Notes(NotesArgs),
    Learnings(LearningsArgs),
    Files(FilesArgs),
    Docs(LinksArgs),
    #[command(visible_aliases = registry::TEST.aliases)]
    Test(TestArgs),
    Deps(DepsArgs),
    HistoryRepair(HistoryRepairArgs),
    Contracts(ContractsArgs),
    Completions(CompletionsArgs),
    Events(EventsArgs),
    Activity(ActivityArgs),
    Graph(GraphArgs),
    List(ListArgs),
    #[command(hide = registry::LIST_ALL.hidden)]
    ListAll(ListArgs),
    #[command(hide = registry::LIST_DRAFT.hidden)]
    ListDraft(ListArgs),
    #[command(hide = registry::LIST_OPEN.hidden)]
    ListOpen(ListArgs),
    #[command(hide = registry::LIST_IN_PROGRESS.hidden)]
    ListInProgress(ListArgs),
    #[command(hide = registry::LIST_BLOCKED.hidden)]
    ListBlocked(ListArgs),
    #[command(hide = registry::LIST_CLOSED.hidden)]
    ListClosed(ListArgs),
    #[command(hide = registry::LIST_CANCELED.hidden)]
    ListCanceled(ListArgs),
    Stats(StatsArgs),
    Aggregate(AggregateArgs),
    Search(Box<SearchArgs>),
    Next(NextArgs),
    #[command(visible_aliases = registry::CONTEXT.aliases)]
    Context(ContextArgs),
    Bench(BenchArgs),
    Merge(MergeArgs),
}

impl Command {
    /// Refuses a revision guard (`--expect-hash`) on a read surface (pm's
    /// `expect_hash_requires_mutation`): a guard no write checks would prove nothing.
    ///
    /// # Errors
    /// `expect_hash_requires_mutation` when `expect_hash` is not empty and the command reads.
    pub fn refuse_read_guard(&self, expect_hash: &[String]) -> Result<()> {
        let Some(first) = expect_hash.first() else {
            return Ok(());
        };
        if self.read_kind() != CommandKind::Read {
            return Ok(());
        }
        Err(CliError::Usage {
            kind: UsageKind::RequiresMutation,
            detail: format!(
                "--expect-hash applies only to commands that write an item; {} only reads",
                self.name()
            ),
            flag: Some("--expect-hash".into()),
            value: Some(first.clone()),
            suggestions: Box::default(),
            allowed: Box::default(),
        })
    }
}

/// The result of any command.
#[derive(Debug)]
pub enum CommandOutput {
    /// `pm init`; `verbose` prints the full receipt in TOON too.
    Init {
        /// The full receipt.
        output: Box<InitOutput>,
        /// `--verbose`.
        verbose: bool,
    },
    /// `pm gc`.
    Gc(GcOutput),
    /// `pm reindex`.
    Reindex(ReindexOutput),
    /// `pm where`.
    Where(WhereOutput),
    /// `pm bench generate`: the fixture manifest.
    Bench(Value),
    /// Any mutation: its receipt, plus advisory warnings for stderr.
    Mutation {
        /// The receipt.
        output: Box<MutationOutput>,
        /// `warning:<code>:…` tokens (without the `warning:` prefix).
        warnings: Vec<String>,
        /// The exit code of a completed run (bulk repairs with failed streams are not 0).
        exit_code: u8,
    },
    /// A read surface's result after the read-output layer (`read_output::finish_read`),
    /// printed in the encoding it was measured in.
    Read(Finished),
    /// A full-row JSON list whose rows are printed as they are produced.
    Streamed(Box<listing::list_stream::ListStream>),
    /// `pm merge`: its document and exit code.
    Merge(MergeOutput),
    /// Plain text in TOON mode (a shell script), the `document` under JSON.
    Text {
        /// What TOON mode prints, verbatim.
        text: String,
        /// What JSON mode prints.
        document: serde_json::Value,
    },
    /// NDJSON lines (`pm events`, `list --format ndjson|--stream`), printed the same in every
    /// encoding.
    Stream(Vec<serde_json::Value>),
    /// Text printed verbatim in every encoding (`list --format csv|table`).
    Raw(String),
}

impl CommandOutput {
    /// Writes the output in `format` through the renderer.
    ///
    /// # Errors
    /// Fails when `out` cannot be written.
    pub fn write(&self, format: Format, out: &mut dyn Write) -> io::Result<()> {
        match self {
            CommandOutput::Init {
                output,
                verbose: false,
            } => render_summarized(&output.summary(), output, format, out),
            CommandOutput::Init {
                output,
                verbose: true,
            } => render(&**output, format, out),
            CommandOutput::Gc(output) => render(output, format, out),
            CommandOutput::Reindex(output) => render(output, format, out),
            CommandOutput::Where(output) => render(output, format, out),
            CommandOutput::Bench(manifest) => render(manifest, format, out),
            CommandOutput::Merge(output) => render_value(&output.document, format, out),
            CommandOutput::Mutation { output, .. } => render(&**output, format, out),
            CommandOutput::Read(finished) => render_value(&finished.value, finished.format, out),
            CommandOutput::Streamed(stream) => stream.write(out),
            CommandOutput::Text { text, document } => match format {
                Format::Toon => out.write_all(text.as_bytes()),
                Format::Json => render(document, format, out),
            },
            CommandOutput::Stream(lines) => lines.iter().try_for_each(|line| {
                let mut text = serde_json::to_string(line).map_err(io::Error::other)?;
                text.push('\n');
                out.write_all(text.as_bytes())
            }),
            CommandOutput::Raw(text) => out.write_all(text.as_bytes()),
        }
    }

    /// Returns the advisory warnings pm prints on stderr (`warning:<token>` lines).
    pub fn warnings(&self) -> &[String] {
        match self {
            CommandOutput::Mutation { warnings, .. } => warnings,
            _ => &[],
        }
    }

    /// Returns the exit code of a successful run: 1 when `--strict-exit` found a failure or
    /// `reindex --check` found the index inconsistent (the result is still printed), 2 for a
    /// read omitted for its budget, otherwise 0.
    pub fn exit_code(&self) -> u8 {
        match self {
            CommandOutput::Read(finished) => finished.exit_code,
            CommandOutput::Streamed(stream) => stream.exit_code(),
            CommandOutput::Mutation { exit_code, .. } => *exit_code,
            CommandOutput::Reindex(output) => output.exit_code(),
            CommandOutput::Merge(output) => output.exit_code,
            _ => exit::SUCCESS,
        }
    }
}

/// Runs `command` and returns its output.
///
/// # Errors
/// Whatever the command returns; `run()` maps it to the error envelope and exit code.
pub fn dispatch(ctx: &Ctx, command: &Command) -> Result<CommandOutput> {
    match command {
        Command::Init(args) => cmd_init(ctx, args).map(|output| CommandOutput::Init {
            output: Box::new(output),
            verbose: args.verbose,
        }),
        Command::Gc(args) => cmd_gc(ctx, args).map(CommandOutput::Gc),
        Command::Health(args) => cmd_health(ctx, args).map(CommandOutput::Read),
        Command::Reindex(args) => cmd_reindex(ctx, args).map(CommandOutput::Reindex),
        Command::Where(args) => cmd_where(ctx, args).map(CommandOutput::Where),
        Command::Get(args) => cmd_get(ctx, args).map(CommandOutput::Read),
        Command::Bench(args) => cmd_bench(ctx, args).map(CommandOutput::Bench),
        Command::History(args) => cmd_history(ctx, args).map(CommandOutput::Read),
        Command::Validate(args) => cmd_validate(ctx, args).map(CommandOutput::Read),
        Command::Create(args) => mutation(cmd_create(ctx, args)),
        Command::Update(args) => mutation(cmd_update(ctx, args)),
        Command::Close(args) => mutation(cmd_close(ctx, args)),
        Command::Item(args) => mutation(cmd_item(ctx, args)),
        Command::Claim(args) => mutation(cmd_claim(ctx, args)),
        Command::Release(args) => mutation(cmd_release(ctx, args)),
        Command::Delete(args) => mutation(cmd_delete(ctx, args)),
        Command::Restore(args) => mutation(cmd_restore(ctx, args)),
        Command::Append(args) => mutation(cmd_append(ctx, args)),
        Command::Comments(args) => mutation(cmd_annotation(ctx, &args.request())),
        Command::Notes(args) => mutation(cmd_annotation(ctx, &args.request())),
        Command::Learnings(args) => mutation(cmd_annotation(ctx, &args.request())),
        Command::Files(args) => mutation(cmd_links(
            ctx,
            LinkKind::Files,
            &args.links,
            args.append_stable,
        )),
        Command::Docs(args) => mutation(cmd_links(ctx, LinkKind::Docs, args, false)),
        Command::Test(args) => mutation(cmd_test(ctx, args)),
        Command::Deps(args) if args.is_read() => cmd_deps_read(ctx, args).map(CommandOutput::Read),
        Command::Deps(args) => mutation(cmd_deps(ctx, args)),
        Command::HistoryRepair(args) => mutation(cmd_history_repair(ctx, args)),
        Command::Contracts(args) => cmd_contracts(ctx, args).map(CommandOutput::Read),
        Command::Completions(args) => Ok(cmd_completions(args)),
        Command::Events(args) => cmd_events(ctx, args).map(CommandOutput::Stream),
        Command::Activity(args) => cmd_activity(ctx, args).map(CommandOutput::Read),
        Command::Graph(args) => cmd_graph(ctx, args).map(CommandOutput::Read),
        Command::List(args) => cmd_list(ctx, args, ListSpelling::List),
        Command::ListAll(args) => cmd_list(ctx, args, ListSpelling::All),
        Command::ListDraft(args) => cmd_list(ctx, args, ListSpelling::Draft),
        Command::ListOpen(args) => cmd_list(ctx, args, ListSpelling::Open),
        Command::ListInProgress(args) => cmd_list(ctx, args, ListSpelling::InProgress),
        Command::ListBlocked(args) => cmd_list(ctx, args, ListSpelling::Blocked),
        Command::ListClosed(args) => cmd_list(ctx, args, ListSpelling::Closed),
        Command::ListCanceled(args) => cmd_list(ctx, args, ListSpelling::Canceled),
        Command::Stats(args) => cmd_stats(ctx, args).map(CommandOutput::Read),
        Command::Aggregate(args) => cmd_aggregate(ctx, args).map(CommandOutput::Read),
        Command::Search(args) => cmd_search(ctx, args),
        Command::Next(args) => cmd_next(ctx, args).map(CommandOutput::Read),
        Command::Context(args) => cmd_context(ctx, args, "context").map(CommandOutput::Read),
        Command::Merge(args) => cmd_merge(ctx, args).map(CommandOutput::Merge),
    }
}

fn mutation(result: Result<(MutationOutput, Vec<String>)>) -> Result<CommandOutput> {
    result.map(|(output, warnings)| CommandOutput::Mutation {
        exit_code: output.exit_code(),
        output: Box::new(output),
        warnings,
    })
}
