//! The mutation secret guard (`settings.mutation_guard.secret_guard`): scan what a mutation is
//! about to persist for credential shapes, then advise, refuse, or stay silent. Findings and
//! warnings name rules and paths only; no matched value ever leaves this module.

mod secret;

use std::collections::BTreeSet;

pub use secret::{Leaf, MIN_ASSIGNMENT_ENTROPY, SecretFinding, SecretRule, holds_secret, scan};

use crate::error::{Error, Result};

/// The warning token added when `--force` overrides a blocking guard.
pub const FORCE_OVERRIDE_WARNING: &str = "secret_guard_force_override";

/// What the guard does with credential-shaped text (`off` | `advise` | `block`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SecretGuardMode {
    /// No scan.
    Off,
    /// Scan; the mutation proceeds and stderr gets `warning:secret_guard_detected:…`
    /// (pm's default).
    #[default]
    Advise,
    /// Scan; a finding refuses the mutation before anything is written, unless `--force`.
    Block,
}

impl SecretGuardMode {
    /// Parses a settings value.
    pub fn parse(token: &str) -> Option<SecretGuardMode> {
        match token {
            "off" => Some(SecretGuardMode::Off),
            "advise" => Some(SecretGuardMode::Advise),
            "block" => Some(SecretGuardMode::Block),
            _ => None,
        }
    }

    /// Returns the settings value.
    pub fn as_str(self) -> &'static str {
        match self {
            SecretGuardMode::Off => "off",
            SecretGuardMode::Advise => "advise",
            SecretGuardMode::Block => "block",
        }
    }
}

/// The outcome of a guard that let the mutation proceed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GuardVerdict {
    /// The redacted findings (empty when the mode is `off` or nothing matched).
    pub findings: Vec<SecretFinding>,
    /// Warning tokens, without the `warning:` prefix: `secret_guard_detected:<n>:rules=<a,b>`,
    /// then `secret_guard_force_override` when `--force` overrode a blocking guard.
    pub warnings: Vec<String>,
    /// Whether `--force` overrode a blocking guard.
    pub override_applied: bool,
}

/// Applies the secret guard in `mode` to `leaves`, the texts a mutation would persist.
///
/// `<n>` in the warning counts findings (one per rule and path); `rules=` lists the distinct
/// rules sorted by name.
///
/// # Errors
/// `mutation_secret_guard_blocked` when `mode` is `block`, something matched and `force` is
/// false; the error names the rules and paths, never the values.
pub fn evaluate_secret_guard(
    mode: SecretGuardMode,
    force: bool,
    leaves: &[Leaf],
) -> Result<GuardVerdict> {
    if mode == SecretGuardMode::Off {
        return Ok(GuardVerdict::default());
    }
    let findings = scan(leaves);
    if findings.is_empty() {
        return Ok(GuardVerdict::default());
    }
    let rules: BTreeSet<&'static str> = findings.iter().map(|f| f.rule.as_str()).collect();
    let rules: Vec<&'static str> = rules.into_iter().collect();
    let override_applied = mode == SecretGuardMode::Block && force;
    if mode == SecretGuardMode::Block && !force {
        let mut paths: Vec<String> = Vec::new();
        for finding in &findings {
            if !paths.contains(&finding.path) {
                paths.push(finding.path.clone());
            }
        }
        return Err(Error::SecretGuardBlocked {
            rules: rules.iter().map(|r| (*r).to_owned()).collect(),
            paths,
        });
    }
    let mut warnings = vec![format!(
        "secret_guard_detected:{}:rules={}",
        findings.len(),
        rules.join(",")
    )];
    if override_applied {
        warnings.push(FORCE_OVERRIDE_WARNING.to_owned());
    }
    Ok(GuardVerdict {
        findings,
        warnings,
        override_applied,
    })
}

#[cfg(test)]
mod tests;
