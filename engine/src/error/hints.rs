//! The hint catalogue: every one-line fix (`hint:` in text mode, `hint` in the error envelope,
//! `fix` of a health finding) is worded here, for the engine's errors by variant and, for the
//! refusals only the command line makes, by situation (the CLI's error type picks from these).

use super::{Error, LifecycleConflict, display_paths};

/// The fix of a refused `--output-cursor` that does not decode.
pub const CURSOR_AS_PRINTED: &str = "pass the cursor exactly as the previous read printed it";
/// The fix of an `--output-cursor` of another read or a changed row collection.
pub const FRESH_OUTPUT_CURSOR: &str =
    "rerun the original read without --output-cursor to get a fresh cursor";
/// The fix of a malformed, mismatched or stale `--after` query cursor.
pub const FRESH_QUERY_CURSOR: &str =
    "repeat the original query without --after to obtain a fresh cursor";
/// The fix of a malformed or exhausted `--output-session`.
pub const SESSION_NEXT_STATE: &str =
    "pass read_session.next_state from the previous read, or start a new session";
/// The fix of `--token-budget` without `--for`.
pub const INTENT_FOR_BUDGET: &str = "add --for <intent>, or omit --token-budget";
/// The fix of `--output-*` controls on a command that is not a read surface.
pub const DROP_OUTPUT_CONTROLS: &str =
    "drop the --output-* controls (only --output-format applies here)";
/// The fix of two row projections at once.
pub const ONE_PROJECTION: &str = "choose one of --brief, --compact, --full or --fields";

/// Returns the fix of a value outside a finite domain: `use one of: a, b`.
pub fn use_one_of(allowed: &[String]) -> String {
    format!("use one of: {}", allowed.join(", "))
}

/// Returns the fix of a mistyped token with close matches: `did you mean 'a' or 'b'?`.
pub fn did_you_mean(suggestions: &[String]) -> String {
    format!(
        "did you mean {}?",
        suggestions
            .iter()
            .map(|s| format!("'{s}'"))
            .collect::<Vec<_>>()
            .join(" or ")
    )
}

/// Returns the fix of a usage mistake nothing more specific is known about.
pub fn accepted_arguments() -> String {
    "run `pm --help` for the accepted arguments".into()
}

/// Returns the fix of a write-only `flag` (`--expect-hash`) on a command that only reads.
pub fn drop_write_guard(flag: &str) -> String {
    format!("drop {flag}: it guards a write against a changed item, and this command only reads")
}

