//! The scale report: machine facts read from `/proc`, and the markdown table rendered from the
//! JSON report (one row per operation, compare columns when a second binary ran).

use serde_json::{Value, json};

/// Returns what `/proc` says about this machine (CPU model, cores, kernel, load average).
pub fn machine() -> Value {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|r| r.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_default();
    let mem_kib: u64 = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|r| r.split_whitespace().next().and_then(|n| n.parse().ok()))
        .unwrap_or(0);
    json!({
        "cpu": cpu,
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "memory_gib": (mem_kib as f64 / 1_048_576.0).round(),
        "kernel": read("/proc/sys/kernel/osrelease").trim(),
        "loadavg_at_start": read("/proc/loadavg").split_whitespace().take(3).collect::<Vec<_>>().join(" "),
    })
}

fn cell(result: &Value, key: &str) -> String {
    match &result[key] {
        Value::Null => "—".into(),
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

fn rss_mib(result: &Value) -> String {
    result["peak_rss_kib"]
        .as_f64()
        .map_or("—".into(), |k| format!("{:.1}", k / 1024.0))
}

/// Renders the report as a markdown table (plus a header line naming the fixture).
pub fn markdown(report: &Value) -> String {
    let fixture = &report["fixture"];
    let compare = report["binaries"].as_array().is_some_and(|b| b.len() > 1);
    let mut out = format!(
        "Fixture: {} items, shape {}, seed {} ({} visible), generated in {} ms; {} runs per command after 1 warm-up; load average at start {}.\n\n",
        fixture["items"],
        fixture["shape"].as_str().unwrap_or(""),
        fixture["seed"],
        fixture["visible_items"],
        fixture["generation_ms"],
        report["iterations"],
        report["machine"]["loadavg_at_start"].as_str().unwrap_or("")
    );
    out.push_str("| command | p50 ms | p95 ms | min ms | max ms | warm-up ms | peak RSS MiB | out bytes | tokens |");
    if compare {
        out.push_str(
            " compare p50 ms | compare RSS MiB | compare tokens | p50 ratio (compare / pm) |",
        );
    }
    out.push('\n');
    out.push_str("|---|---|---|---|---|---|---|---|---|");
    if compare {
        out.push_str("---|---|---|---|");
    }
    out.push('\n');
    for op in report["commands"].as_array().into_iter().flatten() {
        let name = op["name"].as_str().unwrap_or("");
        let pm = &op["results"]["pm"];
        let row = match pm["status"].as_str() {
            Some("ok") => format!(
                "| `{name}` | {} | {} | {} | {} | {} | {} | {} | {} |",
                cell(pm, "p50_ms"),
                cell(pm, "p95_ms"),
                cell(pm, "min_ms"),
                cell(pm, "max_ms"),
                cell(pm, "warmup_ms"),
                rss_mib(pm),
                cell(pm, "output_bytes"),
                cell(pm, "estimated_tokens")
            ),
            Some("failed") => format!(
                "| `{name}` | failed (exit {}): {} | | | | | | | |",
                cell(pm, "exit_code"),
                pm["stderr"].as_str().unwrap_or("").replace('|', "/")
            ),
            _ => format!("| `{name}` | not available | | | | | | | |"),
        };
        out.push_str(&row);
        if compare {
            let other = &op["results"]["compare"];
            let text = match other["status"].as_str() {
                Some("ok") => format!(
                    " {} | {} | {} | {} |",
                    cell(other, "p50_ms"),
                    rss_mib(other),
                    cell(other, "estimated_tokens"),
                    op["p50_ratio"]
                        .as_f64()
                        .map_or("—".into(), |r| format!("{r:.2}"))
                ),
                Some("failed") => " failed | | | |".into(),
                _ => " not available | | | |".into(),
            };
            out.push_str(&text);
        }
        out.push('\n');
    }
    out
}
