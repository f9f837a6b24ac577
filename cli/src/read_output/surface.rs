//! The read surfaces and their vocabulary: dimensions, row keys, legacy-alias semantics and
//! budget classes. Each surface's facts (spellings, legacy flags per dimension, budget class,
//! sentinels, row keys) are one row of the table in `surface_specs.rs`.

use serde_json::{Map, Value};

use super::surface_specs::{RowKeys, SPECS, SurfaceSpec};
use crate::render::Format;

/// A canonical read surface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)]
pub enum Surface {
    List,
    Context,
    Search,
    Get,
    Next,
    Health,
    Deps,
    Graph,
    History,
    Activity,
    Validate,
    Events,
    Contracts,
    Comments,
    Notes,
    Files,
    Docs,
    Stats,
    Aggregate,
    Duplicates,
    PackageCatalog,
    PackageManage,
    CommentsAudit,
    Assurance,
}

/// One of the four output dimensions, in receipt order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dimension {
    /// What to include (`--output-include`).
    Include,
    /// How many rows (`--output-limit`).
    Amount,
    /// How many tokens (`--output-budget`).
    Cost,
    /// Which encoding (`--output-format`).
    Encoding,
}

impl Dimension {
    /// Every dimension in receipt order.
    pub const ALL: [Dimension; 4] = [
        Dimension::Include,
        Dimension::Amount,
        Dimension::Cost,
        Dimension::Encoding,
    ];

    /// Returns the dimension name used in receipts.
    pub fn name(self) -> &'static str {
        match self {
            Dimension::Include => "include",
            Dimension::Amount => "amount",
            Dimension::Cost => "cost",
            Dimension::Encoding => "encoding",
        }
    }

    /// Returns the canonical flag of the dimension.
    pub fn canonical_flag(self) -> &'static str {
        match self {
            Dimension::Include => "--output-include",
            Dimension::Amount => "--output-limit",
            Dimension::Cost => "--output-budget",
            Dimension::Encoding => "--output-format",
        }
    }
}

/// How a declared row key holds its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowShape {
    /// An array of rows, or an object map whose values are rows.
    Collection,
    /// One row object (`next.recommended`, the `get.children` rollup): projected and
    /// referenced like a row, never sliced, bounded or compacted as a collection.
    Single,
}

/// A declared row key: a dot path plus its shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowKey {
    /// Dot-delimited path from the envelope root.
    pub path: &'static str,
    /// How the path holds rows.
    pub shape: RowShape,
}

/// Flags whose legacy semantics a static output control cannot replace, with pm's fixed hint.
const BEHAVIOR_PRESERVING: &[(&str, &str)] = &[
    (
        "--after",
        "--after retains cursor-position semantics; use --output-limit <n> separately to bound returned rows.",
    ),
    (
        "--check-only",
        "--check-only retains health side-effect semantics; --output-include does not suppress vector refresh.",
    ),
    (
        "--collapse",
        "--collapse retains dependency grouping semantics; --output-include does not replace it.",
    ),
    (
        "--depth",
        "--depth retains traversal or detail-depth semantics; --output-limit does not replace it.",
    ),
    (
        "--follow",
        "--follow retains event-tail semantics; --output-format does not enable following.",
    ),
    (
        "--max-depth",
        "--max-depth retains graph traversal-depth semantics; --output-limit does not replace it.",
    ),
    (
        "--max-paths",
        "--max-paths retains graph path-search semantics; use --output-limit separately to bound returned rows.",
    ),
    (
        "--no-truncate",
        "--no-truncate is a compatibility alias; prefer --output-limit unbounded.",
    ),
    (
        "--offset",
        "--offset retains positional pagination semantics; use --output-limit separately to bound returned rows.",
    ),
    (
        "--stream",
        "--stream retains command streaming semantics; --output-format selects only static result encoding.",
    ),
    (
        "--unbounded",
        "--unbounded is a compatibility alias; prefer --output-limit unbounded.",
    ),
];

/// Include aliases that carry a value (a CSV or a mode name) instead of naming a projection.
const VALUE_BEARING_INCLUDE: &[&str] = &["--collapse", "--fields", "--section"];

/// Whether a legacy alias is a drop-in replacement or keeps behaviour the canonical flag lacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AliasSemantics {
    /// The canonical flag replaces the alias.
    Replacement,
    /// The alias keeps semantics the canonical flag does not replace.
    BehaviorPreserving,
}

/// Returns the semantics of a legacy alias.
pub fn alias_semantics(flag: &str) -> AliasSemantics {
    if BEHAVIOR_PRESERVING.iter().any(|(f, _)| *f == flag) {
        AliasSemantics::BehaviorPreserving
    } else {
        AliasSemantics::Replacement
    }
}

