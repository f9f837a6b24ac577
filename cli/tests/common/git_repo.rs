//! Real `git` repositories for merge tests: a temp dir holding one or more worktrees (the main
//! repository and its clones) and an empty `HOME`; every git and pm command runs with a pinned,
//! hermetic environment (git's too, since git starts pm's merge drivers), one clock minute per
//! command, shared by every repository of the temp dir.

#![allow(clippy::disallowed_methods)] // git needs PATH: the one variable the harness passes through

use std::cell::Cell;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::rc::Rc;

use pm_engine::clock::format_iso_ms;

/// The `pm` binary under test.
pub const PM: &str = env!("CARGO_BIN_EXE_pm");
/// `PM_CLOCK` of the first command (2026-09-02T00:00:00.000Z); each later one is a minute later.
const CLOCK_START_MS: i64 = 1_788_307_200_000;
/// `PM_AUTHOR` and git identity of a repository unless a clone names its own.
const AUTHOR: &str = "test-author";

/// What one command produced.
#[derive(Debug)]
pub struct Out {
    /// Everything written to stdout.
    pub stdout: String,
    /// Everything written to stderr.
    pub stderr: String,
    /// The exit code (`-1` when killed by a signal).
    pub code: i32,
}

/// A git worktree in a temp dir whose root holds the tracker.
pub struct GitRepo {
    _tmp: Rc<tempfile::TempDir>,
    /// The worktree root (the working directory of every command).
    pub root: PathBuf,
    home: PathBuf,
    step: Rc<Cell<u32>>,
    author: String,
}

/// Sets the hermetic environment of one command: only `PATH` passes through; `HOME` and pm's
/// global dir are `home`; pm's clock, seed and author and git's dates and identity are pinned.
pub fn hermetic(cmd: &mut Command, home: &Path, clock: &str, author: &str) {
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("PM_GLOBAL_PATH", home)
        .env("PM_CLOCK", clock)
        .env("PM_CLOCK_TICK_MS", "0")
        .env("PM_SEED", "merge-fence-tests")
        .env("PM_AUTHOR", author)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", author)
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", author)
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .env("GIT_AUTHOR_DATE", clock)
        .env("GIT_COMMITTER_DATE", clock);
}

/// Runs `program args…` in `dir` and collects its output.
fn collect(mut cmd: Command) -> Result<Out, Box<dyn Error>> {
    let output = cmd.output()?;
    Ok(Out {
        stdout: String::from_utf8(output.stdout)?,
        stderr: String::from_utf8(output.stderr)?,
        code: output.status.code().unwrap_or(-1),
    })
}

/// Runs `git args…` in `dir` (e.g. a `TestTracker` workspace) with the hermetic environment,
/// `HOME` being `home` and the clock pinned at `clock`.
pub fn git_at(dir: &Path, home: &Path, clock: &str, args: &[&str]) -> Result<Out, Box<dyn Error>> {
    let mut cmd = Command::new("git");
    hermetic(&mut cmd, home, clock, AUTHOR);
    cmd.current_dir(dir).args(args);
    collect(cmd)
}

/// Fails with the command's output unless it exited 0.
pub fn ok(out: &Out) -> Result<(), Box<dyn Error>> {
    if out.code == 0 {
        Ok(())
    } else {
        Err(format!("exit {}\n{}\n{}", out.code, out.stdout, out.stderr).into())
    }
}

impl GitRepo {
    /// A fresh `git init` with an initialized tracker (`pm init --defaults`).
    pub fn new() -> Result<GitRepo, Box<dyn Error>> {
        let repo = GitRepo::bare_git()?;
        ok(&repo.pm(&["init", "--defaults"])?)?;
        Ok(repo)
    }

