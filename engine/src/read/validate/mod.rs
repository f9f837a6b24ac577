//! `pm validate`: reads every item once (in parallel), runs the
//! requested checks, and builds pm's envelope: checks with details, sorted warning codes and the
//! diagnostic-row projection. One file per check family; rendering stays in the CLI.

mod drift;
mod files;
pub(crate) mod hierarchy;
pub(crate) mod items;
mod lifecycle;
mod metadata;
mod operational;
mod references;
mod storage;

use std::borrow::Cow;

use rayon::prelude::*;
use serde::Serialize;
use serde_json::{Map, Value};

use super::receipt::FieldGroup;
use super::view::TrackerView;
use crate::collate::locale_compare;

use crate::error::Result;
use crate::history::TrackerHistoryReport;
use crate::history::verify::{list_streams, read_small_file, verify_tracker_history_listed};
use crate::item::codec::parse_item;
use crate::tracker::ItemFileRef;

pub use items::CheckItem;

/// pm's TOON diagnostic-list length (`DIAGNOSTIC_LIST_SUMMARY_LIMIT`); JSON output keeps all.
pub const SUMMARY_LIMIT: usize = 5;

/// The checks of `pm validate`, in pm's run order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckName {
    /// Required metadata fields per profile and duplicate issue codes.
    Metadata,
    /// Resolution fields on done items.
    Resolution,
    /// Active items with closure-like text, terminal parents, stale blockers and cycles.
    Lifecycle,
    /// Dependency, parent and blocker references to ids that do not exist (runs with lifecycle).
    DependencyReferences,
    /// Linked project files that are missing, and project files no item links.
    Files,
    /// Item ids named by linked test commands that do not exist.
    CommandReferences,
    /// History chains and item files against their history.
    HistoryDrift,
    /// `pm_format_version` behind or ahead of this implementation.
    FormatVersion,
    /// Unreadable or duplicate items, broken or conflicted streams, resurrected items, config.
    StorageIntegrity,
}

impl CheckName {
    /// Every check, in run order.
    pub const ALL: [CheckName; 9] = [
        CheckName::Metadata,
        CheckName::Resolution,
        CheckName::Lifecycle,
        CheckName::DependencyReferences,
        CheckName::Files,
        CheckName::CommandReferences,
        CheckName::HistoryDrift,
        CheckName::FormatVersion,
        CheckName::StorageIntegrity,
    ];

    /// Returns pm's name of the check.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckName::Metadata => "metadata",
            CheckName::Resolution => "resolution",
            CheckName::Lifecycle => "lifecycle",
            CheckName::DependencyReferences => "dependency_references",
            CheckName::Files => "files",
            CheckName::CommandReferences => "command_references",
            CheckName::HistoryDrift => "history_drift",
            CheckName::FormatVersion => "format_version",
            CheckName::StorageIntegrity => "storage_integrity",
        }
    }
}

/// What `validate` runs and how it reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidateOptions {
    /// The checks asked for by flag; empty runs every check. Lifecycle brings
    /// `dependency_references` along, as in pm.
    pub checks: Vec<CheckName>,
    /// `--check-stale-blockers`: lifecycle also reports stale blocker context.
    pub stale_blockers: bool,
    /// `--counts`: keep counts and drop every diagnostic array.
    pub counts: bool,
    /// Per-item diagnostic lists keep at most this many entries (`None`: all).
    pub diagnostic_limit: Option<usize>,
    /// The `generated_at` timestamp (from the invocation clock).
    pub generated_at: String,
    /// The invocation clock's instant (`generated_at` as epoch ms): each lock's own ttl is
    /// measured against it.
    pub now_ms: crate::clock::EpochMs,
}

