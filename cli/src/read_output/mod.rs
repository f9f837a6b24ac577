//! The universal read-output layer: every read command's
//! plain result goes through [`finish_read`], which applies include, amount, cost and encoding
//! plus sessions, cursors, row contracts and receipts, and returns exactly what gets printed.

mod amount;
pub mod codec;
mod continuation;
mod cursor;
pub mod envelope;
mod fit;
mod include;
mod include_get;
pub mod intent;
mod provenance;
pub mod query_cursor;
mod receipts;
mod request;
mod rows;
mod session;
mod shrink;
pub mod skipped;
mod surface;
mod surface_specs;

use serde_json::{Map, Value, json};

pub use cursor::{OutputCursor, collection_fingerprint};
pub use intent::{IntentOutcome, ResolvedIntent, RowCeiling};
pub use provenance::LegacyFlag;
pub use query_cursor::{QueryCursor, QueryPage, paginate, query_fingerprint};
pub use request::{Bound, CommandKind, ReadOutputRequest, split_csv};
pub use session::SessionState;
pub use surface::{Dimension, RowShape, Surface};

use crate::exit;
use crate::failure::Result;
use crate::render::Format;
use fit::{Fitted, Plan};
use rows::RowContract;
use shrink::{settle, write_intent_estimate};

/// What a read command tells the layer about its invocation, besides its result.
#[derive(Clone, Debug)]
pub struct ReadMeta {
    /// The canonical surface.
    pub surface: Surface,
    /// The spelling used (`list-all` for `list --all`/`--status all`, `ctx`, `list-open`).
    pub spelling: String,
    /// Legacy flags that literally appeared on the command line, with their values (flags a
    /// mode token of `--output-include` switched on are not listed).
    pub legacy: Vec<LegacyFlag>,
    /// The query cursor passed with `--after`, if any.
    pub after: Option<String>,
    /// The resolved `--for` intent, if any ([`intent::resolve`]).
    pub intent: Option<ResolvedIntent>,
    /// The item id or query, for an intent's retry command.
    pub operand: Option<String>,
    /// `get`: the field groups that hold data (for the omission receipt).
    pub material_groups: Option<Vec<String>>,
    /// `get` at standard depth without field selection, `--full` or `--tree`: may fall back to
    /// the brief projection when over budget.
    pub brief_fallback: bool,
    /// Field selectors of a command-local legacy flag (`get --fields`), applied exactly like
    /// `--output-include` selectors when no canonical selector was given.
    pub selectors: Vec<String>,
}

impl ReadMeta {
    /// Returns the metadata of a read of `surface` spelled `spelling`.
    pub fn new(surface: Surface, spelling: impl Into<String>) -> ReadMeta {
        ReadMeta {
            surface,
            spelling: spelling.into(),
            legacy: Vec::new(),
            after: None,
            intent: None,
            operand: None,
            material_groups: None,
            brief_fallback: false,
            selectors: Vec::new(),
        }
    }

    /// Records a legacy switch (`--brief`) when it appeared on the command line.
    pub fn legacy_switch(mut self, flag: &'static str, appeared: bool) -> ReadMeta {
        if appeared {
            self.legacy.push(LegacyFlag { flag, value: None });
        }
        self
    }

    /// Records a legacy flag with a value (`--limit 5`) when it appeared on the command line.
    pub fn legacy_value(mut self, flag: &'static str, value: Option<&str>) -> ReadMeta {
        if let Some(value) = value {
            self.legacy.push(LegacyFlag {
                flag,
                value: Some(value.to_owned()),
            });
        }
        self
    }
}

/// A read result ready to print.
#[derive(Clone, Debug, PartialEq)]
pub struct Finished {
    /// Exactly the value the renderer prints.
    pub value: Value,
    /// The encoding it was measured in.
    pub format: Format,
    /// 0, or 2 when the result was omitted for its budget.
    pub exit_code: u8,
}

