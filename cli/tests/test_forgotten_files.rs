//! Fails when a file in `tests/` is not declared in `runner.rs` (it would silently never run).

#[test]
fn every_test_file_is_declared() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let runner = std::fs::read_to_string(dir.join("runner.rs"))?;
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|e| e == "rs") && stem != "runner" {
            assert!(
                runner.contains(&format!("mod {stem};")),
                "tests/{stem}.rs is not declared in tests/runner.rs"
            );
        }
    }
    Ok(())
}
