//! The guidance catalogue: per error code, the human headline, the corrective action, the reason
//! and example commands that the error envelope carries. Wording for `item_not_found` is pm's.

use pm_engine::ErrorCode;

/// What to tell a user or agent about one error code.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Guidance {
    /// Short headline.
    pub title: &'static str,
    /// The corrective action, one sentence.
    pub required: &'static str,
    /// Why pm refuses, when worth saying.
    pub why: Option<&'static str>,
    /// Commands that illustrate the fix.
    pub examples: &'static [&'static str],
    /// Ordered next actions.
    pub next_steps: &'static [&'static str],
}

const FALLBACK: Guidance = Guidance {
    title: "Command failed",
    required: "Read the message, fix the cause, then retry the command.",
    why: None,
    examples: &[],
    next_steps: &["Re-run with --json for the structured recovery envelope."],
};

/// Returns the guidance of `code`.
pub(super) fn guidance(code: ErrorCode) -> Guidance {
    match code {
        ErrorCode::NotInProject => Guidance {
            title: "Tracker not found",
            required: "Run pm inside an initialized tracker, or point --pm-path/PM_PATH at one.",
            why: Some("Every command except init reads the tracker's settings and item files."),
            examples: &["pm init --defaults", "pm --pm-path path/to/.agents/pm list"],
            next_steps: &[
                "Initialize a tracker with recovery.suggested_retry, or pass --pm-path to an existing tracker.",
            ],
        },
        ErrorCode::ItemNotFound => Guidance {
            title: "Item ID not found",
            required: "Use an existing item ID from current tracker data.",
            why: Some("Mutation and read commands operate only on known IDs."),
            examples: &[
                "pm list --status open --limit 20",
                "pm search \"<keyword>\" --limit 10",
            ],
            next_steps: &["Confirm the active --path/PM_PATH scope, then retry with a valid id."],
        },
        ErrorCode::InvalidItemId => Guidance {
            title: "Invalid item ID",
            required: "Pass an item ID made of lowercase letters, digits and '-', such as pm-a1b2.",
            why: Some(
                "IDs name files inside the tracker, so separators and reserved words are refused.",
            ),
            examples: &["pm get pm-a1b2"],
            next_steps: &["Copy the id from pm list or pm search output, then retry."],
        },
        ErrorCode::InvalidArgumentValue => Guidance {
            title: "Invalid argument value",
            required: "Pass a value inside the option's legal domain.",
            why: Some("pm validates values before touching tracker data; nothing was changed."),
            examples: &[],
            next_steps: &[
                "Pick a value from recovery.allowed_values when present, or read the command's --help, then retry.",
            ],
        },
        ErrorCode::ItemDocumentInvalid => Guidance {
            title: "Item file unreadable",
            required: "Repair or restore the item file so that it parses as a pm item.",
            why: Some(
                "pm never guesses at item contents; an unreadable file is reported, not rewritten.",
            ),
            examples: &["git diff -- .agents/pm", "git checkout -- <item file>"],
            next_steps: &["Fix the reported file, then retry the command."],
        },
        ErrorCode::MergeConflictMarkersDetected => Guidance {
            title: "Unresolved merge conflict in an item file",
            required: "Resolve the git conflict markers in the item file and commit the result.",
            why: Some(
                "An item with conflict markers has two competing versions; pm will not pick one.",
            ),
            examples: &["git status", "git diff -- .agents/pm"],
            next_steps: &["Finish the merge in git, then retry the command."],
        },
        ErrorCode::HistoryMergeConflictMarkersDetected => Guidance {
            title: "Unresolved merge conflict in a history stream",
            required: "Resolve the git conflict markers in the history stream and commit the result.",
            why: Some("History streams are hash-chained; a conflicted stream cannot be verified."),
            examples: &["git status", "git diff -- .agents/pm/history"],
            next_steps: &["Finish the merge in git, then retry the command."],
        },
        ErrorCode::HistoryInvalid => Guidance {
            title: "History stream unreadable",
            required: "Repair the reported line of the history stream.",
            why: Some(
                "History is append-only and hash-chained; pm reads it line by line and stops at a bad line.",
            ),
            examples: &["git diff -- .agents/pm/history"],
            next_steps: &[
                "Restore the line from git or fix it by hand, then run pm history-repair <id>.",
            ],
        },
        ErrorCode::DuplicateItemId => Guidance {
            title: "Duplicate item ID",
            required: "Keep exactly one file per item ID.",
            why: Some("An ID must name one item; pm cannot tell which copy is authoritative."),
            examples: &["git log --follow -- <item file>"],
            next_steps: &["Remove or rename the extra files, then retry."],
        },
        ErrorCode::LockConflict => Guidance {
            title: "Item is locked by another process",
            required: "Wait for the other pm process to finish, then retry.",
            why: Some("pm serialises writers per item so that history stays a single chain."),
            examples: &["PM_LOCK_WAIT_MS=10000 pm <command>"],
            next_steps: &["Retry the command; raise PM_LOCK_WAIT_MS to wait longer."],
        },
        ErrorCode::LockStale => Guidance {
            title: "Stale lock",
            required: "Clear the stale lock with --force, or delete the lock file.",
            why: Some("The lock outlived its time-to-live; its owner probably crashed."),
            examples: &[],
            next_steps: &["Re-run the command with --force."],
        },
        ErrorCode::LockPathUnsafe => Guidance {
            title: "Unsafe lock path",
            required: "Remove the symlink or escaping path under the tracker's locks/ directory.",
            why: Some("pm refuses to follow links out of the tracker when it takes a lock."),
            examples: &[],
            next_steps: &["Delete the offending entry in locks/, then retry."],
        },
        ErrorCode::PathUnsafe => Guidance {
            title: "Symlink inside the tracker",
            required: "Replace the symlink with the real file or folder it should be.",
            why: Some(
                "pm never follows a link inside the tracker, so a cloned tracker cannot make it read or write files elsewhere.",
            ),
            examples: &["git log -- <path>", "pm validate"],
            next_steps: &["Replace or remove the link named in the message, then retry."],
        },
        ErrorCode::LockLost => Guidance {
            title: "Item lock taken over",
            required: "Re-read the item and retry the command.",
            why: Some(
                "Another process took the item's lock while this one held it; writing anyway could lose its change, so nothing was written.",
            ),
            examples: &["pm get <id>"],
            next_steps: &["Retry the command."],
        },
        ErrorCode::SettingsInvalid => Guidance {
            title: "Invalid setting",
            required: "Set the named key to a value in its legal domain, or remove it.",
            why: Some("pm refuses to write with a setting it cannot honour."),
            examples: &["pm health"],
            next_steps: &[
                "Fix the key in settings.json (or the environment variable), then retry.",
            ],
        },
        ErrorCode::ItemTooLarge => Guidance {
            title: "Item too large",
            required: "Keep the item under limits.item_max_bytes, or raise the limit.",
            why: Some("Very large item files make every read and write of the tracker slow."),
            examples: &["pm files <id> --add <path>"],
            next_steps: &["Move large content into a linked file, then retry."],
        },
        ErrorCode::ExpectHashRequiresMutation => Guidance {
            title: "--expect-hash needs a mutation",
            required: "Pass --expect-hash only to a command that writes the item.",
            why: Some(
                "A revision guard on a read would prove nothing; pm refuses it instead of dropping it silently.",
            ),
            examples: &["pm update <id> --status in_progress --expect-hash <item_hash>"],
            next_steps: &["Drop --expect-hash from the read, or move it to the write it guards."],
        },
        ErrorCode::TrackerRootUnreadable => Guidance {
            title: "Tracker not readable",
            required: "Give your user read and search access to the tracker directory and its settings.json.",
            why: Some("The tracker exists, but pm cannot look inside it."),
            examples: &["chmod u+rx .agents/pm", "ls -ld .agents/pm"],
            next_steps: &[
                "Fix the permissions of the named path (or run pm as its owner), then retry.",
            ],
        },
        ErrorCode::Io => Guidance {
            title: "File system error",
            required: "Make sure the reported path exists and is readable and writable.",
            why: None,
            examples: &[],
            next_steps: &["Fix the permissions or the path, then retry."],
        },
        ErrorCode::ItemDocumentRoundtripFailed => Guidance {
            title: "Item could not be written faithfully",
            required: "Report the item and command; nothing was written.",
            why: Some(
                "pm re-reads every item it writes and refuses bytes that would not decode to the same document.",
            ),
            examples: &[],
            next_steps: &[
                "Keep the tracker as it is and report the item id and the command that failed.",
            ],
        },
        ErrorCode::IndexUnavailable => Guidance {
            title: "Index unavailable",
            required: "Fix the condition named in the message, then run pm reindex again.",
            why: Some(
                "The derived index lives in runtime/index/ and pm never writes through a symlink there.",
            ),
            examples: &["pm health", "pm gc --scope index", "pm reindex"],
            next_steps: &[
                "Run pm health to see the index state; reads keep working by scanning the files.",
            ],
        },
        ErrorCode::Internal => Guidance {
            title: "Internal error",
            required: "Report this bug with the command line that triggered it.",
            why: Some("An invariant inside pm did not hold; this is never the user's fault."),
            examples: &[],
            next_steps: &["Retry once; if it fails again, file an issue with the full output."],
        },
        ErrorCode::UnknownOption => Guidance {
            title: "Unknown option",
            required: "Use an option that the command declares.",
            why: None,
            examples: &["pm --help", "pm <command> --help"],
            next_steps: &[
                "Retry with recovery.suggested_retry when present, or list the options with --help.",
            ],
        },
        ErrorCode::UnknownCommand => Guidance {
            title: "Unknown command",
            required: "Use one of pm's commands.",
            why: None,
            examples: &["pm --help"],
            next_steps: &[
                "Retry with recovery.suggested_retry when present, or pick from refusal.legal_domain.",
            ],
        },
        ErrorCode::MissingRequiredArgument => Guidance {
            title: "Missing required argument",
            required: "Pass every required argument of the command.",
            why: None,
            examples: &["pm <command> --help"],
            next_steps: &["Add the arguments listed in recovery.missing, then retry."],
        },
        ErrorCode::UnexpectedArgument => Guidance {
            title: "Unexpected argument",
            required: "Remove the extra argument, or quote it when it belongs to a value.",
            why: None,
            examples: &["pm <command> --help"],
            next_steps: &["Retry without the argument named in refusal.surface."],
        },
        ErrorCode::ConflictingArguments => Guidance {
            title: "Conflicting arguments",
            required: "Use only one of the conflicting arguments.",
            why: None,
            examples: &["pm <command> --help"],
            next_steps: &["Drop one of the arguments, then retry."],
        },
        ErrorCode::ItemIdCollision => Guidance {
            title: "Item ID already exists",
            required: "Create the item under an unused ID, or update the existing item.",
            why: Some("An ID names exactly one item; create never overwrites one."),
            examples: &["pm get <id>", "pm create task \"<title>\""],
            next_steps: &["Drop --id to mint a fresh id, or pick another --id, then retry."],
        },
        ErrorCode::ItemRevisionConflict => Guidance {
            title: "Item changed since it was read",
            required: "Re-read the item, decide again, and retry with its current item_hash.",
            why: Some(
                "--expect-hash guards a read-decide-write step; another writer changed the item in between.",
            ),
            examples: &["pm get <id>", "pm history <id>"],
            next_steps: &[
                "Inspect error.context.details.changes_since, re-read with pm get, then retry with the new hash.",
            ],
        },
        ErrorCode::ItemAlreadyClosed => Guidance {
            title: "Item already closed",
            required: "Reopen the item before closing it again, or leave it closed.",
            why: Some("Closing twice would overwrite the recorded close reason and times."),
            examples: &["pm item reopen <id> \"<reason>\""],
            next_steps: &[
                "Nothing to do if the item should stay closed; otherwise reopen it first.",
            ],
        },
        ErrorCode::ItemNotClosed => Guidance {
            title: "Item is not closed",
            required: "Reopen only items in a terminal status (closed or canceled).",
            why: Some("A reopen records a recurrence of finished work."),
            examples: &["pm get <id>"],
            next_steps: &["Use pm update to change the status of an active item."],
        },
        ErrorCode::AlreadyClaimedBy => Guidance {
            title: "Item already claimed",
            required: "Pick another item, wait for its owner to release it, or take it over with --force.",
            why: Some("A claim tells other agents who works on an item."),
            examples: &["pm next", "pm claim <id> --force"],
            next_steps: &[
                "Run pm next for unclaimed work, or re-run with --force to take the item over.",
            ],
        },
        ErrorCode::ItemNotClaimed => Guidance {
            title: "Item is not claimed",
            required: "Release only items that are claimed.",
            why: None,
            examples: &["pm claim <id>"],
            next_steps: &["Nothing to release; claim the item first if you meant to take it."],
        },
        ErrorCode::OwnershipConflict => Guidance {
            title: "Item owned by another principal",
            required: "Ask the owner to release the item, or re-run with --force.",
            why: Some("Strict ownership enforcement protects claimed work from concurrent edits."),
            examples: &["pm release <id>", "pm claim <id> --force"],
            next_steps: &[
                "Coordinate with the owner in refusal.rejected_value, or re-run with --force.",
            ],
        },
        ErrorCode::MutationSecretGuardBlocked => Guidance {
            title: "Mutation blocked by secret guard",
            required: "Remove the credential-shaped content or retry with --force after explicit review.",
            why: Some(
                "Item files and their history are permanent and travel with every git clone; settings.mutation_guard.secret_guard is block.",
            ),
            examples: &[],
            next_steps: &[
                "Replace the value with a secret-manager reference.",
                "Re-run with --force only after confirming the text is not a credential.",
            ],
        },
        ErrorCode::MergeReconcileDiscardsRequireAcceptance => Guidance {
            title: "Merge reconciliation needs explicit acceptance",
            required: "Explicitly review every discarded field before accepting reconciliation.",
            why: None,
            examples: &["pm merge report", "pm merge reconcile --force"],
            next_steps: &[
                "Review each receipt's discarded fields with pm merge report, re-apply a lost value with pm update if needed, then rerun pm merge reconcile --force.",
            ],
        },
        ErrorCode::DependencyTargetUnresolved => Guidance {
            title: "Referenced item not found",
            required: "Reference only items that exist in this tracker.",
            why: Some("A dangling parent or dependency would point at nothing."),
            examples: &["pm list --all", "pm search \"<keyword>\""],
            next_steps: &["Create the target first or correct the id, then retry."],
        },
        ErrorCode::MutationTorn => Guidance {
            title: "Mutation interrupted",
            required: "Run pm history-repair <id> to bring the item file and its history back in line.",
            why: Some(
                "The item file was written but its history entry could not be appended, and the rollback failed.",
            ),
            examples: &["pm history-repair <id>"],
            next_steps: &[
                "Fix the file-system problem in the message, then run pm history-repair <id>.",
            ],
        },
        ErrorCode::ReadOutputCursorInvalid => Guidance {
            title: "Invalid read-output cursor",
            required: "Pass --output-cursor exactly as a previous read printed it.",
            why: Some("Continuation cursors are opaque, versioned and bound to one read surface."),
            examples: &["pm list --output-budget 600 --output-cursor <next_cursor>"],
            next_steps: &[
                "Copy output_budget_truncation.recovery.cursor from the previous read, or rerun it without --output-cursor.",
            ],
        },
        ErrorCode::ReadOutputCursorCommandMismatch => Guidance {
            title: "Read-output cursor belongs to another command",
            required: "Use an --output-cursor with the command that printed it.",
            why: Some("A continuation resumes one row collection of one read surface."),
            examples: &[],
            next_steps: &[
                "Repeat the read that printed the cursor, or rerun this read without --output-cursor.",
            ],
        },
        ErrorCode::ReadOutputCursorStale => Guidance {
            title: "Stale read-output cursor",
            required: "Restart the bounded read without --output-cursor.",
            why: Some(
                "The row collection changed since the cursor was printed; continuing would skip or repeat rows.",
            ),
            examples: &[],
            next_steps: &[
                "Rerun the original read without --output-cursor and follow its new cursor.",
            ],
        },
        ErrorCode::InvalidReadOutputSession => Guidance {
            title: "Invalid read-output session",
            required: "Pass the read_session.next_state of the previous read, or a new valid session state.",
            why: Some("Session state is validated before any read runs; nothing was read."),
            examples: &[
                "pm list --output-session '{\"version\":1,\"id\":\"s1\",\"token_budget\":4000,\"spent_tokens\":0,\"seen_item_ids\":[]}'",
            ],
            next_steps: &[
                "Fix the field named in the message, or start a new session with a larger token_budget.",
            ],
        },
        ErrorCode::InvalidQueryCursor => Guidance {
            title: "Invalid query cursor",
            required: "Pass --after exactly as the previous page printed next_cursor, with the same query.",
            why: Some("A query cursor is bound to the filters, sort and query that produced it."),
            examples: &[],
            next_steps: &["Repeat the original query without --after to obtain a fresh cursor."],
        },
        ErrorCode::UnknownContextIntent => Guidance {
            title: "Unknown context intent",
            required: "Use a context intent that the command declares.",
            why: Some(
                "Intent names are command-local contracts and cannot be inferred from output section names.",
            ),
            examples: &["pm list --for triage", "pm context --for orient"],
            next_steps: &[
                "Retry with recovery.suggested_retry, or pick an intent from refusal.legal_domain.",
            ],
        },
        ErrorCode::MissingRequiredOption => Guidance {
            title: "Missing required option",
            required: "Pass every option the message names in one invocation, then retry.",
            why: Some(
                "The create mode or the item type's option policy requires them, or another option needs them (--token-budget needs --for).",
            ),
            examples: &[
                "pm create task \"Fix login\" --create-mode progressive",
                "pm list --for triage --token-budget 2000",
            ],
            next_steps: &[
                "Retry with the flags in recovery.missing; for staged onboarding retry with --create-mode progressive.",
            ],
        },
        ErrorCode::CloseValidationMissingFields => Guidance {
            title: "Closure fields missing",
            required: "Record resolution, expected_result and actual_result before closing, or close with --validate-close warn.",
            why: Some(
                "Strict close validation keeps evidence of what was expected and what happened on every closed item.",
            ),
            examples: &[
                "pm close <id> \"Done\" --resolution \"<summary>\" --expected-result \"<expected>\" --actual-result \"<actual>\"",
            ],
            next_steps: &[
                "Run recovery.suggested_retry (or pass the fields inline on the close), then retry the original close.",
                "Use --validate-close warn only when governance permits an evidenced exception.",
            ],
        },
        ErrorCode::StructuredEventImmutable => Guidance {
            title: "JSON context events cannot be changed",
            required: "Leave the JSON event as it is and add a new one (or a text note) that supersedes it.",
            why: Some(
                "Notes added with --add-json are merge-safe context events: they are only ever appended, so concurrent branches never disagree about them.",
            ),
            examples: &["pm notes <id> --add-json '{\"type\":\"decision\",\"summary\":\"…\"}'"],
            next_steps: &[
                "List the notes (pm notes <id>) to find the text note you meant to change.",
            ],
        },
        ErrorCode::LikelyDuplicate => Guidance {
            title: "Likely duplicate item",
            required: "Reuse an existing item, or explicitly acknowledge the duplicate with --allow-duplicate.",
            why: Some("Strict duplicate detection keeps one canonical item per piece of work."),
            examples: &[
                "pm get <id> --full",
                "pm create task \"<title>\" --allow-duplicate",
            ],
            next_steps: &[
                "Continue the existing item (recovery.suggested_retry), or retry the create with --allow-duplicate.",
            ],
        },
        ErrorCode::MergeRootNotFound => Guidance {
            title: "Not inside a git repository",
            required: "Run the merge fence commands inside the git worktree that holds the tracker.",
            why: Some(
                "Merge drivers are git configuration; without a repository there is nothing to configure.",
            ),
            examples: &["git init", "pm merge install"],
            next_steps: &[
                "Move the tracker into a git worktree (or git init), then rerun pm merge install.",
            ],
        },
        ErrorCode::MergeGitConfigUnwritable => Guidance {
            title: "Git configuration not writable",
            required: "Make git available and the clone's configuration writable.",
            why: Some(
                "pm records its merge drivers with git config; .gitattributes is left untouched when that fails.",
            ),
            examples: &["git --version", "git config --list --local"],
            next_steps: &["Fix the reported git failure, then rerun pm merge install."],
        },
        ErrorCode::CommandFailed => Guidance {
            title: "Command refused its arguments",
            required: "Change the argument named in refusal.surface so that it selects something, then retry.",
            why: Some(
                "pm refuses a request that would return an empty answer indistinguishable from no data.",
            ),
            examples: &[
                "pm list --output-include id,title",
                "pm list --output-include brief",
            ],
            next_steps: &["Pick values from refusal.legal_domain, then retry."],
        },
        ErrorCode::ProjectionOptionsMutuallyExclusive => Guidance {
            title: "Projection options are mutually exclusive",
            required: "Choose one of --brief, --compact, --full or --fields.",
            why: Some("Each row projection defines the whole row shape; two cannot apply at once."),
            examples: &["pm list --brief", "pm list --fields id,title,status"],
            next_steps: &["Retry with a single projection flag."],
        },
        ErrorCode::UnknownFieldProjection => Guidance {
            title: "Unknown field projection",
            required: "Name item metadata keys, body, or tree fields in --fields.",
            why: Some("A projection of an unknown field would print only nulls."),
            examples: &["pm list --fields id,title,status,priority"],
            next_steps: &["Pick field names from recovery.allowed_values, then retry."],
        },
        ErrorCode::ListSourceIncomplete => Guidance {
            title: "List source incomplete",
            required: "Repair the unreadable item files, or drop --strict-read to accept a partial answer.",
            why: Some("--strict-read refuses an answer that is missing unreadable items."),
            examples: &["pm validate", "pm list --all"],
            next_steps: &["Run pm validate to find the unreadable files, fix them, then retry."],
        },
        ErrorCode::UnsupportedSearchMode => Guidance {
            title: "Search mode not supported",
            required: "Search in keyword mode: omit --mode, --semantic and --hybrid.",
            why: Some(
                "This pm has no embedding provider or vector store; semantic and hybrid ranking are not implemented.",
            ),
            examples: &["pm search \"<keyword>\" --limit 10"],
            next_steps: &["Retry with recovery.suggested_retry (keyword mode)."],
        },
        ErrorCode::UnsupportedSubcommand => Guidance {
            title: "Subcommand not supported",
            required: "Use one of the supported subcommands listed in the message.",
            why: Some(
                "This pm implements only part of pm-cli's graph analytics; the other subcommands are refused rather than answered with an empty result.",
            ),
            examples: &["pm graph descendants <id>", "pm graph audit"],
            next_steps: &["Retry with a supported subcommand (see pm graph --help)."],
        },
        // `ErrorCode` is non-exhaustive across crates; the test below fails for a code that
        // has no entry, so this arm is never reached by a catalogued code.
        _ => FALLBACK,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_own_guidance() {
        for code in ErrorCode::ALL {
            let g = guidance(*code);
            assert_ne!(g, FALLBACK, "{code} has no guidance entry");
            assert!(
                !g.required.is_empty() && g.required.ends_with('.'),
                "{code}"
            );
            assert!(!g.next_steps.is_empty(), "{code}");
        }
    }
}