/// Runs the read-output pipeline on a command's plain `result` and returns the value to
/// print in `format` with its exit code.
///
/// Steps: derive the omission receipt and row contract; apply a `--for` intent; collapse a
/// `--after` continuation page; resolve the dimensions; project include selectors; continue an
/// `--output-cursor`; bound rows by `--output-limit`; replace rows a session already served;
/// attach receipts and fit the binding budget (strings, then the largest fitting prefix of each
/// collection, then the omission document); settle every receipt estimate on the printed bytes.
///
/// # Errors
/// Include refusals (`command_failed`, `invalid_argument_value`), cursor refusals
/// (`read_output_cursor_command_mismatch`, `read_output_cursor_stale`), and
/// `invalid_read_output_session` when a session cannot fit even the omission document.
pub fn finish_read(
    result: Value,
    meta: &ReadMeta,
    request: &ReadOutputRequest,
    format: Format,
) -> Result<Finished> {
    let done = |env: Map<String, Value>, exit_code| Finished {
        value: Value::Object(env),
        format,
        exit_code,
    };
    let Value::Object(mut env) = result else {
        return Ok(Finished {
            value: result,
            format,
            exit_code: exit::SUCCESS,
        });
    };
    let surface = meta.surface;
    env.shift_remove("row_contract");
    attach_settings_warnings(&mut env, &request.settings_warnings);
    crate::failure::redact_echo(&mut env);
    let mut contract = RowContract::derive(surface, &env);
    let derived = if env.contains_key("omission_receipt") {
        None
    } else {
        receipts::derive_omission_receipt(surface, &env, meta.material_groups.as_deref())
    };
    if request.row_contract
        && let Some(json) = contract.to_json()
    {
        env.insert("row_contract".into(), json);
    }
    if let Some(receipt) = derived {
        env.insert("omission_receipt".into(), receipt);
    }
    if let Some(intent) = &meta.intent {
        let outcome = intent::apply(
            &mut env,
            intent,
            meta.operand.as_deref(),
            &contract,
            format,
            meta.after.as_deref(),
        );
        if outcome == IntentOutcome::ReceiptOnly {
            return Ok(done(env, exit::USAGE));
        }
    }
    if let Some(after) = meta.after.as_deref().filter(|a| !a.is_empty()) {
        continuation::collapse(&mut env, after);
    }
    let invocation = invocation_of(meta);
    let resolved = provenance::resolve(surface, invocation, request, format);
    let binding = resolved.binding(request.session.as_ref().map(SessionState::remaining));
    let (selectors, selector_flag) = selectors_of(meta, request);
    let engaged_by_flags = engaged_by_flags(request, &selectors);
    let may_cut = matches!(request.limit, Some(Bound::At(_)));
    if !engaged_by_flags && !may_cut && binding.is_none() {
        settle_intent(&mut env, format);
        return Ok(done(env, exit::SUCCESS));
    }

    include::apply(surface, &mut env, &contract, &selectors, selector_flag)?;
    contract.retain_present(&env);
    let minimum_rows = prioritize_assertions(surface, &mut env);
    let cursor = request.cursor.as_ref();
    let mut collections: Vec<fit::CollectionSnapshot> = contract
        .continuation_paths()
        .into_iter()
        .filter(|p| cursor.is_none_or(|(_, c)| c.path != p.to_string()))
        .filter_map(|path| {
            let value = rows::get(&env, &path)?;
            let total = rows::collection_len(value)? as u64;
            let fingerprint = collection_fingerprint(&path.to_string(), value);
            Some(fit::CollectionSnapshot {
                path,
                total,
                base: 0,
                fingerprint,
            })
        })
        .collect();
    let mut continued = None;
    if let Some((raw, c)) = cursor {
        let path = cursor::apply(&mut env, &contract, surface, c, raw)?;
        collections.push(fit::CollectionSnapshot {
            path: path.clone(),
            total: c.total,
            base: c.offset,
            fingerprint: c.fingerprint.clone(),
        });
        continued = Some(path);
        if env.get("count").is_some_and(Value::is_number) {
            let count = rows::count_rows(&env, &contract);
            amount::set(&mut env, "count", json!(count));
        }
    }
    let order = contract.continuation_paths();
    collections.sort_by_key(|c| order.iter().position(|p| *p == c.path));
    let items_before = env.get("items").and_then(Value::as_array).map(Vec::len);
    let cut = match request.limit {
        Some(Bound::At(n)) => amount::bound(&mut env, &contract, n),
        _ => false,
    };
    if let Some(state) = &request.session {
        session::apply_references(&mut env, &contract, state);
    }
    if !engaged_by_flags && !cut {
        let fits = binding.is_none_or(|b| shrink::measure_map(&mut env, format) <= b.tokens);
        if fits {
            settle_intent(&mut env, format);
            return Ok(done(env, exit::SUCCESS));
        }
    }
    let plan = Plan {
        surface,
        format,
        resolved: &resolved,
        binding,
        session: request.session.as_ref(),
        contract: &contract,
        collections,
        continued,
        producer: continuation::ProducerCursor::of(&env, meta.after.as_deref()),
        items_before,
        base_keys: fit::CONTINUATION_KEYS
            .iter()
            .chain(&["applied_limit"])
            .filter_map(|k| Some(((*k).to_owned(), env.get(*k)?.clone())))
            .collect(),
        brief_fallback: meta.brief_fallback
            && surface == Surface::Get
            && selectors.is_empty()
            && cursor.is_none(),
        minimum_rows,
    };
    // Inside a session the intent budget covers the complete envelope when it can; once the
    // session's mandatory receipts (which grow with the items it has served) no longer leave
    // room for a useful result, the group allowance binds instead of omitting the result.
    let unbound_retry = (request.session.is_some()
        && resolved.cost.0 == provenance::Source::Intent)
        .then(|| env.clone());
    let fitted = plan.fit(env)?;
    let fitted = match (fitted, unbound_retry) {
        (Fitted::Omitted(_), Some(env)) => {
            let invocation = provenance::Invocation {
                intent_budget: None,
                ..invocation
            };
            let resolved = provenance::resolve(surface, invocation, request, format);
            let binding = resolved.binding(request.session.as_ref().map(SessionState::remaining));
            Plan {
                resolved: &resolved,
                binding,
                ..plan
            }
            .fit(env)?
        }
        (fitted, _) => fitted,
    };
    Ok(match fitted {
        Fitted::Result(env) => done(env, exit::SUCCESS),
        Fitted::Omitted(env) => done(env, exit::USAGE),
    })
}

