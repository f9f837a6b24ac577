//! The scalar field flags `create` and `update` share (`--status`, `--priority`, `--deadline`,
//! `--severity`, …), declared once from a table and turned into engine `FieldEdit`s.

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use pm_engine::mutate::FieldEdit;

/// `(flag, alias, metadata key, help)` of every scalar field flag.
const FIELD_FLAGS: &[(&str, Option<&str>, &str, &str)] = &[
    ("description", None, "description", "Item description"),
    (
        "status",
        None,
        "status",
        "Status (open, in_progress, blocked, closed, canceled, …)",
    ),
    (
        "priority",
        None,
        "priority",
        "Priority from 0 (highest) to 4",
    ),
    (
        "tags",
        None,
        "tags",
        "Comma-separated tags (replaces the list)",
    ),
    ("parent", None, "parent", "Parent item id (must exist)"),
    ("assignee", None, "assignee", "Assignee"),
    (
        "deadline",
        None,
        "deadline",
        "Deadline (ISO date or instant)",
    ),
    (
        "estimate",
        Some("estimated-minutes"),
        "estimated_minutes",
        "Estimate in minutes",
    ),
    (
        "ac",
        Some("acceptance-criteria"),
        "acceptance_criteria",
        "Acceptance criterion (repeatable; joined with '; ')",
    ),
    (
        "severity",
        None,
        "severity",
        "Issue severity: low, medium, high or critical",
    ),
    ("repro-steps", None, "repro_steps", "Steps to reproduce"),
    ("close-reason", None, "close_reason", "Close reason"),
    ("design", None, "design", "Design notes"),
    ("external-ref", None, "external_ref", "External reference"),
    ("reviewer", None, "reviewer", "Reviewer"),
    ("risk", None, "risk", "Risk"),
    (
        "confidence",
        None,
        "confidence",
        "Confidence (0-100 or low, medium, high)",
    ),
    ("sprint", None, "sprint", "Sprint"),
    ("release", None, "release", "Release"),
    ("blocked-by", None, "blocked_by", "What blocks the item"),
    (
        "blocked-reason",
        None,
        "blocked_reason",
        "Why the item is blocked",
    ),
    (
        "unblock-note",
        None,
        "unblock_note",
        "How the block was lifted",
    ),
    ("reporter", None, "reporter", "Reporter"),
    (
        "environment",
        None,
        "environment",
        "Environment the issue occurs in",
    ),
    ("resolution", None, "resolution", "Resolution"),
    (
        "expected-result",
        Some("expected"),
        "expected_result",
        "Expected result",
    ),
    (
        "actual-result",
        Some("actual"),
        "actual_result",
        "Actual result",
    ),
    (
        "order",
        Some("rank"),
        "order",
        "Planning order (a whole number; lower comes first)",
    ),
    (
        "affected-version",
        None,
        "affected_version",
        "Affected version",
    ),
    ("fixed-version", None, "fixed_version", "Fixed version"),
    ("component", None, "component", "Component"),
    (
        "customer-impact",
        None,
        "customer_impact",
        "Customer impact",
    ),
    ("goal", None, "goal", "Goal"),
    ("objective", None, "objective", "Objective"),
    ("value", None, "value", "Value"),
    ("impact", None, "impact", "Impact"),
    ("outcome", None, "outcome", "Outcome"),
    ("why-now", None, "why_now", "Why now"),
    (
        "definition-of-ready",
        None,
        "definition_of_ready",
        "Definition of ready",
    ),
];

/// The one-letter spellings of the field flags that have one.
const FIELD_SHORTS: &[(&str, char)] = &[("description", 'd'), ("status", 's'), ("priority", 'p')];

/// `--regression [BOOL]`: the one field flag whose value is optional (bare means true).
const REGRESSION: &str = "regression";

/// The scalar field flags as typed, in flag-table order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FieldFlags {
    /// `(metadata key, values)` of each flag that was given.
    pub given: Vec<(String, Vec<String>)>,
}

impl FieldFlags {
    /// Returns the edits: one `Set` per flag; repeated `--ac` values are joined with `; `,
    /// repeated `--tags` with `,`, any other repeated flag keeps its last value.
    pub fn edits(&self) -> Vec<FieldEdit> {
        self.given
            .iter()
            .filter_map(|(key, values)| {
                let value = match key.as_str() {
                    "acceptance_criteria" => values.join("; "),
                    "tags" => values.join(","),
                    _ => values.last()?.clone(),
                };
                Some(FieldEdit::Set {
                    key: key.clone(),
                    value,
                })
            })
            .collect()
    }
}

impl FromArgMatches for FieldFlags {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut given = Vec::new();
        for key in FIELD_FLAGS.iter().map(|f| f.2).chain([REGRESSION]) {
            if let Some(values) = matches.get_many::<String>(key) {
                given.push((key.to_string(), values.cloned().collect()));
            }
        }
        Ok(FieldFlags { given })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = FieldFlags::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for FieldFlags {
    fn augment_args(mut cmd: Command) -> Command {
        for (flag, alias, key, help) in FIELD_FLAGS {
            let mut arg = Arg::new(*key)
                .long(*flag)
                .value_name("VALUE")
                .help(*help)
                .action(ArgAction::Append)
                .allow_hyphen_values(true)
                .help_heading("Fields");
            if let Some(alias) = alias {
                arg = arg.visible_alias(*alias);
            }
            if let Some((_, short)) = FIELD_SHORTS.iter().find(|(k, _)| k == key) {
                arg = arg.short(*short);
            }
            cmd = cmd.arg(arg);
        }
        cmd.arg(
            Arg::new(REGRESSION)
                .long(REGRESSION)
                .value_name("BOOL")
                .help("Regression marker: true or false (the bare flag means true)")
                .num_args(0..=1)
                .default_missing_value("true")
                .action(ArgAction::Append)
                .help_heading("Fields"),
        )
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        FieldFlags::augment_args(cmd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, clap::Parser)]
    struct Probe {
        #[command(flatten)]
        fields: FieldFlags,
    }

    #[test]
    fn flags_become_edits() -> Result<(), clap::Error> {
        use clap::Parser;
        let probe = Probe::try_parse_from([
            "p",
            "--ac",
            "a",
            "--priority",
            "1",
            "--acceptance-criteria",
            "b",
            "--tags",
            "x,y",
        ])?;
        assert_eq!(
            probe.fields.edits(),
            vec![
                FieldEdit::Set {
                    key: "priority".into(),
                    value: "1".into()
                },
                FieldEdit::Set {
                    key: "tags".into(),
                    value: "x,y".into()
                },
                FieldEdit::Set {
                    key: "acceptance_criteria".into(),
                    value: "a; b".into()
                },
            ]
        );
        Ok(())
    }
}
