//! Whether this clone routes tracker files through pm's merge drivers: the five
//! `[merge "pm-…"]` sections of the repository's git config, read with
//! `git config --get-regexp`. Read-only; `pm merge install` writes them.

use std::path::Path;
use std::process::Command;

use serde::Serialize;

/// The drivers `pm merge install` configures: the config section and the artifact its
/// `driver` command must merge.
pub const DRIVERS: [(&str, &str); 5] = [
    ("pm-item-toon", "item"),
    ("pm-item-markdown", "item"),
    ("pm-history", "history"),
    ("pm-relationship", "relationship"),
    ("pm-json", "json"),
];

/// The clone's merge-driver configuration (pm's `merge_driver_configuration` object).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DriverConfiguration {
    /// `ok` (all five present), `missing` (none installed) or `drift` (some missing, or a
    /// driver that does not run `merge driver <artifact>`).
    pub status: &'static str,
    /// The `merge.<name>.driver` keys that are absent.
    pub missing_keys: Vec<String>,
    /// The `merge.<name>.driver` keys whose command merges another artifact.
    pub drifted_keys: Vec<String>,
}

impl DriverConfiguration {
    /// Returns the warning pm reports for it (`merge_driver_configuration_missing:5`,
    /// `merge_driver_configuration_drift:<n>`), or `None` when it is `ok`.
    pub fn warning(&self) -> Option<String> {
        match self.status {
            "missing" => Some(format!(
                "merge_driver_configuration_missing:{}",
                self.missing_keys.len()
            )),
            "drift" => Some(format!(
                "merge_driver_configuration_drift:{}",
                self.missing_keys.len() + self.drifted_keys.len()
            )),
            _ => None,
        }
    }
}

/// Reads the driver configuration of the repository holding `workspace_root` (its
/// `<git common dir>/config`, the clone-local file `pm merge install` writes); `None` outside a git
/// repository (or when git cannot run).
pub fn driver_configuration(workspace_root: &Path) -> Option<DriverConfiguration> {
    let config = super::GitRepo::discover(workspace_root).ok()?.config_path();
    let out = Command::new("git")
        .current_dir(workspace_root)
        .arg("config")
        .arg("--file")
        .arg(&config)
        .args(["--get-regexp", r"^merge\.pm-"])
        .output()
        .ok()?;
    // Exit 1 means "no such key": nothing is configured.
    if !out.status.success() && out.status.code() != Some(1) {
        return None;
    }
    Some(classify(&String::from_utf8_lossy(&out.stdout)))
}

/// Classifies `git config --get-regexp` output (`<key> <value>` lines).
fn classify(listing: &str) -> DriverConfiguration {
    let mut missing = Vec::new();
    let mut drifted = Vec::new();
    for (name, artifact) in DRIVERS {
        let key = format!("merge.{name}.driver");
        let value = listing.lines().find_map(|line| {
            let (k, v) = line.split_once(' ').unwrap_or((line, ""));
            k.eq_ignore_ascii_case(&key).then_some(v)
        });
        match value {
            None => missing.push(key),
            Some(v) if !v.contains(&format!("merge driver {artifact}")) => drifted.push(key),
            Some(_) => {}
        }
    }
    let status = if missing.len() == DRIVERS.len() {
        "missing"
    } else if missing.is_empty() && drifted.is_empty() {
        "ok"
    } else {
        "drift"
    };
    DriverConfiguration {
        status,
        missing_keys: missing,
        drifted_keys: drifted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INSTALLED: &str = "merge.pm-item-toon.name pm field-aware TOON item document merge
merge.pm-item-toon.driver 'pm' merge driver item \"%O\" \"%A\" \"%B\" --item-path %P
merge.pm-item-markdown.driver 'pm' merge driver item \"%O\" \"%A\" \"%B\" --item-path %P
merge.pm-history.driver 'pm' merge driver history \"%O\" \"%A\" \"%B\"
merge.pm-relationship.driver 'pm' merge driver relationship \"%O\" \"%A\" \"%B\"
merge.pm-json.driver 'pm' merge driver json \"%O\" \"%A\" \"%B\"
";

    #[test]
    fn all_five_drivers_are_ok_none_missing_some_drift() {
        assert_eq!(classify(INSTALLED).status, "ok");
        assert_eq!(classify(INSTALLED).warning(), None);
        let none = classify("");
        assert_eq!(none.status, "missing");
        assert_eq!(
            none.warning().as_deref(),
            Some("merge_driver_configuration_missing:5")
        );
        let partial: String = INSTALLED
            .lines()
            .filter(|l| !l.starts_with("merge.pm-json"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            .replace("driver history", "driver json");
        let drift = classify(&partial);
        assert_eq!(drift.status, "drift");
        assert_eq!(drift.missing_keys, ["merge.pm-json.driver"]);
        assert_eq!(drift.drifted_keys, ["merge.pm-history.driver"]);
        assert_eq!(
            drift.warning().as_deref(),
            Some("merge_driver_configuration_drift:2")
        );
    }
}