/// Settles a `context_intent` estimate on the final printed bytes (nothing else changed).
/// Returns true when [`finish_read`] leaves a result's rows exactly as given: no intent,
/// continuation, selector, session, cursor, row contract, output limit or binding budget works
/// on them, so only envelope keys (echo redaction, settings warnings, the omission receipt)
/// change. A caller may then print rows it never built as values (see
/// [`crate::render::render_streamed_json`]).
pub fn leaves_rows_alone(meta: &ReadMeta, request: &ReadOutputRequest, format: Format) -> bool {
    if meta.intent.is_some() || meta.after.as_deref().is_some_and(|a| !a.is_empty()) {
        return false;
    }
    let resolved = provenance::resolve(meta.surface, invocation_of(meta), request, format);
    let binding = resolved.binding(request.session.as_ref().map(SessionState::remaining));
    let (selectors, _) = selectors_of(meta, request);
    !engaged_by_flags(request, &selectors)
        && !matches!(request.limit, Some(Bound::At(_)))
        && binding.is_none()
}

fn invocation_of(meta: &ReadMeta) -> provenance::Invocation<'_> {
    provenance::Invocation {
        spelling: &meta.spelling,
        legacy: &meta.legacy,
        intent_budget: meta.intent.as_ref().map(|i| i.token_budget),
    }
}

/// The row selectors in force and the flag that named them.
fn selectors_of(meta: &ReadMeta, request: &ReadOutputRequest) -> (Vec<String>, &'static str) {
    match request.selectors(meta.surface) {
        canonical if canonical.is_empty() => (meta.selectors.clone(), "--fields"),
        canonical => (canonical, "--output-include"),
    }
}

/// Whether flags make the read-output step work on rows: include selectors, sessions,
/// output cursors or the row contract.
fn engaged_by_flags(request: &ReadOutputRequest, selectors: &[String]) -> bool {
    !request.include.is_empty()
        || !selectors.is_empty()
        || request.session.is_some()
        || request.cursor.is_some()
        || request.row_contract
}

fn settle_intent(env: &mut Map<String, Value>, format: Format) {
    if env.contains_key("context_intent") {
        settle(env, format, write_intent_estimate);
    }
}

/// Orders assurance `assertions` by verdict priority (blocking, warning, observing failures,
/// then retired, then passing; stable within a class) and returns the rows budget compaction
/// must keep: every non-passing assertion.
fn prioritize_assertions(
    surface: Surface,
    env: &mut Map<String, Value>,
) -> Vec<(rows::RowPath, usize)> {
    if surface != Surface::Assurance {
        return Vec::new();
    }
    let Some(Value::Array(assertions)) = env.get_mut("assertions") else {
        return Vec::new();
    };
    let priority = |row: &Value| match (
        row.get("verdict").and_then(Value::as_str),
        row.get("enforcement").and_then(Value::as_str),
    ) {
        _ if !row.is_object() => 4,
        (Some("pass"), _) => 4,
        (Some("retired"), _) => 3,
        (_, Some("block")) => 0,
        (_, Some("warn")) => 1,
        _ => 2,
    };
    assertions.sort_by_key(priority);
    let failing = assertions.iter().filter(|r| priority(r) < 4).count();
    amount::set(env, "budget_retention_policy", json!("verdict_priority"));
    vec![(rows::RowPath::declared("assertions"), failing)]
}

/// Adds one warning per invalid settings value to the result's `warnings`: pm's token
/// (`settings_invalid:<key>`), or a `{code, key, message}` object where the result already
/// reports warnings as objects; a warning the result already holds is not repeated.
fn attach_settings_warnings(
    env: &mut Map<String, Value>,
    issues: &[pm_engine::settings::SettingIssue],
) {
    if issues.is_empty() {
        return;
    }
    let slot = env
        .entry("warnings")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(list) = slot else {
        return;
    };
    let objects = list.iter().any(Value::is_object);
    for issue in issues {
        let warning = if objects {
            json!({"code": "settings_invalid", "key": issue.key, "message": issue.message()})
        } else {
            Value::String(issue.token())
        };
        if !list.contains(&warning) {
            list.push(warning);
        }
    }
}
