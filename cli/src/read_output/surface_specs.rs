//! The one table of read-surface facts: a row per [`Surface`], in its declaration order, with
//! the spellings that name it, its budget class, legacy flags per dimension, whether rows take
//! field projection, the sentinel keys of its envelope and its declared row keys.
//! `Surface`'s methods only look their answer up here.

use super::surface::{BudgetClass, RowKey, RowShape, Surface};

/// How a command spelling other than the canonical name reaches a surface.
#[derive(Clone, Copy, Debug)]
pub(super) enum Spelling {
    /// The first word of the spelling (`ctx`).
    Word(&'static str),
    /// The whole spelling, words single-spaced (`package catalog`).
    Phrase(&'static str),
    /// A prefix of the first word (`list-` for `list-open`).
    Prefix(&'static str),
}

/// The legacy flags of a surface per output dimension, each in resolution order.
#[derive(Clone, Copy, Debug)]
pub(super) struct Legacy {
    pub include: &'static [&'static str],
    pub amount: &'static [&'static str],
    pub cost: &'static [&'static str],
    pub encoding: &'static [&'static str],
}

impl Legacy {
    const NONE: Legacy = Legacy {
        include: &[],
        amount: &[],
        cost: &[],
        encoding: &[],
    };
}

/// Where a surface's rows are.
#[derive(Clone, Copy, Debug)]
pub(super) enum RowKeys {
    /// The same keys in every result.
    Fixed(&'static [RowKey]),
    /// Keys chosen by the result's `subcommand` (graph).
    BySubcommand(fn(Option<&str>) -> Vec<RowKey>),
}

/// Every fact about one read surface.
#[derive(Clone, Copy, Debug)]
pub(super) struct SurfaceSpec {
    pub surface: Surface,
    /// The canonical name (receipts, cursors, contracts).
    pub name: &'static str,
    /// Other spellings that resolve to it.
    pub spellings: &'static [Spelling],
    /// The class whose ceilings apply by default.
    pub budget_class: BudgetClass,
    pub legacy: Legacy,
    /// Whether rows accept field projection (`row_contract.fields`).
    pub fields_supported: bool,
    /// Keys whose presence shows a result is this surface's envelope.
    pub sentinel_keys: &'static [&'static str],
    pub row_keys: RowKeys,
}

/// A surface with no spellings, legacy flags, sentinels or rows, in the read budget class.
const fn plain(surface: Surface, name: &'static str) -> SurfaceSpec {
    SurfaceSpec {
        surface,
        name,
        spellings: &[],
        budget_class: BudgetClass::Read,
        legacy: Legacy::NONE,
        fields_supported: false,
        sentinel_keys: &[],
        row_keys: RowKeys::Fixed(&[]),
    }
}

const fn rows(path: &'static str) -> RowKey {
    RowKey {
        path,
        shape: RowShape::Collection,
    }
}

const fn single(path: &'static str) -> RowKey {
    RowKey {
        path,
        shape: RowShape::Single,
    }
}

/// A surface whose sentinels are exactly its collection row keys.
macro_rules! collections {
    ($surface:expr, $name:expr, [$($key:expr),*]) => {
        SurfaceSpec {
            sentinel_keys: &[$($key),*],
            row_keys: RowKeys::Fixed(&[$(rows($key)),*]),
            ..plain($surface, $name)
        }
    };
}

const READ_COST: &[&str] = &["--token-budget"];
const FORMAT: &[&str] = &["--format"];
const LIMIT: &[&str] = &["--limit"];