impl ValidateOptions {
    /// Returns the checks that run, in run order.
    pub fn resolved_checks(&self) -> Vec<CheckName> {
        if self.checks.is_empty() && !self.stale_blockers {
            return CheckName::ALL.to_vec();
        }
        let asked = |c: CheckName| {
            self.checks.contains(&c)
                || (c == CheckName::Lifecycle && self.stale_blockers)
                || (c == CheckName::DependencyReferences
                    && (self.checks.contains(&CheckName::Lifecycle) || self.stale_blockers))
        };
        CheckName::ALL.into_iter().filter(|c| asked(*c)).collect()
    }
}

/// The `validate` envelope (the omission receipt is derived by the read-output layer).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ValidateReport {
    /// False when a check has status `error`.
    pub ok: bool,
    /// Whether any warning was raised.
    pub has_warnings: bool,
    /// The checks that ran, in pm's order.
    pub checks: Vec<ValidateCheck>,
    /// Warning codes `<code>:<count>`, deduplicated and `localeCompare` sorted.
    pub warnings: Vec<String>,
    /// When the report was made.
    pub generated_at: String,
    /// The diagnostic-row projection.
    pub projection: ValidateProjection,
}

impl ValidateReport {
    /// Returns true when `--strict-exit` must fail: a warning or a failed check.
    pub fn fails_strict(&self) -> bool {
        !self.ok || self.has_warnings
    }
}

/// `projection{mode, declared_field_groups, included_field_groups}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ValidateProjection {
    /// `full` or `counts`.
    pub mode: &'static str,
    /// The groups a full report has (`diagnostic_rows`).
    pub declared_field_groups: Vec<FieldGroup>,
    /// The groups this report has.
    pub included_field_groups: Vec<&'static str>,
}

/// One check: `{name, status, ok, details}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ValidateCheck {
    /// pm's check name.
    pub name: &'static str,
    /// `ok`, `warn` or `error`.
    pub status: &'static str,
    /// Whether the status is `ok`.
    pub ok: bool,
    /// What was checked and found, in pm's key order.
    pub details: Map<String, Value>,
}

/// A check's result and the warning codes it raised.
pub(crate) struct Outcome {
    check: ValidateCheck,
    warnings: Vec<String>,
}

impl Outcome {
    /// Returns the outcome of `name`: `error` when `error`, else `warn` when it warned.
    fn new(name: CheckName, error: bool, details: Value, warnings: Vec<String>) -> Outcome {
        let status = if error {
            "error"
        } else if warnings.is_empty() {
            "ok"
        } else {
            "warn"
        };
        let details = match details {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Outcome {
            check: ValidateCheck {
                name: name.as_str(),
                status,
                ok: status == "ok",
                details,
            },
            warnings,
        }
    }
}

/// What every check may read.
pub(crate) struct Scope<'a> {
    view: &'a TrackerView,
    /// Parsed items, sorted by id.
    items: &'a [CheckItem],
    /// Item files with the id of the parsed item or the parse error, in listing order.
    scanned: &'a [(ItemFileRef, Result<String>)],
    /// Type folders that exist but could not be listed.
    folder_notices: &'a [crate::notice::Notice],
    /// Diagnostic list length (`None`: all).
    limit: Option<usize>,
    /// The invocation clock's instant, for lock ttls.
    now_ms: crate::clock::EpochMs,
}

