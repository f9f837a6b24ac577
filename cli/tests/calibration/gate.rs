//! The calibration gate's data and rules: the committed approved values
//! (`testdata/calibration/approved.json`), what one tier measured, and [`check`], the pure
//! comparison a negative test feeds regressed values to.

use serde::{Deserialize, Serialize};

/// The committed approved values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approved {
    /// Schema version of this file (1).
    pub version: u64,
    /// What is measured.
    pub metric: String,
    /// The encoding every command prints in (`json`).
    pub encoding: String,
    /// Cursor walks may cost up to this factor of their approved values.
    pub walk_tolerance: f64,
    /// pm-cli's approved ceilings this implementation must not exceed.
    pub reference: ReferenceCeilings,
    /// One entry per tier, by item count.
    pub tiers: Vec<TierValues>,
}

/// pm-cli's approved values for its 2,243-item tier (its gate measures compact JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceCeilings {
    /// The tier they apply to.
    pub items: u64,
    /// Session spend ceiling (tokens).
    pub spent_tokens: u64,
    /// Session delivered-bytes ceiling.
    pub delivered_bytes: u64,
    /// pm-cli's approved walk/unbounded ratio of the list-triage walk.
    pub list_walk_ratio: f64,
    /// pm-cli's approved walk/unbounded ratio of the search-discover walk.
    pub search_walk_ratio: f64,
}

/// What one tier measured (and, in the approved file, its approved values).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierValues {
    /// Generated items (`pm bench generate --items`).
    pub items: u64,
    /// One entry per intent, in gate order.
    pub intents: Vec<IntentValues>,
    /// The carried-session orientation.
    pub session: SessionValues,
    /// Cursor walks (2,243 tier only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub walks: Vec<WalkValues>,
}

/// One intent read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntentValues {
    /// `command:intent`.
    pub intent: String,
    /// The intent's declared token budget.
    pub declared_tokens: u64,
    /// The receipt's degradation label.
    pub degradation: String,
    /// Printed bytes.
    pub bytes: u64,
    /// ceil(bytes / 4).
    pub tokens: u64,
    /// Rows in the command's row collections.
    pub rows: u64,
}

/// The orientation run with one carried `--output-session`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionValues {
    /// Commands in the sequence.
    pub commands: u64,
    /// The session's token budget.
    pub token_budget: u64,
    /// Final `spent_tokens`.
    pub spent_tokens: u64,
    /// Final `remaining_tokens`.
    pub remaining_tokens: u64,
    /// Items in the final `seen_item_ids`.
    pub seen_items: u64,
    /// Sum of `suppressed_repeat_count`.
    pub suppressed_repeats: u64,
    /// Sum of printed bytes.
    pub delivered_bytes: u64,
    /// Negative control: the same bytes with every suppressed repeat served in full.
    pub unsuppressed_control_bytes: u64,
    /// The same session measured as compact JSON (pm-cli's metric): sum of ceil(bytes / 4).
    pub compact_json_spent_tokens: u64,
    /// The same session measured as compact JSON: sum of bytes.
    pub compact_json_delivered_bytes: u64,
}

/// A cursor walk followed to its end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WalkValues {
    /// `list:triage` or `search:discover`.
    pub walk: String,
    /// Rows collected (equal to the unbounded call's, id for id).
    pub rows: u64,
    /// Pages fetched.
    pub pages: u64,
    /// Printed bytes of every page.
    pub walk_bytes: u64,
    /// walk_bytes / rows.
    pub bytes_per_row: f64,
    /// Negative control: the walk with page one's metadata repeated on every page.
    pub repeated_metadata_bytes: u64,
    /// Printed bytes of the single unbounded call.
    pub unbounded_bytes: u64,
    /// walk_bytes / unbounded_bytes.
    pub walk_to_unbounded: f64,
    /// The walk and the unbounded call measured as compact JSON (pm-cli's metric).
    pub compact_json_walk_to_unbounded: f64,
}

