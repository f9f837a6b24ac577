//! The merge fence, as data: the five git merge drivers pm registers (`[merge "pm-…"]`), the
//! `.gitattributes` block that maps tracker files to them, and how that block replaces an
//! older one. pm-cli's names, labels and patterns, byte for byte; no I/O here.

use std::path::Path;

/// First line of the `.gitattributes` block the fence owns.
pub const ATTRIBUTES_START: &str = "# pm-cli:merge-drivers:v2:start";
/// Last line of the `.gitattributes` block the fence owns.
pub const ATTRIBUTES_END: &str = "# pm-cli:merge-drivers:v2:end";

/// What a driver merges: the `<artifact>` operand of `pm merge driver`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Artifact {
    /// An item file (`.toon` or `.md`).
    Item,
    /// A history stream (`history/<id>.jsonl`).
    History,
    /// Any other append-only JSONL store.
    Relationship,
    /// A JSON document (settings, schema files).
    Json,
}

impl Artifact {
    /// Every artifact, in the order pm lists them.
    pub const ALL: [Artifact; 4] = [
        Artifact::Item,
        Artifact::History,
        Artifact::Relationship,
        Artifact::Json,
    ];

    /// Returns the operand spelling (`item`, `history`, `relationship`, `json`).
    pub fn as_str(self) -> &'static str {
        match self {
            Artifact::Item => "item",
            Artifact::History => "history",
            Artifact::Relationship => "relationship",
            Artifact::Json => "json",
        }
    }

    /// Returns the artifact an operand names.
    pub fn parse(raw: &str) -> Option<Artifact> {
        Artifact::ALL.into_iter().find(|a| a.as_str() == raw)
    }
}

/// One `[merge "<name>"]` section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriverSpec {
    /// The driver name (`pm-item-toon`), used by `merge=<name>` attributes.
    pub name: &'static str,
    /// Its human label (`merge.<name>.name`).
    pub label: &'static str,
    /// The artifact it merges.
    pub artifact: Artifact,
}

/// The drivers, in pm's order.
pub const DRIVERS: [DriverSpec; 5] = [
    DriverSpec {
        name: "pm-item-toon",
        label: "pm field-aware TOON item document merge",
        artifact: Artifact::Item,
    },
    DriverSpec {
        name: "pm-item-markdown",
        label: "pm field-aware JSON-markdown item document merge",
        artifact: Artifact::Item,
    },
    DriverSpec {
        name: "pm-history",
        label: "pm append-only history stream merge",
        artifact: Artifact::History,
    },
    DriverSpec {
        name: "pm-relationship",
        label: "pm append-only relationship event store merge",
        artifact: Artifact::Relationship,
    },
    DriverSpec {
        name: "pm-json",
        label: "pm key-level JSON config merge",
        artifact: Artifact::Json,
    },
];

/// One git configuration entry the fence sets.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ConfigEntry {
    /// `merge.<driver>.name` or `merge.<driver>.driver`.
    pub key: String,
    /// Its value.
    pub value: String,
}

/// Returns the driver command git runs for `artifact`, calling `program` (quoted for the
/// shell git uses): `'<program>' merge driver item "%O" "%A" "%B" --item-path %P`.
pub fn driver_command(program: &Path, artifact: Artifact) -> String {
    let program = shell_quote(&program.to_string_lossy());
    let tail = if artifact == Artifact::Item {
        " --item-path %P"
    } else {
        ""
    };
    format!(
        "{program} merge driver {} \"%O\" \"%A\" \"%B\"{tail}",
        artifact.as_str()
    )
}

/// Returns the ten configuration entries (name and driver of each driver), in pm's order.
pub fn config_entries(program: &Path) -> Vec<ConfigEntry> {
    DRIVERS
        .iter()
        .flat_map(|d| {
            [
                ConfigEntry {
                    key: format!("merge.{}.name", d.name),
                    value: d.label.to_string(),
                },
                ConfigEntry {
                    key: format!("merge.{}.driver", d.name),
                    value: driver_command(program, d.artifact),
                },
            ]
        })
        .collect()
}

/// Returns the attribute lines for a tracker at `rel` (posix, relative to the worktree top;
/// empty when the tracker is the top itself) whose item types live in `folders`: item files
/// anywhere, then per type folder in byte order, then the JSONL stores, the history streams,
/// the JSON documents and the extension tree (never merged by a driver).
pub fn attribute_patterns(rel: &str, folders: &[&str]) -> Vec<String> {
    let prefix = if rel.is_empty() {
        String::new()
    } else {
        format!("{rel}/")
    };
    let line = |pattern: &str, attr: &str| format!("\"{prefix}{pattern}\" {attr}");
    let mut folders: Vec<&str> = folders.to_vec();
    folders.sort_unstable();
    folders.dedup();
    let mut lines = vec![
        line("**/*.toon", "merge=pm-item-toon"),
        line("**/*.md", "merge=pm-item-markdown"),
    ];
    for folder in folders {
        lines.push(line(&format!("{folder}/*.toon"), "merge=pm-item-toon"));
        lines.push(line(&format!("{folder}/*.md"), "merge=pm-item-markdown"));
    }
    lines.extend([
        line("**/*.jsonl", "merge=pm-relationship"),
        line("history/*.jsonl", "merge=pm-history"),
        line("settings.json", "merge=pm-json"),
        line("**/*.json", "merge=pm-json"),
        line("extensions/**", "-merge"),
        line("extensions/.managed-extensions.json", "merge=pm-json"),
    ]);
    lines
}

/// Returns the `.gitattributes` block holding `patterns` between the fence markers.
pub fn attributes_block(patterns: &[String]) -> String {
    let mut lines = Vec::with_capacity(patterns.len() + 2);
    lines.push(ATTRIBUTES_START);
    lines.extend(patterns.iter().map(String::as_str));
    lines.push(ATTRIBUTES_END);
    lines.join("\n")
}

/// Returns `value` in single quotes for a POSIX shell (`'` written as `'\''`).
fn shell_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_commands_match_pm_cli() {
        let exe = Path::new("/opt/pm bin/pm");
        assert_eq!(
            driver_command(exe, Artifact::Item),
            r#"'/opt/pm bin/pm' merge driver item "%O" "%A" "%B" --item-path %P"#
        );
        assert_eq!(
            driver_command(Path::new("/it's/pm"), Artifact::Json),
            r#"'/it'\''s/pm' merge driver json "%O" "%A" "%B""#
        );
        let entries = config_entries(exe);
        assert_eq!(entries.len(), 10);
        assert_eq!(entries[0].key, "merge.pm-item-toon.name");
        assert_eq!(entries[9].key, "merge.pm-json.driver");
    }

    #[test]
    fn patterns_are_prefixed_and_folders_sorted() {
        let lines = attribute_patterns(".agents/pm", &["tasks", "epics", "tasks"]);
        assert_eq!(lines[0], r#"".agents/pm/**/*.toon" merge=pm-item-toon"#);
        assert_eq!(lines[2], r#"".agents/pm/epics/*.toon" merge=pm-item-toon"#);
        assert_eq!(
            lines[5],
            r#"".agents/pm/tasks/*.md" merge=pm-item-markdown"#
        );
        assert_eq!(lines.len(), 12);
        assert_eq!(
            attribute_patterns("", &[])[0],
            r#""**/*.toon" merge=pm-item-toon"#
        );
    }
}
