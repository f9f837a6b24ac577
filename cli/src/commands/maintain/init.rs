//! `pm init`: creates (or re-checks) a tracker and prints pm's init receipt. The work itself is
//! `pm_engine::init::init_tracker`; this file resolves the target and shapes the receipt.

use std::path::{Path, PathBuf};

use pm_engine::Error;
use pm_engine::init::{InitOptions, init_tracker};
use pm_engine::settings::GovernancePreset;
use pm_engine::tracker::Tracker;
use serde::Serialize;
use serde_json::Value;

use crate::ctx::{Ctx, PathSource};
use crate::failure::{CliError, Result, UsageKind};

/// Initialize pm storage for the current workspace or a path-like tracker target
///
/// Creates the tracker root (./.agents/pm, or --pm-path/PM_PATH), its folders, settings.json,
/// the schema seeds, the workspace .gitignore block and, in a git worktree, the merge fence
/// (pm merge install). Re-running changes nothing unless
/// --force asks to change the prefix, preset or author of an existing tracker.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// Id prefix for new items (e.g. acme), or a path-like tracker directory (./t, /t, a/b)
    #[arg(value_name = "PREFIX-OR-PATH")]
    pub target: Option<String>,

    /// Use the defaults without asking (pm never prompts; kept for pm-cli compatibility)
    #[arg(long, alias = "yes")]
    pub defaults: bool,

    /// Governance preset of a new tracker: minimal, default or strict
    #[arg(long, value_name = "PRESET")]
    pub preset: Option<String>,

    /// Initialize this workspace: the tracker goes to <DIR>/.agents/pm
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,

    /// Allow changing the prefix, preset or author of an existing tracker
    #[arg(long)]
    pub force: bool,

    /// Print the full settings tree in TOON output as well
    #[arg(long)]
    pub verbose: bool,

    /// Skip installing the git merge drivers (pm merge install) for a fresh tracker in git
    #[arg(long)]
    pub no_merge_fence: bool,
}

/// How the tracker location was chosen (pm's `target` block).
#[derive(Debug, Serialize)]
pub struct InitTarget {
    /// `workspace-discovery`, `tracker-path` or `workspace-path`.
    pub mode: &'static str,
    /// The tracker root.
    pub tracker_root: String,
    /// The workspace root, when the target names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace_root: Option<String>,
    /// `current` or `ancestor` (workspace-discovery only): where the tracker was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discovery: Option<&'static str>,
    /// The working directory of the run (workspace-discovery only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_cwd: Option<String>,
}

/// The full init receipt (pm's `InitResult`; what `--json` prints).
#[derive(Debug, Serialize)]
pub struct InitOutput {
    /// Always true.
    pub ok: bool,
    /// The tracker root.
    pub path: String,
    /// How the root was chosen.
    pub target: InitTarget,
    /// The effective settings tree after init.
    pub settings: Value,
    /// Directories and schema files created, in creation order.
    pub created_dirs: Vec<String>,
    /// `already_exists:…`, `updated:…` and `merge_fence_skipped:…` markers.
    pub warnings: Vec<String>,
    /// The governance preset in effect.
    pub governance_preset: &'static str,
    /// Always false: pm never runs an interactive wizard.
    pub wizard_used: bool,
    /// Suggested follow-up commands.
    pub next_steps: Vec<&'static str>,
}

/// The concise receipt pm prints in TOON unless `--verbose`.
#[derive(Debug, Serialize)]
pub struct InitSummary<'a> {
    ok: bool,
    path: &'a str,
    target: &'a InitTarget,
    id_prefix: String,
    governance_preset: &'static str,
    output_format: &'static str,
    created_dirs_count: usize,
    created_dirs: &'a [String],
    warnings: &'a [String],
    wizard_used: bool,
    next_steps: &'a [&'static str],
    hint: &'static str,
}