/// Runs the requested checks over the tracker of `view`.
///
/// Every item file is read and parsed once, in parallel. Then the checks that read only the
/// items run while the history streams are verified (each stream read once and dropped after
/// it), and the history checks run last; outcomes are assembled in run order.
///
/// # Errors
/// `io_error` when the item folders or the history directory cannot be listed.
pub fn validate(view: &TrackerView, options: &ValidateOptions) -> Result<ValidateReport> {
    let checks = options.resolved_checks();
    let needs_history =
        |c: &CheckName| matches!(c, CheckName::HistoryDrift | CheckName::StorageIntegrity);
    let (loaded, streams) = load_items(view, checks.iter().any(needs_history))?;
    let scope = Scope {
        view,
        items: &loaded.items,
        scanned: &loaded.scanned,
        folder_notices: &loaded.folder_notices,
        limit: options.diagnostic_limit,
        now_ms: options.now_ms,
    };
    let (history, outcomes) = rayon::join(
        || streams.map(|streams| verify(view, &loaded, &streams)),
        || {
            checks
                .par_iter()
                .filter(|c| !needs_history(c))
                .map(|check| run_check(*check, &scope, None, options).map(|o| (*check, o)))
                .collect::<Result<Vec<(CheckName, Outcome)>>>()
        },
    );
    let mut outcomes = outcomes?;
    outcomes.extend(
        checks
            .par_iter()
            .filter(|c| needs_history(c))
            .map(|check| run_check(*check, &scope, history.as_ref(), options).map(|o| (*check, o)))
            .collect::<Result<Vec<(CheckName, Outcome)>>>()?,
    );
    let outcomes = checks
        .iter()
        .filter_map(|check| {
            let at = outcomes.iter().position(|(c, _)| c == check)?;
            Some(outcomes.swap_remove(at).1)
        })
        .collect();
    let report = assemble(outcomes, options);
    // Freeing a hundred thousand documents takes a while: do it on the pool while the caller
    // renders the report.
    rayon::spawn(move || drop((loaded, history)));
    Ok(report)
}

/// Runs one check.
fn run_check(
    check: CheckName,
    scope: &Scope<'_>,
    history: Option<&TrackerHistoryReport>,
    options: &ValidateOptions,
) -> Result<Outcome> {
    Ok(match (check, history) {
        (CheckName::Metadata, _) => metadata::metadata(scope),
        (CheckName::Resolution, _) => metadata::resolution(scope),
        (CheckName::Lifecycle, _) => lifecycle::lifecycle(scope, options.stale_blockers),
        (CheckName::DependencyReferences, _) => references::dependency_references(scope),
        (CheckName::Files, _) => files::files(scope),
        (CheckName::CommandReferences, _) => references::command_references(scope),
        (CheckName::FormatVersion, _) => storage::format_version(scope),
        (CheckName::HistoryDrift, Some(report)) => drift::history_drift(scope, report),
        (CheckName::StorageIntegrity, Some(report)) => storage::storage_integrity(scope, report),
        (CheckName::HistoryDrift | CheckName::StorageIntegrity, None) => {
            return Err(crate::Error::internal("history report not built"));
        }
    })
}

/// Every item file with whether it parsed, and the parsed items sorted by id.
pub(crate) struct Loaded {
    /// Item files with the id of the parsed item (`metadata.id`, else the stem) or the parse
    /// error, in listing order.
    pub scanned: Vec<(ItemFileRef, Result<String>)>,
    /// Parsed items, sorted by id (`localeCompare`).
    pub items: Vec<CheckItem>,
    /// Per entry of `scanned`, the position of its item in `items` (`None`: not parsed).
    positions: Vec<Option<usize>>,
    /// Type folders that exist but could not be listed (`item_list_directory_*` notices).
    folder_notices: Vec<crate::notice::Notice>,
}

/// The parsed items and, with `history`, the ids of the history streams (listed while the
/// item folders are).
fn load_items(view: &TrackerView, history: bool) -> Result<(Loaded, Option<Vec<String>>)> {
    let (files, streams) = rayon::join(
        || view.item_files(),
        || history.then(|| list_streams(view.tracker())),
    );
    let crate::tracker::ItemFiles {
        files,
        notices: folder_notices,
    } = files?;
    let streams = streams.transpose()?;
    let schema = view.schema();
    let canon = view.canon_schema();
    // What `view.load` does, reading the file in fewer system calls.
    let parsed: Vec<Result<CheckItem>> = files
        .par_iter()
        .map(|file| {
            let bytes = read_small_file(&file.path)?;
            let doc = parse_item(&bytes, file.format, &file.path, &canon)?;
            Ok(CheckItem::new(doc, &file.stem, schema))
        })
        .collect();
    let mut scanned = Vec::with_capacity(files.len());
    let mut items = Vec::with_capacity(files.len());
    for (index, (file, result)) in files.into_iter().zip(parsed).enumerate() {
        match result {
            Ok(item) => {
                scanned.push((file, Ok(item.id.clone())));
                items.push((item, index));
            }
            Err(err) => scanned.push((file, Err(err))),
        }
    }
    items.par_sort_by(|a, b| locale_compare(&a.0.id, &b.0.id));
    let mut positions = vec![None; scanned.len()];
    for (position, (_, index)) in items.iter().enumerate() {
        positions[*index] = Some(position);
    }
    let items = items.into_iter().map(|(item, _)| item).collect();
    Ok((
        Loaded {
            scanned,
            items,
            positions,
            folder_notices,
        },
        streams,
    ))
}

