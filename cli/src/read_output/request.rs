//! The seven canonical read-output controls: parsing and validation before a
//! command runs, the refusal on commands that are not read surfaces, and include-mode splitting.

use super::cursor::OutputCursor;
use super::session::SessionState;
use super::surface::Surface;
use crate::args::GlobalArgs;
pub use crate::args::numbers::Bound;
use crate::failure::{CliError, ReadOutputRefusal, Result};
use crate::render::Format;

/// What kind of command carries the controls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandKind {
    /// A read surface (the controls apply).
    Read,
    /// A read surface invoked in one of its mutation modes (`comments --add`, `files --add`):
    /// only `--output-format` applies.
    HybridMutation(Surface),
    /// Any other command: only `--output-format` applies.
    NotRead,
}

/// The canonical controls of one invocation, validated.
#[derive(Clone, Debug, Default)]
pub struct ReadOutputRequest {
    /// `--output-include` tokens: split on commas, trimmed, empties dropped, first occurrence kept.
    pub include: Vec<String>,
    /// `--output-limit`.
    pub limit: Option<Bound>,
    /// `--output-budget`.
    pub budget: Option<Bound>,
    /// `--output-format`.
    pub format: Option<Format>,
    /// `--output-session`.
    pub session: Option<SessionState>,
    /// `--output-cursor`: the text as typed and its decoded form.
    pub cursor: Option<(String, OutputCursor)>,
    /// `--output-row-contract`.
    pub row_contract: bool,
    /// The tracker's settings values outside their domain, reported in the result's
    /// `warnings` (set by `run()` from the context, not a flag).
    pub settings_warnings: Vec<pm_engine::settings::SettingIssue>,
}

/// Splits a CSV into trimmed, non-empty tokens, keeping the first occurrence of each.
pub fn split_csv(raw: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for token in raw.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        if !out.iter().any(|t| t == token) {
            out.push(token.to_owned());
        }
    }
    out
}

