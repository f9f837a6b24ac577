//! `pm-scale`: the scale runner. Generates a tier with the seed-42 corpus generator in a temp
//! dir, then measures cold-process CLI latency (1 excluded warm-up, then N runs), peak RSS and
//! output size for each operation in `ops::OPS`, optionally for a second pm-compatible binary on
//! an identical copy of the fixture, and writes a JSON report and a markdown table.
//!
//! Not part of `cargo test` or CI. Usage:
//! `cargo build --release -p pm-cli && cargo run --release -p pm-benches --bin pm-scale --
//! --items 10000 [--iterations 10] [--compare "node /path/to/pm-cli/dist/cli.js"]`
#![allow(clippy::disallowed_methods)] // a tool: reads PATH and the wall clock
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod measure;
mod ops;
mod report;

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Parser;
use pm_engine::bench_corpus::{
    CorpusOptions, CorpusShape, generate_corpus, manifest_json, parse_item_count, write_manifest,
};
use serde_json::json;

use measure::{Summary, Target};
use ops::{Op, Prepare};

/// Measure cold-process pm commands on a generated tracker
#[derive(Debug, Parser)]
#[command(name = "pm-scale")]
struct Args {
    /// Items, or a tier name (smoke, calibration, ci, large)
    #[arg(long, default_value = "10000")]
    items: String,
    /// Corpus shape: scratch or representative
    #[arg(long, default_value = "scratch")]
    shape: String,
    /// Generator seed
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Measured runs per command after the warm-up (1..=97)
    #[arg(long, default_value_t = 10)]
    iterations: usize,
    /// The pm binary to measure (default: `pm` next to this executable)
    #[arg(long)]
    pm: Option<PathBuf>,
    /// Another pm-compatible command to run on an identical fixture ("node …/dist/cli.js")
    #[arg(long, value_name = "COMMAND")]
    compare: Option<String>,
    /// Only these operations (comma-separated report keys)
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Write the JSON report here
    #[arg(long, default_value = "scale-report.json")]
    json: PathBuf,
    /// Write the markdown table here
    #[arg(long, default_value = "scale-report.md")]
    markdown: PathBuf,
    /// Keep the generated fixtures in this directory instead of a temp dir
    #[arg(long)]
    keep: Option<PathBuf>,
}

/// What the command table needs to know about the fixture.
pub struct Fixture {
    /// The first id.
    pub sample_get: String,
    /// The first 100 open ids.
    pub sample_open: Vec<String>,
}