/// Verifies `streams` and every loaded item file against its stream.
fn verify(view: &TrackerView, loaded: &Loaded, streams: &[String]) -> TrackerHistoryReport {
    let files: Vec<&ItemFileRef> = loaded.scanned.iter().map(|(file, _)| file).collect();
    verify_tracker_history_listed(view.tracker(), &files, streams, |index, file| {
        match loaded.positions[index] {
            Some(position) => Ok(Cow::Borrowed(&loaded.items[position].doc)),
            // The error is not `Clone`: reading the file again reproduces it (rare).
            None => view.load(file).map(Cow::Owned),
        }
    })
}

/// Builds the envelope from the check outcomes.
fn assemble(outcomes: Vec<Outcome>, options: &ValidateOptions) -> ValidateReport {
    let mut warnings: Vec<String> = Vec::new();
    let mut checks = Vec::new();
    for mut outcome in outcomes {
        if options.counts {
            outcome.check.details = counts_only(outcome.check.details);
        }
        warnings.append(&mut outcome.warnings);
        checks.push(outcome.check);
    }
    let warnings = items::sorted_unique(warnings);
    let declared = vec![FieldGroup::new("diagnostic_rows", "--full")];
    let (mode, included) = if options.counts {
        ("counts", Vec::new())
    } else {
        ("full", vec!["diagnostic_rows"])
    };
    ValidateReport {
        ok: !checks.iter().any(|c| c.status == "error"),
        has_warnings: !warnings.is_empty(),
        checks,
        warnings,
        generated_at: options.generated_at.clone(),
        projection: ValidateProjection {
            mode,
            declared_field_groups: declared,
            included_field_groups: included,
        },
    }
}

/// Drops every array, recursing into objects (pm's `projectValidateCountsRecord`).
fn counts_only(details: Map<String, Value>) -> Map<String, Value> {
    details
        .into_iter()
        .filter_map(|(key, value)| match value {
            Value::Array(_) => None,
            Value::Object(map) => Some((key, Value::Object(counts_only(map)))),
            other => Some((key, other)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn options(checks: Vec<CheckName>, stale: bool) -> ValidateOptions {
        ValidateOptions {
            checks,
            stale_blockers: stale,
            counts: false,
            diagnostic_limit: None,
            generated_at: String::new(),
            now_ms: 0,
        }
    }

    #[test]
    fn check_selection_follows_pm() {
        assert_eq!(options(vec![], false).resolved_checks().len(), 9);
        assert_eq!(
            options(vec![CheckName::Lifecycle], false).resolved_checks(),
            [CheckName::Lifecycle, CheckName::DependencyReferences]
        );
        assert_eq!(
            options(vec![], true).resolved_checks(),
            [CheckName::Lifecycle, CheckName::DependencyReferences]
        );
        assert_eq!(
            options(vec![CheckName::Files, CheckName::Metadata], false).resolved_checks(),
            [CheckName::Metadata, CheckName::Files]
        );
    }

    #[test]
    fn counts_drop_arrays_recursively() {
        let Value::Object(details) = json!({"a": 1, "b": [1], "c": {"d": [], "e": null}}) else {
            unreachable!()
        };
        assert_eq!(
            Value::Object(counts_only(details)),
            json!({"a": 1, "c": {"e": null}})
        );
    }
}
