//! What every mutation command shares: building the engine's `MutationContext` from the
//! invocation (tracker, settings, schema, author, provenance, `--expect-hash`, the test-only
//! fault hook), the secret-guard preflight, and the receipts pm prints for a mutation.

mod fields;
mod receipt;

use pm_engine::commit::Commit;
#[cfg(feature = "fault-points")]
use pm_engine::mutate::FaultPoint;
use pm_engine::mutate::{Author, ExpectedRevision, MutationContext, provenance_for_command};
use pm_engine::schema::{RuntimeSchema, load};
use pm_engine::settings::Settings;
use pm_engine::tracker::Tracker;
use pm_index::Index;

pub use fields::FieldFlags;
pub use receipt::{
    AnnotationOutput, ClaimOutput, DeleteReceipt, IdOnly, LinksOutput, MutationOutput,
    MutationReceipt, ReceiptArgs, ReleaseOutput, output_item, receipt_for,
};

use crate::ctx::Ctx;
use crate::failure::Result;
use crate::progress::index_options;

/// A loaded tracker ready for mutations.
#[derive(Debug)]
pub struct Workspace {
    /// The tracker.
    pub tracker: Tracker,
    /// Its settings.
    pub settings: Settings,
    /// Its runtime schema.
    pub schema: RuntimeSchema,
    /// The resolved author.
    pub author: Author,
}

impl Workspace {
    /// Opens the tracker of `ctx` and resolves the author (`--author` > `PM_AUTHOR` >
    /// `settings.author_default` > `unknown`).
    ///
    /// # Errors
    /// `not_in_project`, or I/O errors reading settings and schema files.
    pub fn open(ctx: &Ctx) -> Result<Workspace> {
        let tracker = ctx.tracker()?;
        let loaded = load(&tracker, &ctx.settings_env())?;
        let author = Author::resolve(
            ctx.explicit_author_flag(),
            ctx.env_author.as_deref(),
            loaded.settings.author_default(),
        );
        Ok(Workspace {
            tracker,
            settings: loaded.settings,
            schema: loaded.schema,
            author,
        })
    }
}

/// Runs `operation` with a mutation context for `command` (the command word decides the
/// `agent_provenance` role). `force` is the command's `--force`.
///
/// # Errors
/// `invalid_argument_value` for a malformed `--expect-hash`, then whatever `operation` returns.
pub fn with_context<T>(
    ctx: &Ctx,
    command: &str,
    force: bool,
    operation: impl FnOnce(&MutationContext, &Workspace) -> Result<T>,
) -> Result<T> {
    let ws = Workspace::open(ctx)?;
    let mut expect = Vec::new();
    for raw in &ctx.expect_hash {
        expect.extend(ExpectedRevision::parse_list(raw)?);
    }
    #[cfg(feature = "fault-points")]
    let hook = fault_hook(ctx);
    let mut mctx = MutationContext::new(
        &ws.tracker,
        &ws.settings,
        &ws.schema,
        &ctx.clock,
        ws.author.clone(),
    );
    mctx.provenance = provenance_for_command(command);
    mctx.expect = expect;
    mctx.force = force;
    #[cfg(feature = "fault-points")]
    if let Some(hook) = &hook {
        mctx.fault = Some(hook);
    }
    // Keep the derived index in step: the observer runs under the item lock after the files
    // are written, and never fails the mutation (a problem marks the index stale).
    let index = Index::open(&ws.tracker, &ws.schema, index_options(ctx));
    let observer = |commit: &Commit| index.observe(commit);
    mctx.observer = Some(&observer);
    operation(&mctx, &ws)
}

/// The fault hook of `PM_FAULT_POINT`, when set to a known point (builds with the
/// `fault-points` feature only).
#[cfg(feature = "fault-points")]
fn fault_hook(ctx: &Ctx) -> Option<impl Fn(FaultPoint) + use<>> {
    let fault_point = ctx.fault_point.as_deref().and_then(FaultPoint::parse)?;
    Some(move |point: FaultPoint| {
        if point == fault_point {
            stop_at(point);
        }
    })
}

/// Test-only fault injection: announces the point on stderr and blocks forever, so that a
/// crash test can SIGKILL the process exactly there.
#[cfg(feature = "fault-points")]
fn stop_at(point: FaultPoint) -> ! {
    use std::io::Write;
    let mut stderr = std::io::stderr();
    // Best effort: if stderr is gone the parent cannot be waiting for the line anyway.
    let _ = writeln!(stderr, "fault:{}", point.as_str());
    let _ = stderr.flush();
    loop {
        std::thread::park();
    }
}