fn main() -> Result<(), Box<dyn Error>> {
    let args = Args::parse();
    if args.iterations == 0 || args.iterations > 97 {
        return Err("--iterations must be 1..=97 (claim needs a fresh open id per run)".into());
    }
    let pm = match &args.pm {
        Some(path) => path.clone(),
        None => std::env::current_exe()?.with_file_name("pm"),
    };
    if !pm.is_file() {
        return Err(format!(
            "{} not found; build it with `cargo build --release -p pm-cli`",
            pm.display()
        )
        .into());
    }
    let temp = tempfile::tempdir()?;
    let base = args
        .keep
        .clone()
        .unwrap_or_else(|| temp.path().to_path_buf());
    let shape = CorpusShape::named(&args.shape).ok_or("unknown --shape")?;
    let options = CorpusOptions {
        items: parse_item_count(&args.items)?,
        seed: args.seed,
        shape,
        force: false,
        allow_million: false,
    };
    let machine = report::machine();
    let fixture_dir = base.join("fixture");
    eprintln!(
        "generating {} {} items in {}",
        options.items,
        shape.name,
        fixture_dir.display()
    );
    let started = Instant::now();
    let corpus = generate_corpus(&fixture_dir, &options)?;
    let generation_ms = started.elapsed().as_millis() as u64;
    let now = pm_engine::clock::Clock::System.now_iso();
    write_manifest(&corpus, &manifest_json(&corpus, &now, generation_ms))?;
    let fixture = Fixture {
        sample_get: corpus.sample_get.clone(),
        sample_open: corpus.sample_open.clone(),
    };

    let mut targets = vec![target(
        "pm",
        vec![pm.display().to_string()],
        &base,
        &fixture_dir,
    )?];
    if let Some(compare) = &args.compare {
        let copy = base.join("fixture-compare");
        copy_tree(&fixture_dir, &copy)?;
        let words = compare.split_whitespace().map(String::from).collect();
        targets.push(target("compare", words, &base, &copy)?);
    }
    let mut commands = Vec::new();
    for op in ops::selected(&args.only) {
        let mut results = serde_json::Map::new();
        let mut p50 = Vec::new();
        for t in &targets {
            let result = measure_op(t, &op, &fixture, args.iterations, &base)?;
            if let Some(summary) = &result
                && summary.failure().is_none()
            {
                p50.push(summary.p50());
            }
            let value = result.map_or_else(|| json!({"status": "not_available"}), |s| s.to_json());
            eprintln!("{:>16} {:>8}: {}", op.name, t.label, value);
            results.insert(t.label.clone(), value);
        }
        let argv = (op.args)(&fixture, 0).join(" ");
        let mut entry =
            json!({"name": op.name, "about": op.about, "argv": argv, "results": results});
        if let &[ours, theirs] = p50.as_slice()
            && ours > 0.0
        {
            entry["p50_ratio"] = json!(((theirs / ours) * 100.0).round() / 100.0);
        }
        commands.push(entry);
    }
    let report = json!({
        "version": 1,
        "tool": "pm-scale",
        "machine": machine,
        "fixture": {
            "items": options.items, "shape": shape.name, "seed": options.seed,
            "visible_items": corpus.visible_items, "generation_ms": generation_ms,
        },
        "iterations": args.iterations,
        "warmup_runs": 1,
        "latency": "wall ms from spawn to exit, nearest-rank percentiles",
        "peak_rss": "GNU time %M of one extra run per command",
        "tokens": "ceil(stdout bytes / 4)",
        "binaries": targets.iter().map(|t| json!({"label": t.label, "command": t.command})).collect::<Vec<_>>(),
        "commands": commands,
    });
    let mut text = pm_engine::json::to_pretty(&report);
    text.push('\n');
    std::fs::File::create(&args.json)
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))?;
    let table = report::markdown(&report);
    std::fs::File::create(&args.markdown)
        .and_then(|mut f| std::io::Write::write_all(&mut f, table.as_bytes()))?;
    println!("{table}");
    Ok(())
}

fn target(
    label: &str,
    command: Vec<String>,
    base: &Path,
    workspace: &Path,
) -> Result<Target, Box<dyn Error>> {
    let home = base.join(format!("home-{label}"));
    std::fs::create_dir_all(&home)?;
    Ok(Target {
        label: label.into(),
        command,
        workspace: workspace.to_path_buf(),
        home,
    })
}

/// Runs one operation on one target: `None` when the binary lacks the subcommand.
fn measure_op(
    t: &Target,
    op: &Op,
    fixture: &Fixture,
    iterations: usize,
    scratch: &Path,
) -> Result<Option<Summary>, Box<dyn Error>> {
    if !t.has_subcommand(op.subcommand) {
        return Ok(None);
    }
    let prepare = || -> std::io::Result<()> {
        if op.prepare == Prepare::DropIndex {
            let runtime = t.workspace.join(".agents/pm/runtime");
            if runtime.exists() {
                std::fs::remove_dir_all(runtime)?;
            }
        }
        Ok(())
    };
    prepare()?;
    let warmup = t.run(&(op.args)(fixture, iterations))?;
    let mut samples = Vec::with_capacity(iterations);
    for run in 0..iterations {
        prepare()?;
        samples.push(t.run(&(op.args)(fixture, run))?);
    }
    prepare()?;
    let peak_rss_kib = t.peak_rss_kib(&(op.args)(fixture, iterations + 1), scratch);
    Ok(Some(Summary {
        samples,
        warmup,
        peak_rss_kib,
    }))
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
