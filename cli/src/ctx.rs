//! The invocation context: everything a command may know about the process (flags, environment,
//! clock, author, output format). The only module that reads environment variables.
#![allow(clippy::disallowed_methods)] // the one place allowed to read the process environment

use std::ffi::OsString;
use std::io;
use std::path::PathBuf;
use std::sync::OnceLock;

use pm_engine::clock::Clock;
use pm_engine::guard::SecretGuardMode;
use pm_engine::settings::{
    LOCK_WAIT_MS_MAX, OutputFormat, SettingIssue, Settings, SettingsEnv, parse_lock_wait_ms,
};
use pm_engine::timestamp::parse_timestamp;
use pm_engine::tracker::Tracker;
use pm_engine::{Error, IoResultExt, Result};
use pm_index::Freshness;

use crate::args::GlobalArgs;
use crate::read_output::ReadOutputRequest;
use crate::render::Format;

/// The environment variables pm reads, captured once at start-up.
#[derive(Debug)]
pub struct Environment {
    /// The working directory (or why it could not be read).
    pub cwd: io::Result<PathBuf>,
    /// `PM_PATH`: tracker storage directory.
    pub pm_path: Option<OsString>,
    /// `PM_CLOCK`: pinned ISO instant (honoured only together with `PM_SEED`).
    pub pm_clock: Option<String>,
    /// `PM_SEED`: seed of generated ids; also enables `PM_CLOCK`.
    pub pm_seed: Option<String>,
    /// `PM_CLOCK_TICK_MS`: advance of the pinned clock per read (default 1).
    pub pm_clock_tick_ms: Option<String>,
    /// `PM_AUTHOR`: mutation author.
    pub pm_author: Option<String>,
    /// `PM_LOCK_WAIT_MS`: how long to wait for a held lock.
    pub pm_lock_wait_ms: Option<String>,
    /// `PM_NO_INDEX`: `1` forces the scan path.
    pub pm_no_index: Option<String>,
    /// `PM_INDEX_FRESHNESS`: `full` (default) or `directories`.
    pub pm_index_freshness: Option<String>,
    /// `PM_GLOBAL_PATH`: the global pm profile directory.
    pub pm_global_path: Option<OsString>,
    /// `HOME`.
    pub home: Option<OsString>,
    /// `NO_COLOR`.
    pub no_color: Option<OsString>,
    /// `PM_FAULT_POINT`: test-only; stop a mutation at this protocol point (`after_lock`,
    /// `after_item_write`, `after_history_append`) so a crash test can kill it there. Read
    /// only by builds with the `fault-points` feature (the test builds); a release binary
    /// ignores the variable.
    pub pm_fault_point: Option<String>,
}

impl Environment {
    /// Reads the process environment and working directory.
    pub fn capture() -> Environment {
        let text = |name: &str| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned());
        Environment {
            cwd: std::env::current_dir(),
            pm_path: std::env::var_os("PM_PATH"),
            pm_clock: text("PM_CLOCK"),
            pm_seed: text("PM_SEED"),
            pm_clock_tick_ms: text("PM_CLOCK_TICK_MS"),
            pm_author: text("PM_AUTHOR"),
            pm_lock_wait_ms: text("PM_LOCK_WAIT_MS"),
            pm_no_index: text("PM_NO_INDEX"),
            pm_index_freshness: text("PM_INDEX_FRESHNESS"),
            pm_global_path: std::env::var_os("PM_GLOBAL_PATH"),
            home: std::env::var_os("HOME"),
            no_color: std::env::var_os("NO_COLOR"),
            pm_fault_point: if cfg!(feature = "fault-points") {
                text("PM_FAULT_POINT")
            } else {
                None
            },
        }
    }

    /// Returns an environment with only a working directory set (for tests and embedding).
    pub fn with_cwd(cwd: impl Into<PathBuf>) -> Environment {
        Environment {
            cwd: Ok(cwd.into()),
            pm_path: None,
            pm_clock: None,
            pm_seed: None,
            pm_clock_tick_ms: None,
            pm_author: None,
            pm_lock_wait_ms: None,
            pm_no_index: None,
            pm_index_freshness: None,
            pm_global_path: None,
            home: None,
            no_color: None,
            pm_fault_point: None,
        }
    }
}

