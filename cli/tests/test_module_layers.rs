//! The folders of `cli/src` form layers: no chain of `crate::…` references leaves a folder and
//! comes back to it. A module may use anything inside its own folder; across folders the
//! references must form a directed acyclic graph (render and exit at the bottom, `commands` and
//! the root `lib.rs` at the top; `docs/architecture.md` draws it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The folder (or top-level file stem) a source file belongs to: `commands/list.rs` →
/// `commands`, `ctx.rs` → `ctx`.
fn unit_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    Some(first.trim_end_matches(".rs").to_owned())
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The first path segment of every `crate::` reference in `text`, including each member of a
/// `use crate::{a::…, b}` group.
fn referenced_units(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let body = &group[..group.find('}').unwrap_or(group.len())];
            // Nested groups only occur after a first segment; the segment before `::` counts.
            for member in body.split(',') {
                found.insert(ident(member));
            }
        } else {
            found.insert(ident(rest));
        }
    }
    found.retain(|name| !name.is_empty());
    found
}

/// The cross-unit reference graph of `cli/src`.
fn graph() -> Result<BTreeMap<String, BTreeSet<String>>, Box<dyn std::error::Error>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files)?;
    let units: BTreeSet<String> = files.iter().filter_map(|f| unit_of(&src, f)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let Some(from) = unit_of(&src, file) else {
            continue;
        };
        let text = std::fs::read_to_string(file)?;
        let targets = edges.entry(from.clone()).or_default();
        for to in referenced_units(&text) {
            if to != from && units.contains(&to) {
                targets.insert(to);
            }
        }
    }
    Ok(edges)
}

/// Returns a path `from → … → to` when one exists.
fn path_between(
    edges: &BTreeMap<String, BTreeSet<String>>,
    from: &str,
    to: &str,
) -> Option<Vec<String>> {
    let mut stack = vec![vec![from.to_owned()]];
    let mut seen = BTreeSet::new();
    while let Some(path) = stack.pop() {
        let last = path.last()?.clone();
        if last == to && path.len() > 1 {
            return Some(path);
        }
        if !seen.insert(last.clone()) {
            continue;
        }
        for next in edges.get(&last).into_iter().flatten() {
            let mut longer = path.clone();
            longer.push(next.clone());
            stack.push(longer);
        }
    }
    None
}

#[test]
fn no_reference_cycle_spans_two_folders() -> TestResult {
    let edges = graph()?;
    let mut cycles = Vec::new();
    for (from, targets) in &edges {
        for to in targets {
            if let Some(back) = path_between(&edges, to, from) {
                cycles.push(format!("{from} -> {}", back.join(" -> ")));
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "cross-folder reference cycles in cli/src:\n{}",
        cycles.join("\n")
    );
    // The graph is not trivially empty: the layers it checks exist.
    assert!(edges.get("commands").is_some_and(|t| t.contains("render")));
    Ok(())
}

#[test]
fn references_are_read_from_plain_paths_and_groups() {
    let text = "use crate::ctx::Ctx;\nuse crate::{render::Format, exit};\nlet x = crate::failure::report();";
    let units: Vec<String> = referenced_units(text).into_iter().collect();
    assert_eq!(units, ["ctx", "exit", "failure", "render"]);
}
