//! Dimension resolution with provenance: canonical > legacy > intent >
//! default for include, amount, cost and encoding, and the aliases and hints that get reported.

use super::request::{Bound, ReadOutputRequest};
use super::surface::{Dimension, Surface, migration_hint};
use crate::args::numbers::safe_positive;
use crate::render::Format;

/// The precedence every receipt echoes.
pub const PRECEDENCE: [&str; 4] = ["canonical", "legacy", "intent", "default"];

/// A legacy flag as it literally appeared on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LegacyFlag {
    /// The flag, e.g. `--limit`.
    pub flag: &'static str,
    /// Its value; `None` for a switch such as `--brief`.
    pub value: Option<String>,
}

/// Which layer supplied a dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A canonical `--output-*` flag.
    Canonical,
    /// A command-local compatibility flag.
    Legacy,
    /// A context intent (`--for`) or a complete-result spelling (`list-all`, `--full`,
    /// `--no-truncate`).
    Intent,
    /// The surface default.
    Default,
}

impl Source {
    /// Returns the receipt name of the source.
    pub fn name(self) -> &'static str {
        match self {
            Source::Canonical => "canonical",
            Source::Legacy => "legacy",
            Source::Intent => "intent",
            Source::Default => "default",
        }
    }
}

/// The token ceiling that binds a read, and where it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding {
    /// The dimension source, or `None` when the session allowance binds.
    pub source: Option<Source>,
    /// The ceiling in tokens.
    pub tokens: u64,
}

impl Binding {
    /// Returns the receipt name of the binding source (`session` for a session allowance).
    pub fn source_name(self) -> &'static str {
        self.source.map_or("session", Source::name)
    }
}

/// The resolved dimensions of one read.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The include source, when requested.
    pub include: Option<Source>,
    /// The amount source and bound, when requested.
    pub amount: Option<(Source, Bound)>,
    /// The cost source and bound (always resolved; the default ceiling last).
    pub cost: (Source, Bound),
    /// The encoding source, when requested.
    pub encoding: Option<Source>,
    /// Canonical flags used, in dimension order.
    pub canonical_options_used: Vec<&'static str>,
    /// Legacy flags that supplied a dimension (one per dimension at most).
    pub legacy_aliases_used: Vec<&'static str>,
    /// One hint per legacy alias used.
    pub migration_hints: Vec<String>,
}

impl Resolved {
    /// Returns the dimensions the caller asked for: a non-default source, or a canonical flag.
    pub fn requested(&self) -> Vec<&'static str> {
        let source = |d: Dimension| match d {
            Dimension::Include => self.include,
            Dimension::Amount => self.amount.map(|a| a.0),
            Dimension::Cost => Some(self.cost.0),
            Dimension::Encoding => self.encoding,
        };
        Dimension::ALL
            .into_iter()
            .filter(|d| {
                source(*d).is_some_and(|s| s != Source::Default)
                    || self.canonical_options_used.contains(&d.canonical_flag())
            })
            .map(Dimension::name)
            .collect()
    }

    /// Returns the binding ceiling: the smaller of the cost bound (unless unbounded) and the
    /// session allowance (`session_remaining`); a tie goes to the cost.
    pub fn binding(&self, session_remaining: Option<u64>) -> Option<Binding> {
        let cost = match self.cost.1 {
            Bound::At(tokens) => Some(Binding {
                source: Some(self.cost.0),
                tokens,
            }),
            Bound::Unbounded => None,
        };
        let session = session_remaining.map(|tokens| Binding {
            source: None,
            tokens,
        });
        match (cost, session) {
            (Some(c), Some(s)) if s.tokens < c.tokens => Some(s),
            (Some(c), _) => Some(c),
            (None, s) => s,
        }
    }
}

/// What the command reported about its invocation, for provenance.
#[derive(Clone, Copy, Debug)]
pub struct Invocation<'a> {
    /// The command spelling (`list-all`, `ctx`, `list`).
    pub spelling: &'a str,
    /// Legacy flags that literally appeared on the command line.
    pub legacy: &'a [LegacyFlag],
    /// The effective token budget of a `--for` intent.
    pub intent_budget: Option<u64>,
}

/// The number of a legacy row or token flag's value.
fn positive(value: Option<&str>) -> Option<u64> {
    value.and_then(safe_positive)
}

