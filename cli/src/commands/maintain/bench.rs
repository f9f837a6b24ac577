//! `pm bench generate`: writes a deterministic synthetic tracker (pm-cli's seed-42 scale fixture)
//! through `pm_engine::bench_corpus` and prints its manifest.

use std::path::PathBuf;
use std::time::Instant;

use pm_engine::Error;
use pm_engine::bench_corpus::{
    CorpusOptions, CorpusShape, generate_corpus, manifest_json, write_manifest,
};
use serde_json::Value;

use crate::clock_reads::ReadClock;
use crate::ctx::Ctx;
use crate::failure::Result;

/// Generate benchmark trackers
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// The bench subcommand.
    #[command(subcommand)]
    pub command: BenchCommand,
}

/// `pm bench` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum BenchCommand {
    /// Write a deterministic synthetic tracker to DIR/.agents/pm
    Generate(BenchGenerateArgs),
}

/// Write a deterministic synthetic tracker to DIR/.agents/pm
///
/// A port of pm-cli's scale fixture generator: the same seed, count and shape give the same
/// bytes, and the scratch shape matches pm-cli's output byte for byte. Tiers: smoke (100),
/// calibration (2,243), ci (10,000), large (100,000); million (1,000,000) needs
/// --allow-million. The manifest is written to DIR/.pm-scale-fixture.json and printed.
#[derive(Debug, clap::Args)]
pub struct BenchGenerateArgs {
    /// Number of items, or a tier name (smoke, calibration, ci, large, million)
    #[arg(long, value_name = "N|TIER")]
    pub items: String,

    /// Workspace directory to create (must be empty, or a fixture with --force)
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    /// Generator seed
    #[arg(long, default_value_t = 42)]
    pub seed: u64,

    /// Population shape: scratch or representative
    #[arg(long, default_value = "scratch", value_name = "SHAPE")]
    pub shape: String,

    /// Replace an existing generated fixture in DIR
    #[arg(long)]
    pub force: bool,

    /// Allow more than 100,000 items (up to 1,000,000)
    #[arg(long)]
    pub allow_million: bool,
}

/// Runs a `pm bench` subcommand and returns the fixture manifest.
///
/// # Errors
/// `invalid_argument_value` for a bad count, seed, shape or output directory; I/O failures.
pub fn cmd_bench(ctx: &Ctx, args: &BenchArgs) -> Result<Value> {
    let BenchCommand::Generate(args) = &args.command;
    let shape = CorpusShape::named(&args.shape).ok_or_else(|| Error::InvalidArgument {
        field: "--shape".into(),
        value: args.shape.clone(),
        reason: "unknown corpus shape".into(),
        allowed: CorpusShape::names(),
    })?;
    let options = CorpusOptions {
        items: pm_engine::bench_corpus::parse_item_count(&args.items)?,
        seed: args.seed,
        shape,
        force: args.force,
        allow_million: args.allow_million,
    };
    let started = Instant::now();
    let report = generate_corpus(&ctx.cwd.join(&args.out), &options)?;
    let elapsed = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let manifest = manifest_json(&report, &ReadClock::new(&ctx.clock).stamp(), elapsed);
    write_manifest(&report, &manifest)?;
    Ok(manifest)
}