impl ReadOutputRequest {
    /// Validates the controls of `global` for the command `name` of `kind`.
    ///
    /// # Errors
    /// `conflicting_arguments` when a control other than `--output-format` is given to a
    /// command that is not a read surface (or a read surface in mutation mode);
    /// `invalid_argument_value` for an empty include list, a bad limit or budget, or an empty
    /// cursor; `invalid_read_output_session` for a bad session; `read_output_cursor_invalid`
    /// for a cursor that does not decode.
    pub fn parse(global: &GlobalArgs, name: &str, kind: CommandKind) -> Result<ReadOutputRequest> {
        let present: Vec<&'static str> = [
            ("--output-include", global.output_include.is_some()),
            ("--output-limit", global.output_limit.is_some()),
            ("--output-budget", global.output_budget.is_some()),
            ("--output-session", global.output_session.is_some()),
            ("--output-cursor", global.output_cursor.is_some()),
            ("--output-row-contract", global.output_row_contract),
        ]
        .into_iter()
        .filter_map(|(flag, on)| on.then_some(flag))
        .collect();
        let mut request = ReadOutputRequest {
            format: global.output_format,
            ..ReadOutputRequest::default()
        };
        let Some(first) = present.first() else {
            return Ok(request);
        };
        let refuse = |message: String| CliError::ReadOutput {
            kind: ReadOutputRefusal::NotReadSurface,
            message,
            flag: first,
            value: None,
            allowed: Box::default(),
            suggestion: None,
        };
        match kind {
            CommandKind::Read => {}
            CommandKind::NotRead => {
                let name = if name.is_empty() {
                    "this command"
                } else {
                    name
                };
                return Err(refuse(format!(
                    "Universal output controls apply only to read commands; {name} is not a read surface."
                )));
            }
            CommandKind::HybridMutation(surface) => {
                return Err(refuse(format!(
                    "Universal output controls cannot be combined with a {} mutation.",
                    surface.name()
                )));
            }
        }
        if let Some(raw) = &global.output_include {
            request.include = split_csv(raw);
            if request.include.is_empty() {
                return Err(CliError::refused(
                    ReadOutputRefusal::InvalidValue,
                    "--output-include",
                    raw,
                    "--output-include requires at least one comma-separated field or section.",
                ));
            }
        }
        if let Some(limit) = &global.output_limit {
            request.limit = Some(limit.get("--output-limit")?);
        }
        if let Some(budget) = &global.output_budget {
            request.budget = Some(budget.get("--output-budget")?);
        }
        if let Some(raw) = &global.output_session {
            request.session = Some(SessionState::parse(raw)?);
        }
        if let Some(raw) = &global.output_cursor {
            if raw.trim().is_empty() {
                return Err(CliError::refused(
                    ReadOutputRefusal::InvalidValue,
                    "--output-cursor",
                    raw,
                    "--output-cursor requires a non-empty continuation cursor.",
                ));
            }
            request.cursor = Some((raw.clone(), OutputCursor::decode(raw)?));
        }
        request.row_contract = global.output_row_contract;
        Ok(request)
    }

    /// Returns the include tokens that name a projection mode of `surface`. The command must
    /// run as if the matching flag were given (`--output-include brief` ≡ `--brief`); the
    /// flag is not reported as a legacy alias.
    pub fn modes(&self, surface: Surface) -> Vec<&'static str> {
        let modes = surface.projection_modes();
        self.include
            .iter()
            .filter_map(|t| modes.iter().find(|m| **m == t.as_str()).copied())
            .collect()
    }

    /// Returns the include tokens that are field or section selectors on `surface`, applied
    /// to the computed result.
    pub fn selectors(&self, surface: Surface) -> Vec<String> {
        let modes = surface.projection_modes();
        self.include
            .iter()
            .filter(|t| !modes.contains(&t.as_str()))
            .cloned()
            .collect()
    }

    /// Returns the encoding of a read whose command has a local `--format`: `--output-format`
    /// beats the local flag, which beats `--json`, settings and the TOON default (`ctx`).
    pub fn resolve_format(&self, ctx: Format, local: Option<Format>) -> Format {
        self.format.or(local).unwrap_or(ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn globals(f: impl FnOnce(&mut GlobalArgs)) -> GlobalArgs {
        let mut g = GlobalArgs::default();
        f(&mut g);
        g
    }

    fn refusal(g: &GlobalArgs, kind: CommandKind) -> String {
        ReadOutputRequest::parse(g, "update", kind)
            .err()
            .map(|e| format!("{}: {e}", e.code()))
            .unwrap_or_default()
    }

    #[test]
    fn controls_on_other_commands_are_refused_except_the_format() {
        let g = globals(|g| g.output_limit = Some("5".into()));
        assert_eq!(
            refusal(&g, CommandKind::NotRead),
            "conflicting_arguments: Universal output controls apply only to read commands; update is not a read surface."
        );
        assert_eq!(
            refusal(&g, CommandKind::HybridMutation(Surface::Comments)),
            "conflicting_arguments: Universal output controls cannot be combined with a comments mutation."
        );
        let g = globals(|g| g.output_format = Some(Format::Json));
        let parsed = ReadOutputRequest::parse(&g, "update", CommandKind::NotRead);
        assert_eq!(parsed.ok().and_then(|r| r.format), Some(Format::Json));
        // Refused before values are checked.
        let g = globals(|g| g.output_limit = Some("abc".into()));
        assert!(refusal(&g, CommandKind::NotRead).starts_with("conflicting_arguments"));
    }

    #[test]
    fn values_are_validated_with_pm_messages() {
        let cases: Vec<(GlobalArgs, &str)> = vec![
            (
                globals(|g| g.output_include = Some(" , ,".into())),
                "invalid_argument_value: --output-include requires at least one comma-separated field or section.",
            ),
            (
                globals(|g| g.output_limit = Some("0".into())),
                "invalid_argument_value: --output-limit must be a positive integer or unbounded.",
            ),
            (
                globals(|g| g.output_limit = Some("1e3".into())),
                "invalid_argument_value: --output-limit must be a positive integer or unbounded.",
            ),
            (
                globals(|g| g.output_limit = Some("-5".into())),
                "invalid_argument_value: --output-limit must be a positive integer or unbounded.",
            ),
            (
                globals(|g| g.output_budget = Some("Unbounded".into())),
                "invalid_argument_value: --output-budget must be a positive integer or unbounded.",
            ),
            (
                globals(|g| g.output_budget = Some("9007199254740992".into())),
                "invalid_argument_value: --output-budget must be a positive integer or unbounded.",
            ),
            (
                globals(|g| g.output_cursor = Some("  ".into())),
                "invalid_argument_value: --output-cursor requires a non-empty continuation cursor.",
            ),
            (
                globals(|g| g.output_cursor = Some("abc".into())),
                "read_output_cursor_invalid: The read-output continuation cursor is malformed or unsupported.",
            ),
            (
                globals(|g| g.output_session = Some("{}".into())),
                "invalid_read_output_session: --output-session version must equal 1.",
            ),
        ];
        for (g, message) in cases {
            assert_eq!(refusal(&g, CommandKind::Read), message);
        }
    }

    #[test]
    fn parsed_values() -> Result<()> {
        let g = globals(|g| {
            g.output_include = Some(" id, brief ,id,,title ".into());
            g.output_limit = Some(" 007 ".into());
            g.output_budget = Some("unbounded".into());
            g.output_row_contract = true;
        });
        let r = ReadOutputRequest::parse(&g, "list", CommandKind::Read)?;
        assert_eq!(r.include, ["id", "brief", "title"]);
        assert_eq!(r.limit, Some(Bound::At(7)));
        assert_eq!(r.budget, Some(Bound::Unbounded));
        assert!(r.row_contract);
        assert_eq!(r.modes(Surface::List), ["brief"]);
        assert_eq!(r.selectors(Surface::List), ["id", "title"]);
        assert!(r.modes(Surface::Context).is_empty());
        assert_eq!(r.selectors(Surface::Context), ["id", "brief", "title"]);
        Ok(())
    }

    #[test]
    fn format_precedence() {
        let r = ReadOutputRequest::default();
        assert_eq!(
            r.resolve_format(Format::Json, Some(Format::Toon)),
            Format::Toon
        );
        assert_eq!(r.resolve_format(Format::Json, None), Format::Json);
        let r = ReadOutputRequest {
            format: Some(Format::Json),
            ..ReadOutputRequest::default()
        };
        assert_eq!(
            r.resolve_format(Format::Toon, Some(Format::Toon)),
            Format::Json
        );
    }
}