/// Rounds a ratio to four decimals (the precision the file records).
pub fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// Returns every rule `measured` breaks against `approved` (empty when the gate passes).
///
/// Rules: the tier exists with the same intent set; per intent the declared budget and
/// degradation equal the approved ones, tokens ≤ declared and bytes ≤ declared × 4; the session
/// has the same command count and budget, spends ≤ approved and ≤ budget, remaining = budget −
/// spent, the exact seen-item count, suppressed ≥ approved, delivered ≤ approved, and costs less
/// than its unsuppressed control; walks have the same rows, pages ≤ ⌈approved × tolerance⌉,
/// bytes/row and walk/unbounded ≤ approved × tolerance, and cost less than their
/// repeated-metadata control and the unbounded call; on the reference tier, the approved and
/// measured values stay within pm-cli's ceilings.
pub fn check(approved: &Approved, measured: &TierValues) -> Vec<String> {
    let mut v = Vec::new();
    let Some(ok) = approved.tiers.iter().find(|t| t.items == measured.items) else {
        return vec![format!(
            "no approved values for the {}-item tier",
            measured.items
        )];
    };
    let tier = measured.items;
    let names = |t: &TierValues| {
        t.intents
            .iter()
            .map(|i| i.intent.clone())
            .collect::<Vec<_>>()
    };
    if names(ok) != names(measured) {
        v.push(format!(
            "tier {tier}: intent set {:?} != approved {:?}",
            names(measured),
            names(ok)
        ));
    }
    for (m, a) in measured.intents.iter().zip(&ok.intents) {
        let id = format!("tier {tier} {}", m.intent);
        if m.declared_tokens != a.declared_tokens {
            v.push(format!(
                "{id}: declared {} != approved {}",
                m.declared_tokens, a.declared_tokens
            ));
        }
        if m.degradation != a.degradation {
            v.push(format!(
                "{id}: degradation {} != approved {}",
                m.degradation, a.degradation
            ));
        }
        if m.tokens > m.declared_tokens || m.bytes > m.declared_tokens * 4 {
            v.push(format!(
                "{id}: {} tokens / {} bytes exceed the declared {}",
                m.tokens, m.bytes, m.declared_tokens
            ));
        }
    }
    check_session(&mut v, tier, &measured.session, &ok.session);
    let walk_names = |t: &TierValues| t.walks.iter().map(|w| w.walk.clone()).collect::<Vec<_>>();
    if walk_names(ok) != walk_names(measured) {
        v.push(format!(
            "tier {tier}: walks {:?} != approved {:?}",
            walk_names(measured),
            walk_names(ok)
        ));
    }
    let tolerance = approved.walk_tolerance;
    for (m, a) in measured.walks.iter().zip(&ok.walks) {
        let id = format!("tier {tier} walk {}", m.walk);
        if m.rows != a.rows {
            v.push(format!("{id}: {} rows != approved {}", m.rows, a.rows));
        }
        if m.pages as f64 > (a.pages as f64 * tolerance).ceil() {
            v.push(format!(
                "{id}: {} pages > ceil({} x {tolerance})",
                m.pages, a.pages
            ));
        }
        if m.bytes_per_row > a.bytes_per_row * tolerance {
            v.push(format!(
                "{id}: {} bytes/row > {} x {tolerance}",
                m.bytes_per_row, a.bytes_per_row
            ));
        }
        if m.walk_to_unbounded > a.walk_to_unbounded * tolerance {
            v.push(format!(
                "{id}: ratio {} > {} x {tolerance}",
                m.walk_to_unbounded, a.walk_to_unbounded
            ));
        }
        if m.walk_bytes >= m.repeated_metadata_bytes {
            v.push(format!(
                "{id}: walk {} B is not cheaper than its repeated-metadata control {} B",
                m.walk_bytes, m.repeated_metadata_bytes
            ));
        }
        if m.walk_bytes > m.unbounded_bytes {
            v.push(format!(
                "{id}: walk {} B costs more than the unbounded call {} B",
                m.walk_bytes, m.unbounded_bytes
            ));
        }
    }
    if tier == approved.reference.items {
        for (which, values) in [("approved", ok), ("measured", measured)] {
            check_reference(&mut v, which, &approved.reference, tolerance, values);
        }
    }
    v
}

fn check_session(v: &mut Vec<String>, tier: u64, m: &SessionValues, a: &SessionValues) {
    let id = format!("tier {tier} session");
    if (m.commands, m.token_budget) != (a.commands, a.token_budget) {
        v.push(format!(
            "{id}: {} commands / budget {} != approved {} / {}",
            m.commands, m.token_budget, a.commands, a.token_budget
        ));
    }
    if m.spent_tokens > a.spent_tokens || m.spent_tokens > m.token_budget {
        v.push(format!(
            "{id}: spent {} > approved {} (budget {})",
            m.spent_tokens, a.spent_tokens, m.token_budget
        ));
    }
    if m.remaining_tokens != m.token_budget.saturating_sub(m.spent_tokens) {
        v.push(format!(
            "{id}: remaining {} != budget - spent",
            m.remaining_tokens
        ));
    }
    if m.seen_items != a.seen_items {
        v.push(format!(
            "{id}: {} seen items != approved {}",
            m.seen_items, a.seen_items
        ));
    }
    if m.suppressed_repeats < a.suppressed_repeats {
        v.push(format!(
            "{id}: {} suppressed repeats < approved {}",
            m.suppressed_repeats, a.suppressed_repeats
        ));
    }
    if m.delivered_bytes > a.delivered_bytes {
        v.push(format!(
            "{id}: delivered {} B > approved {}",
            m.delivered_bytes, a.delivered_bytes
        ));
    }
    if m.suppressed_repeats > 0 && m.unsuppressed_control_bytes <= m.delivered_bytes {
        v.push(format!(
            "{id}: the unsuppressed control ({} B) does not cost more",
            m.unsuppressed_control_bytes
        ));
    }
}

/// pm-cli's ceilings: session spend and delivered bytes as printed; walk ratios measured the
/// way pm-cli measures them (compact JSON) within its own walk tolerance.
fn check_reference(
    v: &mut Vec<String>,
    which: &str,
    r: &ReferenceCeilings,
    tolerance: f64,
    t: &TierValues,
) {
    let id = format!("{which} tier {} vs pm-cli", t.items);
    if t.session.spent_tokens > r.spent_tokens {
        v.push(format!(
            "{id}: session spend {} > {}",
            t.session.spent_tokens, r.spent_tokens
        ));
    }
    if t.session.delivered_bytes > r.delivered_bytes {
        v.push(format!(
            "{id}: delivered {} B > {}",
            t.session.delivered_bytes, r.delivered_bytes
        ));
    }
    for w in &t.walks {
        let ceiling = match w.walk.as_str() {
            "list:triage" => r.list_walk_ratio,
            "search:discover" => r.search_walk_ratio,
            _ => continue,
        };
        if w.compact_json_walk_to_unbounded > ceiling * tolerance {
            v.push(format!(
                "{id}: {} compact-JSON ratio {} > {ceiling} x {tolerance}",
                w.walk, w.compact_json_walk_to_unbounded
            ));
        }
    }
}