impl InitOutput {
    /// Returns the concise TOON receipt: the settings tree replaced by its headline values.
    pub fn summary(&self) -> InitSummary<'_> {
        let setting = |path: &[&str]| {
            path.iter()
                .try_fold(&self.settings, |v, key| v.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        InitSummary {
            ok: self.ok,
            path: &self.path,
            target: &self.target,
            id_prefix: setting(&["id_prefix"]).unwrap_or_default(),
            governance_preset: self.governance_preset,
            output_format: match setting(&["output", "default_format"]).as_deref() {
                Some("json") => "json",
                _ => "toon",
            },
            created_dirs_count: self.created_dirs.len(),
            created_dirs: &self.created_dirs,
            warnings: &self.warnings,
            wizard_used: self.wizard_used,
            next_steps: &self.next_steps,
            hint: "Re-run with --verbose for the full settings tree.",
        }
    }
}

const NEXT_STEPS: [&str; 3] = [
    "Create your first item: pm create --type Task --title \"<title>\"",
    "List active items: pm list",
    "Get agent-friendly project context: pm context",
];

/// Initializes the tracker that `ctx` and `args` point at.
///
/// # Errors
/// `invalid_argument_value` for a bad `--preset` or a refused change to an existing tracker,
/// `conflicting_arguments` for `--workspace` with a tracker path, `io_error` on disk failures.
pub fn cmd_init(ctx: &Ctx, args: &InitArgs) -> Result<InitOutput> {
    let preset = args.preset.as_deref().map(parse_preset).transpose()?;
    let (root, prefix, target) = resolve_target(ctx, args)?;
    let existing = Tracker::at(&root).is_initialized();
    let author = match ctx.explicit_author_flag() {
        Some(flag) => Some(flag.to_owned()),
        None if !existing => ctx.author.clone(),
        None => None,
    };
    let options = InitOptions {
        id_prefix: prefix,
        author_default: author,
        preset,
        workspace_root: target.workspace_root.as_ref().map(PathBuf::from),
        force: args.force,
        merge_fence: if args.no_merge_fence {
            None
        } else {
            Some(ctx.executable()?)
        },
    };
    let report = init_tracker(&root, &options)?;
    Ok(InitOutput {
        ok: true,
        path: display(&report.tracker_root),
        target,
        settings: Value::Object(report.settings.effective().clone()),
        created_dirs: report.created.iter().map(|p| display(p)).collect(),
        warnings: report.warnings,
        governance_preset: report.settings.governance().preset.as_str(),
        wizard_used: false,
        next_steps: NEXT_STEPS.to_vec(),
    })
}

/// Returns the tracker root, the id prefix argument and the `target` block (pm's rules).
fn resolve_target(ctx: &Ctx, args: &InitArgs) -> Result<(PathBuf, Option<String>, InitTarget)> {
    let positional = args
        .target
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let flag_path = ctx.explicit_path_source == Some(PathSource::Flag);
    let path_like = positional.is_some_and(is_path_like);
    if let Some(workspace) = &args.workspace {
        if flag_path || path_like {
            return Err(CliError::Usage {
                kind: UsageKind::ConflictingArguments,
                detail:
                    "--workspace cannot be combined with --pm-path/--path or a path-like target"
                        .into(),
                flag: Some("--workspace".into()),
                value: None,
                suggestions: Box::default(),
                allowed: Box::default(),
            });
        }
        let tracker = Tracker::at(ctx.cwd.join(workspace).join(".agents/pm"));
        let target = target("workspace-path", &tracker, Some(tracker.workspace_root()));
        return Ok((
            tracker.root().to_path_buf(),
            positional.map(str::to_owned),
            target,
        ));
    }
    if let (false, true, Some(path)) = (flag_path, path_like, positional) {
        let tracker = Tracker::at(ctx.cwd.join(path));
        return Ok((
            tracker.root().to_path_buf(),
            None,
            target("tracker-path", &tracker, None),
        ));
    }
    let tracker = Tracker::discover(&ctx.cwd, ctx.explicit_path.as_deref());
    let prefix = positional.map(str::to_owned);
    if flag_path {
        return Ok((
            tracker.root().to_path_buf(),
            prefix,
            target("tracker-path", &tracker, None),
        ));
    }
    // A nested `.agents/pm` root implies its workspace; a root-layout tracker uses the cwd.
    let workspace = if tracker.workspace_root() == tracker.root() {
        ctx.cwd.as_path()
    } else {
        tracker.workspace_root()
    };
    let mut block = target("workspace-discovery", &tracker, Some(workspace));
    block.discovery = Some(if workspace == ctx.cwd {
        "current"
    } else {
        "ancestor"
    });
    block.requested_cwd = Some(display(&ctx.cwd));
    Ok((tracker.root().to_path_buf(), prefix, block))
}

fn target(mode: &'static str, tracker: &Tracker, workspace: Option<&Path>) -> InitTarget {
    InitTarget {
        mode,
        tracker_root: display(tracker.root()),
        workspace_root: workspace.map(display),
        discovery: None,
        requested_cwd: None,
    }
}

/// pm treats a positional as a path when it is absolute, starts with `.`, or has a separator.
fn is_path_like(raw: &str) -> bool {
    Path::new(raw).is_absolute() || raw.starts_with('.') || raw.contains(['/', '\\'])
}

fn parse_preset(raw: &str) -> Result<GovernancePreset> {
    let token = raw.trim().to_lowercase().replace('-', "_");
    Ok(match token.as_str() {
        "lite" | "minimum" => Some(GovernancePreset::Minimal),
        "minimal" | "default" | "strict" => GovernancePreset::parse(&token),
        _ => None,
    }
    .ok_or_else(|| Error::InvalidArgument {
        field: "--preset".into(),
        value: raw.into(),
        reason: "unknown governance preset".into(),
        allowed: vec!["minimal".into(), "default".into(), "strict".into()],
    })?)
}

fn display(path: &Path) -> String {
    path.display().to_string()
}
