//! The credential detectors of the mutation secret guard: pm-cli's rule set plus one of ours
//! (`url_credentials`), defined once.
//! A finding names its rule and the path of the text that matched, never the matched value.

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

/// One credential detector (pm-cli's `SecretGuardFinding.rule`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SecretRule {
    /// A GitHub token: `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` plus 20 or more letters and
    /// digits, or `github_pat_` plus 20 or more letters, digits and `_`.
    GithubToken,
    /// A PEM private key header: `-----BEGIN PRIVATE KEY-----`, with at most one word
    /// (`RSA`, `OPENSSH`, `EC`, `ENCRYPTED`, …) before `PRIVATE`.
    PrivateKey,
    /// An AWS access key id: `AKIA` or `ASIA` plus exactly 16 capitals or digits.
    AwsAccessKey,
    /// An npm access token: `npm_` plus 20 or more letters and digits.
    NpmToken,
    /// A Slack token: `xoxb-`, `xoxa-`, `xoxp-`, `xoxr-`, `xoxs-` plus 10 or more letters,
    /// digits and `-`.
    SlackToken,
    /// `token`, `secret`, `password`, `passwd` or `api_key` (`api-key`, `apikey`; any case)
    /// assigned with `=` or `:` a value of 24 or more `[A-Za-z0-9+/=_-]` characters whose
    /// Shannon entropy is at least [`MIN_ASSIGNMENT_ENTROPY`] bits per character.
    HighEntropyAssignment,
    /// Ours, not pm's: a URL whose userinfo holds a password (`scheme://user:pw@host`, the user
    /// may be empty). A password that starts with `$`, `{` or `<` is a reference or a
    /// placeholder (`${TOKEN}`, `<password>`), not a finding.
    UrlCredentials,
}

/// The least entropy (bits per character) of a `high_entropy_assignment` value: pm's 3.5, so
/// `token=aaaa…` or `password=abababab…` are not findings.
pub const MIN_ASSIGNMENT_ENTROPY: f64 = 3.5;

/// JavaScript's `\s` (WhiteSpace and LineTerminator), which pm's assignment pattern uses; it
/// differs from Unicode `White_Space` (U+FEFF is in, U+0085 is out).
const JS_SPACE: &str = r"[\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]";

impl SecretRule {
    /// Every rule, in the order pm checks them on each text (ours last).
    pub const ALL: [SecretRule; 7] = [
        SecretRule::GithubToken,
        SecretRule::PrivateKey,
        SecretRule::AwsAccessKey,
        SecretRule::NpmToken,
        SecretRule::SlackToken,
        SecretRule::HighEntropyAssignment,
        SecretRule::UrlCredentials,
    ];

    /// Returns the rule's stable name (as printed in `rules=`).
    pub fn as_str(self) -> &'static str {
        match self {
            SecretRule::GithubToken => "github_token",
            SecretRule::PrivateKey => "private_key",
            SecretRule::AwsAccessKey => "aws_access_key",
            SecretRule::NpmToken => "npm_token",
            SecretRule::SlackToken => "slack_token",
            SecretRule::HighEntropyAssignment => "high_entropy_assignment",
            SecretRule::UrlCredentials => "url_credentials",
        }
    }

    /// Returns the rule's pattern. `(?-u:\b)` is JavaScript's ASCII word boundary and
    /// `(?i-u:…)` its ASCII-only case folding, so the patterns accept what pm's do.
    fn pattern(self) -> String {
        match self {
            SecretRule::GithubToken => {
                r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})(?-u:\b)"
                    .into()
            }
            SecretRule::PrivateKey => r"-----BEGIN (?:[A-Z0-9]+ )?PRIVATE KEY-----".into(),
            SecretRule::AwsAccessKey => r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)".into(),
            SecretRule::NpmToken => r"(?-u:\b)npm_[A-Za-z0-9]{20,}(?-u:\b)".into(),
            SecretRule::SlackToken => r"(?-u:\b)xox[baprs]-[A-Za-z0-9-]{10,}(?-u:\b)".into(),
            SecretRule::HighEntropyAssignment => format!(
                r#"(?-u:\b)(?i-u:token|secret|password|passwd|api[_-]?key){JS_SPACE}*[:=]{JS_SPACE}*["']?([A-Za-z0-9+/=_-]{{24,}})"#
            ),
            SecretRule::UrlCredentials => {
                r"(?i-u:\b[a-z][a-z0-9+.-]*)://[^\s/?#@:]*:[^\s/?#@${<][^\s/?#@]*@".into()
            }
        }
    }

    /// Returns whether `text` holds a credential of this shape.
    pub fn matches(self, text: &str) -> bool {
        let regex = &PATTERNS[self as usize];
        match self {
            // Every assignment is judged until one value looks generated (pm's `matchAll`).
            SecretRule::HighEntropyAssignment => regex.captures_iter(text).any(|caps| {
                caps.get(1)
                    .is_some_and(|value| shannon_entropy(value.as_str()) >= MIN_ASSIGNMENT_ENTROPY)
            }),
            _ => regex.is_match(text),
        }
    }
}

/// The compiled patterns, indexed by the rule's discriminant.
static PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    SecretRule::ALL
        .iter()
        .enumerate()
        .map(|(index, rule)| {
            debug_assert_eq!(index, *rule as usize);
            Regex::new(&rule.pattern()).expect("the secret rule patterns are static and tested")
        })
        .collect()
});

/// One text a mutation would persist, with the path that names where it came from (`--title`,
/// `TITLE`, `--add[1]`, `--stdin-json.description`). The path never holds the text itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leaf {
    /// Where the text came from.
    pub path: String,
    /// The text.
    pub text: String,
}

impl Leaf {
    /// Returns a leaf.
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> Leaf {
        Leaf {
            path: path.into(),
            text: text.into(),
        }
    }
}

/// One redacted match: which rule fired on which text. The matched value is never kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SecretFinding {
    /// The rule.
    pub rule: SecretRule,
    /// The path of the leaf it fired on.
    pub path: String,
}

/// Returns the findings in `leaves`: each rule at most once per path, in leaf order then rule
/// order (pm's `scanMutationSecrets`).
pub fn scan(leaves: &[Leaf]) -> Vec<SecretFinding> {
    let mut findings: Vec<SecretFinding> = Vec::new();
    for leaf in leaves {
        for rule in SecretRule::ALL {
            let seen = findings
                .iter()
                .any(|f| f.rule == rule && f.path == leaf.path);
            if !seen && rule.matches(&leaf.text) {
                findings.push(SecretFinding {
                    rule,
                    path: leaf.path.clone(),
                });
            }
        }
    }
    findings
}

/// Returns whether `text` holds any credential shape (used to keep such text out of paths).
pub fn holds_secret(text: &str) -> bool {
    SecretRule::ALL.iter().any(|rule| rule.matches(text))
}

/// Returns the Shannon entropy of `value` in bits per character, summed over its distinct
/// characters in order of first appearance (pm's order, so ties at the threshold agree).
pub(super) fn shannon_entropy(value: &str) -> f64 {
    let mut counts: Vec<(char, u32)> = Vec::new();
    for c in value.chars() {
        match counts.iter_mut().find(|(seen, _)| *seen == c) {
            Some((_, count)) => *count += 1,
            None => counts.push((c, 1)),
        }
    }
    // pm divides by the UTF-16 length; the assignment values are ASCII, where both agree.
    let length = value.encode_utf16().count() as f64;
    let mut entropy = 0.0;
    for (_, count) in counts {
        let probability = f64::from(count) / length;
        entropy -= probability * probability.log2();
    }
    entropy
}
