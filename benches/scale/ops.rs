//! The table of measured operations: what each runs, which subcommand it needs, and what must
//! happen before each run. A command a binary lacks is reported as "not available".

use crate::Fixture;

/// What to do before each run of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prepare {
    /// Nothing.
    Nothing,
    /// Delete `<tracker>/runtime/` so the run starts without an index (first-run cost).
    DropIndex,
}

/// One measured operation.
#[derive(Clone, Copy, Debug)]
pub struct Op {
    /// Report key.
    pub name: &'static str,
    /// The subcommand that must exist (`<bin> <subcommand> --help` exits 0).
    pub subcommand: &'static str,
    /// What the operation measures.
    pub about: &'static str,
    /// Arguments of run `run` (the warm-up is run `iterations`, the RSS run `iterations + 1`).
    pub args: fn(&Fixture, usize) -> Vec<String>,
    /// Before each run.
    pub prepare: Prepare,
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(String::from).collect()
}

/// The operations, in run order: index builds first, then pm-cli's seven commands in its order
/// (reads before mutations, so reads see the pristine fixture).
pub const OPS: [Op; 10] = [
    Op {
        name: "index_first_run",
        subcommand: "list",
        about: "first list on a tracker without an index (lazy build)",
        args: |_, _| words("list --status all --limit 20 --json"),
        prepare: Prepare::DropIndex,
    },
    Op {
        name: "reindex_cold",
        subcommand: "reindex",
        about: "pm reindex with no index on disk",
        args: |_, _| words("reindex --json"),
        prepare: Prepare::DropIndex,
    },
    Op {
        name: "reindex",
        subcommand: "reindex",
        about: "pm reindex over an existing index",
        args: |_, _| words("reindex --json"),
        prepare: Prepare::Nothing,
    },
    Op {
        name: "list",
        subcommand: "list",
        about: "list --status all --limit 20",
        args: |_, _| words("list --status all --limit 20 --json"),
        prepare: Prepare::Nothing,
    },
    Op {
        name: "get",
        subcommand: "get",
        about: "get <first id>",
        args: |f, _| vec!["get".into(), f.sample_get.clone(), "--json".into()],
        prepare: Prepare::Nothing,
    },
    Op {
        name: "next",
        subcommand: "next",
        about: "next --limit 10",
        args: |_, _| words("next --limit 10 --json"),
        prepare: Prepare::Nothing,
    },
    Op {
        name: "context",
        subcommand: "context",
        about: "context --limit 10",
        args: |_, _| words("context --limit 10 --json"),
        prepare: Prepare::Nothing,
    },
    Op {
        name: "search",
        subcommand: "search",
        about: "search synthetic --status all --limit 10",
        args: |_, _| words("search synthetic --status all --limit 10 --json"),
        prepare: Prepare::Nothing,
    },
    Op {
        name: "create",
        subcommand: "create",
        about: "create a Task (a new title per run)",
        args: |_, run| {
            let mut args = words("create --type Task --status open --json --title");
            args.push(format!("Benchmark CLI create {run}"));
            args
        },
        prepare: Prepare::Nothing,
    },
    Op {
        name: "claim",
        subcommand: "claim",
        about: "claim an open item (a different one per run)",
        args: |f, run| {
            let id = f.sample_open.get(run).cloned().unwrap_or_default();
            vec!["claim".into(), id, "--json".into()]
        },
        prepare: Prepare::Nothing,
    },
];

/// Returns the operations named in `only` (all when empty), in table order.
pub fn selected(only: &[String]) -> Vec<Op> {
    OPS.iter()
        .filter(|op| only.is_empty() || only.iter().any(|n| n == op.name))
        .copied()
        .collect()
}