/// What a command may know about its invocation.
#[derive(Debug)]
pub struct Ctx {
    /// The working directory, absolute.
    pub cwd: PathBuf,
    /// The output encoding.
    pub format: Format,
    /// `--json` was given (as opposed to JSON chosen by `--output-format` or the settings).
    pub json_flag: bool,
    /// `--quiet`: print nothing on stdout.
    pub quiet: bool,
    /// The source of every timestamp.
    pub clock: Clock,
    /// `PM_SEED`, when set (non-empty).
    pub seed: Option<String>,
    /// `--author`, else `PM_AUTHOR` (trimmed, non-empty).
    pub author: Option<String>,
    /// Whether `author` came from `--author` (as opposed to `PM_AUTHOR`).
    pub author_from_flag: bool,
    /// `--pm-path`, else `PM_PATH` (trimmed, non-empty), resolved against `cwd`.
    pub explicit_path: Option<PathBuf>,
    /// Where `explicit_path` came from.
    pub explicit_path_source: Option<PathSource>,
    /// `--no-index` or `PM_NO_INDEX=1`: answer reads by scanning files.
    pub no_index: bool,
    /// `PM_INDEX_FRESHNESS`: how reads decide the index is fresh.
    pub index_freshness: Freshness,
    /// `PM_LOCK_WAIT_MS`, when set to a whole number of at most 600,000.
    pub lock_wait_ms: Option<u64>,
    /// `PM_LOCK_WAIT_MS` as given when it is set but not such a number (mutations refuse it
    /// with `settings_invalid`; pm ignores it silently).
    pub lock_wait_ms_invalid: Option<String>,
    /// `PM_GLOBAL_PATH`, else `$HOME/.pm-cli`.
    pub global_path: Option<PathBuf>,
    /// `HOME`.
    pub home: Option<PathBuf>,
    /// `NO_COLOR` is set (pm prints no colour anyway).
    pub no_color: bool,
    /// `PM_AUTHOR` (trimmed, non-empty), kept apart from `--author` for author resolution.
    pub env_author: Option<String>,
    /// `--expect-hash` values as typed (parsed by the mutation commands).
    pub expect_hash: Vec<String>,
    /// `PM_FAULT_POINT` (test-only fault injection), when set.
    pub fault_point: Option<String>,
    /// The validated universal read-output controls (`--output-*`); set by `run()` once the
    /// command is known.
    pub read_output: ReadOutputRequest,
    /// The values of the tracker's settings.json outside their legal domain (reads warn about
    /// each, writes refuse them in the engine).
    pub settings_issues: Vec<SettingIssue>,
    /// The tracker's `mutation_guard.secret_guard`, `None` when no initialized tracker was
    /// found (the guard then has nothing to protect and the command reports the missing
    /// tracker itself).
    pub secret_guard: Option<SecretGuardMode>,
    /// Standard input once read (the secret guard scans a `--stdin-json` document before the
    /// command parses it), or why it could not be read.
    stdin: OnceLock<std::result::Result<String, (io::ErrorKind, String)>>,
}

impl Ctx {
    /// Returns the initialized tracker this invocation resolves to.
    ///
    /// # Errors
    /// `not_in_project` when the resolved root holds no `settings.json`.
    pub fn tracker(&self) -> Result<Tracker> {
        Tracker::open(&self.cwd, self.explicit_path.as_deref())
    }

    /// Returns the path of the running `pm` executable (the program the merge drivers call).
    ///
    /// # Errors
    /// `io_error` when the platform cannot tell.
    pub fn executable(&self) -> Result<PathBuf> {
        std::env::current_exe().at("<current executable>")
    }

    /// Returns the environment overrides that settings reads take.
    pub fn settings_env(&self) -> SettingsEnv {
        SettingsEnv {
            lock_wait_ms: self.lock_wait_ms,
            lock_wait_ms_invalid: self.lock_wait_ms_invalid.clone(),
        }
    }

