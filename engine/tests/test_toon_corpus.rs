//! Conformance of the TOON codec and output renderer against real pm data: every item file of
//! the corpus and of pm's canonical golden must round-trip byte for byte through
//! `decode`/`encode`, and `render_output` must reproduce pm's TOON stdout from its JSON stdout.

use pm_engine::toon::{decode, encode, render_output};
use std::error::Error;
use std::io::Read;
use std::path::{Path, PathBuf};

type TestResult = Result<(), Box<dyn Error>>;

/// Collects every `.toon` file below `dir`, sorted.
pub fn toon_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "toon") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Asserts `encode(decode(file)) + "\n" == file` for every item file; returns the count.
fn assert_round_trips(root: &Path) -> Result<usize, Box<dyn Error>> {
    let files = toon_files(&root.join(".agents/pm"))?;
    for path in &files {
        let text = std::fs::read_to_string(path)?;
        let body = text
            .strip_suffix('\n')
            .ok_or_else(|| format!("{} does not end with a newline", path.display()))?;
        let value = decode(body).map_err(|e| format!("{}: {e}", path.display()))?;
        let again = encode(&value);
        if again != body {
            let line = again
                .lines()
                .zip(body.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            panic!(
                "{} does not re-encode to the same bytes (first difference on line {})",
                path.display(),
                line + 1
            );
        }
    }
    Ok(files.len())
}

#[test]
fn corpus_items_round_trip_byte_for_byte() -> TestResult {
    let corpus = pm_testkit::extract_corpus()?;
    let count = assert_round_trips(corpus.path())?;
    eprintln!("corpus: {count} original item files round-trip");
    assert_eq!(count, 2536);

    // The legacy `null` dependency cells decode as real nulls.
    let text = std::fs::read_to_string(corpus.path().join(".agents/pm/chores/pm-0g2p.toon"))?;
    let value = decode(text.trim_end_matches('\n'))?;
    let deps = value["dependencies"]
        .as_array()
        .ok_or("dependencies is not an array")?;
    assert_eq!(deps[0]["author"], serde_json::Value::Null);
    assert_eq!(deps[0]["source_kind"], serde_json::Value::Null);
    assert_eq!(deps[0]["created_at"], "2026-07-26T17:00:05.949Z");
    Ok(())
}

#[test]
fn canonical_golden_items_round_trip_byte_for_byte() -> TestResult {
    let golden = pm_testkit::extract_canonical_golden()?;
    let count = assert_round_trips(golden.path())?;
    eprintln!("canonical golden: {count} item files round-trip");
    assert_eq!(count, 2536);
    Ok(())
}

/// Pairs whose JSON and TOON stdout carry different data (pm computed the two runs
/// separately: paths, budgets and truncation differ), so they cannot be compared.
const DIFFERENT_DATA: &[&str] = &[
    "reads/fx-100/validate",
    "reads/self-tracker/list",
    "reads/self-tracker/validate",
    "transcript/00-init",
];

/// One golden pair: a label, the `--json` stdout and the TOON stdout.
struct Pair {
    label: String,
    json: String,
    toon: String,
}

fn read_maybe_gz(path: &Path) -> std::io::Result<String> {
    if path.extension().is_some_and(|e| e == "gz") {
        let mut text = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(path)?).read_to_string(&mut text)?;
        Ok(text)
    } else {
        std::fs::read_to_string(path)
    }
}

/// Collects `<name>.json` / `<name>.toon` pairs (also `.gz` and `.warm` variants) in `dir`.
fn pairs_in(dir: &Path, json_dir: &Path, prefix: &str, out: &mut Vec<Pair>) -> std::io::Result<()> {
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().and_then(|e| e.file_name().into_string().ok()))
        .collect();
    names.sort();
    for name in names {
        let Some((stem, suffix)) = [".toon", ".toon.gz", ".toon.warm"]
            .iter()
            .find_map(|s| name.strip_suffix(s).map(|stem| (stem, s)))
        else {
            continue;
        };
        let json_name = format!("{stem}{}", suffix.replacen(".toon", ".json", 1));
        let json_path = json_dir.join(&json_name);
        if !json_path.exists() {
            continue;
        }
        let label = if suffix.ends_with("warm") {
            format!("{prefix}/{stem}.warm")
        } else {
            format!("{prefix}/{stem}")
        };
        out.push(Pair {
            label,
            json: read_maybe_gz(&json_path)?,
            toon: read_maybe_gz(&dir.join(&name))?,
        });
    }
    Ok(())
}

#[test]
fn render_output_reproduces_pm_stdout() -> TestResult {
    let reads = pm_testkit::shared_file("golden/reads");
    let transcript = pm_testkit::extract_tar_gz(&pm_testkit::shared_file(
        "golden/mutation-transcript.tar.gz",
    ))?;
    let stdout = transcript.path().join("mutation-transcript/stdout");
    let mut pairs = Vec::new();
    pairs_in(
        &reads.join("fx-100"),
        &reads.join("fx-100"),
        "reads/fx-100",
        &mut pairs,
    )?;
    pairs_in(
        &reads.join("self-tracker"),
        &reads.join("self-tracker"),
        "reads/self-tracker",
        &mut pairs,
    )?;
    pairs_in(
        &stdout.join("toon"),
        &stdout.join("json"),
        "transcript",
        &mut pairs,
    )?;

    let (mut compared, mut skipped_empty) = (0, 0);
    for pair in &pairs {
        if pair.json.is_empty() {
            // Commands that failed print nothing on stdout in either format.
            assert!(
                pair.toon.is_empty(),
                "{}: TOON stdout without JSON stdout",
                pair.label
            );
            skipped_empty += 1;
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(&pair.json)?;
        let rendered = render_output(&value) + "\n";
        if DIFFERENT_DATA.contains(&pair.label.as_str()) {
            assert!(
                rendered != pair.toon,
                "{} now matches; remove it from DIFFERENT_DATA",
                pair.label
            );
            continue;
        }
        assert!(
            rendered == pair.toon,
            "{}: rendered TOON differs from pm's stdout",
            pair.label
        );
        compared += 1;
    }
    eprintln!(
        "render: {compared} JSON/TOON stdout pairs identical, {} with different data, {skipped_empty} empty",
        DIFFERENT_DATA.len()
    );
    assert!(
        compared >= 50,
        "expected at least 50 comparable pairs, found {compared}"
    );
    Ok(())
}