/// Every read surface, in `Surface` declaration order (checked when compiling).
pub(super) const SPECS: [SurfaceSpec; 24] = [
    SurfaceSpec {
        spellings: &[Spelling::Prefix("list-")],
        legacy: Legacy {
            include: &["--brief", "--compact", "--fields", "--full"],
            amount: &["--after", "--limit", "--no-truncate"],
            cost: READ_COST,
            encoding: &["--format", "--stream"],
        },
        fields_supported: true,
        sentinel_keys: &["items", "projection"],
        row_keys: RowKeys::Fixed(&[rows("items")]),
        ..plain(Surface::List, "list")
    },
    SurfaceSpec {
        spellings: &[Spelling::Word("ctx")],
        legacy: Legacy {
            include: &["--fields", "--section"],
            amount: &["--after", "--depth", "--limit"],
            cost: READ_COST,
            encoding: FORMAT,
        },
        fields_supported: true,
        sentinel_keys: &["sections_included", "high_level", "low_level"],
        row_keys: RowKeys::Fixed(&[rows("high_level"), rows("low_level")]),
        ..plain(Surface::Context, "context")
    },
    SurfaceSpec {
        legacy: Legacy {
            include: &["--compact", "--fields", "--full"],
            amount: &["--after", "--limit"],
            cost: READ_COST,
            encoding: FORMAT,
        },
        fields_supported: true,
        sentinel_keys: &["items", "projection"],
        row_keys: RowKeys::Fixed(&[rows("items")]),
        ..plain(Surface::Search, "search")
    },
    SurfaceSpec {
        legacy: Legacy {
            include: &["--fields", "--full"],
            amount: &["--depth"],
            cost: READ_COST,
            encoding: FORMAT,
        },
        fields_supported: true,
        sentinel_keys: &["item"],
        row_keys: RowKeys::Fixed(&[single("children")]),
        ..plain(Surface::Get, "get")
    },
    SurfaceSpec {
        legacy: Legacy {
            include: &[],
            amount: &["--blocked-limit", "--limit"],
            cost: READ_COST,
            encoding: FORMAT,
        },
        sentinel_keys: &[
            "recommended",
            "ready",
            "decision_needed",
            "blocked",
            "held_by_others",
        ],
        row_keys: RowKeys::Fixed(&[
            single("recommended"),
            rows("ready"),
            rows("decision_needed"),
            rows("blocked"),
            rows("held_by_others"),
        ]),
        ..plain(Surface::Next, "next")
    },
    SurfaceSpec {
        budget_class: BudgetClass::Governance,
        legacy: Legacy {
            include: &["--brief", "--check-only", "--full", "--summary"],
            ..Legacy::NONE
        },
        ..collections!(Surface::Health, "health", ["checks"])
    },
    SurfaceSpec {
        legacy: Legacy {
            include: &["--collapse", "--full", "--summary"],
            amount: &["--edge-limit", "--max-depth", "--node-limit"],
            cost: READ_COST,
            encoding: FORMAT,
        },
        sentinel_keys: &["tree", "graph", "projection"],
        row_keys: RowKeys::Fixed(&[
            rows("graph.nodes"),
            rows("graph.edges"),
            rows("context.nodes"),
            rows("context.edges"),
        ]),
        ..plain(Surface::Deps, "deps")
    },
    SurfaceSpec {
        legacy: Legacy {
            include: &["--full", "--summary"],
            amount: &["--after", "--limit", "--max-depth", "--max-paths"],
            ..Legacy::NONE
        },
        sentinel_keys: &["subcommand"],
        row_keys: RowKeys::BySubcommand(graph_row_keys),
        ..plain(Surface::Graph, "graph")
    },
    SurfaceSpec {
        legacy: Legacy {
            include: &["--compact", "--full"],
            amount: LIMIT,
            cost: &[],
            encoding: FORMAT,
        },
        ..collections!(
            Surface::History,
            "history",
            ["compact_history", "provenance_history", "history"]
        )
    },
    SurfaceSpec {
        legacy: Legacy {
            include: &["--compact", "--full"],
            amount: &["--limit", "--unbounded"],
            cost: &[],
            encoding: &["--stream"],
        },
        ..collections!(
            Surface::Activity,
            "activity",
            [
                "activity_digest",
                "compact_activity",
                "provenance_activity",
                "activity"
            ]
        )
    },
    SurfaceSpec {
        budget_class: BudgetClass::Governance,
        legacy: Legacy {
            include: &["--counts", "--full"],
            ..Legacy::NONE
        },
        ..collections!(Surface::Validate, "validate", ["checks", "warnings"])
    },
    SurfaceSpec {
        legacy: Legacy {
            include: &["--full"],
            amount: LIMIT,
            cost: &[],
            encoding: &["--follow"],
        },
        ..plain(Surface::Events, "events")
    },
    SurfaceSpec {
        budget_class: BudgetClass::Discovery,
        legacy: Legacy {
            include: &["--full", "--summary"],
            ..Legacy::NONE
        },
        sentinel_keys: &["command_summaries", "commands", "selected"],
        row_keys: RowKeys::Fixed(&[rows("command_summaries"), rows("commands")]),
        ..plain(Surface::Contracts, "contracts")
    },
    SurfaceSpec {
        legacy: Legacy {
            amount: LIMIT,
            ..Legacy::NONE
        },
        ..collections!(Surface::Comments, "comments", ["comments"])
    },
    SurfaceSpec {
        legacy: Legacy {
            amount: LIMIT,
            ..Legacy::NONE
        },
        ..collections!(Surface::Notes, "notes", ["notes"])
    },
    SurfaceSpec {
        legacy: Legacy {
            amount: &["--limit", "--no-truncate", "--offset"],
            ..Legacy::NONE
        },
        ..collections!(Surface::Files, "files", ["files"])
    },
    collections!(Surface::Docs, "docs", ["docs"]),
    SurfaceSpec {
        budget_class: BudgetClass::Governance,
        sentinel_keys: &["totals", "by_type", "by_status"],
        row_keys: RowKeys::Fixed(&[rows("by_type"), rows("by_status")]),
        ..plain(Surface::Stats, "stats")
    },
    collections!(Surface::Aggregate, "aggregate", ["groups"]),
    SurfaceSpec {
        legacy: Legacy {
            amount: LIMIT,
            ..Legacy::NONE
        },
        ..collections!(Surface::Duplicates, "duplicates", ["clusters"])
    },
    SurfaceSpec {
        spellings: &[
            Spelling::Phrase("package catalog"),
            Spelling::Phrase("packages catalog"),
        ],
        ..plain(Surface::PackageCatalog, "package-catalog")
    },
    SurfaceSpec {
        spellings: &[Spelling::Phrase("package manage")],
        ..plain(Surface::PackageManage, "package-manage")
    },
    plain(Surface::CommentsAudit, "comments-audit"),
    collections!(Surface::Assurance, "assurance", ["assertions"]),
];

