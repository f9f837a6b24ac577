//! `pm init` on disk: the tracker root and its sixteen subdirectories, the
//! full settings.json, the four schema seeds, custom type folders, the workspace `.gitignore`
//! runtime-cache block and, for a fresh tracker in a git worktree, the merge fence.
//! Idempotent; reports what it created for the CLI to print.

use crate::error::{Error, IoResultExt, Result};
use crate::notice::Notice;
use crate::schema::token::is_js_whitespace;
use crate::schema::{RuntimeSchema, SchemaSection, section_path};
use crate::settings::{GovernancePreset, Settings, SettingsEnv};
use crate::tracker::Tracker;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// The directories `pm init` creates, in pm's order (`""` is the root itself).
pub const INIT_SUBDIRS: [&str; 17] = [
    "",
    "epics",
    "features",
    "tasks",
    "chores",
    "issues",
    "schema",
    "history",
    "search",
    "extensions",
    "locks",
    "decisions",
    "events",
    "reminders",
    "milestones",
    "meetings",
    "plans",
];

/// First line of the `.gitignore` block init owns.
pub const GITIGNORE_START: &str = "# pm-cli:runtime-cache:start";
/// Last line of the `.gitignore` block init owns.
pub const GITIGNORE_END: &str = "# pm-cli:runtime-cache:end";

/// Tracker-relative entries of the `.gitignore` block (derived, rebuildable state).
const GITIGNORE_ENTRIES: [&str; 6] = [
    "runtime/",
    "search/*",
    "locks/",
    "transactions/",
    "checkpoints/",
    "!search/eval-queries.json",
];

/// The warning pm prints when the tracker is not inside a git worktree.
const MERGE_FENCE_NOT_GIT: &str = "merge_fence_skipped:not_git_repository:run pm merge install after moving the tracker into a Git repository";

/// Knobs of `pm init`; `None` means "not given on the command line".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InitOptions {
    /// Id prefix (normalized); a new tracker defaults to `pm-`.
    pub id_prefix: Option<String>,
    /// `author_default` (`--author`, else `PM_AUTHOR`, resolved by the caller).
    pub author_default: Option<String>,
    /// Governance preset; a new tracker defaults to `minimal` (what `--defaults` picks).
    pub preset: Option<GovernancePreset>,
    /// The workspace root when it is not implied by a `…/.agents/pm` root (pm uses the cwd in
    /// workspace-discovery mode). The `.gitignore` block is written there.
    pub workspace_root: Option<PathBuf>,
    /// `--force`: allow changing the prefix, author or preset of an existing tracker.
    pub force: bool,
    /// The program the merge drivers call, to install the merge fence in a fresh tracker
    /// inside a git worktree; `None` for `--no-merge-fence`.
    pub merge_fence: Option<PathBuf>,
}

/// What [`init_tracker`] did.
#[derive(Clone, Debug)]
pub struct InitReport {
    /// The tracker root.
    pub tracker_root: PathBuf,
    /// The workspace root whose `.gitignore` was reconciled, if any.
    pub workspace_root: Option<PathBuf>,
    /// Created directories and schema files, in creation order (pm's `created_dirs`).
    pub created: Vec<PathBuf>,
    /// pm's init warnings: `already_exists:<path>`, `updated:<what>:<value>`,
    /// `updated:gitignore:<path>`, `merge_fence_skipped:…`.
    pub warnings: Vec<String>,
    /// Notices from reading an existing tracker's settings and schema.
    pub notices: Vec<Notice>,
    /// The tracker's settings after init.
    pub settings: Settings,
    /// Whether settings.json was created by this call.
    pub settings_created: bool,
    /// Whether anything on disk changed.
    pub changed: bool,
}