/// Returns the first legacy flag of `dimension` (in table order) that appeared and yields a
/// usable value, with that value.
fn legacy_winner(
    surface: Surface,
    dimension: Dimension,
    legacy: &[LegacyFlag],
) -> Option<(&'static str, Option<&str>)> {
    surface.legacy_flags(dimension).iter().find_map(|flag| {
        let used = legacy.iter().find(|l| l.flag == *flag)?;
        let value = used.value.as_deref();
        let usable = match dimension {
            Dimension::Include => value.is_none_or(|v| v.split(',').any(|t| !t.trim().is_empty())),
            Dimension::Amount => {
                matches!(*flag, "--no-truncate" | "--unbounded") || positive(value).is_some()
            }
            Dimension::Cost => positive(value).is_some(),
            Dimension::Encoding => {
                matches!(*flag, "--stream" | "--follow") || matches!(value, Some("json" | "toon"))
            }
        };
        usable.then_some((*flag, value))
    })
}

/// Resolves the four dimensions of a read of `surface` printed in `format`.
pub fn resolve(
    surface: Surface,
    invocation: Invocation<'_>,
    request: &ReadOutputRequest,
    format: Format,
) -> Resolved {
    let winners: Vec<(Dimension, &'static str, Option<&str>)> = Dimension::ALL
        .into_iter()
        .filter_map(|d| {
            legacy_winner(surface, d, invocation.legacy).map(|(flag, value)| (d, flag, value))
        })
        .collect();
    let winner = |d: Dimension| winners.iter().find(|w| w.0 == d).map(|w| (w.1, w.2));
    let modes = request.modes(surface);

    let include = if !request.include.is_empty() {
        Some(Source::Canonical)
    } else {
        winner(Dimension::Include).map(|_| Source::Legacy)
    };
    let amount = match (request.limit, winner(Dimension::Amount)) {
        (Some(bound), _) => Some((Source::Canonical, bound)),
        (None, Some(("--no-truncate" | "--unbounded", _))) => {
            Some((Source::Legacy, Bound::Unbounded))
        }
        (None, Some((_, value))) => positive(value).map(|n| (Source::Legacy, Bound::At(n))),
        (None, None) => None,
    };
    let complete = invocation
        .spelling
        .split_whitespace()
        .next()
        .is_some_and(|root| root.eq_ignore_ascii_case("list-all"))
        || winner(Dimension::Amount).is_some_and(|w| w.0 == "--no-truncate")
        || winner(Dimension::Include).is_some_and(|w| w.0 == "--full")
        || modes.contains(&"full");
    let cost = match (
        request.budget,
        winner(Dimension::Cost),
        invocation.intent_budget,
    ) {
        (Some(bound), _, _) => (Source::Canonical, bound),
        (None, Some((_, value)), _) => (
            Source::Legacy,
            positive(value).map_or(Bound::Unbounded, Bound::At),
        ),
        (None, None, Some(tokens)) => (Source::Intent, Bound::At(tokens)),
        (None, None, None) if complete => (Source::Intent, Bound::Unbounded),
        (None, None, None) => (
            Source::Default,
            Bound::At(surface.budget_class().ceiling(format)),
        ),
    };
    let encoding = if request.format.is_some() {
        Some(Source::Canonical)
    } else {
        winner(Dimension::Encoding).map(|_| Source::Legacy)
    };
    let canonical_options_used = Dimension::ALL
        .into_iter()
        .filter(|d| {
            let source = match d {
                Dimension::Include => include,
                Dimension::Amount => amount.map(|a| a.0),
                Dimension::Cost => Some(cost.0),
                Dimension::Encoding => encoding,
            };
            source == Some(Source::Canonical) || (*d == Dimension::Include && !modes.is_empty())
        })
        .map(Dimension::canonical_flag)
        .collect();
    Resolved {
        include,
        amount,
        cost,
        encoding,
        canonical_options_used,
        legacy_aliases_used: winners.iter().map(|w| w.1).collect(),
        migration_hints: winners.iter().map(|w| migration_hint(w.1, w.0)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn legacy(flags: &[(&'static str, Option<&str>)]) -> Vec<LegacyFlag> {
        flags
            .iter()
            .map(|(flag, value)| LegacyFlag {
                flag,
                value: value.map(str::to_owned),
            })
            .collect()
    }

    fn run(spelling: &str, flags: &[LegacyFlag], request: &ReadOutputRequest) -> Resolved {
        let invocation = Invocation {
            spelling,
            legacy: flags,
            intent_budget: None,
        };
        resolve(Surface::List, invocation, request, Format::Toon)
    }

    #[test]
    fn defaults_request_nothing() {
        let r = run("list", &[], &ReadOutputRequest::default());
        assert_eq!(r.cost, (Source::Default, Bound::At(4000)));
        assert!(r.requested().is_empty());
        assert!(r.legacy_aliases_used.is_empty());
        let json = resolve(
            Surface::List,
            Invocation {
                spelling: "list",
                legacy: &[],
                intent_budget: None,
            },
            &ReadOutputRequest::default(),
            Format::Json,
        );
        assert_eq!(json.cost.1, Bound::At(6000));
    }

    #[test]
    fn legacy_aliases_report_one_winner_per_dimension() {
        let flags = legacy(&[
            ("--after", Some("eyJ...")),
            ("--limit", Some("2")),
            ("--compact", None),
            ("--brief", None),
            ("--format", Some("ndjson")),
        ]);
        let r = run("list", &flags, &ReadOutputRequest::default());
        // --after carries a cursor, not a count, so --limit supplies the amount.
        assert_eq!(r.legacy_aliases_used, ["--brief", "--limit"]);
        assert_eq!(r.amount, Some((Source::Legacy, Bound::At(2))));
        assert_eq!(r.encoding, None);
        assert_eq!(
            r.migration_hints,
            [
                "--brief is a compatibility alias; prefer --output-include brief.",
                "--limit is a compatibility alias; prefer --output-limit <n>."
            ]
        );
        assert_eq!(r.requested(), ["include", "amount"]);
    }

    #[test]
    fn complete_result_spellings_imply_unbounded_cost() {
        for (spelling, flags) in [
            ("list-all", legacy(&[])),
            ("list", legacy(&[("--no-truncate", None)])),
            ("list", legacy(&[("--full", None)])),
        ] {
            let r = run(spelling, &flags, &ReadOutputRequest::default());
            assert_eq!(r.cost, (Source::Intent, Bound::Unbounded), "{spelling}");
            assert!(r.requested().contains(&"cost"));
        }
        let mode = ReadOutputRequest {
            include: vec!["full".into()],
            ..ReadOutputRequest::default()
        };
        let r = run("list", &[], &mode);
        assert_eq!(r.cost, (Source::Intent, Bound::Unbounded));
        assert_eq!(r.canonical_options_used, ["--output-include"]);
        // An explicit budget still wins.
        let explicit = ReadOutputRequest {
            budget: Some(Bound::At(500)),
            ..ReadOutputRequest::default()
        };
        assert_eq!(
            run("list-all", &[], &explicit).cost,
            (Source::Canonical, Bound::At(500))
        );
    }

    #[test]
    fn mixed_spellings_report_both() {
        let flags = legacy(&[("--compact", None)]);
        let request = ReadOutputRequest {
            include: vec!["id".into()],
            ..ReadOutputRequest::default()
        };
        let r = run("list", &flags, &request);
        assert_eq!(r.include, Some(Source::Canonical));
        assert_eq!(r.canonical_options_used, ["--output-include"]);
        assert_eq!(r.legacy_aliases_used, ["--compact"]);
    }

    #[test]
    fn binding_takes_the_smaller_ceiling() {
        let r = run("list", &[], &ReadOutputRequest::default());
        assert_eq!(
            r.binding(Some(300)).map(Binding::source_name),
            Some("session")
        );
        assert_eq!(
            r.binding(Some(5000)).map(Binding::source_name),
            Some("default")
        );
        assert_eq!(r.binding(None).map(|b| b.tokens), Some(4000));
        let all = run("list-all", &[], &ReadOutputRequest::default());
        assert_eq!(all.binding(None), None);
        assert_eq!(all.binding(Some(700)).map(|b| b.tokens), Some(700));
    }

    #[test]
    fn intent_budget_binds_below_canonical_and_legacy() {
        let inv = Invocation {
            spelling: "list",
            legacy: &[],
            intent_budget: Some(3200),
        };
        let r = resolve(
            Surface::List,
            inv,
            &ReadOutputRequest::default(),
            Format::Toon,
        );
        assert_eq!(r.cost, (Source::Intent, Bound::At(3200)));
        let flags = legacy(&[("--token-budget", Some("900"))]);
        let inv = Invocation {
            spelling: "list",
            legacy: &flags,
            intent_budget: Some(900),
        };
        let r = resolve(
            Surface::List,
            inv,
            &ReadOutputRequest::default(),
            Format::Toon,
        );
        assert_eq!(r.cost, (Source::Legacy, Bound::At(900)));
        assert_eq!(r.legacy_aliases_used, ["--token-budget"]);
    }
}