/// Returns pm's one-line migration hint for a legacy alias of `dimension`.
pub fn migration_hint(flag: &str, dimension: Dimension) -> String {
    if let Some((_, hint)) = BEHAVIOR_PRESERVING.iter().find(|(f, _)| *f == flag) {
        return (*hint).to_owned();
    }
    let suffix = match dimension {
        Dimension::Include if VALUE_BEARING_INCLUDE.contains(&flag) => "<csv>".to_owned(),
        Dimension::Include => flag.trim_start_matches('-').replace('-', "_"),
        Dimension::Amount => "<n>".to_owned(),
        Dimension::Cost => "<tokens>".to_owned(),
        Dimension::Encoding => "<toon|json>".to_owned(),
    };
    format!(
        "{flag} is a compatibility alias; prefer {} {suffix}.",
        dimension.canonical_flag()
    )
}

/// A token-budget class with its default ceilings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetClass {
    /// Ordinary reads: 4000 TOON / 6000 JSON tokens.
    Read,
    /// Diagnostics (health, validate, stats): 6000 / 9000.
    Governance,
    /// Discovery (contracts): 3000 / 4500.
    Discovery,
}

impl BudgetClass {
    /// Returns the default ceiling for output printed in `format` (JSON = ceil(TOON × 3/2)).
    pub fn ceiling(self, format: Format) -> u64 {
        let toon: u64 = match self {
            BudgetClass::Read => 4000,
            BudgetClass::Governance => 6000,
            BudgetClass::Discovery => 3000,
        };
        match format {
            Format::Toon => toon,
            Format::Json => (toon * 3).div_ceil(2),
        }
    }
}

impl Surface {
    /// Every read surface, in pm's declaration order.
    pub const ALL: [Surface; 24] = {
        let mut all = [Surface::List; 24];
        let mut i = 0;
        while i < all.len() {
            all[i] = SPECS[i].surface;
            i += 1;
        }
        all
    };

