//! Large reads rendered once: the whole real tracker listed in full (about 21 MB of JSON) prints
//! the same bytes whether no budget binds (streamed, never measured) or a budget far above the
//! result binds (measured, its receipt settled on root entries measured once), in both
//! encodings; the receipt's estimate is the printed size.

use std::error::Error;

use serde_json::Value;

use crate::common::{Run, TestTracker};
use crate::test_get::READS_ENV;

type TestResult = Result<(), Box<dyn Error>>;

fn read(t: &TestTracker, args: &[&str]) -> Result<Run, Box<dyn Error>> {
    let pm_path = t.root().display().to_string();
    let mut env = READS_ENV.to_vec();
    env.push(("PM_PATH", &pm_path));
    let out = t.pm_in(&t.workspace(), args, &env)?;
    assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{args:?}");
    Ok(out)
}

#[test]
fn a_binding_budget_above_the_result_prints_the_unbounded_bytes_plus_its_receipt() -> TestResult {
    let t = TestTracker::from_tree(&pm_testkit::shared_corpus()?)?;
    let base = ["list", "--all", "--no-truncate", "--output-budget"];
    for format in ["--json", "--output-format=toon"] {
        let unbounded = read(&t, &[&base[..], &["unbounded", format]].concat())?;
        assert!(unbounded.stdout.len() > 1_000_000, "the corpus is large");
        // A budget far above the result, with an include selector so the receipts attach.
        let measured = read(
            &t,
            &[
                &base[..],
                &["100000000", "--output-include", "full", format],
            ]
            .concat(),
        )?;
        let printed = measured.stdout.len().div_ceil(4) as u64;
        let (without, estimate) = match format {
            "--json" => split_json_receipt(&measured.stdout)?,
            _ => split_toon_receipt(&measured.stdout)?,
        };
        assert!(
            without == unbounded.stdout,
            "{format}: only the receipt differs"
        );
        assert_eq!(
            estimate, printed,
            "{format}: the receipt names the printed size"
        );
    }
    Ok(())
}

/// Legacy items whose metadata keys a row printed entry by entry must handle: an array-index
/// key (JavaScript prints it first), a key with escapes, nested empties and heavy collections.
const ODD_ITEMS: [(&str, &str); 2] = [
    (
        "zz-odd1",
        r#"{"id": "zz-odd1", "title": "Odd keys", "description": "", "type": "Task", "status": "open",
  "priority": 1, "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z",
  "tags": [], "7": "an index key", "we\"ird": {"a": [], "b": {}, "c": [1.5, -0, 1e21]},
  "comments": [{"created_at": "2026-01-02T00:00:00.000Z", "author": "ann", "text": "a,b:{c}[d]"}]}

A body with "quotes" and \ slashes.
"#,
    ),
    (
        "zz-odd2",
        r#"{"id": "zz-odd2", "title": "Plain with collections", "description": "d", "type": "Task",
  "status": "open",
  "priority": 2, "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z",
  "tags": ["b", "a"], "extra": {"a": [], "b": {}, "c": [1.5, -0, 1e21, "x,y:z"]}, "notes": [{"created_at": "2026-01-02T00:00:00.000Z", "author": "bo", "text": "n"}],
  "files": [{"path": "src/a.rs", "scope": "project"}]}
"#,
    ),
];

#[test]
fn rows_printed_entry_by_entry_equal_rows_built_as_values() -> TestResult {
    let t = TestTracker::sample()?;
    let tasks = t.root().join("tasks");
    for (id, text) in ODD_ITEMS {
        std::fs::File::create(tasks.join(format!("{id}.md")))
            .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))?;
    }
    for body in [&[][..], &["--include-body"][..]] {
        let base = [&["list", "--all", "--no-truncate", "--json"][..], body].concat();
        let unbounded = read(&t, &[&base[..], &["--output-budget", "unbounded"]].concat())?;
        let doc: Value = serde_json::from_str(&unbounded.stdout)?;
        let ids: Vec<&str> = (doc["items"].as_array().ok_or("items")?.iter())
            .filter_map(|row| row["id"].as_str())
            .collect();
        assert!(
            ids.contains(&"zz-odd1") && ids.contains(&"zz-odd2"),
            "{ids:?}"
        );
        let extra = ["--output-budget", "100000000", "--output-include", "full"];
        let measured = read(&t, &[&base[..], &extra[..]].concat())?;
        let (without, _) = split_json_receipt(&measured.stdout)?;
        assert!(
            without == unbounded.stdout,
            "{body:?}: {}",
            unbounded.stdout
        );
    }
    Ok(())
}

/// Splits the final `"read_output": {…}` entry off a pretty JSON document; returns the
/// document without it and the receipt's estimate.
fn split_json_receipt(text: &str) -> Result<(String, u64), Box<dyn Error>> {
    let at = text.rfind(",\n  \"read_output\": {").ok_or("no receipt")?;
    let end = text.rfind("\n}\n").ok_or("no end")?;
    let receipt: Value = serde_json::from_str(&format!("{{{}}}", &text[at + 1..end]))?;
    assert_eq!(receipt["read_output"]["within_budget"], true);
    let estimate = receipt["read_output"]["estimated_tokens"]
        .as_u64()
        .ok_or("no estimate")?;
    Ok((format!("{}{}", &text[..at], &text[end..]), estimate))
}

/// Splits the `read_output:` block (its key line and the indented lines after it) off a TOON
/// document; returns the document without it and the receipt's estimate.
fn split_toon_receipt(text: &str) -> Result<(String, u64), Box<dyn Error>> {
    let at = text.rfind("\nread_output:\n").ok_or("no receipt")? + 1;
    let mut len = 0;
    for (i, line) in text[at..].split_inclusive('\n').enumerate() {
        if i > 0 && !line.starts_with(' ') {
            break;
        }
        len += line.len();
    }
    let receipt = &text[at..at + len];
    assert!(receipt.contains("\n  within_budget: true\n"), "{receipt}");
    let estimate = receipt
        .lines()
        .find_map(|l| l.strip_prefix("  estimated_tokens: "))
        .ok_or("no estimate")?
        .parse()?;
    Ok((format!("{}{}", &text[..at], &text[at + len..]), estimate))
}