    /// Returns the author given with `--author`, if any (not `PM_AUTHOR`).
    pub fn explicit_author_flag(&self) -> Option<&str> {
        self.author.as_deref().filter(|_| self.author_from_flag)
    }

    /// Returns all of standard input (`--stdin-json`), read once per run: the secret guard
    /// and the command see the same text.
    ///
    /// # Errors
    /// `io_error` when stdin cannot be read as UTF-8.
    pub fn read_stdin(&self) -> Result<String> {
        let read = self.stdin.get_or_init(|| {
            use std::io::Read;
            let mut text = String::new();
            match io::stdin().read_to_string(&mut text) {
                Ok(_) => Ok(text),
                Err(e) => Err((e.kind(), e.to_string())),
            }
        });
        match read {
            Ok(text) => Ok(text.clone()),
            Err((kind, message)) => Err(io::Error::new(*kind, message.clone())).at("<stdin>"),
        }
    }

    /// Builds the context from parsed global flags and the captured environment.
    ///
    /// # Errors
    /// `io_error` when the working directory is unreadable; `invalid_argument_value` when
    /// `PM_CLOCK`, `PM_CLOCK_TICK_MS` or `PM_INDEX_FRESHNESS` is malformed.
    pub fn new(global: &GlobalArgs, env: Environment) -> Result<Ctx> {
        let cwd = env.cwd.at(".")?;
        let seed = non_empty(env.pm_seed.as_deref());
        let clock = clock_from(
            env.pm_clock.as_deref(),
            seed.is_some(),
            env.pm_clock_tick_ms.as_deref(),
        )?;
        let (explicit_path, explicit_path_source) = match (&global.pm_path, &env.pm_path) {
            (Some(flag), _) => (Some(cwd.join(flag)), Some(PathSource::Flag)),
            (None, Some(var)) if !trim_os(var).is_empty() => {
                (Some(cwd.join(trim_os(var))), Some(PathSource::Env))
            }
            _ => (None, None),
        };
        let flag_author = global.author.as_deref().and_then(|a| non_empty(Some(a)));
        let author_from_flag = flag_author.is_some();
        let env_author = non_empty(env.pm_author.as_deref());
        let author = flag_author.or_else(|| env_author.clone());
        let (lock_wait_ms, lock_wait_ms_invalid) = lock_wait_from(env.pm_lock_wait_ms.as_deref());
        let index_freshness = freshness_from(env.pm_index_freshness.as_deref())?;
        let (tracker_format, settings_issues, secret_guard) =
            read_settings(&cwd, explicit_path.as_deref());
        let settings_default =
            tracker_format.filter(|_| global.output_format.is_none() && !global.json);
        let home = env.home.filter(|h| !h.is_empty()).map(PathBuf::from);
        let global_path = env
            .pm_global_path
            .filter(|p| !p.is_empty())
            .map(|p| cwd.join(p))
            .or_else(|| home.as_ref().map(|h| h.join(".pm-cli")));
        Ok(Ctx {
            format: Format::resolve(global.output_format, global.json, settings_default),
            json_flag: global.json,
            quiet: global.quiet,
            clock,
            seed,
            author,
            author_from_flag,
            explicit_path,
            explicit_path_source,
            no_index: global.no_index || env.pm_no_index.as_deref().is_some_and(is_truthy),
            index_freshness,
            lock_wait_ms,
            lock_wait_ms_invalid,
            global_path,
            home,
            no_color: env.no_color.is_some_and(|v| !v.is_empty()),
            env_author,
            expect_hash: global.expect_hash.clone(),
            fault_point: non_empty(env.pm_fault_point.as_deref()),
            read_output: ReadOutputRequest::default(),
            settings_issues,
            secret_guard,
            stdin: OnceLock::new(),
            cwd,
        })
    }
}

/// Where an explicit tracker path came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathSource {
    /// `--pm-path` (or its legacy alias `--path`).
    Flag,
    /// The `PM_PATH` environment variable.
    Env,
}