    /// A fresh `git init` (branch `main`) without a tracker.
    pub fn bare_git() -> Result<GitRepo, Box<dyn Error>> {
        let tmp = tempfile::tempdir()?;
        let base = tmp.path().canonicalize()?;
        let (root, home) = (base.join("work"), base.join("home"));
        std::fs::create_dir_all(&root)?;
        std::fs::create_dir_all(&home)?;
        let repo = GitRepo {
            _tmp: Rc::new(tmp),
            root,
            home,
            step: Rc::new(Cell::new(0)),
            author: AUTHOR.into(),
        };
        ok(&repo.git(&["init", "-q", "-b", "main"])?)?;
        Ok(repo)
    }

    /// `git clone`s this repository into a sibling directory `name` of the same temp dir; the
    /// clone shares the clock and `HOME` and runs every command as `author`.
    pub fn clone_as(&self, name: &str, author: &str) -> Result<GitRepo, Box<dyn Error>> {
        let root = self.root.with_file_name(name);
        let (src, dst) = (self.root.display().to_string(), root.display().to_string());
        ok(&self.git(&["clone", "-q", &src, &dst])?)?;
        Ok(GitRepo {
            _tmp: Rc::clone(&self._tmp),
            root,
            home: self.home.clone(),
            step: Rc::clone(&self.step),
            author: author.into(),
        })
    }

    /// Returns `program args…` in `dir` with the hermetic environment at the next clock step.
    pub fn command(&self, program: &str, dir: &Path, args: &[&str]) -> Command {
        let step = self.step.get();
        self.step.set(step + 1);
        let clock = format_iso_ms(CLOCK_START_MS + i64::from(step) * 60_000);
        let mut cmd = Command::new(program);
        hermetic(&mut cmd, &self.home, &clock, &self.author);
        cmd.current_dir(dir).args(args);
        cmd
    }

    /// Runs `program args…` in `dir`.
    pub fn run(&self, program: &str, dir: &Path, args: &[&str]) -> Result<Out, Box<dyn Error>> {
        collect(self.command(program, dir, args))
    }

    /// Runs `pm args…` at the root.
    pub fn pm(&self, args: &[&str]) -> Result<Out, Box<dyn Error>> {
        self.run(PM, &self.root, args)
    }

    /// Runs `git args…` at the root.
    pub fn git(&self, args: &[&str]) -> Result<Out, Box<dyn Error>> {
        self.run("git", &self.root, args)
    }

    /// Fails with the command's output unless it exited 0.
    pub fn ok(&self, out: &Out) -> Result<(), Box<dyn Error>> {
        ok(out)
    }

    /// Installs the fence (`pm merge install`).
    pub fn install(&self) -> Result<(), Box<dyn Error>> {
        ok(&self.pm(&["merge", "install"])?)
    }

    /// `git add -A` and commits.
    pub fn commit(&self, message: &str) -> Result<(), Box<dyn Error>> {
        ok(&self.git(&["add", "-A"])?)?;
        ok(&self.git(&["commit", "-q", "-m", message])?)
    }

    /// Returns the text of the file `rel` of the worktree.
    pub fn read(&self, rel: &str) -> Result<String, Box<dyn Error>> {
        Ok(std::fs::read_to_string(self.root.join(rel))?)
    }

    /// Returns `pm get <id> --json`'s item.
    pub fn item(&self, id: &str) -> Result<serde_json::Value, Box<dyn Error>> {
        let out = self.pm(&["get", id, "--json"])?;
        ok(&out)?;
        let doc: serde_json::Value = serde_json::from_str(&out.stdout)?;
        Ok(doc["item"].clone())
    }

    /// Returns the paths `git status` reports as unmerged (both sides modified or added).
    pub fn unmerged(&self) -> Result<Vec<String>, Box<dyn Error>> {
        let out = self.git(&["status", "--porcelain"])?;
        Ok(out
            .stdout
            .lines()
            .filter(|l| ["UU ", "AA "].iter().any(|p| l.starts_with(p)))
            .map(|l| l[3..].to_string())
            .collect())
    }
}
