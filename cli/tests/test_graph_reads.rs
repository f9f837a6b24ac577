//! `pm graph` and `pm deps <id>` (read mode): goldens on the sample tracker, cycles reported
//! and never followed, refusals (unknown id 3, bad values and cursors 2, unsupported
//! subcommands 2), and bounded pages on a generated tracker.

use std::error::Error;

use serde_json::Value;

use crate::common::{Run, TestTracker};

type TestResult = Result<(), Box<dyn Error>>;

fn json_of(t: &TestTracker, args: &[&str]) -> Result<Value, Box<dyn Error>> {
    let mut argv = args.to_vec();
    argv.push("--json");
    let run = t.pm(&argv)?;
    assert_eq!(
        (run.stderr.as_str(), run.code),
        ("", 0),
        "{args:?}: {}",
        run.stdout
    );
    Ok(serde_json::from_str(&run.stdout)?)
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn refused(run: &Run, code: i32, error: &str) {
    assert_eq!(
        run.code, code,
        "stdout {} stderr {}",
        run.stdout, run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr.starts_with(&format!("error[{error}]")),
        "{}",
        run.stderr
    );
}

#[test]
fn ancestors_golden() -> TestResult {
    let t = TestTracker::sample()?;
    let run = t.pm(&["graph", "ancestors", "gd-t3"])?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0));
    assert_eq!(
        run.stdout,
        "subcommand: \"ancestors\"\nroot: \"gd-t3\"\ncount: 2\ntruncated: false\ncost:\n  \
         visited_nodes: 3\n  inspected_edges: 2\nids:\n  - \"gd-f2\"\n  - \"gd-e1\"\n\
         direction: \"in\"\nkinds:\n  - \"parent\"\nlimit: 100\ndepth_limited: false\n\
         cycle_count: 0\nprojection:\n  mode: \"default\"\n  \
         declared_field_groups[1]{name,restore_with}:\n    result_rows,\"--full\"\n\
         omission_receipt:\n  has_omissions: true\n  omitted_field_group_count: 1\n  \
         omitted_field_groups[1]{name,restore_with}:\n    result_rows,\"--full\"\n"
    );
    Ok(())
}

#[test]
fn impact_golden() -> TestResult {
    let t = TestTracker::sample()?;
    let run = t.pm(&["graph", "impact", "gd-f2"])?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0));
    assert_eq!(
        run.stdout,
        "subcommand: \"impact\"\nroot: \"gd-f2\"\ncount: 2\ntruncated: false\ncost:\n  \
         visited_nodes: 3\n  inspected_edges: 2\naffected[2]{id,title,type,status,distance,via,from}:\n  \
         gd-t3,Write the CSV summary writer,Task,open,1,parent,gd-f2\n  \
         gd-t4,Document the sensor wiring,Task,open,1,parent,gd-f2\n\
         direction: \"out\"\nkinds:\n  - \"parent\"\n  - \"blocks\"\n  - \"discovered_from\"\n\
         limit: 10\ndepth_limited: false\ncycle_count: 0\nprojection:\n  mode: \"default\"\n  \
         declared_field_groups[1]{name,restore_with}:\n    result_rows,\"--full\"\n  \
         included_field_groups:\n    - \"result_rows\"\nomission_receipt:\n  \
         has_omissions: false\n  omitted_field_group_count: 0\n  omitted_field_groups: []\n"
    );
    Ok(())
}

#[test]
fn traversals_paths_and_analysis_on_the_sample() -> TestResult {
    let t = TestTracker::sample()?;
    let all = json_of(&t, &["graph", "descendants", "gd-e1"])?;
    assert_eq!(
        strings(&all["ids"]),
        [
            "gd-d1", "gd-f1", "gd-f2", "gd-m1", "gd-i1", "gd-t1", "gd-t2", "gd-t3", "gd-t4"
        ]
    );
    // Pages of 4 resume after next_cursor and add up to the whole walk.
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let mut args = vec!["graph", "descendants", "gd-e1", "--limit", "4"];
        if let Some(a) = after.as_deref() {
            args.extend(["--after", a]);
        }
        let page = json_of(&t, &args)?;
        seen.extend(strings(&page["ids"]));
        match page["next_cursor"].as_str() {
            Some(next) => after = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, strings(&all["ids"]));
    let full = json_of(
        &t,
        &[
            "graph",
            "descendants",
            "gd-e1",
            "--full",
            "--max-depth",
            "1",
        ],
    )?;
    assert_eq!(full["ids"][0]["id"], "gd-d1");
    assert_eq!(full["ids"][0]["depth"], 1);
    assert_eq!(full["ids"].as_array().map(Vec::len), Some(4));
    assert_eq!(full["depth_limited"], true);
    let paths = json_of(&t, &["graph", "paths", "gd-e1", "gd-t3"])?;
    assert_eq!(
        strings(&paths["paths"][0]["ids"]),
        ["gd-e1", "gd-f2", "gd-t3"]
    );
    let summary = json_of(&t, &["graph", "successors", "gd-t1", "--summary"])?;
    assert_eq!(summary["total"], 0);
    assert!(summary.get("ids").is_none());
    let analysis = json_of(&t, &["graph", "analyze"])?;
    assert_eq!(analysis["analysis"]["node_count"], 12);
    assert_eq!(analysis["analysis"]["max_hierarchy_depth"], 2);
    assert_eq!(analysis["analysis"]["edges_by_kind"]["related"], 1);
    Ok(())
}

