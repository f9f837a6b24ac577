//! `--help`, `help` and `--version`: stdout, exit 0, nothing on stderr.

use crate::common::TestTracker;

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[test]
fn version_prints_crate_version() -> TestResult {
    let t = TestTracker::new()?;
    for flag in ["--version", "-V"] {
        let run = t.pm(&[flag])?;
        assert_eq!(run.stdout, format!("pm {}\n", env!("CARGO_PKG_VERSION")));
        assert_eq!(run.stderr, "");
        assert_eq!(run.code, 0);
    }
    Ok(())
}

#[test]
fn help_goes_to_stdout() -> TestResult {
    let t = TestTracker::new()?;
    for args in [&["--help"][..], &["-h"], &["help"], &["--json", "--help"]] {
        let run = t.pm(args)?;
        assert!(
            run.stdout.contains("Usage: pm [OPTIONS] <COMMAND>"),
            "{args:?}: {}",
            run.stdout
        );
        assert!(run.stdout.contains("--pm-path <DIR>"));
        assert!(run.stdout.contains("where"));
        assert!(
            !run.stdout.contains("--path"),
            "the legacy alias stays hidden"
        );
        assert_eq!(run.stderr, "");
        assert_eq!(run.code, 0);
    }
    Ok(())
}

#[test]
fn subcommand_help_lists_global_flags() -> TestResult {
    let t = TestTracker::new()?;
    for args in [&["where", "--help"][..], &["help", "where"]] {
        let run = t.pm(args)?;
        assert!(
            run.stdout
                .starts_with("Print the tracker this invocation resolves to"),
            "{}",
            run.stdout
        );
        assert!(run.stdout.contains("Usage: pm where [OPTIONS]"));
        assert!(run.stdout.contains("--output-format <FORMAT>"));
        assert_eq!(run.stderr, "");
        assert_eq!(run.code, 0);
    }
    Ok(())
}
