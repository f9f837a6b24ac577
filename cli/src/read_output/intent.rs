//! Context intents (`--for`), the generic part: the intent table, validation,
//! budget-derived row ceilings, and the `context_intent` receipt with its degradation ladder.
//! What an intent changes in a command (depth, sections, fields) is the command's job.

use serde_json::{Map, Value, json};

use super::amount::set;
use super::continuation::ProducerCursor;
use super::rows::{self, RowContract, RowPath};
use super::shrink::{compact_strings, measure_map, retain_prefix, settle};
use super::surface::Surface;
use crate::args::numbers::{Number, TokenBudget};
use crate::failure::shell_quote;
use crate::failure::{CliError, ReadOutputRefusal, Result};
use crate::render::Format;

/// The smallest token budget an intent accepts.
pub const MIN_INTENT_TOKENS: u64 = 256;

/// A built-in intent declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntentSpec {
    /// The command that accepts it.
    pub surface: Surface,
    /// Its name.
    pub name: &'static str,
    /// Its declared token budget.
    pub token_budget: u64,
    /// The field groups it keeps. pm's context intents also declare optional sections
    /// (orient: hierarchy, blockers, activity; handoff: in_progress, decisions, activity) that
    /// our brief-depth context does not compute, so they are not claimed here.
    pub included_field_groups: &'static [&'static str],
    /// The projection strategy it applies before measurement.
    pub degradation: &'static str,
}

/// Every built-in intent.
pub const INTENTS: &[IntentSpec] = &[
    IntentSpec {
        surface: Surface::Context,
        name: "handoff",
        token_budget: 2200,
        included_field_groups: &["summary", "focus"],
        degradation: "bounded_sections",
    },
    IntentSpec {
        surface: Surface::Context,
        name: "orient",
        token_budget: 3000,
        included_field_groups: &["summary", "focus"],
        degradation: "bounded_sections",
    },
    IntentSpec {
        surface: Surface::Get,
        name: "inspect",
        token_budget: 3200,
        included_field_groups: &["item", "children", "claim_state", "linked"],
        degradation: "standard_item",
    },
    IntentSpec {
        surface: Surface::List,
        name: "triage",
        token_budget: 3200,
        included_field_groups: &["identity", "governance", "ownership", "dependencies"],
        degradation: "bounded_fields_and_rows",
    },
    IntentSpec {
        surface: Surface::Next,
        name: "execute",
        token_budget: 1200,
        included_field_groups: &["recommended"],
        degradation: "bounded_ranked_rows",
    },
    IntentSpec {
        surface: Surface::Search,
        name: "discover",
        token_budget: 1800,
        included_field_groups: &["identity", "status", "lineage", "match"],
        degradation: "bounded_ranked_rows",
    },
];

/// The row limit an intent derives from its budget (list, search, context).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowCeiling {
    /// The budget-derived ceiling.
    pub derived: u64,
    /// The limit the command applies: the smaller of `derived` and an explicit `--limit`.
    pub limit: u64,
    /// `explicit_limit` or `token_budget`: which one set `limit`.
    pub binding_constraint: &'static str,
    /// Why, in words.
    pub limit_reason: &'static str,
}

/// An intent resolved for one invocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedIntent {
    /// The declaration.
    pub spec: IntentSpec,
    /// The effective token budget (`--token-budget`, else the declared one).
    pub token_budget: u64,
    /// Whether `--token-budget` was given.
    pub explicit_budget: bool,
    /// The row ceiling, for list, search and context.
    pub ceiling: Option<RowCeiling>,
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(previous + usize::from(ca != *cb));
            previous = above;
        }
    }
    row[b.len()]
}