#[test]
fn deps_tree_golden_and_formats() -> TestResult {
    let t = TestTracker::sample()?;
    let run = t.pm(&["deps", "gd-t3"])?;
    assert_eq!((run.stderr.as_str(), run.code), ("", 0));
    assert_eq!(
        run.stdout,
        "id: \"gd-t3\"\nformat: \"tree\"\nnode_count: 2\nedge_count: 1\n\
         edge_basis: \"declared_dependencies\"\nmissing_count: 0\ntree:\n  id: \"gd-t3\"\n  \
         title: \"Write the CSV summary writer\"\n  type: \"Task\"\n  status: \"open\"\n  \
         missing: false\n  cycle: false\n  dependencies[1]{id,title,type,status,via,missing,cycle}:\n    \
         gd-t1,Calibrate the moisture probe against dry and saturated soil,Task,closed,related,false,false\n\
         truncated: false\nlimits:\n  max_depth: 10\n  node_limit: 200\n  edge_limit: 400\n\
         omitted_node_count: 0\nomitted_edge_count: 0\nprojection:\n  mode: \"tree\"\n  \
         declared_field_groups[1]{name,restore_with}:\n    dependency_tree,\"--full\"\n  \
         included_field_groups:\n    - \"dependency_tree\"\nomission_receipt:\n  \
         has_omissions: false\n  omitted_field_group_count: 0\n  omitted_field_groups: []\n"
    );
    let graph = json_of(&t, &["deps", "gd-t3", "--format", "graph"])?;
    assert_eq!(graph["graph"]["edges"][0]["via"], "related");
    let back = json_of(
        &t,
        &["deps", "gd-t1", "--format", "context", "--direction", "in"],
    )?;
    let ids: Vec<&str> = back["context"]["nodes"]
        .as_array()
        .map(|n| n.iter().filter_map(|n| n["id"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(ids, ["gd-t1", "gd-t3"]);
    let summary = json_of(&t, &["deps", "gd-t3", "--summary"])?;
    assert!(summary.get("tree").is_none());
    assert_eq!(
        summary["omission_receipt"]["omitted_field_groups"][0]["name"],
        "dependency_tree"
    );
    Ok(())
}

/// A tracker where a blocks b, b blocks c and c blocks a, and d's parent is d2 whose parent is d.
fn cyclic() -> Result<TestTracker, Box<dyn Error>> {
    let t = TestTracker::new()?;
    assert_eq!(t.pm(&["init", "--defaults"])?.code, 0);
    for id in ["pm-a", "pm-b", "pm-c"] {
        let run = t.pm(&["create", "task", id, "--id", id])?;
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    for (from, to) in [("pm-a", "pm-b"), ("pm-b", "pm-c"), ("pm-c", "pm-a")] {
        let spec = format!("id={to},kind=blocks");
        let run = t.pm(&["deps", from, "--add", &spec])?;
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    Ok(t)
}

#[test]
fn cycles_are_reported_and_never_followed() -> TestResult {
    let t = cyclic()?;
    let succ = json_of(&t, &["graph", "successors", "pm-a"])?;
    assert_eq!(strings(&succ["ids"]), ["pm-b", "pm-c"]);
    assert_eq!(succ["cycle_count"], 1);
    assert_eq!(
        succ["cycles"][0],
        serde_json::json!(["pm-a", "pm-b", "pm-c"])
    );
    let audit = json_of(&t, &["graph", "audit"])?;
    assert_eq!(audit["findings"][0]["code"], "dependency_cycle");
    assert_eq!(audit["findings"][0]["id"], "pm-a");
    let paths = json_of(&t, &["graph", "paths", "pm-a", "pm-c"])?;
    assert_eq!(strings(&paths["paths"][0]["ids"]), ["pm-a", "pm-b", "pm-c"]);
    assert_eq!(paths["paths"].as_array().map(Vec::len), Some(1));
    let tree = json_of(&t, &["deps", "pm-a"])?;
    // pm-a's own row names pm-b (a blocks b); b names c; c names a: marked, not expanded.
    let c = &tree["tree"]["dependencies"][0]["dependencies"][0];
    assert_eq!(c["id"], "pm-c");
    assert_eq!(c["dependencies"][0]["id"], "pm-a");
    assert_eq!(c["dependencies"][0]["cycle"], true);
    assert!(c["dependencies"][0].get("dependencies").is_none());
    let graph = json_of(&t, &["deps", "pm-a", "--format", "graph"])?;
    let closing = graph["graph"]["edges"]
        .as_array()
        .and_then(|e| e.iter().find(|e| e["from"] == "pm-c"))
        .ok_or("no edge from pm-c")?;
    assert_eq!(closing["cycle"], true);
    Ok(())
}

#[test]
fn refusals() -> TestResult {
    let t = TestTracker::sample()?;
    refused(
        &t.pm(&["graph", "descendants", "gd-nope"])?,
        3,
        "item_not_found",
    );
    refused(
        &t.pm(&["graph", "paths", "gd-e1", "gd-nope"])?,
        3,
        "item_not_found",
    );
    refused(&t.pm(&["deps", "gd-nope"])?, 3, "item_not_found");
    let unsupported = t.pm(&["graph", "communities", "--json"])?;
    assert_eq!(unsupported.code, 2);
    let doc: Value = serde_json::from_str(&unsupported.stdout)?;
    assert_eq!(doc["error"]["code"], "unsupported_subcommand");
    assert!(
        doc["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("ancestors, descendants")),
        "{doc}"
    );
    for args in [
        &["graph", "descendants", "gd-e1", "--limit", "0"][..],
        &["graph", "descendants", "gd-e1", "--max-depth", "x"],
        &["graph", "descendants", "gd-e1", "--kind", "nope"],
        &["graph", "descendants"],
        &["graph", "analyze", "gd-e1"],
        &["graph", "paths", "gd-e1"],
        &["graph", "impact", "gd-e1", "--full", "--limit", "3"],
        &["graph", "ancestors", "gd-t3", "--direction", "in"],
        &["graph", "bogus"],
        &["deps", "gd-t3", "--format", "bogus"],
        &["deps", "gd-t3", "--max-depth", "-1"],
        &["deps", "gd-t3", "--kind", "nope", "--format", "context"],
        &["deps", "gd-t3", "--cursor", "gd-t1"],
    ] {
        let run = t.pm(args)?;
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}");
    }
    for args in [
        &["graph", "descendants", "gd-e1", "--after", "gd-nope"][..],
        &["graph", "descendants", "gd-e1", "--after", " "],
        &["graph", "audit", "--after", "garbage"],
        &["deps", "gd-t3", "--format", "context", "--cursor", "gd-zz"],
    ] {
        refused(&t.pm(args)?, 2, "invalid_query_cursor");
    }
    Ok(())
}

#[test]
fn bounded_on_a_generated_tracker() -> TestResult {
    let t = TestTracker::new()?;
    let made = t.pm(&["bench", "generate", "--items", "2000", "--out", "."])?;
    assert_eq!(made.code, 0, "{}", made.stderr);
    let page = json_of(
        &t,
        &["graph", "descendants", "pm-s0000000", "--limit", "10"],
    )?;
    assert_eq!(page["ids"].as_array().map(Vec::len), Some(10));
    assert_eq!(page["truncated"], true);
    let cursor = page["next_cursor"].as_str().ok_or("cursor")?.to_owned();
    // The walk stops one row past the page instead of visiting the whole tracker.
    assert!(
        page["cost"]["visited_nodes"]
            .as_u64()
            .is_some_and(|n| n <= 12),
        "{page}"
    );
    let next = json_of(
        &t,
        &[
            "graph",
            "descendants",
            "pm-s0000000",
            "--limit",
            "10",
            "--after",
            &cursor,
        ],
    )?;
    assert_eq!(next["ids"].as_array().map(Vec::len), Some(10));
    assert_ne!(next["ids"][0], page["ids"][0]);
    let impact = json_of(&t, &["graph", "impact", "pm-s0000000"])?;
    assert_eq!(impact["affected"].as_array().map(Vec::len), Some(10));
    let audit = json_of(&t, &["graph", "audit"])?;
    assert!(audit["findings"].as_array().is_some_and(|f| f.len() <= 50));
    let context = [
        "deps",
        "pm-s0000000",
        "--format",
        "context",
        "--direction",
        "in",
    ];
    let ctx = json_of(&t, &[&context[..], &["--node-limit", "4"]].concat())?;
    assert_eq!(ctx["context"]["nodes"].as_array().map(Vec::len), Some(4));
    assert_eq!(ctx["context"]["has_more"], true);
    assert!(strings(&ctx["truncation_reasons"]).contains(&"node_limit".to_owned()));
    let cursor = ctx["context"]["next_cursor"]
        .as_str()
        .ok_or("cursor")?
        .to_owned();
    let more = json_of(
        &t,
        &[&context[..], &["--node-limit", "4", "--cursor", &cursor]].concat(),
    )?;
    assert_ne!(
        more["context"]["nodes"][0]["id"],
        ctx["context"]["nodes"][0]["id"]
    );
    for args in [
        &["graph", "analyze"][..],
        &["graph", "audit"],
        &["deps", "pm-s0000001", "--format", "graph"],
        &["graph", "descendants", "pm-s0000000", "--full"],
    ] {
        let run = t.pm(args)?;
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        // The default read budget (4,000 tokens ≈ 16,000 bytes) holds every answer.
        assert!(
            run.stdout.len() <= 16_000,
            "{args:?}: {} bytes",
            run.stdout.len()
        );
    }
    Ok(())
}