// Row `i` describes the surface whose discriminant is `i`, so a lookup is one index.
const _: () = {
    let mut i = 0;
    while i < SPECS.len() {
        assert!(
            SPECS[i].surface as usize == i,
            "SPECS rows follow the Surface declaration order"
        );
        i += 1;
    }
};

/// The row keys of a graph result, by the graph subcommand that produced it.
fn graph_row_keys(subcommand: Option<&str>) -> Vec<RowKey> {
    let paths: &[&'static str] = match subcommand.unwrap_or_default() {
        "ancestors" | "descendants" | "predecessors" | "successors" => &["ids"],
        "paths" => &["paths"],
        "impact" => &["affected"],
        "audit" => &["findings"],
        "communities" => &["communities"],
        "redundancy" => &["redundant"],
        "dominators" => &["bottlenecks"],
        "slack" | "centrality" => &["rows"],
        "articulation" => &["articulation_points", "bridges"],
        "plan" => &["steps"],
        _ => &[],
    };
    paths.iter().map(|p| rows(p)).collect()
}

impl Spelling {
    /// Returns whether `words` (lowercase, whitespace-split) spell this.
    pub(super) fn matches(self, words: &[String]) -> bool {
        let first = words.first().map_or("", String::as_str);
        match self {
            Spelling::Word(word) => first == word,
            Spelling::Phrase(phrase) => words.join(" ") == phrase,
            Spelling::Prefix(prefix) => first.starts_with(prefix),
        }
    }
}