/// Resolves `--for` and `--token-budget` for `surface` before the command runs.
///
/// # Errors
/// `unknown_context_intent` (with the nearest intent) for an intent the command does not
/// declare; `invalid_argument_value` for a token budget below 256; `missing_required_option`
/// for `--token-budget` without `--for` on get, list and search.
pub fn resolve(
    surface: Surface,
    intent: Option<&str>,
    token_budget: Option<&Number<TokenBudget>>,
    explicit_limit: Option<u64>,
) -> Result<Option<ResolvedIntent>> {
    let Some(raw) = intent else {
        if token_budget.is_some()
            && matches!(surface, Surface::Get | Surface::List | Surface::Search)
        {
            return Err(CliError::ReadOutput {
                kind: ReadOutputRefusal::MissingRequiredOption,
                message: "--token-budget requires a declared context intent selected with --for"
                    .into(),
                flag: "--for",
                value: None,
                allowed: intent_names(surface).into(),
                suggestion: None,
            });
        }
        return Ok(None);
    };
    let name = raw.trim().to_ascii_lowercase();
    let Some(spec) = INTENTS
        .iter()
        .find(|s| s.surface == surface && s.name == name)
    else {
        let allowed = intent_names(surface);
        let nearest = allowed
            .iter()
            .min_by_key(|c| (levenshtein(&name, c), (*c).clone()))
            .cloned();
        let message = match &nearest {
            Some(n) => format!(
                "Unknown context intent \"{name}\" for {}. Did you mean \"{n}\"?",
                surface.name()
            ),
            None => format!("Unknown context intent \"{name}\" for {}.", surface.name()),
        };
        return Err(CliError::ReadOutput {
            kind: ReadOutputRefusal::UnknownContextIntent,
            message,
            flag: "--for",
            value: Some(raw.to_owned()),
            allowed: allowed.into(),
            suggestion: nearest,
        });
    };
    let explicit = token_budget.and_then(Number::intent_override);
    if let Some(n) = explicit.filter(|n| *n < MIN_INTENT_TOKENS) {
        return Err(CliError::ReadOutput {
            kind: ReadOutputRefusal::InvalidValue,
            message: format!("Context intent token budget must be at least {MIN_INTENT_TOKENS}"),
            flag: "--token-budget",
            value: Some(n.to_string()),
            allowed: Box::default(),
            suggestion: None,
        });
    }
    let budget = explicit.unwrap_or(spec.token_budget);
    let ceiling = row_ceiling(spec, budget, explicit.is_some(), explicit_limit);
    Ok(Some(ResolvedIntent {
        spec: *spec,
        token_budget: budget,
        explicit_budget: explicit.is_some(),
        ceiling,
    }))
}

fn intent_names(surface: Surface) -> Vec<String> {
    INTENTS
        .iter()
        .filter(|s| s.surface == surface)
        .map(|s| s.name.to_owned())
        .collect()
}

/// Returns the budget-derived row ceiling of list, search and context intents:
/// `max(floor, (budget − overhead) / row_cost)`, capped at 20 (context) or 100 without an
/// explicit budget; an explicit smaller `--limit` binds instead.
fn row_ceiling(
    spec: &IntentSpec,
    budget: u64,
    explicit_budget: bool,
    explicit_limit: Option<u64>,
) -> Option<RowCeiling> {
    let (overhead, row_cost, floor, cap) = match (spec.surface, spec.name) {
        (Surface::Context, "orient") => (1200, 600, 1, 20),
        (Surface::Context, _) => (800, 500, 1, 20),
        (Surface::List, _) => (520, 16, 2, 100),
        (Surface::Search, _) => (480, 16, 2, 100),
        _ => return None,
    };
    let mut derived = (budget.saturating_sub(overhead) / row_cost).max(floor);
    if !explicit_budget {
        derived = derived.min(cap);
    }
    Some(match explicit_limit {
        Some(limit) if limit < derived => RowCeiling {
            derived,
            limit,
            binding_constraint: "explicit_limit",
            limit_reason: "explicit --limit is below the budget-derived row ceiling",
        },
        Some(_) => RowCeiling {
            derived,
            limit: derived,
            binding_constraint: "token_budget",
            limit_reason: "explicit --limit exceeds the budget-derived row ceiling",
        },
        None => RowCeiling {
            derived,
            limit: derived,
            binding_constraint: "token_budget",
            limit_reason: "row ceiling derived from the token budget",
        },
    })
}