    /// Returns this surface's row of the surface table.
    fn spec(self) -> &'static SurfaceSpec {
        &SPECS[self as usize]
    }

    /// Returns the canonical surface name.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// Returns the surface a command spelling resolves to: lowercase,
    /// whitespace collapsed, first word; `list-*` → list, `ctx` → context; `package catalog`
    /// and `package manage` name the package surfaces.
    pub fn resolve(command: &str) -> Option<Surface> {
        let words: Vec<String> = command
            .split_whitespace()
            .map(str::to_ascii_lowercase)
            .collect();
        let first = words.first().map_or("", String::as_str);
        SPECS
            .iter()
            .find(|s| s.name == first || s.spellings.iter().any(|sp| sp.matches(&words)))
            .map(|s| s.surface)
    }

    /// Returns the budget class whose ceilings apply by default.
    ///
    /// comments, notes, files and docs read results use the read class: pm-cli keys the class
    /// by command name and so budgets their reads like mutations (a pm-cli quirk we do not copy).
    pub fn budget_class(self) -> BudgetClass {
        self.spec().budget_class
    }

    /// Returns the legacy flags of `dimension` on this surface, in resolution order.
    pub fn legacy_flags(self, dimension: Dimension) -> &'static [&'static str] {
        let legacy = &self.spec().legacy;
        match dimension {
            Dimension::Include => legacy.include,
            Dimension::Amount => legacy.amount,
            Dimension::Cost => legacy.cost,
            Dimension::Encoding => legacy.encoding,
        }
    }

    /// Returns the projection modes `--output-include` accepts on this surface: the
    /// boolean include aliases that neither carry a value nor preserve other behaviour.
    pub fn projection_modes(self) -> Vec<&'static str> {
        self.legacy_flags(Dimension::Include)
            .iter()
            .filter(|f| {
                !VALUE_BEARING_INCLUDE.contains(f)
                    && alias_semantics(f) == AliasSemantics::Replacement
            })
            .map(|f| f.trim_start_matches('-'))
            .collect()
    }

    /// Returns whether rows of this surface accept field projection (`row_contract.fields`).
    pub fn fields_supported(self) -> bool {
        self.spec().fields_supported
    }

    /// Returns the keys whose presence shows a result is this surface's envelope; without one
    /// no row contract is attached.
    pub fn sentinel_keys(self) -> &'static [&'static str] {
        self.spec().sentinel_keys
    }

    /// Returns the declared row keys of `result` (graph keys depend on its `subcommand`).
    pub fn row_keys(self, result: &Map<String, Value>) -> Vec<RowKey> {
        match self.spec().row_keys {
            RowKeys::Fixed(keys) => keys.to_vec(),
            RowKeys::BySubcommand(keys) => keys(result.get("subcommand").and_then(Value::as_str)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_resolve_to_canonical_surfaces() {
        for (spelling, surface) in [
            ("list", Surface::List),
            ("list-all", Surface::List),
            ("LIST-open", Surface::List),
            ("ctx", Surface::Context),
            ("  get   pm-1 ", Surface::Get),
            ("package catalog", Surface::PackageCatalog),
            ("packages  catalog", Surface::PackageCatalog),
            ("package-manage", Surface::PackageManage),
            ("package manage", Surface::PackageManage),
        ] {
            assert_eq!(Surface::resolve(spelling), Some(surface), "{spelling}");
        }
        for other in ["update", "create", "where", "init", "", "package"] {
            assert_eq!(Surface::resolve(other), None, "{other}");
        }
        for s in Surface::ALL {
            assert_eq!(Surface::resolve(s.name()), Some(s));
        }
    }

    /// The 22 projection modes per surface: each an `--output-include <mode>` that replaces a
    /// boolean include flag.
    #[test]
    fn projection_mode_table() {
        let table: Vec<String> = Surface::ALL
            .iter()
            .filter(|s| !s.projection_modes().is_empty())
            .map(|s| format!("{}: {}", s.name(), s.projection_modes().join(",")))
            .collect();
        assert_eq!(
            table,
            [
                "list: brief,compact,full",
                "search: compact,full",
                "get: full",
                "health: brief,full,summary",
                "deps: full,summary",
                "graph: full,summary",
                "history: compact,full",
                "activity: compact,full",
                "validate: counts,full",
                "events: full",
                "contracts: full,summary",
            ]
        );
        let total: usize = Surface::ALL
            .iter()
            .map(|s| s.projection_modes().len())
            .sum();
        assert_eq!(total, 22);
    }

    #[test]
    fn legacy_table_matches_the_contract() {
        let row = |s: Surface| {
            Dimension::ALL
                .iter()
                .map(|d| s.legacy_flags(*d).join(" "))
                .collect::<Vec<_>>()
                .join(" | ")
        };
        assert_eq!(
            row(Surface::List),
            "--brief --compact --fields --full | --after --limit --no-truncate | --token-budget | --format --stream"
        );
        assert_eq!(
            row(Surface::Context),
            "--fields --section | --after --depth --limit | --token-budget | --format"
        );
        assert_eq!(
            row(Surface::Search),
            "--compact --fields --full | --after --limit | --token-budget | --format"
        );
        assert_eq!(
            row(Surface::Get),
            "--fields --full | --depth | --token-budget | --format"
        );
        assert_eq!(
            row(Surface::Next),
            " | --blocked-limit --limit | --token-budget | --format"
        );
        assert_eq!(
            row(Surface::Health),
            "--brief --check-only --full --summary |  |  | "
        );
        assert_eq!(
            row(Surface::Deps),
            "--collapse --full --summary | --edge-limit --max-depth --node-limit | --token-budget | --format"
        );
        assert_eq!(
            row(Surface::Graph),
            "--full --summary | --after --limit --max-depth --max-paths |  | "
        );
        assert_eq!(
            row(Surface::History),
            "--compact --full | --limit |  | --format"
        );
        assert_eq!(
            row(Surface::Activity),
            "--compact --full | --limit --unbounded |  | --stream"
        );
        assert_eq!(row(Surface::Validate), "--counts --full |  |  | ");
        assert_eq!(row(Surface::Events), "--full | --limit |  | --follow");
        assert_eq!(row(Surface::Contracts), "--full --summary |  |  | ");
        for s in [Surface::Comments, Surface::Notes, Surface::Duplicates] {
            assert_eq!(row(s), " | --limit |  | ");
        }
        assert_eq!(
            row(Surface::Files),
            " | --limit --no-truncate --offset |  | "
        );
        for s in [
            Surface::Docs,
            Surface::Stats,
            Surface::Aggregate,
            Surface::Assurance,
        ] {
            assert_eq!(row(s), " |  |  | ");
        }
    }

    #[test]
    fn migration_hints() {
        assert_eq!(
            migration_hint("--brief", Dimension::Include),
            "--brief is a compatibility alias; prefer --output-include brief."
        );
        assert_eq!(
            migration_hint("--fields", Dimension::Include),
            "--fields is a compatibility alias; prefer --output-include <csv>."
        );
        assert_eq!(
            migration_hint("--limit", Dimension::Amount),
            "--limit is a compatibility alias; prefer --output-limit <n>."
        );
        assert_eq!(
            migration_hint("--token-budget", Dimension::Cost),
            "--token-budget is a compatibility alias; prefer --output-budget <tokens>."
        );
        assert_eq!(
            migration_hint("--format", Dimension::Encoding),
            "--format is a compatibility alias; prefer --output-format <toon|json>."
        );
        assert_eq!(
            migration_hint("--no-truncate", Dimension::Amount),
            "--no-truncate is a compatibility alias; prefer --output-limit unbounded."
        );
        assert_eq!(
            alias_semantics("--after"),
            AliasSemantics::BehaviorPreserving
        );
        assert_eq!(alias_semantics("--limit"), AliasSemantics::Replacement);
    }

    #[test]
    fn ceilings_by_class_and_format() {
        assert_eq!(Surface::List.budget_class().ceiling(Format::Toon), 4000);
        assert_eq!(Surface::List.budget_class().ceiling(Format::Json), 6000);
        assert_eq!(Surface::Stats.budget_class().ceiling(Format::Json), 9000);
        assert_eq!(
            Surface::Contracts.budget_class().ceiling(Format::Toon),
            3000
        );
        assert_eq!(
            Surface::Contracts.budget_class().ceiling(Format::Json),
            4500
        );
        assert_eq!(Surface::Comments.budget_class(), BudgetClass::Read);
    }
}
