//! The boolean filters of `pm list` (and `pm search`): `--has-X` / `--no-X` content presence
//! pairs and `--filter-X-missing` governance gaps, with the engine filter each one selects.

use pm_engine::query::{Content, Missing};

/// `--has-X` / `--no-X` pairs; both spellings of one pair together are refused by the parser.
#[derive(Clone, Debug, Default, clap::Args)]
#[allow(missing_docs)]
pub struct ContentArgs {
    /// Keep items with comments
    #[arg(long, conflicts_with = "no_comments")]
    pub has_comments: bool,
    /// Keep items without comments
    #[arg(long)]
    pub no_comments: bool,
    /// Keep items with notes
    #[arg(long, conflicts_with = "no_notes")]
    pub has_notes: bool,
    /// Keep items without notes
    #[arg(long)]
    pub no_notes: bool,
    /// Keep items with learnings
    #[arg(long, conflicts_with = "no_learnings")]
    pub has_learnings: bool,
    /// Keep items without learnings
    #[arg(long)]
    pub no_learnings: bool,
    /// Keep items with linked files
    #[arg(long, conflicts_with = "no_files")]
    pub has_files: bool,
    /// Keep items without linked files
    #[arg(long)]
    pub no_files: bool,
    /// Keep items with linked docs
    #[arg(long, conflicts_with = "no_docs")]
    pub has_docs: bool,
    /// Keep items without linked docs
    #[arg(long)]
    pub no_docs: bool,
    /// Keep items with linked tests
    #[arg(long, conflicts_with = "no_tests")]
    pub has_tests: bool,
    /// Keep items without linked tests
    #[arg(long)]
    pub no_tests: bool,
    /// Keep items with dependencies
    #[arg(long, conflicts_with = "no_deps")]
    pub has_deps: bool,
    /// Keep items without dependencies
    #[arg(long)]
    pub no_deps: bool,
    /// Keep items with a non-empty body
    #[arg(long, conflicts_with = "empty_body")]
    pub has_body: bool,
    /// Keep items with an empty body
    #[arg(long)]
    pub empty_body: bool,
    /// Keep items with a linked test that has a command
    #[arg(long, conflicts_with = "no_linked_command")]
    pub has_linked_command: bool,
    /// Keep items without a linked test command
    #[arg(long)]
    pub no_linked_command: bool,
}

/// `--filter-X-missing` governance filters (all given must hold).
#[derive(Clone, Debug, Default, clap::Args)]
#[allow(missing_docs)]
pub struct MissingArgs {
    /// Keep items without acceptance criteria
    #[arg(long)]
    pub filter_ac_missing: bool,
    /// Keep items without an estimate
    #[arg(long)]
    pub filter_estimates_missing: bool,
    /// Keep terminal items without a resolution
    #[arg(long)]
    pub filter_resolution_missing: bool,
    /// Keep items missing acceptance criteria, an estimate or a resolution
    #[arg(long)]
    pub filter_metadata_missing: bool,
    /// Keep items without a reviewer
    #[arg(long)]
    pub filter_reviewer_missing: bool,
    /// Keep items without a risk
    #[arg(long)]
    pub filter_risk_missing: bool,
    /// Keep items without a confidence
    #[arg(long)]
    pub filter_confidence_missing: bool,
    /// Keep items without a sprint
    #[arg(long)]
    pub filter_sprint_missing: bool,
    /// Keep items without a release
    #[arg(long)]
    pub filter_release_missing: bool,
}

impl ContentArgs {
    /// Returns every switch: its echo key, whether it was given, the content and presence.
    pub fn pairs(&self) -> [(&'static str, bool, Content, bool); 18] {
        use Content as C;
        [
            ("has_comments", self.has_comments, C::Comments, true),
            ("no_comments", self.no_comments, C::Comments, false),
            ("has_notes", self.has_notes, C::Notes, true),
            ("no_notes", self.no_notes, C::Notes, false),
            ("has_learnings", self.has_learnings, C::Learnings, true),
            ("no_learnings", self.no_learnings, C::Learnings, false),
            ("has_files", self.has_files, C::Files, true),
            ("no_files", self.no_files, C::Files, false),
            ("has_docs", self.has_docs, C::Docs, true),
            ("no_docs", self.no_docs, C::Docs, false),
            ("has_tests", self.has_tests, C::Tests, true),
            ("no_tests", self.no_tests, C::Tests, false),
            ("has_deps", self.has_deps, C::Deps, true),
            ("no_deps", self.no_deps, C::Deps, false),
            ("has_body", self.has_body, C::Body, true),
            ("empty_body", self.empty_body, C::Body, false),
            (
                "has_linked_command",
                self.has_linked_command,
                C::LinkedCommand,
                true,
            ),
            (
                "no_linked_command",
                self.no_linked_command,
                C::LinkedCommand,
                false,
            ),
        ]
    }
}

impl MissingArgs {
    /// Returns every switch: its echo key, whether it was given, and the gap it selects.
    pub fn flags(&self) -> [(&'static str, bool, Missing); 9] {
        use Missing as M;
        [
            (
                "filter_ac_missing",
                self.filter_ac_missing,
                M::AcceptanceCriteria,
            ),
            (
                "filter_estimates_missing",
                self.filter_estimates_missing,
                M::Estimates,
            ),
            (
                "filter_resolution_missing",
                self.filter_resolution_missing,
                M::Resolution,
            ),
            (
                "filter_metadata_missing",
                self.filter_metadata_missing,
                M::Metadata,
            ),
            (
                "filter_reviewer_missing",
                self.filter_reviewer_missing,
                M::Reviewer,
            ),
            ("filter_risk_missing", self.filter_risk_missing, M::Risk),
            (
                "filter_confidence_missing",
                self.filter_confidence_missing,
                M::Confidence,
            ),
            (
                "filter_sprint_missing",
                self.filter_sprint_missing,
                M::Sprint,
            ),
            (
                "filter_release_missing",
                self.filter_release_missing,
                M::Release,
            ),
        ]
    }
}