impl Error {
    /// Returns a one-line fix for the user, computed from the variant.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::NotInProject { tried, .. } => Some(format!(
                "run `pm init` in the project root, or point --pm-path/PM_PATH at an existing tracker (looked for {})",
                tried.display()
            )),
            Error::TrackerUnreadable { path, .. } => Some(format!(
                "grant your user read and search access to {0} (e.g. `chmod u+rx {0}`), run pm as the tracker's owner, or point --pm-path/PM_PATH at another tracker",
                path.display()
            )),
            Error::ItemNotFound { .. } => Some(
                "check the id with `pm list --all` or `pm search <keyword>`; confirm --pm-path/PM_PATH".into(),
            ),
            Error::InvalidId { .. } => Some(
                "ids are lowercase letters, digits and '-', like pm-a1b2; '/', '..', none and null are refused".into(),
            ),
            Error::UnsupportedSubcommand {
                command, supported, ..
            } => Some(format!(
                "use one of: {}; e.g. `pm {command} {} <id>`",
                supported.join(", "),
                supported.first().map_or("", String::as_str)
            )),
            Error::UnsupportedSearchMode { .. } => Some(
                "drop --mode/--semantic/--hybrid: keyword search (the default) is the only mode".into(),
            ),
            Error::InvalidArgument { allowed, .. } if !allowed.is_empty() => Some(use_one_of(allowed)),
            Error::InvalidArgument { field, .. } => Some(format!(
                "correct the value of {field} as the message says; `pm <command> --help` lists the accepted forms"
            )),
            Error::ItemInvalid { path, .. } => Some(format!(
                "fix or restore the file (e.g. `git checkout -- {}`); nothing was written",
                path.display()
            )),
            Error::ItemRoundTrip { .. } => Some(
                "the item holds text the TOON codec cannot represent (e.g. a lone surrogate); edit the value and retry".into(),
            ),
            Error::ConflictMarkers { path, history: false, .. } => Some(format!(
                "resolve the merge conflict in {} and commit the result",
                path.display()
            )),
            Error::ConflictMarkers { path, history: true, .. } => Some(format!(
                "resolve the merge conflict in {} by hand (keep the lines of both sides), then run `pm history-repair {}` to re-anchor the chain",
                path.display(),
                stream_id(path)
            )),
            Error::HistoryInvalid { path, line, id, .. } => Some(format!(
                "fix or remove line {line} of {} by hand (e.g. restore it from git), then run `pm history-repair {id}` to re-anchor the chain",
                path.display()
            )),
            Error::DuplicateId { paths, .. } => Some(format!(
                "keep one file and remove the others: {}",
                display_paths(paths)
            )),
            Error::LockHeld { lock_path, pid, .. } => Some(format!(
                "wait for process {pid} to finish, raise PM_LOCK_WAIT_MS, or remove {} if that process is gone",
                lock_path.display()
            )),
            Error::LockStale { lock_path, .. } => Some(format!(
                "re-run with --force to clear the stale lock, or delete {}",
                lock_path.display()
            )),
            Error::LockPathUnsafe { .. } => {
                Some("remove the symlink under locks/ and retry".into())
            }
            Error::PathUnsafe { path, .. } => Some(format!(
                "replace the symlink {} with the real file or folder (git keeps symlinks; check `git log -- <path>`), then retry; pm never follows links inside the tracker",
                path.display()
            )),
            Error::LockLost { id, .. } => Some(format!(
                "another process took the lock over; re-read the item (`pm get {id}`) and retry"
            )),
            Error::SettingsInvalid { key, origin, .. } if key == origin => Some(format!(
                "make {origin} one valid JSON object (fix the syntax, or restore it with `git checkout -- {origin}`), then retry"
            )),
            Error::SettingsInvalid { key, origin, domain, .. } => Some(format!(
                "set {key} to {domain} in {origin} (or remove it to use the default), then retry"
            )),
            Error::ItemTooLarge { id, limit, .. } => Some(format!(
                "move large content out of {id} (link a file with `pm files {id} --add <path>`), or raise limits.item_max_bytes above {limit} in settings.json"
            )),
            Error::MergeRootNotFound { .. } => Some(
                "run the command inside a git worktree (git init, or cd into the clone); merge drivers are git configuration".into(),
            ),
            Error::MergeGitConfigUnwritable { path, .. } => Some(format!(
                "check that git is installed and {} is writable, then rerun pm merge install",
                path.display()
            )),
            Error::Io { path, .. } => Some(format!(
                "check that {} exists and is readable/writable",
                path.display()
            )),
            Error::ConflictingOptions { .. } => Some(accepted_arguments()),
            Error::ItemIdCollision { id, .. } => Some(format!(
                "pick another --id, or read the existing item with `pm get {id}`"
            )),
            Error::RevisionConflict { id, .. } => Some(format!(
                "re-read the item (`pm get {id}`, `pm history {id}`), decide again, and retry with the new item_hash"
            )),
            Error::Lifecycle { kind, id, .. } => Some(match kind {
                LifecycleConflict::AlreadyClosed => {
                    format!("the item is already closed; reopen it first with `pm item reopen {id} <reason>`")
                }
                LifecycleConflict::NotClosed => {
                    format!("only closed or canceled items can be reopened; see `pm get {id}`")
                }
                LifecycleConflict::AlreadyClaimed => format!(
                    "pick another item (`pm next`), or take it over with `pm claim {id} --force`"
                ),
                LifecycleConflict::NotClaimed => {
                    format!("nothing to release; claim it first with `pm claim {id}`")
                }
                LifecycleConflict::OwnershipConflict => format!(
                    "ask the owner to release it, or re-run with --force to bypass ownership (`pm claim {id} --force` takes it over)"
                ),
            }),
            Error::SecretGuardBlocked { paths, .. } => Some(format!(
                "remove the credential-shaped text from {} (keep the secret in a secret manager and write a reference to it), or re-run with --force once you have reviewed it",
                paths.join(", ")
            )),
            Error::MergeDiscardsUnaccepted { reviews, .. } => Some(format!(
                "{} Then rerun `pm merge reconcile --force`, or re-apply a lost value with `pm update` first",
                reviews.join(" ")
            )),
            Error::UnresolvedReference { target, .. } => Some(format!(
                "create {target} first, or check the id with `pm list --all`"
            )),
            Error::MutationTorn { id, .. } => Some(format!(
                "run `pm history-repair {id}` to bring the item file and its history back in line"
            )),
            Error::Index { .. } => Some(
                "run `pm reindex` to rebuild it, or `pm gc --scope index` to delete it; reads scan the files meanwhile".into(),
            ),
            Error::CursorNotInResult { .. } => Some(FRESH_QUERY_CURSOR.into()),
            Error::MissingCreateOptions { strict: true, flags, .. } => Some(format!(
                "pass {} in one invocation, or retry with --create-mode progressive",
                flags.join(", ")
            )),
            Error::MissingCreateOptions { flags, type_name, .. } => Some(format!(
                "pass {} (see `pm create --help --type {type_name}`)",
                flags.join(", ")
            )),
            Error::StructuredEventImmutable { id, .. } => Some(format!(
                "JSON context events are append-only: add a new one with `pm notes {id} --add-json '<json>'` that supersedes it"
            )),
            Error::CloseValidation { id, missing } => Some(format!(
                "pass {} on the close (or set them with `pm update {id}`), or use --validate-close warn",
                missing
                    .iter()
                    .map(|k| format!("{} <value>", crate::governance::close_policy::close_field_flag(k)))
                    .collect::<Vec<_>>()
                    .join(" ")
            )),
            Error::LikelyDuplicate { matches } => Some(match matches.first() {
                Some(best) if best.terminal => format!(
                    "reopen the existing item with `pm item reopen {} \"<recurrence reason>\"`, or pass --allow-duplicate",
                    best.id
                ),
                Some(best) => format!(
                    "reuse the existing item (`pm get {} --full`), or pass --allow-duplicate",
                    best.id
                ),
                None => "pass --allow-duplicate".into(),
            }),
            Error::SourceIncomplete { .. } => Some(
                "run `pm validate` to find the unreadable files, or drop --strict-read to accept a partial answer".into(),
            ),
            Error::Internal { .. } => Some("this is a bug in pm; please report it".into()),
        }
    }
}

/// Returns the item id of a history stream path (its file stem).
fn stream_id(path: &std::path::Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "<id>".into())
}