/// Returns the tracker's `output.default_format` (used when no format flag is given), the settings
/// values outside their domain and the secret-guard mode, when a tracker with readable settings
/// is found. An unreadable file is left for the command to report.
fn read_settings(
    cwd: &std::path::Path,
    explicit: Option<&std::path::Path>,
) -> (Option<Format>, Vec<SettingIssue>, Option<SecretGuardMode>) {
    let tracker = Tracker::discover(cwd, explicit);
    if !tracker.is_initialized() {
        return (None, Vec::new(), None);
    }
    let Ok((settings, _)) = Settings::read(tracker.root(), &SettingsEnv::default()) else {
        return (None, Vec::new(), None);
    };
    let format = match settings.output_format() {
        OutputFormat::Json => Format::Json,
        OutputFormat::Toon => Format::Toon,
    };
    (
        Some(format),
        settings.issues().to_vec(),
        Some(settings.secret_guard()),
    )
}

fn non_empty(raw: Option<&str>) -> Option<String> {
    raw.map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn trim_os(raw: &OsString) -> OsString {
    match raw.to_str() {
        Some(s) => OsString::from(s.trim()),
        None => raw.clone(),
    }
}

fn is_truthy(raw: &str) -> bool {
    matches!(raw.trim(), "1" | "true" | "yes")
}

/// Returns pm's reproducible clock when `PM_CLOCK` and `PM_SEED` are both set, else the system clock.
fn clock_from(pm_clock: Option<&str>, seeded: bool, tick: Option<&str>) -> Result<Clock> {
    let Some(raw) = non_empty(pm_clock).filter(|_| seeded) else {
        return Ok(Clock::System);
    };
    let start = parse_timestamp(&raw).ok_or_else(|| Error::InvalidArgument {
        field: "PM_CLOCK".into(),
        value: raw.clone(),
        reason: "expected an ISO-8601 instant such as 2026-09-01T00:00:00.000Z".into(),
        allowed: Vec::new(),
    })?;
    let tick_ms = match non_empty(tick) {
        Some(t) => parse_ms("PM_CLOCK_TICK_MS", &t)?,
        None => 1,
    };
    let tick_ms = i64::try_from(tick_ms).map_err(|_| Error::InvalidArgument {
        field: "PM_CLOCK_TICK_MS".into(),
        value: tick_ms.to_string(),
        reason: "too large".into(),
        allowed: Vec::new(),
    })?;
    Ok(Clock::pinned(start, tick_ms))
}

/// Parses `PM_INDEX_FRESHNESS` (unset or empty: full).
/// Splits `PM_LOCK_WAIT_MS` into a usable budget or the invalid text (blank counts as unset).
fn lock_wait_from(raw: Option<&str>) -> (Option<u64>, Option<String>) {
    let Some(raw) = non_empty(raw) else {
        return (None, None);
    };
    match parse_lock_wait_ms(&raw).filter(|ms| *ms <= LOCK_WAIT_MS_MAX) {
        Some(ms) => (Some(ms), None),
        None => (None, Some(raw)),
    }
}

fn freshness_from(raw: Option<&str>) -> Result<Freshness> {
    let Some(raw) = non_empty(raw) else {
        return Ok(Freshness::Full);
    };
    Freshness::parse(&raw).ok_or_else(|| Error::InvalidArgument {
        field: "PM_INDEX_FRESHNESS".into(),
        value: raw,
        reason: "unset it or choose full (stat every file) or directories (folder signatures \
                 only; misses files rewritten in place)"
            .into(),
        allowed: vec!["full".into(), "directories".into()],
    })
}

fn parse_ms(field: &str, raw: &str) -> Result<u64> {
    raw.parse::<u64>().map_err(|_| Error::InvalidArgument {
        field: field.into(),
        value: raw.into(),
        reason: "expected a non-negative whole number of milliseconds".into(),
        allowed: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn globals() -> GlobalArgs {
        GlobalArgs::default()
    }

    #[test]
    fn pinned_clock_accepts_date_parse_forms() -> Result<()> {
        for (raw, iso) in [
            ("2026-09-01T00:07:00Z", "2026-09-01T00:07:00.000Z"),
            ("2026-09-01", "2026-09-01T00:00:00.000Z"),
            ("2026-09-01T02:00:00.5+02:00", "2026-09-01T00:00:00.500Z"),
        ] {
            let mut env = Environment::with_cwd("/w");
            env.pm_clock = Some(raw.into());
            env.pm_seed = Some("s".into());
            assert_eq!(Ctx::new(&globals(), env)?.clock.now_iso(), iso, "{raw}");
        }
        Ok(())
    }

    #[test]
    fn pinned_clock_needs_a_seed() -> Result<()> {
        let mut env = Environment::with_cwd("/w");
        env.pm_clock = Some("2026-09-01T00:00:00.000Z".into());
        assert!(!Ctx::new(&globals(), env)?.clock.is_pinned());

        let mut env = Environment::with_cwd("/w");
        env.pm_clock = Some("2026-09-01T00:00:00.000Z".into());
        env.pm_seed = Some("s".into());
        env.pm_clock_tick_ms = Some("0".into());
        let ctx = Ctx::new(&globals(), env)?;
        assert_eq!(ctx.clock.now_iso(), "2026-09-01T00:00:00.000Z");
        assert_eq!(ctx.clock.now_iso(), "2026-09-01T00:00:00.000Z");
        assert_eq!(ctx.seed.as_deref(), Some("s"));
        Ok(())
    }

    #[test]
    fn default_tick_is_one_millisecond() -> Result<()> {
        let mut env = Environment::with_cwd("/w");
        env.pm_clock = Some("2026-09-01T00:00:00.000Z".into());
        env.pm_seed = Some("s".into());
        let ctx = Ctx::new(&globals(), env)?;
        ctx.clock.now_ms();
        assert_eq!(ctx.clock.now_iso(), "2026-09-01T00:00:00.001Z");
        Ok(())
    }

    #[test]
    fn malformed_clock_is_refused() {
        let mut env = Environment::with_cwd("/w");
        env.pm_clock = Some("soon".into());
        env.pm_seed = Some("s".into());
        let err = Ctx::new(&globals(), env).err().map(|e| e.code().as_str());
        assert_eq!(err, Some("invalid_argument_value"));
    }

    #[test]
    fn flags_beat_environment() -> Result<()> {
        let mut env = Environment::with_cwd("/w");
        env.pm_path = Some(" rel/pm ".into());
        env.pm_author = Some("env-author".into());
        env.pm_no_index = Some("1".into());
        env.home = Some("/home/u".into());
        let ctx = Ctx::new(&globals(), env)?;
        assert_eq!(ctx.explicit_path, Some(PathBuf::from("/w/rel/pm")));
        assert_eq!(ctx.explicit_path_source, Some(PathSource::Env));
        assert_eq!(ctx.author.as_deref(), Some("env-author"));
        assert!(ctx.no_index);
        assert_eq!(ctx.global_path, Some(PathBuf::from("/home/u/.pm-cli")));
        assert_eq!(ctx.format, Format::Toon);

        let mut env = Environment::with_cwd("/w");
        env.pm_path = Some("/env/pm".into());
        env.pm_author = Some("env-author".into());
        let flags = GlobalArgs {
            pm_path: Some(PathBuf::from("/flag/pm")),
            author: Some("flag-author".into()),
            json: true,
            ..GlobalArgs::default()
        };
        let ctx = Ctx::new(&flags, env)?;
        assert_eq!(ctx.explicit_path, Some(PathBuf::from("/flag/pm")));
        assert_eq!(ctx.explicit_path_source, Some(PathSource::Flag));
        assert_eq!(ctx.author.as_deref(), Some("flag-author"));
        assert_eq!(ctx.format, Format::Json);
        assert!(!ctx.no_index);
        Ok(())
    }

    #[test]
    fn unreadable_cwd_is_an_io_error() {
        let mut env = Environment::with_cwd("/w");
        env.cwd = Err(io::Error::from(io::ErrorKind::NotFound));
        let err = Ctx::new(&globals(), env).err().map(|e| e.code().as_str());
        assert_eq!(err, Some("io_error"));
    }
}