/// Initializes (or re-checks) the tracker rooted at `target`.
///
/// On an initialized tracker nothing changes unless `opts.force` and a differing prefix,
/// author or preset are given; the report then lists `already_exists:` warnings only.
///
/// # Errors
/// `Error::InvalidArgument` when an existing tracker's prefix, author or preset would change
/// without `force`; `Error::Io` for filesystem failures.
pub fn init_tracker(target: &Path, opts: &InitOptions) -> Result<InitReport> {
    let tracker = Tracker::at(target);
    let root = tracker.root().to_path_buf();
    let mut created = Vec::new();
    let mut warnings = Vec::new();
    let mut notices = Vec::new();
    ensure_dirs(
        &root,
        INIT_SUBDIRS.iter().copied(),
        &mut created,
        &mut warnings,
    )?;

    let settings_path = tracker.settings_path();
    let settings_created = !settings_path.exists();
    let mut changed_settings = false;
    let settings = if settings_created {
        let settings = Settings::for_init(
            opts.id_prefix.as_deref().unwrap_or("pm-"),
            opts.author_default.as_deref().unwrap_or(""),
            opts.preset.unwrap_or(GovernancePreset::Minimal),
        );
        crate::atomic::write(&settings_path, settings.to_full_json().as_bytes())?;
        settings
    } else {
        let (mut settings, read_notices) = Settings::read(&root, &SettingsEnv::default())?;
        notices.extend(read_notices);
        warnings.push(format!("already_exists:{}", settings_path.display()));
        changed_settings = update_existing(&mut settings, opts, &settings_path, &mut warnings)?;
        if changed_settings {
            crate::atomic::write(&settings_path, settings.to_sparse_json().as_bytes())?;
        }
        settings
    };

    for section in SchemaSection::ALL {
        let path = section_path(&root, settings.schema_file(section), section);
        if !path.exists() {
            crate::atomic::write(&path, section.seed_text().as_bytes())?;
            created.push(path);
        }
    }

    let schema = RuntimeSchema::read(&settings, &root, &mut notices)?;
    let custom_folders: Vec<String> = schema
        .types
        .folders()
        .into_iter()
        .map(|(folder, _)| folder.to_string())
        .filter(|folder| !INIT_SUBDIRS.contains(&folder.as_str()))
        .collect();
    ensure_dirs(
        &root,
        custom_folders.iter().map(String::as_str),
        &mut created,
        &mut warnings,
    )?;

    let workspace_root = if tracker.workspace_root() != tracker.root() {
        Some(tracker.workspace_root().to_path_buf())
    } else {
        opts.workspace_root.clone()
    };
    let mut gitignore_changed = false;
    if let Some(workspace) = &workspace_root
        && let Some(path) = ensure_gitignore(workspace, &root)?
    {
        warnings.push(format!("updated:gitignore:{}", path.display()));
        gitignore_changed = true;
    }
    let mut fence_changed = false;
    if settings_created && let Some(program) = &opts.merge_fence {
        match crate::merge::install::install(&tracker, &schema, program, false) {
            Ok(report) => {
                if report.attributes_changed {
                    warnings.push(format!(
                        "updated:merge_fence:{}",
                        report.attributes_path.display()
                    ));
                }
                fence_changed = report.attributes_changed || report.config_changed;
            }
            Err(Error::MergeRootNotFound { .. }) => warnings.push(MERGE_FENCE_NOT_GIT.to_string()),
            Err(err) => return Err(err),
        }
    }

    Ok(InitReport {
        changed: !created.is_empty()
            || settings_created
            || changed_settings
            || gitignore_changed
            || fence_changed,
        tracker_root: root,
        workspace_root,
        created,
        warnings,
        notices,
        settings,
        settings_created,
    })
}

fn ensure_dirs<'a>(
    root: &Path,
    subdirs: impl Iterator<Item = &'a str>,
    created: &mut Vec<PathBuf>,
    warnings: &mut Vec<String>,
) -> Result<()> {
    for subdir in subdirs {
        let dir = if subdir.is_empty() {
            root.to_path_buf()
        } else {
            root.join(subdir)
        };
        if dir.exists() {
            warnings.push(format!("already_exists:{}", dir.display()));
        } else {
            std::fs::create_dir_all(&dir).at(&dir)?;
            created.push(dir);
        }
    }
    Ok(())
}

/// Applies a differing prefix, preset or author to an existing tracker (with `force`).
fn update_existing(
    settings: &mut Settings,
    opts: &InitOptions,
    settings_path: &Path,
    warnings: &mut Vec<String>,
) -> Result<bool> {
    let prefix = opts
        .id_prefix
        .as_deref()
        .map(crate::ids::normalize_prefix)
        .filter(|p| p != settings.id_prefix_raw());
    let preset = opts.preset.filter(|p| *p != settings.governance().preset);
    let author = opts
        .author_default
        .as_deref()
        .filter(|a| *a != settings.author_default());
    let mut pending = Vec::new();
    if prefix.is_some() {
        pending.push("id_prefix");
    }
    if preset.is_some() {
        pending.push("governance_preset");
    }
    if author.is_some() {
        pending.push("author_default");
    }
    if pending.is_empty() {
        return Ok(false);
    }
    if !opts.force {
        return Err(Error::InvalidArgument {
            field: pending.join(", "),
            value: settings_path.display().to_string(),
            reason: format!(
                "refusing to update existing tracker settings at {} without --force",
                settings_path.display()
            ),
            allowed: Vec::new(),
        });
    }
    if let Some(prefix) = prefix {
        settings.set(&["id_prefix"], prefix.clone().into())?;
        warnings.push(format!("updated:id_prefix:{prefix}"));
    }
    if let Some(preset) = preset {
        settings.set(&["governance", "preset"], preset.as_str().into())?;
        warnings.push(format!("updated:governance_preset:{}", preset.as_str()));
    }
    if let Some(author) = author {
        settings.set(&["author_default"], author.into())?;
        warnings.push(format!("updated:author_default:{author}"));
    }
    Ok(true)
}