impl ResolvedIntent {
    fn receipt(&self, degradation: &str, feasible: bool, omitted: bool, estimate: u64) -> Value {
        let mut r = Map::new();
        r.insert("command".into(), json!(self.spec.surface.name()));
        r.insert("intent".into(), json!(self.spec.name));
        r.insert("source".into(), json!("core"));
        r.insert(
            "included_field_groups".into(),
            json!(self.spec.included_field_groups),
        );
        r.insert("token_budget".into(), json!(self.token_budget));
        r.insert(
            "declared_token_budget".into(),
            json!(self.spec.token_budget),
        );
        let delta = self.explicit_budget.then(|| {
            i64::try_from(self.token_budget).unwrap_or(i64::MAX)
                - i64::try_from(self.spec.token_budget).unwrap_or(i64::MAX)
        });
        r.insert("token_budget_override".into(), json!(delta));
        r.insert("estimated_tokens".into(), json!(estimate));
        r.insert(
            "within_budget".into(),
            json!(!omitted && estimate <= self.token_budget),
        );
        r.insert("degradation".into(), json!(degradation));
        r.insert("declaration_feasible".into(), json!(feasible));
        r.insert("result_omitted".into(), json!(omitted));
        if let Some(c) = &self.ceiling {
            r.insert("budget_derived_limit".into(), json!(c.derived));
            r.insert("binding_constraint".into(), json!(c.binding_constraint));
            r.insert("limit_reason".into(), json!(c.limit_reason));
        }
        Value::Object(r)
    }

    /// Row collections the intent may trim (list, search, next), least useful first: `next`
    /// gives up other agents' work, blocked work and decisions before its ready queue.
    fn trimmable(&self) -> &'static [&'static str] {
        match self.spec.surface {
            Surface::List | Surface::Search => &["items"],
            Surface::Next => &["held_by_others", "blocked", "decision_needed", "ready"],
            _ => &[],
        }
    }
}

/// How an intent left the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntentOutcome {
    /// The useful result is kept (possibly degraded).
    Kept,
    /// Nothing useful fitted: the result is `{budget_exceeded, context_intent}`.
    ReceiptOnly,
}

