//! `pm completions <shell>`: a shell completion script generated from the clap command tree (the
//! same tree `pm contracts` describes), so completions never drift from the grammar.

use clap::CommandFactory;
use clap_complete::Shell;
use serde_json::json;

use crate::commands::Cli;
use crate::commands::CommandOutput;

/// Print a shell completion script for pm (bash, zsh or fish)
///
/// Bash: `source <(pm completions bash)`. Zsh: write it to a file named `_pm` on your fpath.
/// Fish: `pm completions fish > ~/.config/fish/completions/pm.fish`. With --json the script is
/// the `script` field of one JSON document.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: CompletionShell,
}

/// The shells pm writes completions for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CompletionShell {
    /// GNU bash
    Bash,
    /// Z shell
    Zsh,
    /// fish
    Fish,
}

impl CompletionShell {
    fn generator(self) -> Shell {
        match self {
            CompletionShell::Bash => Shell::Bash,
            CompletionShell::Zsh => Shell::Zsh,
            CompletionShell::Fish => Shell::Fish,
        }
    }

    fn name(self) -> &'static str {
        match self {
            CompletionShell::Bash => "bash",
            CompletionShell::Zsh => "zsh",
            CompletionShell::Fish => "fish",
        }
    }
}

/// Returns the completion script of `shell` for the whole command tree.
pub fn completion_script(shell: CompletionShell) -> String {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell.generator(), &mut cmd, "pm", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Returns the script as text (TOON mode prints it verbatim) and as a JSON document.
pub fn cmd_completions(args: &CompletionsArgs) -> CommandOutput {
    let script = completion_script(args.shell);
    CommandOutput::Text {
        document: json!({"shell": args.shell.name(), "script": script}),
        text: script,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every visible top-level command appears in every shell's script.
    #[test]
    fn scripts_name_every_command() {
        let names: Vec<String> = Cli::command()
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .map(|c| c.get_name().to_owned())
            .collect();
        for shell in [
            CompletionShell::Bash,
            CompletionShell::Zsh,
            CompletionShell::Fish,
        ] {
            let script = completion_script(shell);
            for name in &names {
                assert!(script.contains(name.as_str()), "{}: {name}", shell.name());
            }
            assert!(script.contains("output-format"), "{}", shell.name());
        }
    }

    #[test]
    fn fish_script_completes_subcommand_flags() {
        let script = completion_script(CompletionShell::Fish);
        assert!(script.contains("__fish_pm_using_subcommand contracts\" -l flags-only"));
    }
}
