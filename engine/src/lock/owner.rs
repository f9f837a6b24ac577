//! Who holds a lock: the identity a lock file records (host, pid, process start, token) and
//! whether that owner can be proven alive or gone from this machine.

use std::sync::OnceLock;

use serde::Serialize;

/// The identity of the current process, as written into the locks it takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessIdentity {
    /// The host name (`uname -n`).
    pub host: String,
    /// The process id.
    pub pid: u32,
    /// When the process started, as `<boot id>:<start ticks>` (Linux); `None` where unknown.
    pub start: Option<String>,
}

impl ProcessIdentity {
    /// Returns the identity of this process (computed once).
    pub fn current() -> &'static ProcessIdentity {
        static CURRENT: OnceLock<ProcessIdentity> = OnceLock::new();
        CURRENT.get_or_init(|| {
            let pid = std::process::id();
            ProcessIdentity {
                host: host_name(),
                pid,
                start: process_start(pid),
            }
        })
    }
}

/// What can be known about a lock's owner from this machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OwnerState {
    /// Recorded on this host and that process is running (with the recorded start time, where
    /// one was recorded): the lock is held, however old it is.
    Alive,
    /// Recorded on this host and that process is gone: not running, a zombie, or its pid now
    /// belongs to a process that started at another time.
    Gone,
    /// Recorded without a host (a lock written by pm-cli) and its pid runs here: it may be the
    /// owner or an unrelated process that reused the pid.
    PidRunning,
    /// Recorded without a host and its pid does not run here.
    PidNotRunning,
    /// Recorded on another host: nothing can be checked from here.
    OtherHost,
}

impl OwnerState {
    /// Returns the state's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            OwnerState::Alive => "alive",
            OwnerState::Gone => "gone",
            OwnerState::PidRunning => "pid_running",
            OwnerState::PidNotRunning => "pid_not_running",
            OwnerState::OtherHost => "other_host",
        }
    }
}

/// Judges the owner a lock file names (`host` and `start` as recorded, `None` when absent).
pub fn owner_state(host: Option<&str>, pid: u32, start: Option<&str>) -> OwnerState {
    let me = ProcessIdentity::current();
    match host {
        Some(host) if host != me.host => OwnerState::OtherHost,
        Some(_) => match probe(pid) {
            Probe::Running(now) => match (start, now) {
                (Some(recorded), Some(now)) if recorded != now => OwnerState::Gone,
                _ => OwnerState::Alive,
            },
            Probe::Gone => OwnerState::Gone,
        },
        None => match probe(pid) {
            Probe::Running(_) => OwnerState::PidRunning,
            Probe::Gone => OwnerState::PidNotRunning,
        },
    }
}

enum Probe {
    /// Running, with its start identity where the platform reports one.
    Running(Option<String>),
    /// Not running (or a zombie).
    Gone,
}

#[cfg(target_os = "linux")]
fn probe(pid: u32) -> Probe {
    if pid == 0 || i32::try_from(pid).is_err() {
        return Probe::Gone;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => match parse_stat(&stat) {
            Some(('Z' | 'X', _)) => Probe::Gone,
            Some((_, ticks)) => Probe::Running(Some(format!("{}:{ticks}", boot_id()))),
            None => Probe::Running(None),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Probe::Gone,
        // Another failure (no /proc mounted): fall back to a signal probe.
        Err(_) => signal_probe(pid),
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
fn probe(pid: u32) -> Probe {
    if pid == 0 || i32::try_from(pid).is_err() {
        return Probe::Gone;
    }
    signal_probe(pid)
}

/// `kill(pid, 0)`: `ESRCH` means gone; success or `EPERM` means a process has the pid.
#[cfg(unix)]
fn signal_probe(pid: u32) -> Probe {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return Probe::Gone;
    };
    match rustix::process::test_kill_process(pid) {
        Err(rustix::io::Errno::SRCH) => Probe::Gone,
        _ => Probe::Running(None),
    }
}

/// Without a way to probe, every owner counts as running (locks are then only broken by ttl).
#[cfg(not(unix))]
fn probe(_pid: u32) -> Probe {
    Probe::Running(None)
}

/// Returns `(state, start ticks)` from the text of `/proc/<pid>/stat`: the fields after the
/// command name (which may hold spaces and parentheses, so the last `)` ends it) are the
/// state (field 3) and, 19 fields later, the start time in clock ticks since boot (field 22).
fn parse_stat(stat: &str) -> Option<(char, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    let ticks = fields.nth(18)?.parse().ok()?;
    Some((state, ticks))
}

#[cfg(target_os = "linux")]
fn boot_id() -> &'static str {
    static BOOT: OnceLock<String> = OnceLock::new();
    BOOT.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    })
}

#[cfg(target_os = "linux")]
fn process_start(pid: u32) -> Option<String> {
    match probe(pid) {
        Probe::Running(start) => start,
        Probe::Gone => None,
    }
}

#[cfg(not(target_os = "linux"))]
fn process_start(_pid: u32) -> Option<String> {
    None
}

#[cfg(unix)]
fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

#[cfg(not(unix))]
fn host_name() -> String {
    String::from("localhost")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        let line = "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        assert_eq!(parse_stat(line), Some(('S', 987_654)));
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (x) S 1"), None);
    }

    #[test]
    fn this_process_is_alive_and_its_start_is_checked() {
        let me = ProcessIdentity::current();
        assert_eq!(me.pid, std::process::id());
        let start = me.start.as_deref();
        assert_eq!(
            owner_state(Some(&me.host), me.pid, start),
            OwnerState::Alive
        );
        assert_eq!(owner_state(None, me.pid, None), OwnerState::PidRunning);
        assert_eq!(
            owner_state(Some("another-host.invalid"), me.pid, start),
            OwnerState::OtherHost
        );
        if start.is_some() {
            // The same pid with another start time is a reused pid: its owner is gone.
            assert_eq!(
                owner_state(Some(&me.host), me.pid, Some("other-boot:1")),
                OwnerState::Gone
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_reaped_child_is_gone() -> Result<(), Box<dyn std::error::Error>> {
        let mut child = std::process::Command::new("true").spawn()?;
        let pid = child.id();
        child.wait()?;
        let host = ProcessIdentity::current().host.clone();
        assert_eq!(owner_state(Some(&host), pid, None), OwnerState::Gone);
        assert_eq!(owner_state(None, pid, None), OwnerState::PidNotRunning);
        assert_eq!(owner_state(Some(&host), 0, None), OwnerState::Gone);
        Ok(())
    }
}