/// Returns the `.gitignore` block for a tracker at `rel` (posix, relative to the workspace).
pub fn gitignore_block(rel: &str) -> String {
    let prefix = if rel.is_empty() {
        String::new()
    } else {
        format!("{rel}/")
    };
    let mut lines = vec![GITIGNORE_START.to_string()];
    for entry in GITIGNORE_ENTRIES {
        match entry.strip_prefix('!') {
            Some(rest) => lines.push(format!("!{prefix}{rest}")),
            None => lines.push(format!("{prefix}{entry}")),
        }
    }
    lines.push(GITIGNORE_END.to_string());
    lines.join("\n")
}

/// Creates or replaces the runtime-cache block in `<workspace>/.gitignore`: the old block is
/// cut out, the rest is right-trimmed, and the block is appended after a blank line. Returns
/// the path when the file changed. Skipped (None) when the tracker is not inside `workspace`.
///
/// # Errors
/// `Error::Io` when the file cannot be read or written.
pub fn ensure_gitignore(workspace: &Path, tracker_root: &Path) -> Result<Option<PathBuf>> {
    let Ok(rel) = tracker_root.strip_prefix(workspace) else {
        return Ok(None);
    };
    if rel
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Ok(None);
    }
    let rel: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let block = gitignore_block(&rel.join("/"));
    let path = workspace.join(".gitignore");
    let current = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == ErrorKind::NotFound => String::new(),
        Err(err) => return Err(err).at(&path),
    };
    let next = with_block(&current, GITIGNORE_START, GITIGNORE_END, &block);
    if next == current {
        return Ok(None);
    }
    crate::atomic::write(&path, next.as_bytes())?;
    Ok(Some(path))
}

/// Returns `current` with the block between the `start` and `end` marker lines replaced by
/// `block`: the old block is cut out, the rest is right-trimmed, and the block is appended after
/// a blank line (pm's managed-block rule for `.gitignore` and `.gitattributes`).
pub fn with_block(current: &str, start: &str, end: &str, block: &str) -> String {
    let without_block = match (current.find(start), current.find(end)) {
        (Some(from), Some(to)) if to >= from => {
            format!("{}{}", &current[..from], &current[to + end.len()..])
        }
        _ => current.to_string(),
    };
    // JavaScript's trimEnd whitespace.
    let kept = without_block.trim_end_matches(is_js_whitespace);
    if kept.is_empty() {
        format!("{block}\n")
    } else {
        format!("{kept}\n\n{block}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn gitignore_block_is_created_updated_and_stable() -> TestResult {
        let tmp = tempfile::tempdir()?;
        let ws = tmp.path();
        let root = ws.join(".agents/pm");
        let path = ensure_gitignore(ws, &root)?.ok_or("created")?;
        let text = std::fs::read_to_string(&path)?;
        assert_eq!(
            text,
            "# pm-cli:runtime-cache:start\n.agents/pm/runtime/\n.agents/pm/search/*\n.agents/pm/locks/\n\
             .agents/pm/transactions/\n.agents/pm/checkpoints/\n!.agents/pm/search/eval-queries.json\n\
             # pm-cli:runtime-cache:end\n"
        );
        assert_eq!(ensure_gitignore(ws, &root)?, None);
        let edited = format!("target/\n{text}\n\nnode_modules/\n\n");
        crate::atomic::write(&path, edited.as_bytes())?;
        ensure_gitignore(ws, &root)?.ok_or("rewritten")?;
        let text2 = std::fs::read_to_string(&path)?;
        assert_eq!(text2, format!("target/\n\n\n\nnode_modules/\n\n{text}"));
        assert_eq!(ensure_gitignore(ws, &ws.join("elsewhere/../../x"))?, None);
        Ok(())
    }

    #[test]
    fn existing_settings_need_force_to_change() -> TestResult {
        let tmp = tempfile::tempdir()?;
        let root = tmp.path().join(".agents/pm");
        init_tracker(&root, &InitOptions::default())?;
        let again = init_tracker(&root, &InitOptions::default())?;
        assert!(!again.changed);
        assert!(again.created.is_empty());
        let change = InitOptions {
            id_prefix: Some("acme".into()),
            ..InitOptions::default()
        };
        let err = init_tracker(&root, &change).expect_err("needs force");
        assert_eq!(err.code().as_str(), "invalid_argument_value");
        let forced = init_tracker(
            &root,
            &InitOptions {
                force: true,
                ..change
            },
        )?;
        assert!(
            forced
                .warnings
                .contains(&"updated:id_prefix:acme-".to_string())
        );
        assert_eq!(forced.settings.id_prefix(), "acme-");
        Ok(())
    }
}
