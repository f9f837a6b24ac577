//! The lock file body: pm's five keys (`id`, `pid`, `owner`, `created_at`, `ttl_seconds`) and
//! the owner identity this pm adds (`host`, `process_start`, `token`), read leniently so that
//! pm-cli's locks (without the identity) are understood too.

use std::ffi::OsStr;
use std::path::Path;

use serde_json::{Map, Value};

use crate::clock::{EpochMs, file_age_ms};
use crate::confine::Dir;
use crate::error::{Error, Result};
use crate::json::to_pretty;

/// The body of a lock file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockInfo {
    /// The lock id (the item id for item mutations).
    pub id: String,
    /// The holder's process id.
    pub pid: u32,
    /// The holder's owner string (the mutation author).
    pub owner: String,
    /// When the lock was taken (`toISOString` form).
    pub created_at: String,
    /// The holder's ttl.
    pub ttl_seconds: u64,
    /// The holder's host name; absent in locks written by pm-cli.
    pub host: Option<String>,
    /// When the holder process started (`<boot id>:<ticks>` on Linux), to tell a reused pid.
    pub process_start: Option<String>,
    /// A random token only the holder knows; the holder re-reads it before each write.
    pub token: Option<String>,
}

impl LockInfo {
    /// Returns the exact file content: pretty JSON (2 spaces) plus `\n`, pm's keys first.
    pub fn to_file_text(&self) -> String {
        let mut map = Map::new();
        map.insert("id".into(), Value::from(self.id.clone()));
        map.insert("pid".into(), Value::from(self.pid));
        map.insert("owner".into(), Value::from(self.owner.clone()));
        map.insert("created_at".into(), Value::from(self.created_at.clone()));
        map.insert("ttl_seconds".into(), Value::from(self.ttl_seconds));
        for (key, value) in [
            ("host", &self.host),
            ("process_start", &self.process_start),
            ("token", &self.token),
        ] {
            if let Some(value) = value {
                map.insert(key.into(), Value::from(value.clone()));
            }
        }
        let mut text = to_pretty(&Value::Object(map));
        text.push('\n');
        text
    }

    /// Parses a lock file body; `None` when it lacks pm's keys or has them mistyped.
    pub fn parse(text: &str) -> Option<LockInfo> {
        let value: Value = serde_json::from_str(text).ok()?;
        let obj = value.as_object()?;
        let pid = obj.get("pid")?.as_f64().filter(|p| p.is_finite())?;
        let ttl = obj.get("ttl_seconds")?.as_f64().filter(|t| t.is_finite())?;
        let text_of = |key: &str| obj.get(key).and_then(Value::as_str).map(String::from);
        Some(LockInfo {
            id: obj.get("id")?.as_str()?.to_string(),
            pid: pid.clamp(0.0, f64::from(u32::MAX)) as u32,
            owner: obj.get("owner")?.as_str()?.to_string(),
            created_at: obj.get("created_at")?.as_str()?.to_string(),
            ttl_seconds: ttl.max(0.0) as u64,
            host: text_of("host"),
            process_start: text_of("process_start"),
            token: text_of("token"),
        })
    }
}

/// What reading a lock file found.
#[derive(Clone, Debug, PartialEq)]
pub enum LockRead {
    /// No lock file.
    Missing,
    /// A well-formed lock.
    Held(LockInfo),
    /// A lock file that cannot be read or parsed; the reason is pm's warning token
    /// (`lock_info_invalid_json`, `lock_info_invalid_shape`, `lock_info_read_failed`).
    Malformed(&'static str),
}

/// A lock file as found: its body and how old the file is (real time, for a malformed body).
#[derive(Clone, Debug, PartialEq)]
pub struct LockFile {
    /// The parsed body.
    pub read: LockRead,
    /// Milliseconds since the file was last modified, when known.
    pub file_age_ms: Option<EpochMs>,
}

fn classify(text: std::result::Result<String, ()>) -> LockRead {
    let Ok(text) = text else {
        return LockRead::Malformed("lock_info_read_failed");
    };
    if serde_json::from_str::<Value>(&text).is_err() {
        return LockRead::Malformed("lock_info_invalid_json");
    }
    match LockInfo::parse(&text) {
        Some(info) => LockRead::Held(info),
        None => LockRead::Malformed("lock_info_invalid_shape"),
    }
}

/// Reads and parses a lock file by path (following no symlink at the file itself).
pub fn read_lock_info(path: &Path) -> LockRead {
    match std::fs::symlink_metadata(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return LockRead::Missing,
        Ok(meta) if !meta.is_file() => return LockRead::Malformed("lock_info_read_failed"),
        _ => {}
    }
    match std::fs::read_to_string(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => LockRead::Missing,
        other => classify(other.map_err(|_| ())),
    }
}

/// Reads the lock file `name` of the locks directory `dir`, with its age.
///
/// # Errors
/// `Error::PathUnsafe` when the lock name is a symlink or not a file.
pub fn read_lock_in(dir: &Dir, name: &OsStr) -> Result<LockFile> {
    let Some(file) = dir.open_read(name)? else {
        return Ok(LockFile {
            read: LockRead::Missing,
            file_age_ms: None,
        });
    };
    let age = file
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .map(file_age_ms);
    let mut text = String::new();
    let read = std::io::Read::read_to_string(&mut &file, &mut text)
        .map(|_| text)
        .map_err(|_| ());
    Ok(LockFile {
        read: classify(read),
        file_age_ms: age,
    })
}

/// Validates a lock id: non-empty, no `/`, `\`, NUL or `..`, not `.`.
///
/// # Errors
/// `Error::LockPathUnsafe` naming the would-be lock path.
pub fn validate_lock_id(lock_id: &str) -> Result<()> {
    let bad = lock_id.is_empty()
        || lock_id == "."
        || lock_id.contains("..")
        || lock_id.contains(['/', '\\', '\0']);
    if bad {
        return Err(Error::LockPathUnsafe {
            path: std::path::PathBuf::from(format!("locks/{lock_id}.lock")),
            reason: "lock ids must not be empty or contain '/', '\\', NUL or '..'".into(),
        });
    }
    Ok(())
}