/// Attaches `budget_derived_limit` and the `context_intent` receipt, then degrades the result
/// to the intent budget: long strings, then trailing rows (keeping one), then the receipt only.
/// `operand` is the item id or query, for the retry command.
///
/// A continuation page (`after` given) is fitted as it will print: collapsed to its rows and
/// continuation contract, without the receipt the collapse removes, so a
/// cursor walk fills every page up to the intent budget.
pub fn apply(
    env: &mut Map<String, Value>,
    intent: &ResolvedIntent,
    operand: Option<&str>,
    contract: &RowContract,
    format: Format,
    after: Option<&str>,
) -> IntentOutcome {
    if let Some(c) = &intent.ceiling {
        set(env, "budget_derived_limit", json!(c.derived));
    }
    let budget = intent.token_budget;
    let mut degradation = intent.spec.degradation;
    let continuation = after.filter(|a| !a.is_empty());
    if let Some(after) = continuation {
        super::continuation::collapse(env, after);
    }
    let finish = |env: &mut Map<String, Value>, degradation: &str| {
        if continuation.is_some() {
            return measure_map(env, format);
        }
        env.shift_remove("context_intent");
        env.insert("context_intent".into(), Value::Null);
        settle(env, format, |env, estimate| {
            let feasible = estimate <= intent.spec.token_budget;
            set(
                env,
                "context_intent",
                intent.receipt(degradation, feasible, false, estimate),
            );
        })
    };
    let mut estimate = finish(env, degradation);
    if estimate > budget && compact_strings(env) {
        degradation = "recursive_budget_compaction";
        estimate = finish(env, degradation);
    }
    if estimate > budget && !intent.trimmable().is_empty() {
        let producer = ProducerCursor::of(env, after);
        let items_before = env.get("items").and_then(Value::as_array).map(Vec::len);
        let before = estimate;
        for key in intent.trimmable() {
            let path = RowPath::declared(key);
            let Some(len) = rows::get(env, &path).and_then(rows::collection_len) else {
                continue;
            };
            let others = rows::count_rows(env, contract) - len;
            let min = usize::from(others == 0);
            if len <= min {
                continue;
            }
            estimate = retain_prefix(env, &path, min, len, budget, |env| {
                if let (Some(p), Some(n), Some(Value::Array(items))) =
                    (&producer, items_before, env.get("items"))
                    && let Some(next) = p.rebase(items, n)
                {
                    let retained = items.len();
                    set(env, "next_cursor", json!(next));
                    if env.get("applied_limit").is_some_and(Value::is_number) {
                        set(env, "applied_limit", json!(retained));
                    }
                }
                if env.get("count").is_some_and(Value::is_number) {
                    let count = rows::count_rows(env, contract);
                    set(env, "count", json!(count));
                }
                finish(env, "budget_row_compaction")
            });
            if estimate <= budget {
                break;
            }
        }
        if estimate < before {
            degradation = "budget_row_compaction";
            estimate = finish(env, degradation);
        }
    }
    if estimate <= budget {
        return IntentOutcome::Kept;
    }
    let declared = intent.spec.token_budget;
    let reason = if intent.token_budget == declared {
        "declared_budget_infeasible"
    } else {
        "effective_budget_infeasible"
    };
    let mut retry = format!("pm {}", intent.spec.surface.name());
    if let Some(operand) = operand {
        retry.push(' ');
        retry.push_str(&shell_quote(operand));
    }
    retry.push_str(&format!(
        " --for {} --token-budget {}",
        intent.spec.name,
        estimate.div_ceil(100) * 100
    ));
    if let Some(c) = &intent.ceiling {
        retry.push_str(&format!(" --limit {}", c.limit));
    }
    env.clear();
    env.insert(
        "budget_exceeded".into(),
        json!({"omitted_result": true, "reason": reason, "restore_with": retry}),
    );
    env.insert(
        "context_intent".into(),
        intent.receipt("budget_receipt_only", estimate <= declared, true, estimate),
    );
    IntentOutcome::ReceiptOnly
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(r: Result<Option<ResolvedIntent>>) -> String {
        r.err()
            .map(|e| format!("{}: {e}", e.code()))
            .unwrap_or_default()
    }

    #[test]
    fn validation_messages() {
        assert_eq!(
            code(resolve(Surface::List, Some("triag"), None, None)),
            "unknown_context_intent: Unknown context intent \"triag\" for list. Did you mean \"triage\"?"
        );
        assert_eq!(
            code(resolve(Surface::Context, Some("ORIENTX"), None, None)),
            "unknown_context_intent: Unknown context intent \"orientx\" for context. Did you mean \"orient\"?"
        );
        assert_eq!(
            code(resolve(
                Surface::List,
                Some("triage"),
                Some(&"100".into()),
                None
            )),
            "invalid_argument_value: Context intent token budget must be at least 256"
        );
        assert_eq!(
            code(resolve(Surface::Search, None, Some(&"900".into()), None)),
            "missing_required_option: --token-budget requires a declared context intent selected with --for"
        );
        assert!(matches!(
            resolve(Surface::Next, None, Some(&"900".into()), None),
            Ok(None)
        ));
        let err = resolve(Surface::List, Some("x"), None, None).err();
        let Some(CliError::ReadOutput {
            allowed,
            suggestion,
            ..
        }) = err
        else {
            panic!("expected a refusal");
        };
        assert_eq!(&*allowed, ["triage"]);
        assert_eq!(suggestion.as_deref(), Some("triage"));
    }

    #[test]
    fn row_ceilings() -> Result<()> {
        let list = resolve(Surface::List, Some("triage"), None, None)?;
        // (3200 - 520) / 16 = 167, capped at 100 without an explicit budget.
        assert_eq!(list.and_then(|i| i.ceiling).map(|c| c.limit), Some(100));
        let list = resolve(Surface::List, Some("triage"), Some(&"3200".into()), None)?;
        assert_eq!(list.and_then(|i| i.ceiling).map(|c| c.limit), Some(167));
        let limited = resolve(Surface::List, Some("triage"), None, Some(5))?;
        let c = limited.and_then(|i| i.ceiling);
        assert_eq!(
            c.as_ref().map(|c| (c.limit, c.binding_constraint)),
            Some((5, "explicit_limit"))
        );
        let orient = resolve(Surface::Context, Some("orient"), None, None)?;
        // (3000 - 1200) / 600 = 3.
        assert_eq!(orient.and_then(|i| i.ceiling).map(|c| c.derived), Some(3));
        let small = resolve(Surface::Search, Some("discover"), Some(&"300".into()), None)?;
        assert_eq!(small.and_then(|i| i.ceiling).map(|c| c.derived), Some(2));
        assert_eq!(
            resolve(Surface::Next, Some("execute"), None, None)?.and_then(|i| i.ceiling),
            None
        );
        Ok(())
    }

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn receipt_fits_or_degrades() -> Result<()> {
        let intent = resolve(Surface::Next, Some("execute"), Some(&"300".into()), None)?
            .ok_or("no intent")
            .map_err(pm_engine::Error::internal)?;
        let rows: Vec<Value> = (0..40)
            .map(|i| json!({"id": format!("pm-{i:03}"), "title": "t".repeat(30)}))
            .collect();
        let mut env = obj(json!({"recommended": {"id": "pm-r"}, "ready": rows, "blocked": []}));
        let contract = RowContract::derive(Surface::Next, &env);
        assert_eq!(
            apply(&mut env, &intent, None, &contract, Format::Json, None),
            IntentOutcome::Kept
        );
        let receipt = &env["context_intent"];
        assert_eq!(receipt["degradation"], "budget_row_compaction");
        assert_eq!(receipt["token_budget_override"], -900);
        let printed = crate::render::budget::measure(&Value::Object(env.clone()), Format::Json);
        assert_eq!(receipt["estimated_tokens"], printed);
        assert!(printed <= 300);
        assert!(
            env["ready"]
                .as_array()
                .is_some_and(|r| !r.is_empty() && r.len() < 40)
        );

        let reasons = vec!["r".repeat(200); 40];
        let huge = obj(json!({"recommended": {"id": "pm-r", "reasons": reasons}}));
        let mut env = huge;
        let contract = RowContract::derive(Surface::Next, &env);
        assert_eq!(
            apply(&mut env, &intent, None, &contract, Format::Toon, None),
            IntentOutcome::ReceiptOnly
        );
        assert_eq!(
            env["budget_exceeded"]["reason"],
            "effective_budget_infeasible"
        );
        assert_eq!(env["context_intent"]["result_omitted"], true);
        assert_eq!(env["context_intent"]["degradation"], "budget_receipt_only");
        assert!(
            env["budget_exceeded"]["restore_with"]
                .as_str()
                .is_some_and(|s| s.starts_with("pm next --for execute --token-budget "))
        );
        Ok(())
    }

    #[test]
    fn next_gives_up_other_collections_before_its_ready_queue() -> Result<()> {
        let intent = resolve(Surface::Next, Some("execute"), Some(&"400".into()), None)?
            .ok_or("no intent")
            .map_err(pm_engine::Error::internal)?;
        let rows = |prefix: &str| -> Vec<Value> {
            (0..12)
                .map(|i| json!({"id": format!("{prefix}-{i:02}"), "title": "t".repeat(40)}))
                .collect()
        };
        let mut env = obj(json!({"recommended": {"id": "pm-r"}, "ready": rows("r"),
            "decision_needed": rows("d"), "blocked": [], "held_by_others": rows("h")}));
        let contract = RowContract::derive(Surface::Next, &env);
        assert_eq!(
            apply(&mut env, &intent, None, &contract, Format::Json, None),
            IntentOutcome::Kept
        );
        let len = |k: &str| env[k].as_array().map_or(0, Vec::len);
        assert_eq!((len("held_by_others"), len("decision_needed")), (0, 0));
        assert!(len("ready") > 0);
        Ok(())
    }

    #[test]
    fn a_continuation_page_is_fitted_as_it_prints() -> Result<()> {
        let intent = resolve(Surface::List, Some("triage"), Some(&"600".into()), None)?
            .ok_or("no intent")
            .map_err(pm_engine::Error::internal)?;
        let items: Vec<Value> = (0..60)
            .map(|i| json!({"id": format!("pm-{i:03}"), "title": "x".repeat(20)}))
            .collect();
        let page = obj(json!({"items": items, "count": 60, "total": 600,
            "filters": {"status": "all", "runtime_filters": {}}, "projection": {"mode": "fields",
            "fields": ["id", "title", "status", "type", "priority", "parent", "assignee"]},
            "sorting": {"sort": "default", "order": "asc"}, "now": "2026-09-01T00:00:00.000Z",
            "next_cursor": "eyJ2ZXJzaW9uIjoxfQ"}));
        let contract = RowContract::derive(Surface::List, &page);
        let mut first = page.clone();
        apply(&mut first, &intent, None, &contract, Format::Json, None);
        let mut next = page;
        apply(
            &mut next,
            &intent,
            None,
            &contract,
            Format::Json,
            Some("eyJ2ZXJzaW9uIjoxfQ"),
        );
        assert!(next.contains_key("continuation_contract"));
        assert!(!next.contains_key("context_intent") && !next.contains_key("filters"));
        let printed = crate::render::budget::measure(&Value::Object(next.clone()), Format::Json);
        assert!(printed <= 600, "{printed}");
        let rows = |env: &Map<String, Value>| env["items"].as_array().map_or(0, Vec::len);
        assert!(
            rows(&next) > rows(&first),
            "{} <= {}",
            rows(&next),
            rows(&first)
        );
        Ok(())
    }
}
